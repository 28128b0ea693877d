"""What the batched-repeats benchmarks share (``batched_repeats.py``, ``progap_repeats.py``, ``drw_repeats.py``,
``lpgcn_repeats.py``, ``privgnn_students.py``): the race of a method's sequential loop against its batched run, on
both clocks, and the CSV, markdown table and README block their rows go to. Imported by those scripts as a sibling
module (``python benchmarks/<script>.py`` puts this folder on the import path).
"""

from __future__ import annotations

import csv
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dpgnn.atomic import atomic_open

RESULTS = Path(__file__).resolve().parent / "results"
README = RESULTS.parent / "README.md"


def race(sequential: Callable[[], Any], batched: Callable[[], Any], cells: int) -> tuple[Any, Any, dict]:
    """``sequential()`` then ``batched()``, one after the other, each timed on the wall and CPU (process) clocks.

    Returns both results and the timing columns of a row: seconds, cells per second (``cells`` computed by each),
    the sequential/batched ratios of both clocks, and the machine's load average (``os.getloadavg``, what
    ``uptime`` prints) before the first and after the second: on a shared machine compare the CPU ratios.
    """
    load_before = os.getloadavg()[0]
    t, c = time.perf_counter(), time.process_time()
    seq = sequential()
    seq_s, seq_cpu = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    bat = batched()
    bat_s, bat_cpu = time.perf_counter() - t, time.process_time() - c
    columns = {
        "sequential_s": round(seq_s, 2),
        "batched_s": round(bat_s, 2),
        "sequential_cpu_s": round(seq_cpu, 2),
        "batched_cpu_s": round(bat_cpu, 2),
        "sequential_cells_per_s": round(cells / seq_s, 4),
        "batched_cells_per_s": round(cells / bat_s, 4),
        "ratio": round(seq_s / bat_s, 2),
        "cpu_ratio": round(seq_cpu / bat_cpu, 2),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    return seq, bat, columns


def store(out: Path, columns: Sequence[str], key: Sequence[str], rows: list[dict]) -> None:
    """Append ``rows`` to the CSV ``out`` (header ``columns``), dropping its earlier rows with the same ``key``."""
    old = []
    if out.exists():
        with out.open() as fh:
            old = list(csv.DictReader(fh))
    new_keys = {tuple(str(r[k]) for k in key) for r in rows}
    kept = [r for r in old if tuple(r[k] for k in key) not in new_keys]
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(kept + rows)


def read_rows(out: Path) -> list[dict[str, str]]:
    """The rows of the CSV ``out``, as text."""
    with out.open() as fh:
        return list(csv.DictReader(fh))


def write_table(out: Path, table: Callable[[], str], marker: str, readme: Path = README) -> None:
    """``table()`` (the markdown of ``out``'s rows) to ``results/<marker>.md``, between the ``marker`` markers of
    ``readme`` (where it has them) and to standard output; an error line when ``out`` does not exist yet."""
    if not out.exists():
        raise SystemExit(f"no {out}: run the benchmark first")
    text = table()
    (RESULTS / f"{marker}.md").write_text(text)
    begin, end = f"<!-- begin {marker} -->", f"<!-- end {marker} -->"
    body = readme.read_text()
    if begin in body and end in body:
        head, rest = body.split(begin, 1)
        readme.write_text(f"{head}{begin}\n{text}{end}{rest.split(end, 1)[1]}")
    print(text, end="")
