"""The cross-paper comparison (``notebooks/compare/``): accuracy against ε across the five papers, drawn by
:mod:`dpgnn.compare` from the stored rows of the paper series (no grid and no store of its own)."""

from __future__ import annotations

from dpgnn.series import Series, register

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(Series("compare", title="Cross-paper comparison", kind="course", order=10))
