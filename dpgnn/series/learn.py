"""The course (``notebooks/learn/``): DP-GNNs one concept at a time, each notebook a few calls of :mod:`dpgnn.teach`.

No grid and no store of its own: the notebooks compute small things in seconds, the same in every profile.
"""

from __future__ import annotations

from dpgnn.series import Series, register

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(Series("learn", title="Course: DP-GNNs one concept at a time", kind="course", order=9))
