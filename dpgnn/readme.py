"""The README's generated blocks: the numbers it quotes come from stored files, never typed.

A block sits between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` lines; :func:`refresh` rewrites every block
from its source and leaves the rest of the text alone. ``python -m dpgnn.readme`` rewrites ``README.md`` (``--check``
exits 1 when a block is stale instead, as ``tests/test_readme.py`` does).

- ``series``: one line per paper series with its report counts (``results/paper/report.csv``, written by
  ``dpgnn report --profile paper``) and its page under ``docs/`` (whose first heading names the paper);
- ``timings``: the quick start's measured durations (``benchmarks/results/quickstart.csv``, written by
  ``benchmarks/quickstart_timing.py`` on a fresh clone), with their date and machine.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable

import pandas as pd

from dpgnn.utils import ROOT

__all__ = ["BLOCKS", "refresh", "series_block", "timings_block", "SERIES_PAGES"]

#: the docs page of each report series (its first heading is the paper's title)
SERIES_PAGES = {"lpgcn": "docs/papers/lpgcn.md", "lpgnn": "docs/papers/lpgnn.md", "privgnn": "docs/papers/privgnn.md",
                "drw": "docs/papers/drw.md", "progap": "docs/papers/progap.md", "audit": "docs/audits.md"}

_BLOCK = re.compile(r"(<!-- begin (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- end (?P=name) -->)", re.S)


def _title(page: Path) -> str:
    first = page.read_text(encoding="utf-8").splitlines()[0]
    return first.lstrip("# ").strip()


def series_block(root: Path = ROOT) -> str:
    """The series table: within / explained / outside / not run of the reported cells, and stand-in rows."""
    rep = pd.read_csv(root / "results" / "paper" / "report.csv")
    lines = ["| series | what it reproduces | report cells: within / explained / outside / not run (of all) |",
             "|---|---|---|"]
    total = dict.fromkeys(("within", "explained", "outside", "not_run", "stand_in"), 0)
    for paper in dict.fromkeys(rep["paper"]):
        c = rep.loc[rep["paper"] == paper, "status"].value_counts()
        n = {s: int(c.get(s, 0)) for s in total}
        for s in total:
            total[s] += n[s]
        page = SERIES_PAGES.get(paper)
        what = f"[{_title(root / page)}]({page})" if page and (root / page).exists() else paper
        extra = f", plus {n['stand_in']} stand-in rows" if n["stand_in"] else ""
        lines.append(f"| `{paper}` | {what} | {n['within']} / {n['explained']} / {n['outside']} / {n['not_run']} "
                     f"(of {n['within'] + n['explained'] + n['outside'] + n['not_run']}){extra} |")
    reported = total["within"] + total["explained"] + total["outside"] + total["not_run"]
    run = reported - total["not_run"]
    agree = total["within"] + total["explained"]
    lines.append("")
    lines.append(f"Of the {run:,} reported cells we ran, {agree:,} ({100 * agree / max(run, 1):.0f} %) agree with the "
                 f"paper or have a measured explanation; {total['not_run']:,} of {reported:,} are not run (mostly "
                 "datasets that cannot be had offline).")
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
    parts = [f"`{cmd}` {_minutes(r.seconds)}" + (f" ({r.note})" if isinstance(r.note, str) and r.note else "")
             for cmd, r in last.iterrows()]
    machine, date = last["machine"].iloc[-1], str(last["date"].max())[:10]
    return f"Measured on a fresh clone ({machine}, {date}): " + "; ".join(parts) + ".\n"


BLOCKS: dict[str, Callable[[Path], str]] = {"series": series_block, "timings": timings_block}


def refresh(text: str, root: Path = ROOT) -> str:
    """``text`` with every known block rebuilt from its source (unknown block names raise ``ValueError``)."""

    def one(m: re.Match) -> str:
        name = m.group("name")
        if name not in BLOCKS:
            raise ValueError(f"unknown README block {name!r}; known: {sorted(BLOCKS)}")
        return m.group(1) + BLOCKS[name](root) + m.group(4)

    return _BLOCK.sub(one, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dpgnn.readme", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a block is stale, write nothing")
    ap.add_argument("--path", type=Path, default=ROOT / "README.md")
    args = ap.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    new = refresh(text, args.path.parent)
    if new == text:
        print(f"{args.path.name}: every generated block is current")
        return 0
    if args.check:
        print(f"{args.path.name}: generated blocks are stale (run python -m dpgnn.readme)", file=sys.stderr)
        return 1
    args.path.write_text(new, encoding="utf-8")
    print(f"{args.path.name}: generated blocks rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
