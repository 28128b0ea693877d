"""DRW -- Ayle et al., "Training Differentially Private Graph Neural Networks with Random Walk Sampling"
(arXiv 2301.00738); docs/papers/drw.md. Baseline FDP: Daigavane et al. (arXiv 2111.15521).

Privacy notion (paper Sec. 4.1): feature-level DP, neighbouring graphs share the structure and differ in ONE node's
feature row (replace-one). DRW trains on disjoint subgraphs (:mod:`dpgnn.data.random_walks`): one node's features
enter at most one per-subgraph gradient, so after clipping each to norm ``C`` the batch sum has replace-one
sensitivity ``2C``; Gaussian noise ``σ = z · 2C`` is added (``z`` = noise multiplier). A batch is ``B`` subgraphs
drawn uniformly without replacement, and a node's subgraph is in it with probability at most ``q = B / m_min``.
Accounting: ``T`` compositions of the uniformly subsampled (replace-one) Gaussian, autodp's amplification bound as
in the authors' code (:class:`dpgnn.privacy.SampledWithoutReplacementEvent`, accountant ``"autodp"``). Training
runs until the next step would exceed the target ε (8 in Table 1) and records test F1 at every integer ε (Fig. 2).

Per-subgraph gradients are exact for any depth: the loss of each subgraph (on its root) is differentiated on that
subgraph alone with ``torch.func.vmap(grad(...))`` over padded dense subgraphs (the authors' per-row gradients are
only exact for one layer; docs/papers/drw.md#dp-training-step [BUG?]).

Clipping (docs/papers/drw.md#dp-training-step, the paper's "clip norm percentage"): ``C = clip_fraction · ‖g0‖`` where
``g0`` holds the per-tensor gradient norms of single-root losses averaged over up to 10 roots of a first batch;
per-tensor thresholds ``C_j = C·√softmax(g0)_j`` (Σ C_j² = C²). This calibration looks at the data without privacy (as
the authors' code); ``clip_norm=`` gives a data-independent absolute C split evenly over tensors instead.

What the code guarantees (:func:`guarantee_fields`). The paper's pipeline (``scaling="train_zscore"``,
``clip_fraction``, best-validation model) is reported ``as_published``: the z-scoring reads the training nodes'
mean and standard deviation, so one node's raw features move *every* node's input (all subgraphs, not one: the 2C
sensitivity fails); the clipping norm is a function of private gradients; the best epoch (and, in the series, the
configuration) is chosen on validation F1 computed from private features. None of these is in ε. The **sound**
mode -- ``prepare(..., scaling="none")`` (raw features, no statistics read), ``clip_norm=C`` (fixed) and
``select="last"`` (the final model, no selection) -- leaves only the accounted Gaussian steps: changing one node's
raw features changes only the (one) subgraph that contains it, and the clipped sum by at most 2C.

Methods (Table 1 rows): ``gcn`` (non-DP, RW sampler), ``mlp`` (non-DP, uniform sampler), ``fdp``, ``drw``, ``drw-d``
(DRW re-generated every ``resample_every`` steps) and ``drw-r`` (2 walks per root), each registered in
:mod:`dpgnn.methods` at its privacy level (:data:`LEVELS`: ``none`` for the baselines, ``feature`` for the DP
methods); ``run_xxx(data, config, *, seed, device)`` wraps :func:`train_nondp` or the DP-SGD run :func:`train_dp`
(:func:`run_dp` with a :class:`DPTrainConfig`), both on :func:`dpgnn.train.fit`, and returns a
:class:`dpgnn.methods.RunResult`.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap
from torch_geometric.utils import subgraph

from dpgnn.data import load_dataset
from dpgnn.data.random_walks import (
    SAMPLERS,
    Subgraphs,
    csr,
    disjoint_random_walks,
    random_walk_batch,
    sampler_bound,
    uniform_batch,
)
from dpgnn.data.transforms import clean_edges
from dpgnn.methods import RunResult, get, register
from dpgnn.methods.fdp import FDP_VARIANTS, bound_degree, neighbourhoods
from dpgnn.methods.hooks import DPStepHook, DPStepInfo
from dpgnn.metrics import f1_micro
from dpgnn.nn.drw import SplitFeatures, build_model
from dpgnn.nn.lpgnn import normalized_adjacency as gcn_adjacency
from dpgnn.privacy.drw import (  # noqa: F401  (re-exported: the paper's privacy statement, events, ε, guarantee fields)
    FIDELITIES,
    drw_epsilon,
    drw_event,
    fdp_run_epsilon,
    guarantee_fields,
    run_accounting,
)
from dpgnn.privacy.drw import check_fidelity as _fidelity
from dpgnn.privacy.fdp import max_affected
from dpgnn.privacy.guarantee import non_private
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _positive
from dpgnn.train import GradientStep, NoisyStep, fit
from dpgnn.utils import check_features, resolve_device, seed_everything, stable_seed, versions

__all__ = [
    "PAPER",
    "DATASETS",
    "METHODS",
    "DP_METHODS",
    "ARCHS",
    "DELTA",
    "NUM_TRAIN",
    "SEEDS",
    "TARGET_EPSILON",
    "batch_size",
    "DRWData",
    "SCALINGS",
    "scale_features",
    "guarantee_fields",
    "prepare",
    "normalized_adjacency",
    "dense_subgraph_inputs",
    "per_subgraph_grads",
    "prediction_spread",
    "clipped_grad_sum",
    "add_noise",
    "clip_thresholds",
    "clip_and_noise",
    "drw_event",
    "drw_epsilon",
    "Schedule",
    "epsilon_schedule",
    "LEVELS",
    "split_features",
    "eval_features",
    "DPTrainConfig",
    "DP_OPTIONS",
    "run_dp",
    "train_dp",
    "train_nondp",
    "run",
]

PAPER = "drw"
DATASETS = ("cora", "citeseer", "ppi", "pubmed", "flickr", "arxiv", "reddit")
METHODS = ("gcn", "mlp", "fdp", "drw", "drw-d", "drw-r")
DP_METHODS = ("fdp", "drw", "drw-d", "drw-r")
#: Table 1 architectures: setting label -> (layers, hidden width)
ARCHS = {"1-layer": (1, 256), "2x256": (2, 256), "2x512": (2, 512)}
#: δ per dataset (paper Table 3 / docs/papers/drw.md#data)
DELTA = {"cora": 1e-5, "citeseer": 1e-5, "ppi": 1e-5, "pubmed": 1e-6, "flickr": 1e-6, "arxiv": 1e-7, "reddit": 1e-7}
#: training nodes (paper Table 3)
NUM_TRAIN = {"cora": 140, "citeseer": 120, "ppi": 9716, "pubmed": 60, "flickr": 44625, "arxiv": 90941, "reddit": 153932}
INDUCTIVE = {"ppi", "flickr", "arxiv", "reddit"}
SEEDS = (1234, 2345, 3456)
TARGET_EPSILON = 8.0
#: batch sizes ("number of roots", paper Table 4), depth 1 / depth 2
_B_DRW = {
    "cora": (70, 46),
    "citeseer": (60, 40),
    "ppi": (2000, 2000),
    "pubmed": (30, 20),
    "flickr": (10000, 10000),
    "arxiv": (20000, 20000),
    "reddit": (30000, 30000),
}
_B_DRWR = {
    "cora": (46, 28),
    "citeseer": (40, 24),
    "ppi": (2000, 1800),
    "pubmed": (20, 12),
    "flickr": (10000, 8000),
    "arxiv": (20000, 18000),
    "reddit": (30000, 30000),
}
_LOAD = {"arxiv": "ogbn-arxiv"}


def batch_size(dataset: str, method: str, num_layers: int) -> int:
    """Paper Table 4: roots per batch (DRW-R has its own row; FDP uses the DRW row, docs/papers/drw.md#open-questions
    [AMBIG])."""
    key = _dataset_key(dataset)
    if num_layers not in (1, 2):
        raise ValueError(f"num_layers must be 1 or 2 (Table 4), got {num_layers!r}")
    table = _B_DRWR if _method_key(method) == "drw-r" else _B_DRW
    return table[key][num_layers - 1]


def _dataset_key(name: str) -> str:
    key = str(name).strip().lower()
    if key == "ogbn-arxiv":
        key = "arxiv"
    if key not in DATASETS:
        raise ValueError(f"unknown DRW dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _method_key(method: str) -> str:
    key = str(method).strip().lower()
    if key not in METHODS:
        raise ValueError(f"unknown DRW method {method!r}; valid methods: {list(METHODS)}")
    return key


# ---------------------------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class DRWData:
    """A dataset as the DRW code uses it (docs/papers/drw.md#data)."""

    name: str
    x: Tensor  # standardised with training-node statistics
    y: Tensor  # [N] classes or [N, C] multi-label {0, 1}
    num_classes: int
    multilabel: bool
    train: np.ndarray
    val: Tensor
    test: Tensor
    edge_index: Tensor  # full graph, no self-loops (evaluation)
    train_edge_index: Tensor  # training graph (= full graph when transductive; induced on train nodes else)
    adj_full: Tensor = field(repr=False)  # sparse Â of the full graph
    inductive: bool = False
    scaling: str = "train_zscore"  # see SCALINGS
    edge_input: str = "edge_index as given"  # what prepare's clean_edges did (repeated pairs, self-loops)

    @property
    def num_nodes(self) -> int:
        return int(self.x.shape[0])

    @property
    def num_train(self) -> int:
        return int(len(self.train))


def normalized_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Sparse (CSR tensor) ``D^{-1/2}(A+I)D^{-1/2}``: :func:`dpgnn.nn.lpgnn.normalized_adjacency` with self-loops
    (the one implementation; on DRW's undirected, loop-free graphs the same CSR entries, bit for bit, as the
    formula this module computed itself before)."""
    return gcn_adjacency(edge_index, num_nodes, self_loops=True).csr


#: feature scalings: the paper's z-score with training-node statistics (reads private data), or none (raw)
SCALINGS = ("train_zscore", "none")


def scale_features(x: Tensor, train: Tensor, scaling: str = "train_zscore") -> Tensor:
    """``train_zscore``: ``(x − μ_train)/σ_train`` per column (σ = 0 → 1), the authors' preprocessing, which reads
    every training node's features; ``none``: ``x`` unchanged (reads no statistic: row ``i`` depends on node ``i``
    alone)."""
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    x = check_features(x, "data.x (node features)").to(torch.float32)
    if scaling == "none":
        return x.clone()
    mu = x[train].mean(0)
    sd = x[train].std(0, unbiased=False)
    sd = torch.where(sd > 0, sd, torch.ones_like(sd))
    return (x - mu) / sd


def prepare(name: str, data=None, *, scaling: str = "train_zscore") -> DRWData:
    """Load ``name`` (variant ``drw``), drop self-loops, scale features (:func:`scale_features`; the paper's
    z-score with training-node statistics by default, ``scaling="none"`` for the sound mode).

    The graph (public in DRW's feature-level setting) is the simple graph of ``data.edge_index``: self-loops
    removed and repeated pairs merged (:func:`dpgnn.data.transforms.clean_edges`; a repeated pair would double a
    neighbour's chance in the walks), directions as given; ``edge_input`` records what was done."""
    key = _dataset_key(name) if data is None else str(name).lower()
    if data is None:
        data = load_dataset(_LOAD.get(key, key), variant="drw")
    n = int(data.num_nodes)
    ei, cleaning = clean_edges(data.edge_index, n, self_loops="remove", owner="DRW")
    ei = ei.long()
    train = torch.nonzero(data.train_mask).view(-1)
    x = scale_features(data.x, train, scaling)
    y = data.y
    multilabel = y.dim() == 2
    num_classes = int(y.shape[1]) if multilabel else int(y.max()) + 1
    inductive = key in INDUCTIVE
    train_ei = subgraph(train, ei, num_nodes=n)[0] if inductive else ei
    return DRWData(
        name=key,
        x=x,
        y=y.float() if multilabel else y.long(),
        num_classes=num_classes,
        multilabel=multilabel,
        train=train.numpy(),
        val=torch.nonzero(data.val_mask).view(-1),
        test=torch.nonzero(data.test_mask).view(-1),
        edge_index=ei,
        train_edge_index=train_ei,
        adj_full=normalized_adjacency(ei, n),
        inductive=inductive,
        scaling=scaling,
        edge_input=cleaning.describe(),
    )


# ---------------------------------------------------------------------------------------------------------------
# Per-subgraph gradients, clipping, noise
# ---------------------------------------------------------------------------------------------------------------
def dense_subgraph_inputs(x: Tensor, subs: Subgraphs, index: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Padded features [B, S, F] and per-subgraph ``D^{-1/2}(A+I)D^{-1/2}`` [B, S, S] (padding rows/cols zero)."""
    nodes = subs.nodes if index is None else subs.nodes[index]
    adj = subs.adj if index is None else subs.adj[index]
    mask = nodes >= 0
    xb = x[nodes.clamp(min=0)] * mask.unsqueeze(-1).to(x.dtype)
    a = adj.to(x.dtype) + torch.diag_embed(mask.to(x.dtype))
    deg = a.sum(-1)
    dinv = torch.where(deg > 0, deg.pow(-0.5), torch.zeros_like(deg))
    return xb, dinv.unsqueeze(-1) * a * dinv.unsqueeze(-2)


def _loss(out: Tensor, y: Tensor, multilabel: bool) -> Tensor:
    if multilabel:
        return F.binary_cross_entropy_with_logits(out, y)
    return F.cross_entropy(out, y)


def per_subgraph_grads(
    model: nn.Module, xb: Tensor, ab: Tensor, yb: Tensor, multilabel: bool = False
) -> dict[str, Tensor]:
    """Gradient of each subgraph's root loss w.r.t. every parameter, computed on that subgraph alone:
    ``{name: [B, *param.shape]}`` (exact for any depth; vectorised with ``torch.func.vmap``)."""
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss_one(p, x, a, y):
        out = functional_call(model, p, (x, a))[0:1]
        return _loss(out, y.unsqueeze(0), multilabel)

    return vmap(grad(loss_one), in_dims=(None, 0, 0, 0))(params, xb, ab, yb)


def clip_thresholds(
    grads: dict[str, Tensor] | None,
    *,
    clip_fraction: float | None = None,
    clip_norm: float | None = None,
    names: list[str] | None = None,
) -> dict[str, float]:
    """Per-tensor thresholds ``C_j`` with ``Σ C_j² = C²``.

    ``clip_fraction`` (the paper's clip-norm percentage; docs/papers/drw.md#dp-training-step): ``g0_j`` = mean over the
    given per-sample gradients of their tensor-``j`` norms, ``C = clip_fraction·‖g0‖``, ``C_j = C·√softmax(g0)_j``.
    ``clip_norm``: an absolute ``C`` split evenly, ``C_j = C/√J`` (needs ``names``).
    """
    if (clip_fraction is None) == (clip_norm is None):
        raise ValueError("pass exactly one of clip_fraction (authors' calibration) or clip_norm (absolute C)")
    if clip_norm is not None:
        c = _positive(clip_norm, "clip_norm")
        if not names:
            raise ValueError("clip_norm needs the parameter names")
        return {k: c / math.sqrt(len(names)) for k in names}
    frac = _positive(clip_fraction, "clip_fraction")
    if not grads:
        raise ValueError("clip_fraction needs per-sample gradients to calibrate on")
    keys = list(grads)
    g0 = torch.stack([grads[k].flatten(1).norm(dim=1).mean() for k in keys]).double()
    c = frac * float(g0.norm())
    if not c > 0:
        raise ValueError("the calibration gradients are all zero; use clip_norm")
    w = torch.softmax(g0, 0)
    return {k: c * float(w[i].sqrt()) for i, k in enumerate(keys)}


def _clip_factor(norms: Tensor, threshold: float) -> Tensor:
    return (threshold / (norms + 1e-12)).clamp(max=1.0)


def add_noise(sums: dict[str, Tensor], noise_std: float, generator: torch.Generator | None = None) -> dict[str, Tensor]:
    """``sums`` + N(0, noise_std²) per coordinate, tensor by tensor in the dict's order (drawn on the CPU, so a
    seeded ``generator`` gives the same noise on any device)."""
    if not (math.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}")
    if noise_std == 0:
        return dict(sums)
    return {
        k: s + noise_std * torch.randn(s.shape, generator=generator, dtype=s.dtype, device="cpu").to(s.device)
        for k, s in sums.items()
    }


def clip_and_noise(
    grads: dict[str, Tensor], thresholds: dict[str, float], noise_std: float, generator: torch.Generator | None = None
) -> dict[str, Tensor]:
    """Σ_i clip_j(g_ij) + N(0, noise_std²) per coordinate (clip_j scales tensor j of sample i to norm ≤ C_j)."""
    if not (math.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"noise_std must be finite and >= 0, got {noise_std}")
    sums = {
        k: torch.einsum("b,b...->...", _clip_factor(g.flatten(1).norm(dim=1), thresholds[k]), g)
        for k, g in grads.items()
    }
    return add_noise(sums, noise_std, generator)


def clipped_grad_sum(
    model: nn.Module,
    xb: Tensor,
    ab: Tensor,
    yb: Tensor,
    thresholds: dict[str, float],
    multilabel: bool = False,
    *,
    split: SplitFeatures | None = None,
    nodes: Tensor | None = None,
) -> dict[str, Tensor]:
    """``Σ_i clip_j(∇_j ℓ_i)`` for the GCN / MLP of :mod:`dpgnn.nn.drw` without forming per-subgraph gradients.

    Equal to ``clip_and_noise(per_subgraph_grads(...), thresholds, 0)`` (tested), but exact by linear algebra
    rather than ``vmap``: layer ``l`` maps its input ``a_i`` (``Â_i H_i`` for the GCN, ``H_i`` for the MLP;
    ``S × d_in`` per subgraph ``i``) to ``a_i Wᵀ + b``. With ``g_i = ∂ℓ_i/∂(a_i Wᵀ + b)`` -- one backward pass of
    ``Σ_i ℓ_i``, since the padded subgraphs do not interact -- subgraph ``i``'s weight gradient is ``g_iᵀ a_i``,
    its norm² is ``Σ (g_i g_iᵀ) ⊙ (a_i a_iᵀ)`` (two ``S × S`` Gram matrices), its bias gradient ``Σ_s g_i[s]``;
    the clipped sum is one product ``(c ⊙ g)ᵀ a`` over all rows. Per step this costs about one extra forward
    instead of ``B`` stored ``d_out × d_in`` gradients (the first layer's are ``3703 × 512`` on CiteSeer).

    ``split`` (the full feature matrix as :class:`SplitFeatures`) with ``nodes`` (``[B, S]`` node ids of ``xb``'s
    rows, ``-1`` = padding) makes the first layer sparse too: ``X_i Wᵀ`` is gathered from ``x Wᵀ`` (computed over
    the sparse rest), ``a_i a_iᵀ = Â_i X_i X_iᵀ Â_iᵀ`` comes from the ``S × S`` Gram matrices of ``xb``, and the
    weight sum ``Σ_i (Â_iᵀ c_i g_i)ᵀ X_i`` is ``xᵀ V`` with ``V`` the rows of all subgraphs added up per node.
    """
    lins = list(model.lins)
    h = xb
    inputs, outputs = [], []
    for i, lin in enumerate(lins):
        if i == 0 and split is not None:
            mask = (nodes >= 0).unsqueeze(-1).to(xb.dtype)
            xw = split.matmul(lin.weight.detach().T)[nodes.clamp(min=0)] * mask
            z = ((torch.bmm(ab, xw) if model.propagate else xw) + lin.bias.detach()).requires_grad_()
            inputs.append(None)
        else:
            a = torch.bmm(ab, h) if model.propagate else h
            z = a @ lin.weight.T + lin.bias
            inputs.append(a.detach())
        outputs.append(z)
        h = F.relu(z) if i < len(lins) - 1 else z
    out = F.normalize(h, dim=-1) if model.normalize_logits else h
    root = out[:, 0]
    if multilabel:
        loss = F.binary_cross_entropy_with_logits(root, yb, reduction="none").mean(1).sum()
    else:
        loss = F.cross_entropy(root, yb, reduction="sum")
    grads = torch.autograd.grad(loss, outputs)
    sums: dict[str, Tensor] = {}
    names = [k for k, _ in model.named_parameters()]
    for i, (a, g) in enumerate(zip(inputs, grads)):
        kw, kb = names[2 * i], names[2 * i + 1]
        if a is None:  # first layer over split features
            gram = torch.bmm(xb, xb.transpose(1, 2))
            aa = torch.bmm(torch.bmm(ab, gram), ab.transpose(1, 2)) if model.propagate else gram
        else:
            aa = torch.bmm(a, a.transpose(1, 2))
        sq = (torch.bmm(g, g.transpose(1, 2)) * aa).sum((1, 2))
        cw = _clip_factor(sq.clamp(min=0).sqrt(), thresholds[kw])
        gb = g.sum(1)
        cb = _clip_factor(gb.norm(dim=1), thresholds[kb])
        if a is None:
            u = g * cw[:, None, None]
            u = torch.bmm(ab.transpose(1, 2), u) if model.propagate else u
            valid = (nodes >= 0).flatten()
            v = torch.zeros(split.shape[0], u.shape[-1], dtype=u.dtype, device=u.device)
            v.index_add_(0, nodes.flatten()[valid], u.flatten(0, 1)[valid])
            sums[kw] = split.tmatmul(v).T
        else:
            sums[kw] = (g * cw[:, None, None]).flatten(0, 1).T @ a.flatten(0, 1)
        sums[kb] = cb @ gb
    return sums


# ---------------------------------------------------------------------------------------------------------------
# Accounting
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Schedule:
    """How long to train: ``steps`` = most steps with ε ≤ target; ``checkpoints`` = (k, last step with ε ≤ k, ε)."""

    steps: int
    epsilon: float
    checkpoints: tuple[tuple[int, int, float], ...]


def _schedule(eps_of: Callable[[int], float], target: float, max_steps: int = 10_000_000) -> Schedule:
    memo: dict[int, float] = {0: 0.0}

    def e(t: int) -> float:
        if t not in memo:
            memo[t] = eps_of(t)
        return memo[t]

    def last_below(level: float, lo: int, hi: int | None) -> int:
        if hi is None:  # find an upper end by doubling
            hi = max(lo, 1)
            while e(hi) <= level:
                lo, hi = hi, hi * 2
                if hi > max_steps:
                    raise ValueError(f"ε stays below {level} for {max_steps} steps; the noise is too large")
        while hi - lo > 1:  # invariant: e(lo) <= level < e(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if e(mid) <= level else (lo, mid)
        return lo

    total = last_below(target, 0, None)
    cps = []
    for k in range(1, int(math.floor(target)) + 1):
        t = total if e(total) <= k else last_below(float(k), 0, total + 1)
        cps.append((k, t, e(t)))
    return Schedule(total, e(total), tuple(cps))


@cache
def epsilon_schedule(
    noise_multiplier: float,
    sample_rate: float,
    delta: float,
    target: float = TARGET_EPSILON,
    accountant: str = "autodp",
    fidelity: str = "paper",
) -> Schedule:
    """:class:`Schedule` of DRW training (ε monotone in steps, so bisection is exact). Both fidelities stay at or
    below ``target`` (the authors' code takes one step past it; we do not)."""
    _positive(target, "target")
    _fidelity(fidelity)
    return _schedule(lambda t: drw_epsilon(noise_multiplier, sample_rate, t, delta, accountant, fidelity), target)


@cache
def fdp_schedule(
    noise_multiplier: float,
    num_train: int,
    batch: int,
    affected: int,
    delta: float,
    target: float = TARGET_EPSILON,
    variant: str = "paper",
) -> Schedule:
    """:class:`Schedule` of FDP training (paper: multi-order tight conversion; authors: α = 10, classic)."""
    return _schedule(
        lambda t: fdp_run_epsilon(t, noise_multiplier, num_train, batch, affected, delta, variant)[0], target
    )


# ---------------------------------------------------------------------------------------------------------------
# Evaluation (the metric is :func:`dpgnn.metrics.f1_micro`: accuracy, or thresholded micro-F1 on PPI)
# ---------------------------------------------------------------------------------------------------------------
def split_features(x: Tensor, max_density: float = 0.2) -> SplitFeatures | None:
    """``x`` as :class:`SplitFeatures` when at most ``max_density`` of its entries differ from their column's most
    frequent value (bag-of-words: the products with the first layer are then sparse), else ``None``."""
    split = SplitFeatures(x)
    return split if split.density <= max_density else None


def eval_features(x: Tensor, max_density: float = 0.2) -> Tensor | SplitFeatures:
    """The full-graph features for evaluation: :func:`split_features` when it applies, else ``x`` itself."""
    split = split_features(x, max_density)
    return x if split is None else split


@torch.no_grad()
def _scores(
    model: nn.Module,
    d: DRWData,
    x: Tensor | SplitFeatures,
    adj: Tensor | None,
    splits: dict[str, Tensor],
    predictions: list | None = None,
) -> dict[str, float]:
    """One full-graph forward in eval mode, then :func:`dpgnn.metrics.f1_micro` on each split's rows;
    ``predictions`` (a list) receives the test rows' predicted classes (single-label data)."""
    model.eval()
    out = model(x, adj)
    model.train()
    if predictions is not None and not d.multilabel:
        predictions.append(out[splits["test"]].argmax(-1).cpu())
    return {name: f1_micro(out[i], d.y[i], d.multilabel) for name, i in splits.items()}


def prediction_spread(pred: Tensor | None, num_classes: int) -> dict[str, float]:
    """How concentrated a model's predictions are: ``top_class_share`` (fraction of rows given the most frequent
    predicted class) and ``class_entropy`` (entropy of the predicted-class distribution / log C: 0 = one class
    everywhere, 1 = uniform). NaN without predictions (multi-label data)."""
    if pred is None or pred.numel() == 0:
        return {"top_class_share": math.nan, "class_entropy": math.nan}
    p = torch.bincount(pred, minlength=num_classes).double() / pred.numel()
    nz = p[p > 0]
    return {"top_class_share": float(p.max()), "class_entropy": float(-(nz * nz.log()).sum() / math.log(num_classes))}


# ---------------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------------
def _make(d: DRWData, kind: str, num_layers: int, hidden: int, device) -> nn.Module:
    return build_model(kind, d.x.shape[1], d.num_classes, num_layers, hidden).to(device)


def _sample_subgraphs(
    d: DRWData, method: str, num_layers: int, rng: np.random.Generator, fdp_degree: int, fdp_variant: str, seed: int
) -> Subgraphs:
    if method == "fdp":
        bounded = bound_degree(d.train_edge_index, d.num_nodes, fdp_degree, seed=seed)
        return neighbourhoods(bounded, d.num_nodes, d.train, num_layers, fdp_degree, fdp_variant)
    return disjoint_random_walks(
        d.train_edge_index, d.num_nodes, d.train, num_layers, SAMPLERS[method][0], seed=rng, sampler=method
    )


DPMethod = Literal["fdp", "drw", "drw-d", "drw-r"]
PerSample = Literal["ghost", "vmap"]
Select = Literal["best_val", "last"]
Fidelity = Literal["paper", "authors_code"]
FdpVariant = Literal["paper", "authors"]
PER_SAMPLE: tuple[PerSample, ...] = ("ghost", "vmap")
SELECTS: tuple[Select, ...] = ("best_val", "last")


@dataclass(frozen=True)
class DPTrainConfig:
    """One DP training run of DRW, DRW-D, DRW-R or FDP (:func:`run_dp`); every mode is checked here, once.

    Attributes:
        method: ``drw`` (one walk per root), ``drw-d`` (walks re-drawn every ``resample_every`` steps), ``drw-r``
            (two walks per root) or ``fdp`` (degree-bounded K-hop neighbourhoods); case-insensitive.
        num_layers: GCN layers (= the walks' length / the neighbourhoods' depth); Table 1: 1 or 2.
        hidden: GCN width; Table 1: 256 or 512.
        lr: Adam learning rate (paper Sec. 5.1: 0.1).
        clip_fraction: the paper's clip norm percentage: ``C = clip_fraction·‖g0‖`` from a first batch's
            gradients (data-dependent, not private); ``None`` with ``clip_norm``.
        clip_norm: a fixed total clipping norm ``C`` split evenly over the tensors (data-independent).
        noise_multiplier: ``z``, noise std / sensitivity (> 0).
        batch: subgraphs per step; ``None``: the paper's batch for the dataset (:func:`batch_size`).
        delta: δ; ``None``: the paper's δ of the dataset (:data:`DELTA`, 1e-5 elsewhere).
        target_epsilon: training stops before ε would exceed it (Table 1: 8).
        resample_every: DRW-D's steps between two draws of the walks.
        eval_every: steps between two evaluations (the last step and the checkpoints are always evaluated).
        max_steps: a cap on the steps (``None``: the schedule's steps).
        accountant: DRW's accountant (:func:`epsilon_schedule`; the paper's ``autodp``).
        fdp_degree: FDP's degree bound ``D``.
        fdp_variant: FDP's neighbourhoods: ``paper`` or the ``authors`` code's.
        per_sample: ``ghost`` (:func:`clipped_grad_sum`, norms from Gram matrices) or ``vmap``
            (:func:`per_subgraph_grads` + :func:`clip_and_noise`): the same sums up to rounding, the same noise.
        select: ``best_val`` (the paper: the best-validation trained model) or ``last`` (the final model).
        fidelity: ``paper`` or ``authors_code`` (the official code's accountant at sampling rate 1 and its
            early stopping after ``patience`` evaluations without a better validation F1).
        patience: evaluations without improvement before ``authors_code`` stops.
    """

    method: DPMethod = "drw"
    num_layers: int = 1
    hidden: int = 256
    lr: float = 0.1
    clip_fraction: float | None = 0.1
    clip_norm: float | None = None
    noise_multiplier: float = 4.0
    batch: int | None = None
    delta: float | None = None
    target_epsilon: float = TARGET_EPSILON
    resample_every: int = 10
    eval_every: int = 1
    max_steps: int | None = None
    accountant: str = "autodp"
    fdp_degree: int = 4
    fdp_variant: FdpVariant = "paper"
    per_sample: PerSample = "ghost"
    select: Select = "best_val"
    fidelity: Fidelity = "paper"
    patience: int = 30

    def __post_init__(self) -> None:
        if self.select not in SELECTS:
            raise ValueError(f"select must be 'best_val' or 'last', got {self.select!r}")
        method = _method_key(self.method)
        if method not in DP_METHODS:
            raise ValueError(f"train_dp runs the DP methods {list(DP_METHODS)}; use train_nondp for {method!r}")
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "num_layers", _int(self.num_layers, "num_layers", 1))
        object.__setattr__(self, "noise_multiplier", _positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "lr", _positive(self.lr, "lr"))
        _positive(self.target_epsilon, "target_epsilon")
        _int(self.resample_every, "resample_every", 1)
        _int(self.eval_every, "eval_every", 1)
        if self.fdp_variant not in FDP_VARIANTS:
            raise ValueError(f"fdp_variant must be one of {FDP_VARIANTS}, got {self.fdp_variant!r}")
        if self.per_sample not in PER_SAMPLE:
            raise ValueError(f"per_sample must be 'ghost' or 'vmap', got {self.per_sample!r}")
        _fidelity(self.fidelity)
        _int(self.patience, "patience", 1)


#: the keywords of :func:`train_dp` besides ``seed`` and ``device`` (a series cell's options)
DP_OPTIONS = tuple(f.name for f in fields(DPTrainConfig) if f.name != "method") + ("on_model", "canary")


def train_dp(
    d: DRWData,
    method: str,
    *,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
    canary: DPStepHook | None = None,
    **options: Any,
) -> dict[str, Any]:
    """DP training (DRW, DRW-D, DRW-R or FDP): :func:`run_dp` with ``DPTrainConfig(method=method, **options)``
    (the options and their defaults: :class:`DPTrainConfig`)."""
    cfg = DPTrainConfig(method=method, **options)
    return run_dp(d, cfg, seed=seed, device=device, on_model=on_model, canary=canary)


@dataclass(frozen=True)
class _Sampling:
    """How a DP run samples and what it is accounted for: sampling rate ``q``, max subgraphs one node is in ``K``,
    sensitivity factor (``2K``: replace-one, clipped sums), the ε schedule."""

    num_train: int
    batch: int
    q: float
    affected: int
    sens_factor: float
    sched: Schedule


def _sampling(d: DRWData, cfg: DPTrainConfig, delta: float) -> _Sampling:
    L, z, N = cfg.num_layers, cfg.noise_multiplier, d.num_train
    B = _int(cfg.batch if cfg.batch is not None else batch_size(d.name, cfg.method, L), "batch", 1)
    if cfg.method == "fdp":
        K = max_affected(cfg.fdp_degree, L)
        if B > N:
            raise ValueError(f"batch must be in [1, num_train={N}], got {B}")
        sched = fdp_schedule(z, N, B, K, delta, float(cfg.target_epsilon), cfg.fdp_variant)
        return _Sampling(N, B, B / N, K, 2.0 * K, sched)
    q = sampler_bound(cfg.method, B, N, L)
    sched = epsilon_schedule(z, q, delta, float(cfg.target_epsilon), cfg.accountant, cfg.fidelity)
    return _Sampling(N, B, q, 1, 2.0, sched)


class _Selection:
    """DRW's evaluations: the selected model's scores (the best validation F1 among trained steps, or the last
    step with ``select="last"``), the checkpoint rows at every integer ε and ``authors_code``'s early stop."""

    def __init__(self, model: nn.Module, d: DRWData, x_eval, adj: Tensor, cfg: DPTrainConfig, sched, steps: int):
        self.model, self.d, self.x_eval, self.adj, self.cfg, self.sched = model, d, x_eval, adj, cfg, sched
        dev = adj.device
        self.splits = {"train": torch.as_tensor(d.train).to(dev), "val": d.val.to(dev), "test": d.test.to(dev)}
        self.best: dict[str, Any] = {"val": -1.0, "test": float("nan"), "train": float("nan"), "step": 0}
        self.cps = {t: k for k, t, _ in sched.checkpoints}
        self.rows: list[dict[str, Any]] = []
        self.history: list[dict[str, float]] = []
        self.stale = 0  # evaluations since the last improvement (authors_code early stopping)
        self.steps = steps
        self.stopped: int | None = None

    def due(self, step: int) -> bool:
        return step % self.cfg.eval_every == 0 or step == self.steps or step in self.cps

    def record(self, step: int) -> None:
        pred: list[Tensor] = []
        scores = _scores(self.model, self.d, self.x_eval, self.adj, self.splits, pred)
        v, te, best, T = scores["val"], scores["test"], self.best, self.steps
        self.history.append({"step": step, **scores})
        if step > 0 and (v > best["val"] or self.cfg.select == "last"):  # the untrained model is never selected
            best.update(val=v, test=te, train=scores["train"], step=step, pred=pred[0] if pred else None)
            self.stale = 0
        elif step > 0:
            self.stale += 1
        if step in self.cps or step == T:
            for k, t, e in self.sched.checkpoints:
                if t == step or (step == T and t > T):
                    val = best["val"] if best["val"] >= 0 else math.nan
                    self._row(k, step, e if t == step else math.nan, val, te)

    def _row(self, k: float, step: int, epsilon: float, val: float, current: float) -> None:
        self.rows.append(
            {
                "checkpoint": k,
                "steps": step,
                "epsilon": epsilon,
                "test_f1": self.best["test"],
                "val_f1": val,
                "test_f1_current": current,
            }
        )

    def stop(self, step: int) -> bool:
        """``authors_code``: stop after ``patience`` evaluations without improvement; the checkpoints beyond the
        stop keep the model selected so far."""
        if not (self.cfg.fidelity == "authors_code" and self.stale >= self.cfg.patience and step < self.steps):
            return False
        self.stopped = step
        for k, t, _ in self.sched.checkpoints:
            if t > step:
                self._row(k, step, math.nan, self.best["val"], math.nan)
        self.steps = step
        return True


def run_dp(
    d: DRWData,
    cfg: DPTrainConfig,
    *,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
    canary: DPStepHook | None = None,
) -> dict[str, Any]:
    """DP training (DRW, DRW-D, DRW-R or FDP) until ε would exceed ``cfg.target_epsilon`` (or ``cfg.max_steps``).

    Each step (one :func:`dpgnn.train.fit` epoch): ``B`` subgraphs uniformly without replacement, their clipped
    gradient sum (``cfg.per_sample``), Gaussian noise ``σ = z·2K·C`` and Adam, on :class:`dpgnn.train.NoisyStep`.
    The best-validation model is chosen among the *trained* models (steps ≥ 1, as in the authors' code): the
    untrained step-0 model is never selected. Both fidelities stay at or below the target ε, and both compute exact
    per-subgraph gradients (the official per-row gradients are not reproduced).

    Returns test/val F1 of the selected model, the privacy ledger and ``checkpoints``: for every integer
    ``k ≤ target`` the step where ε last stays ≤ k and the test F1 of the selected model up to then.
    ``on_model(model)`` is called with the final model (the released one when ``select="last"``; audits).
    ``canary`` (audits, :mod:`dpgnn.methods.hooks`): called around every step's noise with the clipped sums (``B``
    of the run's subgraphs uniformly without replacement, per-tensor norms ``C_j``).
    """
    L = cfg.num_layers
    dev = resolve_device(device)
    delta = DELTA.get(d.name, 1e-5) if cfg.delta is None else float(cfg.delta)
    t0 = time.perf_counter()
    s = _sampling(d, cfg, delta)
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(stable_seed("drw-noise", seed))
    T = s.sched.steps if cfg.max_steps is None else min(s.sched.steps, _int(cfg.max_steps, "max_steps", 0))
    subs = [_sample_subgraphs(d, cfg.method, L, rng, cfg.fdp_degree, cfg.fdp_variant, seed)]
    if subs[0].num_subgraphs < s.batch:
        raise RuntimeError(f"only {subs[0].num_subgraphs} subgraphs for a batch of {s.batch}")  # excluded by q
    model = _make(d, "gcn", L, cfg.hidden, dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    x, adj = d.x.to(dev), d.adj_full.to(dev)
    split = split_features(x)  # used by the evaluation and, with ghost clipping, by the first layer
    batches = _SubgraphBatches(d, x, s.batch, rng, dev)
    thr = _thresholds(model, d, cfg, batches, subs[0])
    C = math.sqrt(sum(c * c for c in thr.values()))
    sigma = cfg.noise_multiplier * s.sens_factor * C
    sel = _Selection(model, d, x if split is None else split, adj, cfg, s.sched, T)
    if 0 in sel.cps:
        sel.record(0)  # a checkpoint no trained step fits under: reported with no selected model (test F1 NaN)
    private = NoisyStep(
        opt, dict(model.named_parameters()), lambda sums: add_noise(sums, sigma, gen), s.batch, canary=canary
    )

    def step(t: int) -> None:
        if cfg.method == "drw-d" and t > 1 and (t - 1) % cfg.resample_every == 0:
            subs[0] = _sample_subgraphs(d, cfg.method, L, rng, cfg.fdp_degree, cfg.fdp_variant, seed)
        xb, ab, yb, nodes = batches(subs[0])
        if cfg.per_sample == "ghost":
            sums = clipped_grad_sum(model, xb, ab, yb, thr, d.multilabel, split=split, nodes=nodes)
        else:
            sums = clip_and_noise(per_subgraph_grads(model, xb, ab, yb, d.multilabel), thr, 0.0)
        info = None
        if canary is not None:
            info = DPStepInfo(population=subs[0].num_subgraphs, batch=s.batch, poisson=False, std=sigma, clip=thr)
        private(sums, info)
        if sel.due(t):
            sel.record(t)

    if T >= 1:
        fit(model, step, epochs=T, monitor=None, restore_best=False, stop=sel.stop)
    if on_model is not None:
        on_model(model)
    ledger = _dp_ledger(d, cfg, s, delta, sigma, C, sel)
    return _dp_result(d, cfg, s, ledger, sel, model, sigma, C, subs[0].num_subgraphs, time.perf_counter() - t0)


class _SubgraphBatches:
    """``batches(subs)``: ``B`` of the subgraphs uniformly without replacement (from ``rng``), as dense inputs,
    root labels and node ids (:func:`dense_subgraph_inputs`)."""

    def __init__(self, d: DRWData, x: Tensor, batch: int, rng: np.random.Generator, dev: torch.device):
        self.x, self.y, self.batch, self.rng, self.dev = x, d.y.to(dev), batch, rng, dev

    def __call__(self, s: Subgraphs):
        dev = self.dev
        idx = torch.as_tensor(self.rng.choice(s.num_subgraphs, size=self.batch, replace=False))
        xb, ab = dense_subgraph_inputs(self.x, Subgraphs(s.nodes.to(dev), s.adj.to(dev)), idx.to(dev))
        return xb, ab, self.y[s.nodes[idx, 0].to(dev)], s.nodes[idx].to(dev)


def _thresholds(model: nn.Module, d: DRWData, cfg: DPTrainConfig, batches: _SubgraphBatches, subs: Subgraphs):
    """The per-tensor clipping thresholds: fixed (``clip_norm``), or calibrated on up to 10 roots of a first batch
    (``clip_fraction``; data-dependent, not private)."""
    if cfg.clip_norm is not None:
        return clip_thresholds(None, clip_norm=cfg.clip_norm, names=[k for k, _ in model.named_parameters()])
    xb, ab, yb, _ = batches(subs)
    g = per_subgraph_grads(model, xb[:10], ab[:10], yb[:10], d.multilabel)
    return clip_thresholds(g, clip_fraction=cfg.clip_fraction)


def _dp_ledger(
    d: DRWData, cfg: DPTrainConfig, s: _Sampling, delta: float, sigma: float, C: float, sel: _Selection
) -> dict[str, Any]:
    """The privacy ledger of a finished DP run (the ε of the steps taken)."""
    acct = run_accounting(
        cfg.method,
        noise_multiplier=cfg.noise_multiplier,
        steps=sel.steps,
        delta=delta,
        sample_rate=s.q,
        num_train=s.num_train,
        batch=s.batch,
        max_affected=s.affected,
        accountant=cfg.accountant,
        fidelity=cfg.fidelity,
        fdp_variant=cfg.fdp_variant,
    )
    guarantee = guarantee_fields(scaling=d.scaling, clip_norm=cfg.clip_norm, select=cfg.select, method=cfg.method)
    # epsilon_sound: the tight bound of the accounted steps where they are all the run reads, else nothing holds
    sound = acct["epsilon_sound"] if guarantee["guarantee"] == "sound" else math.inf
    return {
        "level": "feature",
        "neighbouring": "replace one node's features",
        "mechanism": "gaussian",
        "noise_multiplier": cfg.noise_multiplier,
        "sigma": sigma,
        "clip_total": C,
        "sensitivity": s.sens_factor * C,
        "sampling_rate": s.q,
        "sampling": "uniform without replacement",
        "batch": s.batch,
        "steps": sel.steps,
        "epsilon": acct["epsilon"],
        "delta": delta,
        "accountant": acct["accountant"],
        "event": acct["event"],
        "epsilon_sound": sound,
        "max_affected": s.affected,
        "clip_calibration": "data-dependent (not private)" if cfg.clip_norm is None else "fixed",
        "scaling": d.scaling,
        "select": cfg.select,
        "fidelity": cfg.fidelity,
        "early_stopped_at": sel.stopped,
        "selection": "among trained steps (>= 1)",
        **guarantee,
    }


def _dp_result(d, cfg, s: _Sampling, ledger, sel: _Selection, model, sigma, C, num_subgraphs, seconds):
    """:func:`run_dp`'s result dict."""
    best = sel.best
    return {
        "dataset": d.name,
        "method": cfg.method,
        "num_layers": cfg.num_layers,
        "hidden": cfg.hidden,
        "test_f1": best["test"],
        "val_f1": best["val"] if best["val"] >= 0 else math.nan,
        "train_f1": best["train"],
        "best_step": best["step"],
        "steps": sel.steps,
        "epsilon": ledger["epsilon"],
        "delta": ledger["delta"],
        # diagnostics of the selected model: how concentrated its test predictions are, and the expected norm
        # of the noise over the largest possible clipped sum (B * C): > 1 means the noise dominates every step
        **prediction_spread(best.get("pred"), d.num_classes),
        "noise_to_signal": sigma * math.sqrt(sum(p.numel() for p in model.parameters())) / (s.batch * C),
        "sampling_rate": s.q,
        "level": "feature",
        "ledger": ledger,
        "checkpoints": sel.rows,
        "history": sel.history,
        "num_subgraphs": num_subgraphs,
        "seconds": seconds,
        "versions": versions(),
    }


def _random_walk_forward(model: nn.Module, d: DRWData, x: Tensor, y: Tensor, batch) -> tuple[Tensor, Tensor]:
    """The non-DP GCN on one random-walk batch ``(nodes, loss_nodes)``: the subgraph induced on the visited nodes,
    the outputs and labels of its training nodes."""
    nodes, loss_nodes = batch
    dev = x.device
    nodes_t = torch.as_tensor(nodes)
    sub_ei = subgraph(nodes_t, d.train_edge_index, relabel_nodes=True, num_nodes=d.num_nodes)[0]
    a = normalized_adjacency(sub_ei, len(nodes)).to(dev)
    pos = torch.as_tensor(np.searchsorted(nodes, loss_nodes), device=dev)
    return model(x[nodes_t.to(dev)], a)[pos], y[torch.as_tensor(loss_nodes, device=dev)]


def train_nondp(
    d: DRWData,
    method: str,
    *,
    num_layers: int = 1,
    hidden: int = 256,
    lr: float = 0.01,
    batch: int | None = None,
    max_steps: int = 1000,
    patience: int = 30,
    grad_clip: float = 5.0,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
) -> dict[str, Any]:
    """Non-DP baselines: ``gcn`` on RW batches (induced on the visited nodes, loss on their training nodes) and
    ``mlp`` on uniform batches; Adam, global gradient-norm clip 5, early stopping on validation F1.

    Runs on the plain engine :func:`dpgnn.train.fit`, one "epoch" per mini-batch step: every step is evaluated on
    the full graph, the best-validation step is kept (its scores, not its weights) and training stops after
    ``patience`` steps without a better validation F1. ``on_model(model)`` is called with the final model
    (audits)."""
    method = _method_key(method)
    if method not in ("gcn", "mlp"):
        raise ValueError(f"train_nondp runs 'gcn' or 'mlp', got {method!r}")
    L = _int(num_layers, "num_layers", 1)
    _int(max_steps, "max_steps", 1)
    _int(patience, "patience", 1)
    dev = resolve_device(device)
    B = _int(batch if batch is not None else batch_size(d.name, "drw", L), "batch", 1)
    t0 = time.perf_counter()
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    model = _make(d, method, L, hidden, dev)
    opt = torch.optim.Adam(model.parameters(), lr=_positive(lr, "lr"))
    x, adj, y = d.x.to(dev), d.adj_full.to(dev), d.y.to(dev)
    x_eval = eval_features(x)
    ptr, col = csr(d.train_edge_index, d.num_nodes)
    splits = {"train": torch.as_tensor(d.train).to(dev), "val": d.val.to(dev), "test": d.test.to(dev)}

    def loss(_: int) -> Tensor:
        if method == "gcn":
            out, target = _random_walk_forward(model, d, x, y, random_walk_batch(ptr, col, d.train, B, L, rng))
        else:
            idx = torch.as_tensor(uniform_batch(d.train, B, rng), device=dev)
            out, target = model(x[idx]), y[idx]
        return _loss(out, target, d.multilabel)

    def evaluate(_: int) -> dict[str, float]:
        return _scores(model, d, x_eval, adj if method == "gcn" else None, splits)

    step = GradientStep(opt, loss, max_grad_norm=grad_clip)
    res = fit(model, step, evaluate, epochs=max_steps, monitor="val", mode="max", patience=patience, restore_best=False)
    best = res.best
    if on_model is not None:
        on_model(model)
    ledger = {"level": "none", "epsilon": math.inf, **non_private()}
    return {
        "dataset": d.name,
        "method": method,
        "num_layers": L,
        "hidden": hidden,
        "test_f1": best.get("test", math.nan),
        "val_f1": best.get("val", math.nan),
        "train_f1": best.get("train", math.nan),
        "best_step": res.best_epoch,
        "steps": res.epochs,
        "epsilon": math.inf,
        "delta": 0.0,
        "level": "none",
        "ledger": ledger,
        "checkpoints": [],
        "history": res.history,
        "seconds": time.perf_counter() - t0,
        "versions": versions(),
    }


# ---------------------------------------------------------------------------------------------------------------
# The method contract (dpgnn.methods): Table 1's rows, registered at their privacy levels
# ---------------------------------------------------------------------------------------------------------------
#: privacy level of each method (:data:`dpgnn.methods.LEVELS`): the DP methods protect one node's features
LEVELS = {m: ("feature" if m in DP_METHODS else "none") for m in METHODS}
_BOOKKEEPING = ("dataset", "method", "setting", "seed")


def _trainer_options(trainer: Callable[..., dict[str, Any]]) -> tuple[str, ...]:
    if trainer is train_dp:
        return DP_OPTIONS
    return tuple(
        k
        for k, p in inspect.signature(trainer).parameters.items()
        if p.kind is p.KEYWORD_ONLY and k not in ("seed", "device")
    )


def _run(method: str, data: DRWData, config: Any, seed: int, device: str) -> RunResult:
    """Train ``method`` on ``data`` with the hyper-parameters in ``config`` (:func:`train_dp` /
    :func:`train_nondp` keywords; a series cell's bookkeeping keys are ignored) and wrap the result."""
    trainer = train_nondp if method in ("gcn", "mlp") else train_dp
    options = _trainer_options(trainer)
    kw = {k: v for k, v in dict(config).items() if k not in _BOOKKEEPING}
    unknown = sorted(set(kw) - set(options))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for DRW method {method!r}; valid: {sorted(options)}")
    res = trainer(data, method, seed=seed, device=device, **kw)
    extra = {k: v for k, v in res.items() if k not in ("train_f1", "val_f1", "test_f1", "ledger", "history", "seconds")}
    ledger = res["ledger"]
    if data.edge_input != "edge_index as given":
        ledger = {**ledger, "edge_input": data.edge_input}
    return RunResult(
        metrics={"train": res["train_f1"], "val": res["val_f1"], "test": res["test_f1"]},
        ledger=ledger,
        history=res["history"],
        seconds=res["seconds"],
        extra=extra,
    )


@register(PAPER, "gcn", "none", prepare=prepare, description="non-private GCN on random-walk batches (Table 1)")
def run_gcn(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("gcn", data, config, seed, device)


@register(PAPER, "mlp", "none", prepare=prepare, description="non-private MLP on uniform node batches (Table 1)")
def run_mlp(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("mlp", data, config, seed, device)


@register(
    PAPER,
    "drw",
    "feature",
    prepare=prepare,
    description="DP-SGD on disjoint random-walk subgraphs, one walk per root (paper Alg. 1)",
)
def run_drw(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("drw", data, config, seed, device)


@register(
    PAPER,
    "drw-d",
    "feature",
    prepare=prepare,
    description="DRW with the subgraphs re-generated every resample_every steps",
)
def run_drw_d(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("drw-d", data, config, seed, device)


@register(PAPER, "drw-r", "feature", prepare=prepare, description="DRW with two walks per root")
def run_drw_r(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("drw-r", data, config, seed, device)


@register(
    PAPER,
    "fdp",
    "feature",
    prepare=prepare,
    description="FDP baseline (Daigavane et al.): degree-bounded K-hop neighbourhoods, sensitivity 2KC",
)
def run_fdp(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    return _run("fdp", data, config, seed, device)


def run(d: DRWData, method: str, *, seed: int = 1234, device: str = "auto", **config: Any) -> RunResult:
    """One run of ``method`` resolved through the registry (``dpgnn.methods.get("drw", method, LEVELS[method])``)."""
    method = _method_key(method)
    return get(PAPER, method, LEVELS[method]).run(d, config, seed=seed, device=device)
