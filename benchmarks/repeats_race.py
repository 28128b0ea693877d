"""What the batched-repeats benchmarks share (``batched_repeats.py``, ``progap_repeats.py``, ``drw_repeats.py``,
``lpgcn_repeats.py``, ``privgnn_students.py``): the race of a method's sequential loop against its batched run, on
both clocks, and the CSV, markdown table and README block their rows go to. Imported by those scripts as a sibling
module (``python benchmarks/<script>.py`` puts this folder on the import path); ``engine_scaling.py``,
``notebook_startup.py`` and ``sparse_features.py`` use its CSV and README helpers (:func:`store`, :func:`read_rows`,
:func:`write_table`), which is why torch and pandas are imported only by the functions that need them.

A race script's ``marker`` names its CSV ``results/<marker>.csv``, its table ``results/<marker>.md`` and its
README block. The script is built from these pieces:

- the CSV header, :func:`race_columns`: ``date``, what was run, the clocks of :func:`race`, how the two runs
  compare, then the load average and the machine;
- a row: :func:`stamp` (date, threads, machine), the script's columns (with :func:`graph_size` for a graph),
  :func:`race`'s clocks and the comparison (:func:`compare_test_acc` for runs with a test accuracy);
- the command line, :func:`parse`: the script's options, then ``--table``, which only writes the table;
- the rows, :func:`save`: :func:`store` and a closing line;
- the table, :func:`race_head`, :func:`race_cells` (or :func:`pair_cells` for two timed runs) and :func:`markdown`,
  which :func:`write_table` writes.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import platform
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from dpgnn.atomic import atomic_open

RESULTS = Path(__file__).resolve().parent / "results"
README = RESULTS.parent / "README.md"
#: the clock columns of :func:`race`, in their CSV order
CLOCK_COLUMNS = (
    "sequential_s",
    "batched_s",
    "sequential_cpu_s",
    "batched_cpu_s",
    "sequential_cells_per_s",
    "batched_cells_per_s",
    "ratio",
    "cpu_ratio",
)
#: a graph's size columns (:func:`graph_size`)
GRAPH_COLUMNS = ("nodes", "edges", "train_nodes", "features")
#: the last columns of a race CSV: the load average around the race (from :func:`race`), then :func:`stamp`'s machine
MACHINE_COLUMNS = ("load_before", "load_after", "cpus", "torch")


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


def race_columns(setup: Sequence[str], results: Sequence[str]) -> list[str]:
    """A race CSV's header.

    Args:
        setup: the columns of what was run (dataset, method, sizes, threads), after ``date``.
        results: the columns of how the batched results compare with the sequential ones.

    Returns:
        ``date``, ``setup``, :data:`CLOCK_COLUMNS`, ``results``, then :data:`MACHINE_COLUMNS`.
    """
    return ["date", *setup, *CLOCK_COLUMNS, *results, *MACHINE_COLUMNS]


def stamp(threads: int) -> dict:
    """The columns of a row that say when and where it ran: today's ``date``, the torch ``threads``, the machine's
    ``cpus`` and the ``torch`` version."""
    import torch

    return {"date": dt.date.today().isoformat(), "threads": threads, "cpus": os.cpu_count(), "torch": torch.__version__}


def graph_size(data) -> dict:
    """The size columns of ``data`` (a graph with a training mask): nodes, edges (as stored: both directions of an
    undirected edge), training nodes and features."""
    return {
        "nodes": data.num_nodes,
        "edges": int(data.edge_index.size(1)),
        "train_nodes": int(data.train_mask.sum()),
        "features": data.x.size(1),
    }


def compare_test_acc(seq: Sequence, bat: Sequence) -> dict:
    """How the batched runs ``bat`` compare with the sequential runs ``seq`` (results with a ``test_acc`` fraction,
    seed by seed): ``same_test_acc`` (seeds with identical accuracies), ``max_test_acc_diff_points`` and both runs'
    mean accuracies (``sequential_mean_test_acc``, ``batched_mean_test_acc``), in points."""
    diffs = [abs(a.test_acc - b.test_acc) for a, b in zip(seq, bat)]
    return {
        "same_test_acc": sum(d == 0 for d in diffs),
        "max_test_acc_diff_points": round(100 * max(diffs), 3),
        "sequential_mean_test_acc": round(100 * sum(a.test_acc for a in seq) / len(seq), 2),
        "batched_mean_test_acc": round(100 * sum(b.test_acc for b in bat) / len(seq), 2),
    }


def parse(ap: argparse.ArgumentParser, marker: str, table: Callable[[], str]) -> argparse.Namespace:
    """The command line of a race script.

    Adds the last option, ``--table``; with it, writes ``table()`` from ``results/<marker>.csv``
    (:func:`write_table`) and exits. Otherwise sets torch's threads to ``--threads`` (an option of ``ap``).

    Args:
        ap: the script's parser, with its options.
        marker: the script's CSV, table and README block name.
        table: the markdown table of the CSV's rows.

    Returns:
        The parsed arguments of a run.
    """
    import torch

    out = RESULTS / f"{marker}.csv"
    ap.add_argument("--table", action="store_true", help=f"only write {marker}.md from {out.name}")
    args = ap.parse_args()
    if args.table:
        write_table(out, table, marker)
        raise SystemExit(0)
    torch.set_num_threads(args.threads)
    return args


def save(marker: str, columns: Sequence[str], key: Sequence[str], rows: list[dict]) -> None:
    """``rows`` to ``results/<marker>.csv`` (:func:`store`), then a line with the machine and the load average after
    the last race."""
    out = RESULTS / f"{marker}.csv"
    store(out, columns, key, rows)
    print(f"wrote {out} ({platform.machine()}, load {rows[-1]['load_after']})")


def race_head(setup: Sequence[str], results: Sequence[str], unit: str = "cells") -> list[str]:
    """A race table's column titles: ``setup``, both rates (``unit`` per second), the wall and CPU ratios,
    ``results``, the load average and the date."""
    clocks = [f"sequential {unit}/s", f"batched {unit}/s", "wall ratio", "CPU ratio"]
    return [*setup, *clocks, *results, "load", "date"]


def race_cells(row: dict[str, str], setup: Sequence[str], results: Sequence[str]) -> list[str]:
    """A race table's cells of a CSV ``row``, under :func:`race_head`'s titles: ``setup``, the row's rates and
    ratios (the wall ratio in bold), ``results``, its load average before and after, and its date."""
    clocks = [
        f"{float(row['sequential_cells_per_s']):.3f}",
        f"{float(row['batched_cells_per_s']):.3f}",
        f"**{float(row['ratio']):.2f}×**",
        f"{float(row['cpu_ratio']):.2f}×",
    ]
    return [*setup, *clocks, *results, f"{row['load_before']}–{row['load_after']}", row["date"]]


def pair_cells(row: dict[str, str], first: str, second: str) -> list[str]:
    """The table cells of a CSV ``row`` that timed two runs of one thing, named ``first`` and ``second`` (columns
    ``<name>_s`` and ``<name>_test_acc``): both seconds, the wall ratio in bold, the CPU ratio, both test accuracies,
    the load average before and after, and the date."""
    return [
        row[f"{first}_s"],
        row[f"{second}_s"],
        f"**{float(row['ratio']):.2f}×**",
        f"{float(row['cpu_ratio']):.2f}×",
        f"{row[f'{first}_test_acc']} / {row[f'{second}_test_acc']}",
        f"{row['load_before']}–{row['load_after']}",
        row["date"],
    ]


def markdown(head: Sequence[str], body: Iterable[Sequence[str]]) -> str:
    """A pipe table with the column titles ``head`` and a line per row of ``body`` (:func:`dpgnn.findings.md_table`:
    a ``|`` in a title or cell is escaped), ending in a newline."""
    import pandas as pd

    from dpgnn.findings import md_table

    return md_table(pd.DataFrame(list(body), columns=list(head))) + "\n"
