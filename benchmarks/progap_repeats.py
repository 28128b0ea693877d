"""Cells per second of ProGAP's repeats trained together (``dpgnn.methods.repeats.train_progap_repeats``) against
the sequential loop (``train_progap`` on each seed in turn), both measured in one run, on one CPU thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/progap_repeats.py [--dataset fb100-wisconsin87]
        [--min-class-size 1000] [--levels edge node] [--repeats 10] [--edge-epochs 20] [--node-epochs 5]
        [--depth 3] [--batch-size 256] [--max-degree 100] [--threads 1] [--rounding-reference]
    python benchmarks/progap_repeats.py --table      # the tables from the CSV (results/*.md, README block)

A cell is one seed's full ProGAP run (``K + 1`` stages, ``K`` NAP queries; node level: degree bounding and DP-Adam
with ghost clipping), as the series' grid cells are. Per level, the calibration is done once before the clocks
(it is cached per configuration), then the ``R`` seeds ``0..R-1`` run one after another, then together. Wall and
CPU (process) seconds are both recorded: on a shared machine compare CPU ratios. The row also records how far the
batched results are from the sequential ones: seeds whose test accuracy is identical and the largest difference
(a batched seed equals its sequential run up to float rounding, which a best-epoch choice on a one-row tie in
validation accuracy can turn into a different epoch's model). ``--rounding-reference`` (not timed) also runs the
sequential loop on the features scaled by ``1 + 1e-7`` and records the same two numbers for it: how far float
rounding alone moves a sequential run.

Rows go to ``benchmarks/results/progap_repeats.csv``, replacing an earlier row of the same dataset, level,
repeats, epochs and threads; ``--table`` writes ``benchmarks/results/progap_repeats.md`` from it and puts the same
table between the ``progap_repeats`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse

import repeats_race
import torch

from dpgnn.data import load_dataset
from dpgnn.methods import progap as pg
from dpgnn.methods.repeats import train_progap_repeats

MARKER = "progap_repeats"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "level", "repeats", "epochs", "threads")
COLUMNS = repeats_race.race_columns(
    ["dataset", "level", *repeats_race.GRAPH_COLUMNS, "depth"]
    + ["epochs", "batch_size", "max_degree", "repeats", "threads"],
    ["same_test_acc", "max_test_acc_diff_points", "sequential_mean_test_acc", "batched_mean_test_acc"]
    + ["rounding_same_test_acc", "rounding_max_test_acc_diff_points"],
)


def measure(data, cfg: pg.ProGAPConfig, repeats: int, rounding_reference: bool = False) -> dict:
    """Both clocks of the sequential loop and of the batched run, and how their results compare (with
    ``rounding_reference``: also how the sequential runs compare with runs on features scaled by ``1 + 1e-7``)."""
    pg.run_setup(data, cfg, torch.device("cpu"))  # calibration (cached) outside the clocks
    seeds = list(range(repeats))
    seq, bat, timing = repeats_race.race(
        lambda: [pg.train_progap(data, cfg, seed=s, device="cpu") for s in seeds],
        lambda: train_progap_repeats(data, cfg, seeds, device="cpu"),
        repeats,
    )
    reference = {}
    if rounding_reference:
        scaled = data.clone()
        scaled.x = data.x.float() * (1 + 1e-7)
        moved = [
            abs(a.test_acc - pg.train_progap(scaled, cfg, seed=s, device="cpu").test_acc) for a, s in zip(seq, seeds)
        ]
        reference = {
            "rounding_same_test_acc": sum(d == 0 for d in moved),
            "rounding_max_test_acc_diff_points": round(100 * max(moved), 3),
        }
    return {**reference, **timing, **repeats_race.compare_test_acc(seq, bat)}


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = repeats_race.race_head(
        ["dataset (nodes, train)", "level", "R", "epochs per stage"],
        ["batched vs sequential: same test acc, max diff (points)", "sequential vs features × (1 + 1e-7)"],
    )
    body = []
    for r in repeats_race.read_rows(OUT):
        ref = (
            f"{r['rounding_same_test_acc']} of {r['repeats']}, {r['rounding_max_test_acc_diff_points']}"
            if r.get("rounding_same_test_acc")
            else "not run"
        )
        dataset = f"{r['dataset']} ({int(r['nodes']):,}, {int(r['train_nodes']):,})"
        same = f"{r['same_test_acc']} of {r['repeats']}, {r['max_test_acc_diff_points']}"
        body.append(repeats_race.race_cells(r, [dataset, r["level"], r["repeats"], r["epochs"]], [same, ref]))
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="fb100-wisconsin87")
    ap.add_argument("--min-class-size", type=int, default=1000)
    ap.add_argument("--levels", nargs="+", default=["edge", "node"], choices=["none", "edge", "node"])
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--edge-epochs", type=int, default=20, help="epochs per stage at levels none and edge")
    ap.add_argument("--node-epochs", type=int, default=5)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-degree", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--rounding-reference",
        action="store_true",
        help="also run the sequential loop on features scaled by 1 + 1e-7 (not timed)",
    )
    args = repeats_race.parse(ap, MARKER, table)
    if args.repeats < 2:
        raise SystemExit(f"--repeats must be at least 2, got {args.repeats}")
    data = load_dataset(args.dataset, variant="progap", min_class_size=args.min_class_size)
    rows = []
    for level in args.levels:
        epochs = args.node_epochs if level == "node" else args.edge_epochs
        cfg = pg.ProGAPConfig(
            level=level,
            depth=args.depth,
            epsilon={"edge": 1.0, "node": 8.0}.get(level, 1.0),
            epochs=epochs,
            batch_size=args.batch_size,
            max_degree=args.max_degree,
        )
        row = {
            **repeats_race.stamp(args.threads),
            "dataset": args.dataset,
            "level": level,
            **repeats_race.graph_size(data),
            "depth": args.depth,
            "epochs": epochs,
            "batch_size": args.batch_size if level == "node" else "",
            "max_degree": args.max_degree if level == "node" else "",
            "repeats": args.repeats,
            **measure(data, cfg, args.repeats, args.rounding_reference),
        }
        print(
            {
                k: row[k]
                for k in (
                    "dataset",
                    "level",
                    "sequential_s",
                    "batched_s",
                    "ratio",
                    "cpu_ratio",
                    "same_test_acc",
                    "max_test_acc_diff_points",
                )
            },
            flush=True,
        )
        rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
