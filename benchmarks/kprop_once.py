"""Seconds of one multi-bit (LPGNN) run whose release is propagated once (``Â^K X`` held dense, then one dense
projection per epoch) against the same run propagating each epoch's projection ``K`` times (the release kept
sparse), both measured in one process, on one CPU thread, with the choice ``dpgnn.nn.lpgnn.propagate_once`` makes.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/kprop_once.py
        [--datasets credit amazon-computers facebook-pagepage] [--k-x 8] [--epochs 100] [--threads 1]
    python benchmarks/kprop_once.py --table      # the table from the CSV (results/*.md, README block)

Each run is ``dpgnn.fit(graph, "mbm", level="feature", epsilon=2, seed=0, k_x=K, epochs=E)`` on the bench's graph
and split (``dpgnn.bench.shared_split``, seed 0): the bench's multi-bit trial, with fewer epochs. The run that
propagates each epoch sets ``PROPAGATE_ONCE`` to 0 and goes first; the other sets it to infinity. ``cost_ratio`` is
the rule's ``N·d / (K·nnz(Â))``: the rule propagates once where it is at most ``PROPAGATE_ONCE``. Wall and CPU
(process) seconds are both recorded, with the machine's load average before and after (on a shared machine compare
CPU ratios), and both runs' test accuracies (the same run up to float rounding).

Rows go to ``benchmarks/results/kprop_once.csv``, replacing an earlier row of the same dataset, K, epochs and
threads; ``--table`` writes ``benchmarks/results/kprop_once.md`` from it and puts the same table between the
``kprop_once`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import math
from unittest import mock

import repeats_race

MARKER = "kprop_once"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "k_x", "epochs", "threads")
COLUMNS = [
    "date",
    "dataset",
    *repeats_race.GRAPH_COLUMNS,
    "k_x",
    "cost_ratio",
    "rule",
    "epochs",
    "threads",
    "each_s",
    "once_s",
    "each_cpu_s",
    "once_cpu_s",
    "ratio",
    "cpu_ratio",
    "each_test_acc",
    "once_test_acc",
    *repeats_race.MACHINE_COLUMNS,
]
EPSILON = 2.0


def measure(data, k_x: int, epochs: int) -> dict:
    """Both clocks of the run propagating each epoch and of the run propagating once
    (:func:`repeats_race.race`, the first in the place of the sequential one), and their test accuracies."""
    import dpgnn
    from dpgnn.nn import lpgnn

    def fit(factor: float, epochs: int = epochs):
        with mock.patch.object(lpgnn, "PROPAGATE_ONCE", factor):
            kw = dict(level="feature", epsilon=EPSILON, seed=0, device="cpu", k_x=k_x)
            return dpgnn.fit(data, "mbm", epochs=epochs, **kw)

    fit(0.0, 1)  # first-call costs outside the clocks
    each, once, timing = repeats_race.race(lambda: fit(0.0), lambda: fit(math.inf), 1)
    clocks = {
        k.replace("sequential", "each").replace("batched", "once"): v
        for k, v in timing.items()
        if not k.endswith("cells_per_s")
    }
    return {
        **clocks,
        "each_test_acc": round(100 * each.metrics["test"], 2),
        "once_test_acc": round(100 * once.metrics["test"], 2),
    }


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = [
        "dataset (nodes, edges, features)",
        "K",
        "N·d / K·nnz",
        "rule",
        "epochs",
        "each epoch s",
        "once s",
        "wall ratio",
        "CPU ratio",
        "test acc each / once (%)",
        "load",
        "date",
    ]
    body = []
    for r in repeats_race.read_rows(OUT):
        dataset = f"{r['dataset']} ({int(r['nodes']):,}, {int(r['edges']):,}, {int(r['features']):,})"
        setup = [dataset, r["k_x"], f"{float(r['cost_ratio']):.2f}", r["rule"], r["epochs"]]
        body.append(setup + repeats_race.pair_cells(r, "each", "once"))
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["credit", "amazon-computers", "facebook-pagepage"])
    ap.add_argument("--k-x", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    args = repeats_race.parse(ap, MARKER, table)
    if args.epochs < 1 or args.k_x < 1:
        raise SystemExit(f"--epochs and --k-x must be at least 1, got {args.epochs} and {args.k_x}")
    from dpgnn.bench import shared_split
    from dpgnn.nn.lpgnn import PROPAGATE_ONCE, normalized_adjacency, propagate_once

    rows = []
    for name in args.datasets:
        data = shared_split(name, 0)
        n, d = data.x.shape
        adj = normalized_adjacency(data.edge_index, n)
        row = {
            **repeats_race.stamp(args.threads),
            "dataset": name,
            **repeats_race.graph_size(data),
            "k_x": args.k_x,
            "cost_ratio": round(n * d / (args.k_x * adj.csr.values().numel()), 3),
            "rule": "once" if propagate_once(n, d, adj, args.k_x) else f"each (ratio > {PROPAGATE_ONCE:g})",
            "epochs": args.epochs,
            **measure(data, args.k_x, args.epochs),
        }
        print({k: row[k] for k in ("dataset", "cost_ratio", "rule", "each_s", "once_s", "ratio", "cpu_ratio")})
        rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
