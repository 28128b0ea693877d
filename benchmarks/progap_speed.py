"""Time of one full ProGAP run (K = 3) at edge and node level on the largest mirrored stand-in, and the ratio of
node-level (DP-Adam through opacus, degree bounding, calibration excluded) to non-private training time.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/progap_speed.py [--dataset fb100-wisconsin87]
        [--min-class-size 1000] [--epochs 100] [--node-epochs 10] [--batch-size 256] [--max-degree 100]

Calibration is cached per configuration, so it is done once before timing (a sweep pays it once per budget).
Ratios are against the non-private run measured in the same process, never absolute timings across machines.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from dpgnn.data import load_dataset
from dpgnn.methods import progap as pg


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
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    data = load_dataset(args.dataset, variant="progap", min_class_size=args.min_class_size)
    n_train = int(data.train_mask.sum())
    configs = {
        "none": pg.ProGAPConfig(level="none", depth=args.depth, epochs=args.epochs),
        "edge": pg.ProGAPConfig(level="edge", depth=args.depth, epsilon=1.0, epochs=args.epochs),
        "none_node_epochs": pg.ProGAPConfig(level="none", depth=args.depth, epochs=args.node_epochs),
        "node": pg.ProGAPConfig(level="node", depth=args.depth, epsilon=8.0, epochs=args.node_epochs,
                                batch_size=args.batch_size, max_degree=args.max_degree),
    }
    t = time.perf_counter()
    pg.privacy_ledger("edge", depth=args.depth, delta=pg.default_delta(data.edge_index.size(1)), target_epsilon=1.0)
    pg.privacy_ledger("node", depth=args.depth, delta=pg.default_delta(n_train), target_epsilon=8.0,
                      train_nodes=n_train, batch_size=args.batch_size, epochs=args.node_epochs,
                      max_degree=args.max_degree)
    calib = time.perf_counter() - t
    out = {"dataset": args.dataset, "nodes": data.num_nodes, "edges": int(data.edge_index.size(1)),
           "train_nodes": n_train, "depth": args.depth, "calibration_s": round(calib, 2)}
    for name, cfg in configs.items():
        t = time.perf_counter()
        res = pg.train_progap(data, cfg, seed=0, device=args.device)
        out[f"{name}_s"] = round(time.perf_counter() - t, 2)
        out[f"{name}_test_acc"] = round(100 * res.test_acc, 2)
        out[f"{name}_queries"] = res.queries
    out["edge_over_nonprivate"] = round(out["edge_s"] / out["none_s"], 2)
    out["node_over_nonprivate_same_epochs"] = round(out["node_s"] / out["none_node_epochs_s"], 2)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
