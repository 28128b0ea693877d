"""DRW, DRW-D, DRW-R and FDP repeats in one batched run: :func:`run_dp_repeats` trains ``R`` seeds of one
configuration together and returns, per seed, the result :func:`~dpgnn.methods.drw.dp.run_dp` returns for that
seed.

Each seed is set up exactly as its sequential run (:func:`~dpgnn.methods.drw.dp._start`: the same global seeding
before its model's initialisation, its own NumPy generator for the walks and the batches, its own noise generator,
its own clipping thresholds and Adam), so every random draw is the one of its sequential run. What is shared is
read-only (the features on the device and their :class:`~dpgnn.nn.drw.SplitFeatures`, built once instead of once
per seed) and the work of a step: the first layer's full-graph product ``x Wᵀ`` is one product with the seeds'
weights side by side (``[N, R·k]``), the per-subgraph products of :func:`~dpgnn.methods.drw.gradients.clipped_grad_sum`
run over the ``R·B`` subgraphs of all seeds at once (one forward, one backward), the clipped first-layer weight sums
``xᵀ V`` are one product over the seeds' ``V`` side by side, and the evaluation's first layer and propagation
``Â (x Wᵀ)`` are one product for all seeds. Products with a seed's own weights beyond the first layer stay per seed.
Column blocks of one product and batch elements of one ``bmm`` are computed as the per-seed products are, so a
seed's numbers equal its sequential run's (tested bit for bit on the CPU; up to float rounding elsewhere).

Early stopping (``fidelity="authors_code"``): a seed that stops leaves the batch with its state as its sequential run
leaves it; the others go on. Runs the batch cannot share -- an audit hook (``canary``), ``on_model``,
``per_sample="vmap"`` or dense (non-split) features -- run one after the other (:func:`batchable`).
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from dpgnn.data.random_walks import Subgraphs
from dpgnn.methods.drw.data import DRWData
from dpgnn.methods.drw.dp import DPTrainConfig, _Run, _sampling, _start, run_dp
from dpgnn.methods.drw.evaluation import split_features
from dpgnn.methods.drw.gradients import dense_subgraph_inputs
from dpgnn.methods.drw.paper import DELTA
from dpgnn.utils import resolve_device

__all__ = ["batchable", "run_dp_repeats"]


def batchable(d: DRWData, cfg: DPTrainConfig) -> str | None:
    """Why the seeds of ``cfg`` on ``d`` cannot train in one batch, or None: only the ghost-clipped GCN on split
    (bag-of-words) features is stacked."""
    return _why_not(cfg, split_features(d.x))


def _why_not(cfg: DPTrainConfig, split) -> str | None:
    if cfg.per_sample != "ghost":
        return "per_sample='vmap' forms per-subgraph gradients one seed at a time"
    if split is None:
        return "dense features (no sparse split of x)"
    return None


def run_dp_repeats(d: DRWData, cfg: DPTrainConfig, seeds: list[int], *, device: str = "auto") -> list[dict[str, Any]]:
    """:func:`~dpgnn.methods.drw.dp.run_dp` for each of ``seeds``, trained together: one result dict per seed, each
    equal to ``run_dp(d, cfg, seed=seed, device=device)`` (``seconds``: the batch's wall time shared equally).
    Configurations that :func:`batchable` rejects run one seed after the other."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must name at least one seed")
    if len(seeds) == 1 or cfg.per_sample != "ghost":
        return [run_dp(d, cfg, seed=s, device=device) for s in seeds]
    dev = resolve_device(device)
    delta = DELTA.get(d.name, 1e-5) if cfg.delta is None else float(cfg.delta)
    t0 = time.perf_counter()
    x = d.x.to(dev)
    split = split_features(x)
    if _why_not(cfg, split) is not None:
        return [run_dp(d, cfg, seed=s, device=device) for s in seeds]
    s = _sampling(d, cfg, delta)
    runs = [_start(d, cfg, s, seed, dev, x, split) for seed in seeds]
    _train(runs, split)
    seconds = (time.perf_counter() - t0) / len(runs)
    accounted: dict[int, dict[str, Any]] = {}  # the seeds' accounting, one per number of steps taken
    return [r.result(delta, seconds, accounted) for r in runs]


