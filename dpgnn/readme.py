"""The README's and the docs pages' generated blocks: the numbers they quote come from stored files, never typed.

A block sits between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` lines; :func:`refresh` rewrites every block
from its source and leaves the rest of the text alone. ``python -m dpgnn.readme`` rewrites every page of
:func:`pages` (``--check`` exits 1 when a block is stale instead, as ``tests/test_readme.py`` does; ``--path`` one
file).

The README's blocks:

- ``series``: one line per paper series with its report counts (``results/paper/report.csv``, written by
  ``dpgnn report --profile paper``) and its page under ``docs/`` (whose first heading names the paper);
- ``bench``: what the benchmark concludes, two sentences from the stored rows of its ``bench`` profile
  (``results/paper/bench/``), saying plainly when rows are missing;
- ``timings``: the quick start's measured durations (``benchmarks/results/quickstart.csv``, written by
  ``benchmarks/quickstart_timing.py`` on a fresh clone), with their date and machine.

The docs pages' blocks (``docs/papers/<paper>.md``, ``docs/audits.md``) are the findings of the committed paper
profile, from its stored rows and its report (with the measured causes of ``dpgnn/reference/explanations.csv``):
:func:`dpgnn.findings.doc_blocks`, the ``BLOCKS`` of each ``dpgnn.findings.<series>`` module.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dpgnn.utils import ROOT

__all__ = [
    "BLOCKS",
    "EXTRA_PAGES",
    "bench_block",
    "pages",
    "refresh",
    "series_block",
    "series_pages",
    "timings_block",
]


def series_pages() -> dict[str, str]:
    """The docs page of each series that has one (:attr:`dpgnn.series.Series.docs`; its first heading is the
    paper's title)."""
    from dpgnn import series

    return {s.name: s.docs for s in series.all_series() if s.docs}


#: the pages with generated blocks besides the series' pages, relative to the repository root
EXTRA_PAGES = ("README.md", "docs/papers/cross-paper.md")


def pages() -> tuple[str, ...]:
    """The pages with generated blocks, relative to the repository root: :data:`EXTRA_PAGES` and every series'
    docs page."""
    return EXTRA_PAGES + tuple(series_pages().values())


_BLOCK = re.compile(r"(<!-- begin (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- end (?P=name) -->)", re.S)


def series_block(root: Path = ROOT) -> str:
    """The series table: within / explained / outside / not run of the reported cells, and stand-in rows."""
    rep = pd.read_csv(root / "results" / "paper" / "report.csv")
    lines = [
        "| series | what it reproduces | report cells: within / explained / outside / not run (of all) |",
        "|---|---|---|",
    ]
    from dpgnn import series

    registered = {s.name: s for s in series.all_series()}
    total = dict.fromkeys(("within", "explained", "outside", "not_run", "stand_in"), 0)
    for paper in dict.fromkeys(rep["paper"]):
        c = rep.loc[rep["paper"] == paper, "status"].value_counts()
        n = {s: int(c.get(s, 0)) for s in total}
        for s in total:
            total[s] += n[s]
        known = registered.get(paper)
        linked = known is not None and known.docs and (root / known.docs).exists()
        what = f"[{known.title}]({known.docs})" if linked else paper
        extra = f", plus {n['stand_in']} stand-in rows" if n["stand_in"] else ""
        lines.append(
            f"| `{paper}` | {what} | {n['within']} / {n['explained']} / {n['outside']} / {n['not_run']} "
            f"(of {n['within'] + n['explained'] + n['outside'] + n['not_run']}){extra} |"
        )
    reported = total["within"] + total["explained"] + total["outside"] + total["not_run"]
    run = reported - total["not_run"]
    agree = total["within"] + total["explained"]
    lines.append("")
    lines.append(
        f"Of the {run:,} reported cells we ran, {agree:,} ({100 * agree / max(run, 1):.0f} %) agree with the "
        f"paper or have a measured explanation; {total['not_run']:,} of {reported:,} are not run (mostly "
        "datasets that cannot be had offline)."
    )
    return "\n".join(lines) + "\n"


def _minutes(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def timings_block(root: Path = ROOT) -> str:
    """The quick start's durations, the newest measurement of each command."""
    path = root / "benchmarks" / "results" / "quickstart.csv"
    if not path.exists():
        return "Durations: not measured yet (`python benchmarks/quickstart_timing.py`).\n"
    df = pd.read_csv(path).sort_values("date")
    df = df[df["status"] == 0]  # a failed run measures nothing a user waits for
    if df.empty:
        return "Durations: no successful measurement yet (`python benchmarks/quickstart_timing.py`).\n"
    last = df.groupby("command").tail(1).set_index("command")
    parts = [
        f"`{cmd}` {_minutes(r.seconds)}" + (f" ({r.note})" if isinstance(r.note, str) and r.note else "")
        for cmd, r in last.iterrows()
    ]
    machine, date = last["machine"].iloc[-1], str(last["date"].max())[:10]
    return f"Measured on a fresh clone ({machine}, {date}): " + "; ".join(parts) + ".\n"


def bench_block(root: Path = ROOT) -> str:
    """The benchmark's two sentences from the ``bench`` profile's stored rows (:func:`dpgnn.bench.report.readme_block`;
    says so plainly when rows are missing)."""
    from dpgnn.bench.report import readme_block

    return readme_block(root)


BLOCKS: dict[str, Callable[[Path], str]] = {"series": series_block, "timings": timings_block, "bench": bench_block}


def all_blocks() -> dict[str, Callable[[Path], str]]:
    """The README's blocks and the docs pages' (:func:`dpgnn.findings.doc_blocks`) by name."""
    from dpgnn.findings import doc_blocks

    return {**BLOCKS, **doc_blocks()}


def refresh(text: str, root: Path = ROOT) -> str:
    """``text`` with every known block rebuilt from its source (unknown block names raise ``ValueError``)."""
    blocks = all_blocks() if _BLOCK.search(text) else {}

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in blocks:
            raise ValueError(f"unknown generated block {name!r}; known: {sorted(blocks)}")
        return m.group(1) + blocks[name](root) + m.group(4)

    return _BLOCK.sub(one, text)


def main(argv: list[str] | None = None) -> int:
    """``python -m dpgnn.readme``: rewrite the generated blocks (``--check``: exit 1 when one is stale)."""
    ap = argparse.ArgumentParser(prog="python -m dpgnn.readme", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a block is stale, write nothing")
    ap.add_argument("--root", type=Path, default=ROOT, help="the repository whose stored files the blocks read")
    ap.add_argument("--path", type=Path, help="one file (default: the root's README.md and docs pages with blocks)")
    args = ap.parse_args(argv)
    paths = [args.path] if args.path else [args.root / p for p in pages()]
    stale = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        new = refresh(text, args.root)
        if new == text:
            print(f"{path.name}: every generated block is current")
        elif args.check:
            stale += 1
            print(f"{path.name}: generated blocks are stale (run python -m dpgnn.readme)", file=sys.stderr)
        else:
            path.write_text(new, encoding="utf-8")
            print(f"{path.name}: generated blocks rewritten")
    return int(bool(stale))


if __name__ == "__main__":
    raise SystemExit(main())
