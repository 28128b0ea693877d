"""DRW speed: one DP epoch with vectorised per-subgraph clipped gradients vs (a) the same model's non-private epoch
and (b) a per-sample Python loop (one autograd backward per subgraph). Ratios are measured in the same run.

    DPGNN_DATA_MIRROR=/work/shared/datasets python benchmarks/drw_dp_epoch.py [--dataset cora] [--layers 2]

An epoch = ⌈m / B⌉ batches of B subgraphs covering the m disjoint DRW subgraphs. (a) runs the same batches through
the same model as one forward/backward of the mean root loss (no per-sample gradients, no clipping, no noise);
(b) computes each subgraph's gradient with its own backward pass, clips and sums. Target: (DP / non-private) ≤ 3.
The DP epoch is timed twice: ``ghost`` (what training uses: :func:`dpgnn.methods.drw.clipped_grad_sum`, norms from
Gram matrices, first layer over split features) and ``vmap`` (per-subgraph gradients materialised with
``torch.func``, then clipped).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from dpgnn.data.random_walks import disjoint_random_walks
from dpgnn.methods import drw
from dpgnn.nn.drw import DRWGCN


def _batches(subs, B, rng):
    perm = torch.as_tensor(rng.permutation(subs.num_subgraphs))
    return [perm[i : i + B] for i in range(0, len(perm), B)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    d = drw.prepare(args.dataset)
    subs = disjoint_random_walks(d.train_edge_index, d.num_nodes, d.train, args.layers, seed=0)
    B = args.batch or drw.batch_size(d.name, "drw", args.layers)
    model = DRWGCN(d.x.shape[1], d.num_classes, args.layers, args.hidden)
    names = [k for k, _ in model.named_parameters()]
    thr = drw.clip_thresholds(None, clip_norm=1.0, names=names)
    gen = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    inputs = []
    for idx in _batches(subs, B, rng):
        xb, ab = drw.dense_subgraph_inputs(d.x, subs, idx)
        inputs.append((xb, ab, d.y[subs.roots[idx]], subs.nodes[idx]))

    split = drw.split_features(d.x)

    def dp_epoch():
        for xb, ab, yb, nodes in inputs:
            sums = drw.clipped_grad_sum(model, xb, ab, yb, thr, split=split, nodes=nodes if split else None)
            noisy = drw.add_noise(sums, 2.0, gen)
            for k, p in model.named_parameters():
                p.grad = noisy[k] / len(yb)

    def vmap_epoch():
        for xb, ab, yb, _ in inputs:
            g = drw.per_subgraph_grads(model, xb, ab, yb)
            noisy = drw.clip_and_noise(g, thr, 2.0, gen)
            for k, p in model.named_parameters():
                p.grad = noisy[k] / len(yb)

    def nonprivate_epoch():
        for xb, ab, yb, _ in inputs:
            model.zero_grad()
            out = torch.vmap(model)(xb, ab)[:, 0]
            torch.nn.functional.cross_entropy(out, yb).backward()

    def loop_epoch():
        for xb, ab, yb, _ in inputs:
            acc = {k: torch.zeros_like(p) for k, p in model.named_parameters()}
            for i in range(len(yb)):
                model.zero_grad()
                out = model(xb[i], ab[i])[0:1]
                torch.nn.functional.cross_entropy(out, yb[i : i + 1]).backward()
                for k, p in model.named_parameters():
                    n = float(p.grad.norm())
                    acc[k] += p.grad * min(1.0, thr[k] / (n + 1e-12))
            for k, p in model.named_parameters():
                p.grad = (acc[k] + 2.0 * torch.randn(p.shape, generator=gen)) / len(yb)

    def best_of(fn):
        fn()  # warm-up
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    t_np, t_dp, t_vmap, t_loop = (best_of(f) for f in (nonprivate_epoch, dp_epoch, vmap_epoch, loop_epoch))
    print(
        f"dataset={d.name} layers={args.layers} hidden={args.hidden} subgraphs={subs.num_subgraphs} B={B} "
        f"batches={len(inputs)} threads={args.threads} split features={split is not None}"
    )
    print(f"non-private epoch      {t_np * 1e3:9.1f} ms")
    print(f"DP epoch (ghost)       {t_dp * 1e3:9.1f} ms   ratio to non-private {t_dp / t_np:5.2f}x (target <= 3x)")
    print(f"DP epoch (vmap)        {t_vmap * 1e3:9.1f} ms   vmap / ghost {t_vmap / t_dp:5.2f}x")
    print(f"DP epoch (python loop) {t_loop * 1e3:9.1f} ms   loop / ghost {t_loop / t_dp:5.2f}x")


if __name__ == "__main__":
    main()
