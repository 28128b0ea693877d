"""What every paper series shares: the series API, the ``mean ± spread`` cell format, best-configuration selection.

The series API (the same names and argument order in every ``dpgnn.series.<paper>`` module)::

    run(cfg, store, artifact, *, device="auto", force=False)   # compute the artifact's missing cells, return rows
    side_by_side(store, artifact)                              # ours beside the paper, one row per reported cell
    plot(store, artifact)                                      # the paper's figure/table drawn from stored rows
    select_best(runs, ...)                                     # best configuration by validation (where a grid
                                                               # is searched), built on :func:`select_best` here

``cfg`` is the profile's :class:`dpgnn.profiles.Settings`, ``store`` the series' :class:`dpgnn.results.ResultStore`
(it knows the paper and the profile), ``artifact`` the paper's figure/table name as in ``dpgnn/reference``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

__all__ = ["fmt", "select_best"]


def fmt(value: float, spread: float | None = None, nd: int = 1) -> str:
    """``"71.3 ± 1.2"`` (``nd`` decimals), ``"71.3"`` without a spread, ``"—"`` for a missing value."""
    if value is None or pd.isna(value):
        return "—"
    if spread is None or pd.isna(spread):
        return f"{value:.{nd}f}"
    return f"{value:.{nd}f} ± {spread:.{nd}f}"


def select_best(
    runs: pd.DataFrame,
    by: Sequence[str],
    config: Sequence[str],
    *,
    val_metric: str,
    test_metric: str | None = None,
    fill: float | None = None,
) -> pd.DataFrame:
    """Per ``by`` group, the configuration (the ``config`` columns) with the highest mean ``val_metric`` over its
    runs; returns the rows of ``test_metric`` (all metrics when ``None``) of the chosen configurations.

    ``runs`` is long format (a ``metric`` and a ``value`` column). Ties go to the first configuration in sorted
    order (``groupby`` order), so the choice is deterministic. ``fill`` replaces missing ``config`` values first
    (grids where some methods lack a hyper-parameter), as ``groupby`` would otherwise drop those rows; the returned
    rows keep the filled value.
    """
    by, config = list(by), list(config)
    missing = [c for c in by + config + ["metric", "value"] if c not in runs.columns]
    if missing:
        raise ValueError(f"select_best: runs has no column(s) {missing}")
    if runs.empty:
        return runs
    if fill is not None:
        runs = runs.copy()
        runs[config] = runs[config].fillna(fill)
    val = runs[runs["metric"] == val_metric].groupby(by + config)["value"].mean().reset_index()
    if val.empty:
        raise ValueError(f"select_best: no {val_metric!r} rows to select on")
    best = val.loc[val.groupby(by)["value"].idxmax(), by + config]
    chosen = runs.merge(best, on=by + config)
    return chosen if test_metric is None else chosen[chosen["metric"] == test_metric]
