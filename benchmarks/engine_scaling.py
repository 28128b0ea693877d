"""Cells per second of a smoke-size grid on a Dask LocalCluster: 2 workers vs 1 worker (1 thread each), and the
rows of both compared (they must be identical: seeds come from the cell).

    python benchmarks/engine_scaling.py                       # lpgcn table2 smoke grid, first 12 cells
    python benchmarks/engine_scaling.py --paper drw --artifact table1 --cells 12

Each configuration computes the same cells into its own temporary store; the clusters are started before the
clock starts, so the ratio is the engine's throughput, not process start-up. On a shared machine the wall times
are contended: read the ratio of one run, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import tempfile
import time


def _first(cells_fn, n, cfg):
    return cells_fn(cfg)[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", default="lpgcn")
    ap.add_argument("--artifact", default="table2")
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--cells", type=int, default=12, help="first N cells of the grid")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()

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
    for w in args.workers[1:]:
        same = True
        try:
            pd.testing.assert_frame_equal(engine.comparable(results[base][1]), engine.comparable(results[w][1]))
        except AssertionError as exc:
            same = False
            print(f"rows differ between {base} and {w} workers: {str(exc).splitlines()[0]}")
        print(f"{w} vs {base} worker(s): {results[base][0] / results[w][0]:.2f}x cells/s; identical rows: {same}")


if __name__ == "__main__":
    main()
