"""``python -m dpgnn``: the ``dpgnn`` command, run exactly as ``python -m dpgnn.cli`` (the CLI lives in
:mod:`dpgnn.cli`; this entry point only hands over to it)."""

import runpy

runpy.run_module("dpgnn.cli", run_name="__main__", alter_sys=True)
