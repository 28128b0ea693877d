"""Batched vs sequential PrivGNN teachers, on the same queries, in one run.

    DPGNN_DATA_MIRROR=../shared/datasets python benchmarks/privgnn_teachers.py --dataset amazon --ks 100 750 \
        --queries 32 --epochs 50 [--device cpu|cuda] [--threads 2]

For each K: (1) the straightforward sequential loop -- one PyG ``SAGE`` teacher per query trained with its own
Adam, exactly the authors' algorithm; (2) the batched trainer of :mod:`dpgnn.nn.privgnn` on the same node sets;
(3) a plain ``torch.bmm`` of the first layer's shapes ([B, K, 2d] @ [B, 2d, h]), the practical matmul limit.
Reports teacher-epochs per second, the speed-up, achieved GFLOP/s (useful first-layer FLOPs: forward + weight
gradient, 4·K·2d·h per teacher-epoch, plus the small second layer) vs the matmul's, and peak memory (RSS on CPU,
``torch.cuda.max_memory_allocated`` on GPU). Timings exclude data preparation shared by both paths (KNN, subgraphs).
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import torch
import torch.nn.functional as F

from dpgnn.methods import privgnn as P
from dpgnn.methods.privgnn import teachers as privgnn_teachers
from dpgnn.nn.privgnn import SAGE, BatchedSAGETeachers, train_batched_teachers
from dpgnn.utils import make_generator, resolve_device


def _sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def sequential(graphs, sets, epochs, dev, hidden=64):
    t0 = time.perf_counter()
    for nodes in sets:
        ei = P.induced_subgraph(graphs.edge_priv, nodes, graphs.num_private).to(dev)
        x, y = graphs.x_priv[nodes].to(dev), graphs.y_priv[nodes].to(dev)
        m = SAGE(graphs.num_features, hidden, graphs.num_classes).to(dev)
        opt = torch.optim.Adam(m.parameters(), lr=0.01)
        m.train()
        for _ in range(epochs):
            opt.zero_grad(set_to_none=True)
            F.nll_loss(m(x, ei), y).backward()
            opt.step()
    _sync(dev)
    return time.perf_counter() - t0


def batched(graphs, sets, epochs, dev, hidden=64, batch=None):
    bs = batch or len(sets)
    stacked = [
        privgnn_teachers._stack(graphs, sets[i : i + bs], dev) for i in range(0, len(sets), bs)
    ]  # shared preprocessing
    _sync(dev)
    t0 = time.perf_counter()
    for xx, mask, y, src, dst, inv in stacked:
        n = xx.size(0)
        model = BatchedSAGETeachers(
            n, graphs.num_features, hidden, graphs.num_classes, generators=[make_generator(j) for j in range(n)]
        ).to(dev)
        train_batched_teachers(model, xx, mask, y, src, dst, inv, epochs=epochs)
    _sync(dev)
    return time.perf_counter() - t0


def matmul_limit(b, k, d2, h, dev, reps=20):
    a = torch.randn(b, k, d2, device=dev)
    w = torch.randn(b, d2, h, device=dev, requires_grad=False)
    torch.bmm(a, w)
    _sync(dev)
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.bmm(a, w)
    _sync(dev)
    return 2.0 * b * k * d2 * h * reps / (time.perf_counter() - t0) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="amazon")
    ap.add_argument("--ks", type=int, nargs="+", default=[100, 750])
    ap.add_argument("--queries", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--gamma", type=float, default=0.3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--batch", type=int, default=0, help="teachers per batch (0 = all queries at once)")
    ap.add_argument("--out", default=None, help="also write the rows as a JSON list to this file")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    graphs = P.prepare(args.dataset)
    d2, h, c = 2 * graphs.num_features, 64, graphs.num_classes
    out = []
    for k in args.ks:
        sets = P.teacher_subgraphs(graphs, P.query_nodes(graphs, args.queries), k=k, gamma=args.gamma, seed=0)
        kk = sum(int(s.numel()) for s in sets) / len(sets)
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        t_seq = sequential(graphs, sets, args.epochs, dev)
        t_bat = batched(graphs, sets, args.epochs, dev, batch=args.batch or None)
        te = args.queries * args.epochs
        flops = te * (4.0 * kk * d2 * h + 6.0 * kk * 2 * h * c)
        limit = matmul_limit(args.batch or args.queries, int(kk), d2, h, dev)
        peak = (
            torch.cuda.max_memory_allocated() / 2**20
            if dev.type == "cuda"
            else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        )
        row = {
            "dataset": args.dataset,
            "device": str(dev),
            "threads": torch.get_num_threads(),
            "K": k,
            "mean_teacher_nodes": kk,
            "queries": args.queries,
            "epochs": args.epochs,
            "sequential_teacher_epochs_per_s": te / t_seq,
            "batched_teacher_epochs_per_s": te / t_bat,
            "speedup": t_seq / t_bat,
            "batched_gflops": flops / t_bat / 1e9,
            "matmul_limit_gflops": limit,
            "fraction_of_limit": flops / t_bat / 1e9 / limit,
            "peak_memory_mib": peak,
        }
        out.append(row)
        print(json.dumps(row))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
