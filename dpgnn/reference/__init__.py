"""The papers' reported numbers, as cited reference data (never results).

Each paper has one CSV here, one row per reported cell of a table or figure that we reproduce:
``paper, artifact, dataset, method, setting, metric, value, spread, spread_kind, tolerance, approx, source``.

- ``spread_kind`` says what the paper's ± means (``std_ddof0``: population std over runs; ``ci95_bootstrap``:
  half-width of a 95% bootstrap CI of the mean; ``none``: no spread reported). Our spread is computed the same way.
- ``tolerance`` is the absolute floor of the agreement band; the band is ``max(tolerance, 2 * spread)``
  (2 points for percentages, see README "Reading the report").
- ``approx`` marks values read off a figure rather than printed in the paper.
- ``source`` cites paper, table/figure, row and column.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import pandas as pd

COLUMNS = ["paper", "artifact", "dataset", "method", "setting", "metric", "value", "spread", "spread_kind",
           "tolerance", "approx", "source"]


def papers() -> list[str]:
    """Papers that ship reference data."""
    return sorted(p.name[:-4] for p in resources.files(__name__).iterdir() if p.name.endswith(".csv"))


@lru_cache(maxsize=None)
def _load(paper: str) -> pd.DataFrame:
    path = resources.files(__name__) / f"{paper}.csv"
    if not path.is_file():
        raise ValueError(f"no reference data for paper {paper!r}; available: {papers()}")
    df = pd.read_csv(path, dtype={"setting": str, "dataset": str, "method": str})
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"reference file {path} lacks columns {sorted(missing)}")
    return df[COLUMNS]


def load_reference(paper: str, artifact: str | None = None) -> pd.DataFrame:
    """Reference rows of one paper (optionally one artifact such as ``"table2"``); a copy, safe to modify."""
    df = _load(paper)
    if artifact is not None:
        df = df[df["artifact"] == artifact]
        if df.empty:
            arts = sorted(_load(paper)["artifact"].unique())
            raise ValueError(f"paper {paper!r} has no reference artifact {artifact!r}; available: {arts}")
    return df.reset_index(drop=True).copy()
