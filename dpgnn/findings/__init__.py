"""Findings: the numbers that notebook and docs prose quote about our stored results, computed, never typed.

A finding is a short markdown text (a sentence, a list or a table) computed from stored rows: by default the
committed paper profile, ``results/paper/<paper>/*.csv`` and its report ``results/paper/report.csv`` (with the
measured causes of ``dpgnn/reference/explanations.csv`` in its ``note`` column) under the repository root, whatever
``$DPGNN_OUTPUT_ROOT`` says, since the prose describes that run. Every function takes ``root`` (a repository root)
so that tests can point it at a small tree of their own.

- Notebooks print them in a code cell after a sentence that says what is measured: a :class:`Finding` renders as
  markdown in Jupyter and prints as text (``tests/test_notebook_numbers.py`` keeps typed numbers out of the
  notebooks' markdown).
- ``python -m dpgnn.readme`` writes the docs pages' blocks ``<!-- begin NAME -->`` … ``<!-- end NAME -->`` from
  :func:`doc_blocks` (each series module's ``BLOCKS``), and ``tests/test_readme.py`` fails when one is stale.

One module per series (:mod:`dpgnn.findings.lpgnn`, …); what they share is here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from dpgnn.results import ResultStore
from dpgnn.utils import ROOT

__all__ = [
    "Finding",
    "PROFILE",
    "report",
    "store",
    "md_table",
    "num",
    "span",
    "slash",
    "pct",
    "explained",
    "status_counts",
    "missing",
    "doc_blocks",
]

#: the profile whose committed rows the prose describes
PROFILE = "paper"


class Finding(str):
    """Markdown text about stored results: rendered as markdown in Jupyter, printed as is elsewhere."""

    def _repr_markdown_(self) -> str:
        return str(self)


def store(paper: str, root: Path = ROOT) -> ResultStore:
    """The committed paper-profile store of ``paper`` under the repository ``root`` (read only here)."""
    return ResultStore(paper, PROFILE, root=Path(root) / "results")


def report(paper: str | None = None, root: Path = ROOT) -> pd.DataFrame:
    """The paper profile's report rows (``results/paper/report.csv``, written by ``dpgnn report --profile paper``),
    of one ``paper`` or all; an empty frame when the report is not there."""
    path = Path(root) / "results" / PROFILE / "report.csv"
    if not path.exists():
        return pd.DataFrame(
            columns=[
                "paper",
                "artifact",
                "dataset",
                "method",
                "setting",
                "paper_value",
                "paper_spread",
                "ours_value",
                "ours_spread",
                "n_runs",
                "status",
                "tolerance",
                "diff",
                "note",
            ]
        )
    rep = pd.read_csv(path, dtype={"setting": str, "dataset": str, "method": str})
    return rep if paper is None else rep[rep["paper"] == paper].reset_index(drop=True)


def missing(what: str, command: str) -> Finding:
    """The text shown where the stored rows a finding needs are not there."""
    return Finding(f"*Not stored yet: {what}* (`{command}` computes it).")


def num(value: float | None, nd: int = 2) -> str:
    """``value`` with ``nd`` decimals and thousands separated (``11,577``); ``—`` when missing, ``∞`` for
    infinity."""
    if value is None or pd.isna(value):
        return "—"
    if np.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:,.{nd}f}"


def pct(share: float, nd: int = 0) -> str:
    """A share in [0, 1] as a percentage, ``"21 %"``."""
    return "—" if share is None or pd.isna(share) else f"{100 * share:.{nd}f} %"


def span(values: Iterable[float], nd: int = 2) -> str:
    """``"0.11–0.16"`` (min–max), or one value when they agree at ``nd`` decimals."""
    vals = [float(v) for v in values if not pd.isna(v)]
    if not vals:
        return "—"
    lo, hi = num(min(vals), nd), num(max(vals), nd)
    return lo if lo == hi else f"{lo}–{hi}"


def slash(values: Iterable[float], nd: int = 2) -> str:
    """``"0.40 / 0.53 / 0.68"``."""
    return " / ".join(num(v, nd) for v in values)


def md_table(df: pd.DataFrame, *, index: bool = False) -> str:
    """A pipe table of ``df`` (cells as they print; missing ones ``—``)."""
    if index:
        df = df.reset_index()
    cells = [
        [("—" if (not isinstance(v, (list, tuple, str)) and pd.isna(v)) else str(v)).replace("|", "\\|") for v in row]
        for row in df.itertuples(index=False)
    ]
    head = [str(c).replace("|", "\\|") for c in df.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def status_counts(rep: pd.DataFrame, by: str = "dataset") -> str:
    """``"amazon: 40 within, 3 explained, 2 outside (of 45 run)"`` per value of ``by``, over the cells run."""
    parts = []
    for key, g in rep[~rep["status"].isin(["not_run", "stand_in"])].groupby(by, sort=False):
        c = g["status"].value_counts()
        counts = ", ".join(f"{int(c[s])} {s}" for s in ("within", "explained", "outside") if c.get(s, 0))
        parts.append(f"{key}: {counts} (of {len(g)} run)")
    return "; ".join(parts)


def explained(
    paper: str, root: Path = ROOT, *, artifacts: Iterable[str] | None = None, status: Iterable[str] = ("explained",)
) -> Finding:
    """The paper profile's cells of ``paper`` with the given ``status`` (default: ``explained``), each with ours,
    the paper's value and the measured cause recorded for it (``dpgnn/reference/explanations.csv``).

    Cells that share one cause are listed together, the cause once; values at the report's precision (4
    significant digits)."""
    rep = report(paper, root)
    if artifacts is not None:
        rep = rep[rep["artifact"].isin(list(artifacts))]
    rep = rep[rep["status"].isin(list(status))]
    if rep.empty:
        return Finding(f"No {' or '.join(status)} cells in the paper profile's report.")
    lines = []
    for note, g in rep.groupby(rep["note"].fillna(""), sort=False):
        cells = "; ".join(
            f"{r.artifact} {r.dataset} `{r.method}` {r.setting}: ours {r.ours_value:.4g}, paper {r.paper_value:.4g}"
            for r in g.itertuples(index=False)
        )
        lines.append(f"- {cells}" + (f" — {note}" if note else ""))
    return Finding("\n".join(lines))


def doc_blocks() -> dict[str, Callable[[Path], str]]:
    """Every docs block: name -> function of the repository root returning the block's markdown (the ``BLOCKS``
    of each ``dpgnn.findings.<series>`` module, for every registered series that has one)."""
    import importlib
    import importlib.util

    from dpgnn import series

    out: dict[str, Callable[[Path], str]] = {}
    for name in series.names():
        if importlib.util.find_spec(f"{__name__}.{name}") is not None:
            out.update(importlib.import_module(f"{__name__}.{name}").BLOCKS)
    return out
