"""The papers' reported numbers, as cited reference data (never results).

Each paper has one CSV here, one row per reported cell of a table or figure that we reproduce:
``paper, artifact, dataset, method, setting, metric, value, spread, spread_kind, tolerance, approx, source``.

- ``spread_kind`` says what the paper's ± means (``std_ddof0``: population std over runs; ``ci95_bootstrap``:
  half-width of a 95% bootstrap CI of the mean; ``none``: no spread reported). Our spread is computed the same way.
- ``tolerance`` is the absolute floor of the agreement band; the band is ``max(tolerance, 2 * spread)``
  (2 points for percentages, see docs/usage.md#reading-the-report).
- ``approx`` marks values read off a figure rather than printed in the paper.
- ``source`` cites paper, table/figure, row and column.
- ``value`` may be empty where the paper reports a cell only as a curve whose values cannot be read (the report
  lists the cell as ``not_run`` with that reason, so its absence is visible).

``explanations.csv`` records *measured* causes for cells outside the tolerance (key columns, ``*`` = any, and
``cause``): a cell outside the band that matches one is reported ``explained`` with the cause as its note.
:data:`STAND_INS` maps our stand-in datasets to the paper dataset they stand in for (shown, never compared).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import pandas as pd

COLUMNS = [
    "paper",
    "artifact",
    "dataset",
    "method",
    "setting",
    "metric",
    "value",
    "spread",
    "spread_kind",
    "tolerance",
    "approx",
    "source",
]


EXPLANATION_COLUMNS = ["paper", "artifact", "dataset", "method", "setting", "metric", "cause"]

# paper -> (prefix of our dataset name, the paper's dataset it stands in for)
STAND_INS = {"progap": ("fb100-", "fb-100"), "privgnn": ("fb100-", "facebook")}


def stand_in_for(paper: str, dataset: str) -> str | None:
    """The paper dataset that our ``dataset`` stands in for in ``paper`` (``None`` if it is no stand-in)."""
    prefix, target = STAND_INS.get(paper, (None, None))
    return target if prefix is not None and str(dataset).startswith(prefix) and dataset != target else None


def papers() -> list[str]:
    """Papers that ship reference data."""
    return sorted(
        p.name[:-4]
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".csv") and p.name != "explanations.csv"
    )


@cache
def _load_explanations() -> pd.DataFrame:
    path = resources.files(__name__) / "explanations.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = set(EXPLANATION_COLUMNS) - set(df.columns)
    if missing:
        raise ValueError(f"{path} lacks columns {sorted(missing)}")
    if (df["cause"].str.strip() == "").any():
        raise ValueError(f"{path}: every explanation needs a measured cause")
    return df[EXPLANATION_COLUMNS]


def load_explanations() -> pd.DataFrame:
    """Measured causes of cells outside the tolerance (``*`` matches any value); a copy."""
    return _load_explanations().copy()


@cache
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
