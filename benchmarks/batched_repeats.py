"""Cells per second of DP-GNN's and DP-MLP's repeats trained together (``dpgnn.methods.dp_gnn_repeats.
train_dp_gnn_repeats``, ``dpgnn.methods.repeats.train_mlp_repeats``) against the sequential loop (``train_dp_gnn`` /
``train_mlp`` on each seed in turn), both measured in one run, on one CPU thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/batched_repeats.py [--dataset fb100-amherst41]
        [--min-class-size 100] [--methods dp-gnn dp-mlp] [--repeats 10] [--epochs 5] [--batch-size 128]
        [--max-degree 50] [--threads 1] [--bench-split]
    python benchmarks/batched_repeats.py --table      # the table from the CSV (results/*.md, README block)

A cell is one seed's full run at node level, ε = 8 (the ProGAP series' Table 2 cell of these baselines): DP-GNN's
degree bounding, per-root clipped steps and best-validation restore; DP-MLP's DP-Adam with ghost clipping. Per
method, the calibration is done once before the clocks (it is cached per configuration), then the ``R`` seeds
``0..R-1`` run one after another, then together. Wall and CPU (process) seconds are both recorded (on a shared
machine compare CPU ratios), with the machine's load average (``os.getloadavg``, what ``uptime`` prints) before and
after, and how far the batched results are from the sequential ones: seeds whose test accuracy is identical, the
largest test-accuracy difference and the largest difference of a trained weight.

``--repeats 1`` times one run against a batch of one seed: what ``dpgnn.fit`` and the bench run for DP-GNN (its
registered run is a batch of one). ``--bench-split`` loads the graph as the bench does (``dpgnn.bench.shared_split``
of seed 0: any bench dataset, e.g. Cora or CiteSeer) instead of ProGAP's variant.

Rows go to ``benchmarks/results/batched_repeats.csv``, replacing an earlier row of the same dataset, method,
repeats, epochs and threads; ``--table`` writes ``benchmarks/results/batched_repeats.md`` from it and puts the same
table between the ``batched_repeats`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse

import repeats_race
import torch

from dpgnn.data import load_dataset
from dpgnn.methods import dp_gnn
from dpgnn.methods.dp_gnn_repeats import train_dp_gnn_repeats
from dpgnn.methods.progap_baselines import mlp_ledger, train_mlp
from dpgnn.methods.repeats import train_mlp_repeats

MARKER = "batched_repeats"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "method", "repeats", "epochs", "threads")
COLUMNS = repeats_race.race_columns(
    ["dataset", "method", *repeats_race.GRAPH_COLUMNS, "feature_density"]
    + ["epochs", "batch_size", "max_degree", "repeats", "threads"],
    ["same_test_acc", "max_test_acc_diff_points", "max_weight_diff"]
    + ["sequential_mean_test_acc", "batched_mean_test_acc"],
)
EPSILON = 8.0


def _runners(data, method: str, args):
    """The method's (warm-up, one seed, all seeds together) calls."""
    if method == "dp-gnn":
        cfg = dp_gnn.DPGNNConfig(
            epsilon=EPSILON, epochs=args.epochs, batch_size=args.batch_size, max_degree=args.max_degree
        )
        return (
            lambda: dp_gnn.dp_gnn_setup(data, cfg, torch.device("cpu")),
            lambda s: dp_gnn.train_dp_gnn(data, cfg, seed=s, device="cpu"),
            lambda seeds: train_dp_gnn_repeats(data, cfg, seeds, device="cpu"),
        )
    kw = {"level": "node", "epsilon": EPSILON, "epochs": args.epochs, "batch_size": args.batch_size}
    return (
        lambda: mlp_ledger(data, "node", EPSILON, None, None, args.batch_size, args.epochs, 1.0, None),
        lambda s: train_mlp(data, seed=s, device="cpu", **kw),
        lambda seeds: train_mlp_repeats(data, seeds, device="cpu", **kw),
    )


def measure(data, method: str, args) -> dict:
    """Both clocks of the sequential loop and of the batched run, and how their results compare."""
    warm, one, together = _runners(data, method, args)
    warm()  # calibration (cached) outside the clocks
    seeds = list(range(args.repeats))
    seq, bat, timing = repeats_race.race(lambda: [one(s) for s in seeds], lambda: together(seeds), len(seeds))
    weights = max(
        float((p - q).abs().max()) for a, b in zip(seq, bat) for p, q in zip(a.model.parameters(), b.model.parameters())
    )
    return {**timing, **repeats_race.compare_test_acc(seq, bat), "max_weight_diff": f"{weights:.1e}"}


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = repeats_race.race_head(
        ["dataset (nodes, train, features)", "method", "B, D", "R", "epochs"],
        ["batched vs sequential: same test acc, max diff (points), max weight diff"],
    )
    body = []
    for r in repeats_race.read_rows(OUT):
        dataset = f"{r['dataset']} ({int(r['nodes']):,}, {int(r['train_nodes']):,}, {r['features']})"
        bd = f"{r['batch_size']}, {r['max_degree'] or '–'}"
        same = f"{r['same_test_acc']} of {r['repeats']}, {r['max_test_acc_diff_points']}, {r['max_weight_diff']}"
        body.append(repeats_race.race_cells(r, [dataset, r["method"], bd, r["repeats"], r["epochs"]], [same]))
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="fb100-amherst41")
    ap.add_argument("--min-class-size", type=int, default=100)
    ap.add_argument("--methods", nargs="+", default=["dp-gnn", "dp-mlp"], choices=["dp-gnn", "dp-mlp"])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--max-degree", type=int, default=50, help="DP-GNN's degree bound D")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bench-split", action="store_true", help="the bench's graph and split (seed 0)")
    args = repeats_race.parse(ap, MARKER, table)
    if args.repeats < 1:
        raise SystemExit(f"--repeats must be at least 1, got {args.repeats}")
    if args.bench_split:
        from dpgnn.bench import shared_split

        data = shared_split(args.dataset, 0)
    else:
        data = load_dataset(args.dataset, variant="progap", min_class_size=args.min_class_size)
    rows = []
    for method in args.methods:
        row = {
            **repeats_race.stamp(args.threads),
            "dataset": args.dataset + (" (bench split)" if args.bench_split else ""),
            "method": method,
            **repeats_race.graph_size(data),
            "feature_density": round(float((data.x != 0).float().mean()), 4),
            "epochs": args.epochs,
            "batch_size": args.batch_size,
            "max_degree": args.max_degree if method == "dp-gnn" else "",
            "repeats": args.repeats,
            **measure(data, method, args),
        }
        print({k: row[k] for k in ("dataset", "method", "sequential_s", "batched_s", "ratio", "cpu_ratio")}, flush=True)
        rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