def _train(runs: list[_Run], split) -> None:
    """The steps of every run, the runs that have not stopped together: draws, clipped sums, noise and Adam,
    evaluations, early stops -- each run's in the order its sequential loop makes them."""
    first: dict[tuple[int, ...], list[Tensor]] = {}  # the first layer's x Wᵀ of the live runs, while their weights hold
    for t in range(1, runs[0].T + 1):
        live = [r for r in runs if r.sel.stopped is None]
        if not live:
            break
        key = tuple(id(r) for r in live)
        batches = _draw(live, t)
        xw = first.pop(key, None)
        if xw is None:
            xw = _first_product(live, split)
        for r, sums in zip(live, stacked_clipped_sums(live, batches, split, xw)):
            r.update(sums)
        due = [r for r in live if r.sel.due(t)]
        if due:
            xw = _first_product(due, split)
            for r, out in zip(due, _stacked_eval(due, split, xw)):
                r.sel.record(t, out=out)
            first = {tuple(id(r) for r in due): xw}
        for r in live:
            r.sel.stop(t)


def _draw(runs: list[_Run], t: int) -> list[tuple]:
    """Each run's batch of step ``t`` (its own draws, :meth:`_Run.pick`), the dense inputs of all runs built at
    once (row by row as one run's: :func:`~dpgnn.methods.drw.gradients.dense_subgraph_inputs`)."""
    picks = [r.pick(t) for r in runs]
    b = runs[0].batches
    nodes = torch.cat([s.nodes[idx] for s, idx in picks]).to(b.dev)
    adj = torch.cat([s.adj[idx] for s, idx in picks]).to(b.dev)
    xb, ab = dense_subgraph_inputs(b.x, Subgraphs(nodes, adj))
    yb = b.y[nodes[:, 0]]
    n = len(picks[0][1])
    return [tuple(v[i * n : (i + 1) * n] for v in (xb, ab, yb, nodes)) for i in range(len(runs))]


#: the widest side-by-side product (columns): on the CPU a wider one with the sparse features runs slower than one
#: product per group of seeds (its operands leave the cache), a narrower one pays the per-product overhead
COLUMNS = 256


def _groups(n: int, k: int) -> list[slice]:
    """``n`` runs of ``k`` units each in consecutive groups of at most :data:`COLUMNS` columns (one run at least)."""
    size = max(1, COLUMNS // k)
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]


def _first_product(runs: list[_Run], split) -> list[Tensor]:
    """``x Wᵀ`` of every run's first layer (as ``SplitFeatures.matmul``), each run's ``[N, k]`` a column block of
    one product per group of runs (:func:`_groups`)."""
    k = runs[0].model.lins[0].out_features
    out = []
    for g in _groups(len(runs), k):
        w = torch.cat([r.model.lins[0].weight.detach() for r in runs[g]]).T
        p = split.rest @ w + split.base @ w
        out += [p[:, i * k : (i + 1) * k] for i in range(g.stop - g.start)]
    return out


def _clip_factors(norms: Tensor, thresholds: list[float], per: int) -> Tensor:
    """``clip_j`` of every subgraph: each run's threshold over its ``per`` rows, as ``threshold / (norm + 1e-12)``
    capped at 1 computes it for one run."""
    thr = torch.tensor(thresholds, dtype=norms.dtype, device=norms.device).repeat_interleave(per)
    return ((norms + 1e-12).reciprocal() * thr).clamp(max=1.0)


