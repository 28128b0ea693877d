"""Cells per second of an LPGCN Table 2 node-classification configuration's runs trained together
(``dpgnn.series.lpgcn.batch_run``: the method's ``run.repeats``, what the engine runs for one configuration) against
the sequential loop (``dpgnn.series.lpgcn.table2_cell`` on each run in turn), both measured in one run, on one CPU
thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/lpgcn_repeats.py [--dataset cora]
        [--methods pgc raw] [--epsilon 1] [--repeats 3 10] [--threads 1]
    python benchmarks/lpgcn_repeats.py --table      # the table from the CSV (results/*.md, README block)

A cell is one run's Table 2 cell of the paper profile (GCN, Table 4's hyper-parameters, early stopping with patience
20 of at most 500 epochs; a private method at ``--epsilon``, RAW at ε = ∞); the ``R`` runs are the run indices
``0 .. R-1``. The dataset is loaded and prepared once before the clocks (the series caches it per process); each
run's perturbation of the features is inside them (it is part of the cell, drawn per run with its own generator in
both loops: ``perturb_s`` is its share). Wall and CPU (process) seconds are both recorded: on a shared machine
compare CPU ratios. ``same_rows`` counts the runs whose stored rows (values, epochs, ledgers, config hashes) are
identical batched and sequential (a batched run is its sequential run bit for bit on the CPU).

Rows go to ``benchmarks/results/lpgcn_repeats.csv``, replacing an earlier row of the same dataset, method, ε,
repeats and threads; ``--table`` writes ``benchmarks/results/lpgcn_repeats.md`` from it and puts the same table
between the ``lpgcn_repeats`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import math

import repeats_race

from dpgnn.profiles import settings
from dpgnn.series import lpgcn as series

MARKER = "lpgcn_repeats"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "method", "epsilon", "repeats", "threads")
COLUMNS = repeats_race.race_columns(
    ["dataset", "method", "epsilon", "epochs", "repeats", "threads", "perturb_s"], ["same_rows", "mean_micro_f1"]
)
_VOLATILE = ("versions",)


def cells(dataset: str, method: str, epsilon: float, repeats: int) -> list[dict]:
    """The paper profile's node-classification cells of one configuration, one per run index."""
    cfg = settings("lpgcn", "paper", runs=repeats)
    eps = math.inf if method == "raw" else float(epsilon)
    out = [
        c
        for c in series.table2_cells(cfg, [dataset])
        if c["task"] == "node_classification" and c["method"] == method and c["epsilon"] == eps
    ]
    if len(out) != repeats:
        raise SystemExit(f"no paper-profile node-classification configuration {method} at epsilon={epsilon}")
    return out


def measure(cfg, grid_cells: list[dict]) -> dict:
    """Both clocks of the sequential loop and of the batched run, and how many runs' rows agree."""
    first = grid_cells[0]
    series._data(first["dataset"])  # loaded and prepared outside the clocks
    # both code paths once, two epochs, outside the clocks (lazy imports, first-call set-up)
    warm = [{**c, "max_epochs": 2, "min_epochs": 1} for c in grid_cells[:2]]
    series.batch_run(cfg, warm, device="cpu")
    series.table2_cell(cfg, warm[0], device="cpu")
    repeats = len(grid_cells)
    seq, bat, timing = repeats_race.race(
        lambda: [series.table2_cell(cfg, cell, device="cpu") for cell in grid_cells],
        lambda: [rows[0] for rows in series.batch_run(cfg, grid_cells, device="cpu")],
        repeats,
    )

    def strip(row):
        return {k: v for k, v in row.items() if not k.endswith("_s") and k not in _VOLATILE}

    same = sum(repr(strip(a)) == repr(strip(b)) for a, b in zip(seq, bat))
    return {
        "epochs": round(sum(r["epochs"] for r in seq) / repeats, 1),
        "perturb_s": round(sum(r["perturb_time_s"] for r in bat), 2),
        **timing,
        "same_rows": same,
        "mean_micro_f1": round(sum(r["value"] for r in bat) / repeats, 2),
    }


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = repeats_race.race_head(
        ["dataset", "method", "ε", "mean epochs", "R", "perturbation s (of the batch)"],
        ["runs with identical rows", "mean micro-F1 %"],
    )
    body = [
        repeats_race.race_cells(
            r,
            [r["dataset"], r["method"], r["epsilon"], r["epochs"], r["repeats"], r["perturb_s"]],
            [f"{r['same_rows']} of {r['repeats']}", r["mean_micro_f1"]],
        )
        for r in repeats_race.read_rows(OUT)
    ]
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--methods", nargs="+", default=["pgc", "raw"], choices=["lm", "pm", "pgc", "raw"])
    ap.add_argument("--epsilon", type=float, default=1.0, help="ε of the private methods (RAW: ∞)")
    ap.add_argument("--repeats", type=int, nargs="+", default=[3, 10])
    ap.add_argument("--threads", type=int, default=1)
    args = repeats_race.parse(ap, MARKER, table)
    if min(args.repeats) < 2:
        raise SystemExit(f"--repeats must be at least 2, got {min(args.repeats)}")
    rows = []
    for method in args.methods:
        for repeats in args.repeats:
            cfg = settings("lpgcn", "paper", runs=repeats)
            grid_cells = cells(args.dataset, method, args.epsilon, repeats)
            row = {
                **repeats_race.stamp(args.threads),
                "dataset": args.dataset,
                "method": method,
                "epsilon": "inf" if method == "raw" else args.epsilon,
                "repeats": repeats,
                **measure(cfg, grid_cells),
            }
            print({k: row[k] for k in ("method", "repeats", "epochs", "ratio", "cpu_ratio", "same_rows")}, flush=True)
            rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
