"""Cells per second of a DRW Table 1 configuration's seeds trained together (``dpgnn.series.drw.batch_run``: the
method's ``run.repeats``, what the engine runs for one configuration) against the sequential loop
(``dpgnn.series.drw.run_cell`` on each seed in turn), both measured in one run, on one CPU thread.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/drw_repeats.py [--dataset cora]
        [--methods drw fdp] [--settings 1-layer 2x256] [--lr 0.1] [--clip-fraction 0.1] [--noise-multiplier 4]
        [--repeats 3 10] [--threads 1]
    python benchmarks/drw_repeats.py --table      # the table from the CSV (results/*.md, README block)

A cell is one seed's Table 1 grid cell of the paper profile (the paper's target ε = 8, evaluation at every step).
The dataset is loaded and prepared once before the clocks (the series caches it per process). The ``R`` seeds are
the paper's three, then ``0, 1, ...``. Wall and CPU (process) seconds are both recorded: on a shared machine compare
CPU ratios. ``same_rows`` counts the seeds whose stored rows (values, steps, ε, ledgers) are identical batched and
sequential (a batched seed is its sequential run bit for bit on the CPU).

Rows go to ``benchmarks/results/drw_repeats.csv``, replacing an earlier row of the same dataset, method, setting,
repeats and threads; ``--table`` writes ``benchmarks/results/drw_repeats.md`` from it and puts the same table
between the ``drw_repeats`` markers of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse

import repeats_race

from dpgnn.methods import drw
from dpgnn.methods.drw.repeats import run_dp_repeats
from dpgnn.profiles import settings
from dpgnn.series import drw as series

MARKER = "drw_repeats"
OUT = repeats_race.RESULTS / f"{MARKER}.csv"
KEY = ("dataset", "method", "setting", "repeats", "threads")
COLUMNS = repeats_race.race_columns(
    ["dataset", "method", "setting", "lr", "clip_fraction", "noise_multiplier", "steps", "repeats", "threads"],
    ["same_rows", "mean_test_f1"],
)
_VOLATILE = ("seconds", "cell_seconds")


def cells(dataset: str, method: str, setting: str, lr: float, clip: float, z: float, repeats: int) -> list[dict]:
    """The paper profile's grid cells of one configuration, one per seed (the paper's seeds first)."""
    cfg = settings("drw", "paper", seeds=(list(drw.SEEDS) + list(range(repeats)))[:repeats])
    out = [
        c
        for c in series.table1_cells(cfg, [dataset])
        if c["method"] == method
        and c["setting"] == setting
        and (c["lr"], c["clip_fraction"], c["noise_multiplier"]) == (lr, clip, z)
    ]
    if len(out) != repeats:
        raise SystemExit(f"no paper-profile configuration {method} {setting} lr={lr} clip={clip} z={z}")
    return out


def measure(cfg, grid_cells: list[dict]) -> dict:
    """Both clocks of the sequential loop and of the batched run, and how many seeds' rows agree."""
    cell = grid_cells[0]
    data = series.table1._data(cell["dataset"])  # loaded and prepared outside the clocks
    # both code paths once, two steps, outside the clocks (lazy imports, first-call set-up)
    warm = drw.DPTrainConfig(method=cell["method"], num_layers=cell["num_layers"], hidden=cell["hidden"], max_steps=2)
    run_dp_repeats(data, warm, [0, 1], device="cpu")
    drw.run_dp(data, warm, seed=0, device="cpu")
    repeats = len(grid_cells)
    seq, bat, timing = repeats_race.race(
        lambda: [series.run_cell(cfg, cell, device="cpu") for cell in grid_cells],
        lambda: series.batch_run(cfg, grid_cells, device="cpu"),
        repeats,
    )

    def strip(rows):
        return [{k: v for k, v in r.items() if k not in _VOLATILE} for r in rows]

    same = sum(repr(strip(a)) == repr(strip(b)) for a, b in zip(seq, bat))
    test = [r["value"] for rows in bat for r in rows if r["metric"] == "test_f1"]
    return {
        "steps": seq[0][0]["steps"],
        **timing,
        "same_rows": same,
        "mean_test_f1": round(sum(test) / len(test), 2),
    }


def table() -> str:
    """The CSV as a markdown table (what the README cites)."""
    head = repeats_race.race_head(
        ["dataset", "method", "setting", "lr, clip, z", "steps", "R"], ["seeds with identical rows"]
    )
    body = [
        repeats_race.race_cells(
            r,
            [r["dataset"], r["method"], r["setting"], f"{r['lr']}, {r['clip_fraction']}, {r['noise_multiplier']}"]
            + [r["steps"], r["repeats"]],
            [f"{r['same_rows']} of {r['repeats']}"],
        )
        for r in repeats_race.read_rows(OUT)
    ]
    return repeats_race.markdown(head, body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--methods", nargs="+", default=["drw"], choices=list(drw.DP_METHODS))
    ap.add_argument("--settings", nargs="+", default=["1-layer", "2x256"], choices=list(drw.ARCHS))
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--clip-fraction", type=float, default=0.1)
    ap.add_argument("--noise-multiplier", type=float, default=4.0)
    ap.add_argument("--repeats", type=int, nargs="+", default=[3, 10])
    ap.add_argument("--threads", type=int, default=1)
    args = repeats_race.parse(ap, MARKER, table)
    if min(args.repeats) < 2:
        raise SystemExit(f"--repeats must be at least 2, got {min(args.repeats)}")
    cfg = settings("drw", "paper")
    rows = []
    for method in args.methods:
        for setting in args.settings:
            for repeats in args.repeats:
                grid_cells = cells(
                    args.dataset, method, setting, args.lr, args.clip_fraction, args.noise_multiplier, repeats
                )
                row = {
                    **repeats_race.stamp(args.threads),
                    "dataset": args.dataset,
                    "method": method,
                    "setting": setting,
                    "lr": args.lr,
                    "clip_fraction": args.clip_fraction,
                    "noise_multiplier": args.noise_multiplier,
                    "repeats": repeats,
                    **measure(cfg, grid_cells),
                }
                print({k: row[k] for k in ("method", "setting", "repeats", "steps", "ratio", "cpu_ratio")}, flush=True)
                rows.append(row)
    repeats_race.save(MARKER, COLUMNS, KEY, rows)


if __name__ == "__main__":
    main()
