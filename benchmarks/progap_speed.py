"""Time of one full ProGAP run (K = 3) at edge and node level on a mirrored Facebook100 stand-in, and the ratios of
node-level training (DP-Adam, degree bounding; calibration excluded) to non-private training at the same epochs.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/progap_speed.py [--dataset fb100-wisconsin87]
        [--min-class-size 1000] [--epochs 100] [--node-epochs 10] [--batch-size 256] [--max-degree 100]
        [--no-opacus] [--no-full-epochs]

Runs, all with seed 0 in one process:

- ``none`` / ``edge``: non-private and edge-level ProGAP at ``--epochs`` per stage (skip with ``--no-full-epochs``).
- ``none_node_epochs``: non-private ProGAP at ``--node-epochs`` (full-batch Adam, one step per epoch).
- ``minibatch_node_epochs``: the baseline at the same batch size: the node-level run (degree bounding, NAP noise,
  the same Poisson batches of rate ``B/N_train`` and number of steps, evaluation each epoch) with each stage trained
  by plain Adam on the mean loss of each batch -- no clipping, no noise (timing only, not private).
- ``node``: node level as trained (``per_sample="ghost"``: ghost clipping + fused Adam);
  ``node_opacus``: the original opacus per-sample path (skip with ``--no-opacus``).

Ratios: ``node_over_nonprivate_same_batches`` (= node / minibatch, the DP cost: the target is ≤ 3),
``node_over_nonprivate_same_epochs`` (node / full-batch non-private: also counts the ``⌊N_train/B⌋`` steps per epoch
that any minibatch training takes), ``opacus_over_ghost``. Wall and CPU (process) seconds are both reported; on a
shared machine compare CPU ratios. Calibration is cached per configuration, so it is done once before timing.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import time
from unittest import mock

import torch
import torch.nn.functional as F

from dpgnn.data import load_dataset
from dpgnn.methods import progap as pg
from dpgnn.metrics import split_accuracy


def minibatch_stage(model, xs, y, masks, *, epochs, lr, dp, generator, weight_decay=0.0, stage=0, **_):
    """Stand-in for :func:`dpgnn.methods.progap.train_stage` (timing baseline, NOT private): with ``dp`` the same
    Poisson batches, steps, per-epoch evaluation and best-epoch restore, but plain Adam on the mean batch loss."""
    if dp is None:
        return pg.train_stage(
            model,
            xs,
            y,
            masks,
            epochs=epochs,
            lr=lr,
            dp=None,
            generator=generator,
            weight_decay=weight_decay,
            stage=stage,
        )
    train_idx = masks["train"].nonzero().view(-1)
    n_train = train_idx.numel()
    q, steps = pg.stage_steps(n_train, dp.batch_size, epochs)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
    best_val, best_state, history = -1.0, copy.deepcopy(model.state_dict()), []
    for epoch in range(epochs):
        model.train()
        for _ in range(steps // epochs):
            batch = train_idx[torch.rand(n_train, generator=generator) < q]
            opt.zero_grad(set_to_none=True)
            if batch.numel():
                F.cross_entropy(model(*[x.index_select(0, batch) for x in xs]), y[batch]).backward()
                opt.step()
        acc = split_accuracy(pg.predict(model, *xs), y, {"train": masks["train"], "val": masks["val"]})
        history.append({"stage": stage, "epoch": epoch + 1, "train_acc": acc["train"], "val_acc": acc["val"]})
        if acc["val"] > best_val:
            best_val, best_state = acc["val"], copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return model, history


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="fb100-wisconsin87")
    ap.add_argument("--min-class-size", type=int, default=1000)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--node-epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-degree", type=int, default=100)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-opacus", action="store_true", help="skip the (slow) opacus per-sample run")
    ap.add_argument("--no-full-epochs", action="store_true", help="skip the none/edge runs at --epochs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    data = load_dataset(args.dataset, variant="progap", min_class_size=args.min_class_size)
    n_train = int(data.train_mask.sum())
    node = pg.ProGAPConfig(
        level="node",
        depth=args.depth,
        epsilon=8.0,
        epochs=args.node_epochs,
        batch_size=args.batch_size,
        max_degree=args.max_degree,
    )
    runs = {}  # name -> (config, per_sample, baseline stage trainer or None)
    if not args.no_full_epochs:
        runs["none"] = (pg.ProGAPConfig(level="none", depth=args.depth, epochs=args.epochs), "ghost", None)
        runs["edge"] = (pg.ProGAPConfig(level="edge", depth=args.depth, epsilon=1.0, epochs=args.epochs), "ghost", None)
    runs["none_node_epochs"] = (pg.ProGAPConfig(level="none", depth=args.depth, epochs=args.node_epochs), "ghost", None)
    runs["minibatch_node_epochs"] = (node, "ghost", minibatch_stage)
    runs["node"] = (node, "ghost", None)
    if not args.no_opacus:
        runs["node_opacus"] = (node, "opacus", None)
    t = time.perf_counter()
    if not args.no_full_epochs:
        pg.privacy_ledger("edge", depth=args.depth, delta=pg.default_delta(data.edge_index.size(1)), target_epsilon=1.0)
    pg.privacy_ledger(
        "node",
        depth=args.depth,
        delta=pg.default_delta(n_train),
        target_epsilon=8.0,
        train_nodes=n_train,
        batch_size=args.batch_size,
        epochs=args.node_epochs,
        max_degree=args.max_degree,
    )
    calib = time.perf_counter() - t
    out = {
        "dataset": args.dataset,
        "nodes": data.num_nodes,
        "edges": int(data.edge_index.size(1)),
        "train_nodes": n_train,
        "depth": args.depth,
        "batch_size": args.batch_size,
        "node_epochs": args.node_epochs,
        "calibration_s": round(calib, 2),
    }
    for name, (cfg, per_sample, stage_fn) in runs.items():
        t, c = time.perf_counter(), time.process_time()
        with mock.patch.object(pg, "train_stage", stage_fn) if stage_fn else contextlib.nullcontext():
            res = pg.train_progap(data, cfg, seed=0, device=args.device, per_sample=per_sample)
        out[f"{name}_s"] = round(time.perf_counter() - t, 2)
        out[f"{name}_cpu_s"] = round(time.process_time() - c, 2)
        out[f"{name}_test_acc"] = round(100 * res.test_acc, 2)
        out[f"{name}_queries"] = res.queries
    for clock in ("s", "cpu_s"):
        if "none" in runs:
            out[f"edge_over_nonprivate_{clock}"] = round(out[f"edge_{clock}"] / out[f"none_{clock}"], 2)
        out[f"node_over_nonprivate_same_batches_{clock}"] = round(
            out[f"node_{clock}"] / out[f"minibatch_node_epochs_{clock}"], 2
        )
        out[f"node_over_nonprivate_same_epochs_{clock}"] = round(
            out[f"node_{clock}"] / out[f"none_node_epochs_{clock}"], 2
        )
        if "node_opacus" in runs:
            out[f"opacus_over_ghost_{clock}"] = round(out[f"node_opacus_{clock}"] / out[f"node_{clock}"], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
