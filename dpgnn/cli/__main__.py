"""``python -m dpgnn.cli``: the ``dpgnn`` command."""

from dpgnn.cli import main

main()
