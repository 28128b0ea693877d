"""LPGNN speed: one full grid cell (10 repeats × 500 epochs, Cora, GraphSAGE, multi-bit features, Drop) with the
batched trainer vs a straightforward re-implementation of the per-run loop; the ratio is measured in the same run.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/lpgnn_grid_cell.py [--eps-x 1 --eps-y 1]
        [--repeats 10 --epochs 500] [--reference-runs 1 --reference-epochs 100] [--threads 1]

* batched (:func:`dpgnn.methods.lpgnn.run_cell`): all repeats in one model with a leading repeat dimension; the
  first layer's weights are applied before KProp and the neighbour aggregation (``Â^K X W = Â^K (X W)``), so the
  sparse multi-bit reports (m non-zeros per node) stay sparse on Cora (``propagate_once``); the first layer is
  shared between the evaluation of epoch e and the training forward of epoch e + 1; model selection stays on the
  device.
* straightforward (:func:`dpgnn.methods.lpgnn.train_reference`): per run, the dense N × d features propagated
  once with a cached KProp module, PyG SAGEConv layers, a validation forward and Python-side selection each epoch.

Both train the same model on the same features and labels (the test suite checks they select the same epoch and
accuracy). The straightforward loop is slow, so by default it is timed on ``--reference-runs`` runs of
``--reference-epochs`` epochs and scaled linearly to the full cell (its cost per epoch is constant); pass
``--reference-runs 10 --reference-epochs 500`` to time the whole cell instead.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from dpgnn.methods import lpgnn


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--backbone", default="sage")
    ap.add_argument("--eps-x", type=float, default=1.0)
    ap.add_argument("--eps-y", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=500)
    ap.add_argument("--reference-runs", type=int, default=1)
    ap.add_argument("--reference-epochs", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    data = lpgnn.prepare(args.dataset)
    n, d = data.x.shape
    kx, ky = lpgnn.steps_for(args.dataset, args.eps_x, args.eps_y)
    hp = lpgnn.hparams_for(args.dataset, "mbm", args.eps_x, args.eps_y)
    print(
        f"{args.dataset}: {n} nodes, {d} features; {args.backbone}, eps_x={args.eps_x:g}, eps_y={args.eps_y:g}, "
        f"K_x={kx}, K_y={ky}, {hp}, threads={args.threads}"
    )

    t0 = time.perf_counter()
    rows = lpgnn.run_cell(
        data,
        args.dataset,
        method="mbm",
        eps_x=args.eps_x,
        eps_y=args.eps_y,
        k_x=kx,
        k_y=ky,
        backbone=args.backbone,
        repeats=args.repeats,
        epochs=args.epochs,
        device="cpu",
        threads=args.threads,
    )
    t_batched = time.perf_counter() - t0
    acc = sum(r["value"] for r in rows) / len(rows)
    print(
        f"batched:         {t_batched:8.1f} s for {args.repeats} repeats x {args.epochs} epochs "
        f"(mean test accuracy {acc:.1f}%)"
    )

    labelled = data.train_mask | data.val_mask
    t_ref, done_epochs = 0.0, 0
    for run in range(args.reference_runs):
        draw = lpgnn.draw_features(data, "mbm", args.eps_x, generator=run)
        x = lpgnn.dense_features(draw, n, d)
        noisy = lpgnn.perturb_labels(data.y, args.eps_y, data.num_classes, labelled, run)
        t0 = time.perf_counter()
        lpgnn.train_reference(
            data,
            x,
            noisy,
            backbone=args.backbone,
            seed=run,
            lr=hp["lr"],
            weight_decay=hp["weight_decay"],
            dropout=hp["dropout"],
            k_x=kx,
            k_y=ky,
            label_method="drop",
            eps_y=args.eps_y,
            epochs=args.reference_epochs,
            device="cpu",
        )
        t_ref += time.perf_counter() - t0
        done_epochs += args.reference_epochs
    per_epoch = t_ref / done_epochs
    full = per_epoch * args.repeats * args.epochs
    scaled = (
        ""
        if done_epochs == args.repeats * args.epochs
        else f" (timed {args.reference_runs} run(s) x {args.reference_epochs} epochs = {t_ref:.1f} s, scaled linearly)"
    )
    print(f"straightforward: {full:8.1f} s for the same cell{scaled}")
    print(
        f"speed-up: {full / t_batched:.1f}x  (batched {1e3 * t_batched / (args.repeats * args.epochs):.2f} ms "
        f"vs straightforward {1e3 * per_epoch:.2f} ms per run-epoch)"
    )
    if not math.isfinite(full / t_batched):
        raise SystemExit("timing failed")


if __name__ == "__main__":
    main()