def stacked_clipped_sums(runs: list[_Run], batches: list[tuple], split, xw: list[Tensor]) -> list[dict[str, Tensor]]:
    """:func:`~dpgnn.methods.drw.gradients.clipped_grad_sum` of each run on its batch (``(xb, ab, yb, nodes)``),
    all runs in one forward and one backward over their ``R·B`` subgraphs; ``xw`` the first layer's ``x Wᵀ`` of the
    runs side by side (:func:`_first_product`). One dict of clipped sums per run."""
    R, B = len(runs), batches[0][0].shape[0]
    model0 = runs[0].model
    xb = torch.cat([b[0] for b in batches])
    ab = torch.cat([b[1] for b in batches])
    yb = torch.cat([b[2] for b in batches])
    nodes = torch.cat([b[3] for b in batches])
    mask = (nodes >= 0).unsqueeze(-1).to(xb.dtype)
    idx = nodes.clamp(min=0)
    xw0 = torch.cat([p[idx[i * B : (i + 1) * B]] for i, p in enumerate(xw)]) * mask
    prop = torch.bmm(ab, xw0) if model0.propagate else xw0
    bias0 = torch.stack([r.model.lins[0].bias.detach() for r in runs])
    z = (prop.view(R, B, *prop.shape[1:]) + bias0[:, None, None, :]).view(prop.shape).requires_grad_()
    inputs: list[Tensor | None] = [None]
    outputs = [z]
    last = len(model0.lins) - 1
    h = F.relu(z) if last > 0 else z
    for i in range(1, last + 1):
        a = torch.bmm(ab, h) if model0.propagate else h
        z = torch.cat(
            [a[j * B : (j + 1) * B] @ r.model.lins[i].weight.T + r.model.lins[i].bias for j, r in enumerate(runs)]
        )
        inputs.append(a.detach())
        outputs.append(z)
        h = F.relu(z) if i < last else z
    out = F.normalize(h, dim=-1) if model0.normalize_logits else h
    root = out[:, 0]
    if runs[0].d.multilabel:
        loss = F.binary_cross_entropy_with_logits(root, yb, reduction="none").mean(1).sum()
    else:
        loss = F.cross_entropy(root, yb, reduction="sum")
    grads = torch.autograd.grad(loss, outputs)
    sums: list[dict[str, Tensor]] = [{} for _ in runs]
    names = [k for k, _ in model0.named_parameters()]
    for i, (a, g) in enumerate(zip(inputs, grads)):
        kw, kb = names[2 * i], names[2 * i + 1]
        if a is None:
            gram = torch.bmm(xb, xb.transpose(1, 2))
            aa = torch.bmm(torch.bmm(ab, gram), ab.transpose(1, 2)) if model0.propagate else gram
        else:
            aa = torch.bmm(a, a.transpose(1, 2))
        sq = (torch.bmm(g, g.transpose(1, 2)) * aa).sum((1, 2))
        cw = _clip_factors(sq.clamp(min=0).sqrt(), [r.thr[kw] for r in runs], B)
        gb = g.sum(1)
        cb = _clip_factors(gb.norm(dim=1), [r.thr[kb] for r in runs], B)
        u = g * cw[:, None, None]
        if a is None:
            _first_weight_sums(runs, sums, kw, u, ab, nodes, split, model0.propagate)
        for j in range(R):
            rows = slice(j * B, (j + 1) * B)
            if a is not None:
                sums[j][kw] = u[rows].flatten(0, 1).T @ a[rows].flatten(0, 1)
            sums[j][kb] = cb[rows] @ gb[rows]
    return [{k: s[k] for k in names} for s in sums]


def _first_weight_sums(runs, sums, kw: str, u: Tensor, ab: Tensor, nodes: Tensor, split, propagate: bool) -> None:
    """Each run's clipped first-layer weight sum ``xᵀ V`` (``V``: its subgraphs' rows added up per node), the runs'
    ``V`` side by side in one product with ``xᵀ``."""
    R, B = len(runs), u.shape[0] // len(runs)
    N, k = split.shape[0], u.shape[-1]
    u = torch.bmm(ab.transpose(1, 2), u) if propagate else u
    shift = (torch.arange(R, device=nodes.device) * N).repeat_interleave(B)[:, None]
    valid = (nodes >= 0).flatten()
    v = torch.zeros(R * N, k, dtype=u.dtype, device=u.device)
    v.index_add_(0, (nodes + shift).flatten()[valid], u.flatten(0, 1)[valid])
    v = v.view(R, N, k)
    for g in _groups(R, k):
        wide = split.rest_t @ v[g].transpose(0, 1).reshape(N, (g.stop - g.start) * k)
        for i, j in enumerate(range(g.start, g.stop)):
            sums[j][kw] = (wide[:, i * k : (i + 1) * k] + torch.outer(split.base, v[j].sum(0))).T


@torch.no_grad()
def _stacked_eval(runs: list[_Run], split, xw: list[Tensor]) -> list[Tensor]:
    """Each run's full-graph output in eval mode (as the model's forward on split features), the first layer and
    its propagation one product per group of runs (:func:`_groups`)."""
    model0 = runs[0].model
    adj = runs[0].sel.adj
    k = model0.lins[0].out_features
    first = []
    for g in _groups(len(runs), k):
        p = torch.cat(xw[g], dim=1) if g.stop - g.start > 1 else xw[g.start]
        h = (adj @ p if model0.propagate else p) + torch.cat([r.model.lins[0].bias for r in runs[g]])
        first += [h[:, i * k : (i + 1) * k] for i in range(g.stop - g.start)]
    outs = []
    for r, hr in zip(runs, first):
        hr = hr.contiguous()
        for lin in list(r.model.lins)[1:]:
            hr = F.relu(hr)
            if model0.propagate:
                hr = adj @ (hr @ lin.weight.T) + lin.bias if lin.out_features < lin.in_features else lin(adj @ hr)
            else:
                hr = lin(hr)
        outs.append(F.normalize(hr, dim=-1) if r.model.normalize_logits else hr)
    return outs
