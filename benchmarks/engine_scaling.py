"""Cells per second of a smoke-size grid on a Dask LocalCluster: 2 workers vs 1 worker (1 thread each), and the
rows of both compared (they must be identical: seeds come from the cell).

    python benchmarks/engine_scaling.py                       # lpgcn table2 smoke grid, first 12 cells
    python benchmarks/engine_scaling.py --paper drw --artifact table1 --cells 12
    python benchmarks/engine_scaling.py --table               # the README block from the stored rows

Each run appends one row per worker count to ``benchmarks/results/engine_scaling.csv`` (wall seconds, cells per
second, the sum of the cells' own wall times, the ratio to the first worker count, whether the rows were identical,
the load average before and after) and rewrites the generated block of ``benchmarks/README.md``.

Each configuration computes the same cells into its own temporary store; the clusters are started before the
clock starts, so the ratio is the engine's throughput, not process start-up. On a shared machine the wall times
are contended: read the ratio of one run, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import functools
import os
import subprocess
import tempfile
import time
from pathlib import Path

from repeats_race import RESULTS, read_rows, store, write_table

OUT = RESULTS / "engine_scaling.csv"
COLUMNS = [
    "date",
    "commit",
    "paper",
    "artifact",
    "profile",
    "cells",
    "workers",
    "wall_s",
    "cells_per_s",
    "cell_seconds_sum",
    "ratio",
    "identical_rows",
    "load_before",
    "load_after",
]


def _first(cells_fn, n, cfg):
    return cells_fn(cfg)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", default="lpgcn")
    ap.add_argument("--artifact", default="table2")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--cells", type=int, default=12, help="first N cells of the grid")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--table", action="store_true", help="only rewrite the README block from the stored rows")
    args = ap.parse_args()
    if args.table:
        write_table(OUT, table, "engine_scaling")
        return

    import pandas as pd
    from dask.distributed import Client

    from dpgnn import engine
    from dpgnn.profiles import settings
    from dpgnn.results import ResultStore

    spec = engine.specs(args.paper)[args.artifact]
    spec = dataclasses.replace(spec, cells=functools.partial(_first, spec.cells, args.cells))
    cfg = settings(args.paper, args.profile)
    n = len(spec.cells(cfg))
    results = {}
    load_before = os.getloadavg()[0]
    for w in args.workers:
        root = tempfile.mkdtemp(prefix=f"engine_scaling_{w}w_")
        os.environ["DPGNN_OUTPUT_ROOT"] = root
        cluster = engine.local_cluster(w, 1)
        client = Client(cluster)
        client.wait_for_workers(w)
        t0 = time.perf_counter()
        engine.run_specs([(spec, cfg)], args.profile, client=client, device="cpu", progress=False)
        wall = time.perf_counter() - t0
        client.close()
        cluster.close()
        rows = ResultStore(args.paper, args.profile).load(spec.store)
        cell_cpu = rows.drop_duplicates("config_hash")["cell_seconds"].sum()
        results[w] = (wall, rows, cell_cpu)
        print(
            f"{w} worker(s): {n} cells in {wall:.1f} s wall = {n / wall:.3f} cells/s "
            f"(sum of cell wall times {cell_cpu:.1f} s)"
        )
    base = args.workers[0]
    load_after = os.getloadavg()[0]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    date = dt.datetime.now().isoformat(timespec="seconds")
    rows = []
    for w in args.workers:
        same = True
        try:
            pd.testing.assert_frame_equal(engine.comparable(results[base][1]), engine.comparable(results[w][1]))
        except AssertionError as exc:
            same = False
            print(f"rows differ between {base} and {w} workers: {str(exc).splitlines()[0]}")
        ratio = results[base][0] / results[w][0]
        if w != base:
            print(f"{w} vs {base} worker(s): {ratio:.2f}x cells/s; identical rows: {same}")
        rows.append(
            {
                "date": date,
                "commit": commit,
                "paper": args.paper,
                "artifact": args.artifact,
                "profile": args.profile,
                "cells": n,
                "workers": w,
                "wall_s": round(results[w][0], 2),
                "cells_per_s": round(n / results[w][0], 4),
                "cell_seconds_sum": round(results[w][2], 2),
                "ratio": round(ratio, 3),
                "identical_rows": same,
                "load_before": round(load_before, 2),
                "load_after": round(load_after, 2),
            }
        )
    store(OUT, COLUMNS, ["date", "workers"], rows)
    write_table(OUT, table, "engine_scaling")


def table(path: Path = OUT) -> str:
    """The stored runs, newest first: per run the worker counts' wall times, cells per second and ratio to the
    first, and the mean cell's wall time alone and beside the others (what bounds the ratio)."""
    runs: dict[str, list[dict[str, str]]] = {}
    for r in read_rows(path):
        runs.setdefault(r["date"], []).append(r)
    lines = [
        "| run | grid | cells | workers: wall s (cells/s) | ratio | mean cell s, alone → with the others | "
        "identical rows | load average before → after |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for date, rs in sorted(runs.items(), reverse=True):
        rs = sorted(rs, key=lambda r: int(r["workers"]))
        n = int(rs[0]["cells"])
        walls = "; ".join(f"{r['workers']}: {float(r['wall_s']):.1f} ({float(r['cells_per_s']):.3f})" for r in rs)
        ratios = " / ".join(f"**{float(r['ratio']):.2f}×**" for r in rs[1:])
        cells = " → ".join(f"{float(r['cell_seconds_sum']) / n:.2f}" for r in rs)
        lines.append(
            f"| {date[:16]} ({rs[0]['commit']}) | {rs[0]['paper']} {rs[0]['artifact']} ({rs[0]['profile']}) | {n} "
            f"| {walls} | {ratios} | {cells} | {all(r['identical_rows'] == 'True' for r in rs)} "
            f"| {float(rs[0]['load_before']):.2f} → {float(rs[0]['load_after']):.2f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
