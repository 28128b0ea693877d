"""Seconds of one run on one-hot features held sparse (``dpgnn.nn.progap.sparse_rows``) against the same run on the
dense feature matrix, both measured in one process, on one CPU thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/sparse_features.py
        [--datasets facebook-pagepage cora] [--methods progap gap mlp graphsage progap-node dp-mlp] [--epochs 20]
        [--threads 1]
    python benchmarks/sparse_features.py --table      # the table from the CSV (results/*.md, README block)

Each run is the bench's graph and split (``dpgnn.bench.shared_split``, seed 0) trained as the bench trains it, with
``--epochs`` per stage: ProGAP and GAP at edge level (ε = 4, their default depth), the MLP at edge level (no private
data) and GraphSAGE, full-batch; ProGAP and the DP-MLP at node level (ε = 4, DP-Adam on batches of 256 rows). The
dense run sets ``SPARSE_FEATURES`` to 0 (no matrix is sparse enough), the sparse run keeps the default; the dense
one goes first. Wall and CPU (process) seconds are both recorded, with the machine's load average before and after
(on a shared machine compare CPU ratios), and both runs' test accuracies (the same run up to float rounding: a
near-tie may flip).

Rows go to ``benchmarks/results/sparse_features.csv``, replacing an earlier row of the same dataset, method, epochs
and threads; ``--table`` writes ``benchmarks/results/sparse_features.md`` from it and puts the same table between
the ``sparse_features`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
from unittest import mock

import repeats_race

MARKER = "sparse_features"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "method", "epochs", "threads")
COLUMNS = [
    "date",
    "dataset",
    "method",
    *repeats_race.GRAPH_COLUMNS,
    "feature_density",
    "epochs",
    "threads",
    "dense_s",
    "sparse_s",
    "dense_cpu_s",
    "sparse_cpu_s",
    "ratio",
    "cpu_ratio",
    "dense_test_acc",
    "sparse_test_acc",
    *repeats_race.MACHINE_COLUMNS,
]
METHODS = ("progap", "gap", "mlp", "graphsage", "progap-node", "dp-mlp")
EPSILON = 4.0


def _run(data, method: str, epochs: int):
    """One run of ``method`` on ``data`` (seed 0, CPU)."""
    from dpgnn.methods.gap import GAPConfig, train_gap
    from dpgnn.methods.progap import ProGAPConfig, train_progap
    from dpgnn.methods.progap_baselines import train_mlp, train_sage

    if method == "progap":
        return train_progap(data, ProGAPConfig(level="edge", epsilon=EPSILON, epochs=epochs), seed=0, device="cpu")
    if method == "gap":
        return train_gap(data, GAPConfig(level="edge", epsilon=EPSILON, epochs=epochs), seed=0, device="cpu")
    if method == "progap-node":
        return train_progap(data, ProGAPConfig(level="node", epsilon=EPSILON, epochs=epochs), seed=0, device="cpu")
    if method == "mlp":
        return train_mlp(data, level="edge", epochs=epochs, seed=0, device="cpu")
    if method == "dp-mlp":
        return train_mlp(data, level="node", epsilon=EPSILON, epochs=epochs, seed=0, device="cpu")
    return train_sage(data, epochs=epochs, seed=0, device="cpu")


def measure(data, method: str, epochs: int) -> dict:
    """Both clocks of the dense run and of the sparse run (:func:`repeats_race.race`, the dense run in the place of
    the sequential one), and their test accuracies."""
    from dpgnn.nn import progap

    def dense_run():
        with mock.patch.object(progap, "SPARSE_FEATURES", 0.0):
            return _run(data, method, epochs)

    _run(data, method, 1)  # calibration (cached) and first-call costs outside the clocks
    dense, sparse, timing = repeats_race.race(dense_run, lambda: _run(data, method, epochs), 1)
    clocks = {
        k.replace("sequential", "dense").replace("batched", "sparse"): v
        for k, v in timing.items()
        if not k.endswith("cells_per_s")
    }
    return {
        **clocks,
        "dense_test_acc": round(100 * dense.test_acc, 2),
        "sparse_test_acc": round(100 * sparse.test_acc, 2),
    }


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = [
        "dataset (nodes, features, nonzero)",
        "method",
        "epochs",
        "dense s",
        "sparse s",
        "wall ratio",
        "CPU ratio",
        "test acc dense / sparse (%)",
        "load",
        "date",
    ]
    body = []
    for r in repeats_race.read_rows(OUT):
        nonzero = 100 * float(r["feature_density"])
        dataset = f"{r['dataset']} ({int(r['nodes']):,}, {int(r['features']):,}, {nonzero:.2f} %)"
        body.append([dataset, r["method"], r["epochs"], *repeats_race.pair_cells(r, "dense", "sparse")])
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["facebook-pagepage", "cora"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    args = repeats_race.parse(ap, MARKER, table)
    if args.epochs < 1:
        raise SystemExit(f"--epochs must be at least 1, got {args.epochs}")
    from dpgnn.bench import shared_split

    rows = []
    for name in args.datasets:
        data = shared_split(name, 0)
        for method in args.methods:
            row = {
                **repeats_race.stamp(args.threads),
                "dataset": name,
                "method": method,
                **repeats_race.graph_size(data),
                "feature_density": round(float((data.x != 0).float().mean()), 4),
                "epochs": args.epochs,
                **measure(data, method, args.epochs),
            }
            print({k: row[k] for k in ("dataset", "method", "dense_s", "sparse_s", "ratio", "cpu_ratio")}, flush=True)
            rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
