"""DP-GNN (Daigavane et al., "Node-level differentially private graph neural networks", arXiv 2111.15521) as
ProGAP's node-level baseline (docs/papers/progap.md#baselines).

- **Graph**: repeated pairs of the edge list merged (:func:`dpgnn.methods.progap.graph_edges`: a neighbour listed
  twice would take two of a root's ``D`` slots and enter its sum twice), then degrees bounded to ``D`` (in- and
  out-degree, :func:`dpgnn.methods.progap.bound_degree`), so that one node enters the 1-hop subgraphs of at most
  ``D`` other roots -- for any directed graph, so a one-direction ``edge_index`` is used as given.
- **Model**: base MLP → one GraphSAGE layer with SUM aggregation and a root weight → jumping knowledge (base output
  and layer output concatenated) → head MLP (hidden 16, SELU, no normalisation: every example is one subgraph).
- **Training**: every step draws ``B`` training roots uniformly without replacement; each root's loss is computed
  on its own 1-hop subgraph (root + at most ``D`` in-neighbours); per-root gradients (``torch.func.vmap`` of
  ``grad``) are clipped to ``C`` and summed, and Gaussian noise of standard deviation ``z · 2(D+1)C`` is added
  (removing one node changes at most ``D + 1`` per-root terms). Adam on the noisy mean.
- **Accounting**: the multi-term RDP bound of Daigavane et al. (the number of affected roots in a batch is
  ``Hypergeometric(N_train, D+1, B)``; :mod:`dpgnn.privacy.fdp`) over ``⌊E·N_train/B⌋`` steps, which is never
  fewer than the ``E·⌊N_train/B⌋`` steps trained; ``z`` is calibrated so that ε ≤ the target.
- **Evaluation**: full graph (degree-bounded) with the non-private forward, best validation epoch (as the other
  Table 2 baselines); like them, DP-GNN does not protect inference.

The authors' reference code (and the GAP repository's version) shuffle the training nodes once per epoch and cut
batches from the permutation; the hypergeometric accountant assumes a fresh uniform batch per step, which is what
this implementation draws.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.utils import to_torch_csr_tensor

from dpgnn.methods import RunResult, register
from dpgnn.methods.hooks import DPStepHook, DPStepInfo
from dpgnn.methods.progap import (
    ProGAPResult,
    _masks,
    bound_degree,
    default_delta,
    graph_edges,
    method_config,
    note_edges,
)
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import ACTIVATIONS, MLP
from dpgnn.privacy.fdp import FdpSampledGaussianEvent, fdp_epsilon, max_affected
from dpgnn.privacy.guarantee import AS_PUBLISHED, MODEL_SELECTION, statement
from dpgnn.privacy.progap import accounted_steps, stage_steps
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos
from dpgnn.train import NoisyStep, fit
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = [
    "DPGNNConfig",
    "DPGNNModel",
    "neighbour_table",
    "per_root_gradients",
    "calibrate_fdp_noise",
    "dp_gnn_ledger",
    "train_dp_gnn",
    "DPGNNSetup",
    "dp_gnn_setup",
    "seed_graph",
    "init_model",
    "noise_generator",
    "draw_roots",
]


@dataclass(frozen=True)
class DPGNNConfig:
    """One DP-GNN run. ``noise`` (the multiplier z) may be given instead of ``epsilon``; ``delta=None`` applies
    ProGAP's node-level δ rule (10^-(digits of N_train))."""

    epsilon: float = 8.0
    delta: float | None = None
    noise: float | None = None
    max_degree: int = 100
    hidden: int = 16
    base_layers: int = 2
    head_layers: int = 1
    lr: float = 0.01
    epochs: int = 10
    batch_size: int = 256
    clip: float = 1.0
    activation: str = "selu"

    def __post_init__(self) -> None:
        if self.noise is None:
            _pos(self.epsilon, "epsilon")
        else:
            _pos(self.noise, "noise")
        if self.delta is not None and not 0.0 < self.delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {self.delta}")
        for name, low in (
            ("max_degree", 1),
            ("hidden", 1),
            ("base_layers", 1),
            ("head_layers", 1),
            ("epochs", 1),
            ("batch_size", 1),
        ):
            _int(getattr(self, name), name, low)
        _pos(self.lr, "lr")
        _pos(self.clip, "clip")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")


class DPGNNModel(nn.Module):
    """Base MLP → SAGE layer (sum aggregation + root weight) → JK concatenation → head.

    ``forward(x_root, x_nbrs, mask)`` scores a batch of roots from their own features ``[B, F]`` and their padded
    in-neighbour features ``[B, D, F]`` (``mask`` ``[B, D]`` marks real neighbours). :meth:`full` scores every node
    of a graph at once from a sparse adjacency (rows = receiving nodes); both give the same logits.
    """

    def __init__(
        self,
        in_dim: int,
        hidden: int,
        num_classes: int,
        *,
        base_layers: int = 2,
        head_layers: int = 1,
        activation: str = "selu",
    ) -> None:
        super().__init__()
        self.base = MLP(in_dim, hidden, base_layers, activation=activation, norm="none")
        self.lin_root = nn.Linear(hidden, hidden)
        self.lin_nbr = nn.Linear(hidden, hidden, bias=False)
        self.act = ACTIVATIONS[activation]()
        self.head = MLP(
            2 * hidden, hidden, head_layers, out_dim=num_classes, activation=activation, norm="none", plain_last=True
        )

    def _combine(self, h: Tensor, agg: Tensor) -> Tensor:
        return self.head(torch.cat([h, self.act(self.lin_root(h) + self.lin_nbr(agg))], dim=-1))

    def forward(self, x_root: Tensor, x_nbrs: Tensor, mask: Tensor) -> Tensor:
        """Logits ``[B, C]`` of a batch of roots, each from its own 1-hop subgraph.

        Args:
            x_root: the roots' features ``[B, F]``.
            x_nbrs: their padded in-neighbours' features ``[B, D, F]``.
            mask: ``[B, D]``, true where a neighbour slot holds a real neighbour (padding adds nothing).

        Returns:
            ``head(cat(h, act(W_root h + W_nbr Σ_j base(x_j))))`` with ``h = base(x_root)``.
        """
        h = self.base(x_root)
        agg = (self.base(x_nbrs) * mask.unsqueeze(-1).to(x_nbrs.dtype)).sum(-2)
        return self._combine(h, agg)

    def full(self, x: Tensor, adj: Tensor) -> Tensor:
        """Logits ``[N, C]`` of every node of a graph at once (the same function as :meth:`forward` on each node's
        subgraph).

        Args:
            x: node features ``[N, F]``.
            adj: sparse adjacency ``[N, N]`` whose row ``v`` holds ``v``'s in-neighbours (sum aggregation).

        Returns:
            the logits of every node.
        """
        h = self.base(x)
        return self._combine(h, adj @ h)


def neighbour_table(edge_index: Tensor, num_nodes: int, max_degree: int) -> tuple[Tensor, Tensor]:
    """Padded in-neighbour lists ``[N, D]`` (padding = ``num_nodes``, an all-zero feature row) and their mask.
    Raises if a node has more than ``max_degree`` in-neighbours (bound the degrees first)."""
    d = _int(max_degree, "max_degree", 1)
    src, dst = edge_index.cpu()
    order = torch.argsort(dst, stable=True)
    src, dst = src[order], dst[order]
    counts = torch.bincount(dst, minlength=num_nodes)
    if counts.numel() and int(counts.max()) > d:
        raise ValueError(f"a node has {int(counts.max())} in-neighbours > max_degree={d}: bound the degrees first")
    start = torch.cumsum(counts, 0) - counts
    pos = torch.arange(dst.numel()) - start[dst]
    table = torch.full((num_nodes, d), num_nodes, dtype=torch.long)
    table[dst, pos] = src
    return table, table < num_nodes


def calibrate_fdp_noise(
    target_epsilon: float,
    delta: float,
    *,
    steps: int,
    train_nodes: int,
    batch_size: int,
    affected: int,
    rtol: float = 1e-3,
) -> float:
    """The smallest noise multiplier z (geometric bisection) with multi-term ε(z) ≤ ``target_epsilon``; ε is
    decreasing in z, and the returned z always satisfies the target (never under-reports ε)."""
    target = _pos(target_epsilon, "target_epsilon")

    def eps(z: float) -> float:
        return fdp_epsilon(steps, z, train_nodes, batch_size, affected, delta)[0]

    lo, hi = 1e-3, 1.0
    while eps(hi) > target:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            raise ValueError(f"no noise multiplier up to 1e6 reaches epsilon <= {target}")
    if eps(lo) <= target:
        return lo
    while hi / lo > 1.0 + 1e-9:
        mid = math.sqrt(lo * hi)
        if eps(mid) <= target:
            hi = mid
        else:
            lo = mid
        if eps(hi) >= target * (1.0 - rtol):
            break
    return hi


def dp_gnn_statement(steps: int) -> dict[str, Any]:
    """Guarantee fields of a DP-GNN run of ``steps`` accounted steps (best-validation restore: model selection)."""
    return statement(
        AS_PUBLISHED,
        "add/remove one node with its edges (degrees capped at D)",
        accounted=f"{int(steps)} Poisson-sampled steps of per-root clipped 1-hop-subgraph gradients, "
        "each node in at most D+1 subgraphs (Daigavane et al. multi-term RDP)",
        not_covered=[MODEL_SELECTION],
    )


def dp_gnn_ledger(
    *,
    train_nodes: int,
    batch_size: int,
    epochs: int,
    max_degree: int,
    delta: float,
    target_epsilon: float | None = None,
    noise: float | None = None,
    clip: float = 1.0,
) -> dict[str, Any]:
    """The privacy ledger of one DP-GNN run (calibrating z when ``target_epsilon`` is given)."""
    n, b = _int(train_nodes, "train_nodes", 1), _int(batch_size, "batch_size", 1)
    b = min(b, n)
    k = max_affected(_int(max_degree, "max_degree", 1), 1)
    _, trained = stage_steps(n, b, epochs)  # E·⌊N/B⌋ trained; ⌊E·N/B⌋ ≥ trained accounted, as for ProGAP
    accounted = accounted_steps(n, b, epochs)
    if (target_epsilon is None) == (noise is None):
        raise ValueError("give exactly one of target_epsilon and noise")
    z = (
        calibrate_fdp_noise(target_epsilon, delta, steps=accounted, train_nodes=n, batch_size=b, affected=k)
        if noise is None
        else _pos(noise, "noise")
    )
    eps, order = fdp_epsilon(accounted, z, n, b, k, delta)
    return {
        "level": "node",
        "method": "dp-gnn",
        **dp_gnn_statement(accounted),
        "mechanism": "per-root clipped gradients of 1-hop subgraphs + Gaussian noise z*2(D+1)C",
        "noise_multiplier": z,
        "sensitivity": 2.0 * k * clip,
        "max_degree": int(max_degree),
        "batch_size": b,
        "train_nodes": n,
        "steps": accounted,
        "steps_trained": trained,
        "clip": clip,
        "event": FdpSampledGaussianEvent(z, n, b, k).to_dict(),
        "epsilon": eps,
        "delta": float(delta),
        "order": order,
        "target_epsilon": target_epsilon,
        "accountant": "multi-term hypergeometric RDP (Daigavane et al.), dp_accounting conversion",
    }


@dataclass(frozen=True)
class DPGNNSetup:
    """What every seed of a DP-GNN configuration shares: the split masks, the training roots, the ledger and the
    cleaned edge list (each seed bounds its degrees on it with its own draw, :func:`seed_graph`)."""

    masks: dict[str, Tensor]
    """``train`` / ``val`` / ``test`` boolean masks on the device"""
    train_idx: Tensor
    """the training roots (node ids), on the device"""
    ledger: dict[str, Any]
    """the privacy ledger of one run (:func:`dp_gnn_ledger`, the config and the edge cleaning noted)"""
    edges: Tensor
    """the edge list with repeated pairs merged (:func:`dpgnn.methods.progap.graph_edges`)"""


def dp_gnn_setup(data: Data, cfg: DPGNNConfig, dev: torch.device) -> DPGNNSetup:
    """Check the inputs and compute what every seed shares (:class:`DPGNNSetup`): masks, ledger (z calibrated
    unless ``cfg.noise`` is given), cleaned edges."""
    masks = _masks(data, dev)
    check_features(data.x, "data.x (node features)")
    train_idx = masks["train"].nonzero().view(-1)
    n_train = train_idx.numel()
    if n_train == 0:
        raise ValueError("data has no training nodes")
    delta = cfg.delta if cfg.delta is not None else default_delta(n_train)
    ledger = dp_gnn_ledger(
        train_nodes=n_train,
        batch_size=cfg.batch_size,
        epochs=cfg.epochs,
        max_degree=cfg.max_degree,
        delta=delta,
        target_epsilon=cfg.epsilon if cfg.noise is None else None,
        noise=cfg.noise,
        clip=cfg.clip,
    )
    ledger["config"] = asdict(cfg)
    ei, cleaning = graph_edges(data, "node", "DP-GNN")
    note_edges(ledger, cleaning)
    return DPGNNSetup(masks=masks, train_idx=train_idx, ledger=ledger, edges=ei)


def seed_graph(edges: Tensor, num_nodes: int, max_degree: int, seed: int, dev: torch.device):
    """One seed's degree-bounded graph (``stable_seed("dp-gnn-degree", seed)``): its padded in-neighbour table and
    mask (:func:`neighbour_table`) and its sparse adjacency for the full-graph forward (rows = receiving nodes)."""
    ei = bound_degree(edges, num_nodes, max_degree, stable_seed("dp-gnn-degree", seed))
    table, tmask = neighbour_table(ei, num_nodes, max_degree)
    adj = to_torch_csr_tensor(ei.flip(0), size=(num_nodes, num_nodes)).to(dev)  # sum aggregation
    return table.to(dev), tmask.to(dev), adj


def init_model(cfg: DPGNNConfig, in_dim: int, num_classes: int, seed: int, dev: torch.device) -> DPGNNModel:
    """One seed's initial model, from the global stream seeded with ``stable_seed("dp-gnn-init", seed)``."""
    torch.manual_seed(stable_seed("dp-gnn-init", seed))
    return DPGNNModel(
        in_dim,
        cfg.hidden,
        num_classes,
        base_layers=cfg.base_layers,
        head_layers=cfg.head_layers,
        activation=cfg.activation,
    ).to(dev)


def noise_generator(seed: int, dev: torch.device) -> torch.Generator:
    """One seed's stream of batches and noise (``stable_seed("dp-gnn-noise", seed)``; on the GPU when ``dev`` is
    one)."""
    return make_generator(stable_seed("dp-gnn-noise", seed), dev if dev.type == "cuda" else "cpu")


def draw_roots(train_idx: Tensor, batch: int, generator: torch.Generator) -> Tensor:
    """One step's training roots: ``batch`` of ``train_idx`` uniformly without replacement (one ``randperm``)."""
    n_train = train_idx.numel()
    pick = torch.randperm(n_train, generator=generator, device=generator.device)[:batch]
    return train_idx[pick.to(train_idx.device)]


def _epoch_step(model, setup: DPGNNSetup, tensors, cfg: DPGNNConfig, gen: torch.Generator, canary):
    """``step(epoch)`` for :func:`dpgnn.train.fit`: ``steps_trained / epochs`` noisy Adam steps, each on fresh
    uniform roots, their per-root gradients clipped to ``C`` and summed, Gaussian noise ``z·2(D+1)C`` added."""
    x, x_pad, y, table, tmask = tensors
    ledger, train_idx = setup.ledger, setup.train_idx
    names = [k for k, _ in model.named_parameters()]
    b = min(cfg.batch_size, train_idx.numel())
    std = ledger["noise_multiplier"] * ledger["sensitivity"]
    steps_per_epoch = ledger["steps_trained"] // cfg.epochs
    info = DPStepInfo(population=train_idx.numel(), batch=b, poisson=False, std=std, clip=cfg.clip)
    dev = x.device

    def add_noise(sums: dict[str, Tensor]) -> dict[str, Tensor]:
        for k, p in model.named_parameters():
            sums[k] += std * torch.randn(p.shape, generator=gen, device=gen.device).to(dev)
        return sums

    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    private = NoisyStep(opt, dict(model.named_parameters()), add_noise, b, canary=canary, info=info)

    def step(epoch: int) -> None:
        """One epoch: ``steps_per_epoch`` noisy steps on fresh uniform batches of training roots."""
        for _ in range(steps_per_epoch):
            roots = draw_roots(train_idx, b, gen)
            nb = table[roots]
            g = per_root_gradients(model, x[roots], x_pad[nb], tmask[roots], y[roots])
            norms = torch.sqrt(sum(g[k].flatten(1).pow(2).sum(1) for k in names))
            scale = (cfg.clip / (norms + 1e-6)).clamp(max=1.0)
            private({k: torch.einsum("b,b...->...", scale, g[k]) for k in names})

    return step


def train_dp_gnn(
    data: Data,
    cfg: DPGNNConfig,
    *,
    seed: int = 0,
    device: str = "auto",
    on_model=None,
    canary: DPStepHook | None = None,
) -> ProGAPResult:
    """One DP-GNN run (node-level DP): ledger, per-root clipped and noised Adam steps, best-validation restore.
    ``on_model(model)`` is called with the released (restored) model (audits, :mod:`dpgnn.audit.central`).
    ``canary`` (audits, :mod:`dpgnn.methods.hooks`): called around every step's noise with the per-root clipped
    sums (``B`` of the ``N_train`` roots uniformly without replacement, per-root norm ``C``)."""
    t0 = time.perf_counter()
    dev = resolve_device(device)
    setup = dp_gnn_setup(data, cfg, dev)
    n = data.num_nodes
    table, tmask, adj = seed_graph(setup.edges, n, cfg.max_degree, seed, dev)
    x = data.x.to(dev).float()
    x_pad = torch.cat([x, x.new_zeros(1, x.size(1))])
    y = data.y.to(dev)
    model = init_model(cfg, x.size(1), int(data.y.max()) + 1, seed, dev)
    gen = noise_generator(seed, dev)
    step = _epoch_step(model, setup, (x, x_pad, y, table, tmask), cfg, gen, canary)

    def logits() -> Tensor:  # the full (degree-bounded) graph, non-private forward, eval mode, no gradients
        model.eval()
        with torch.no_grad():
            return model.full(x, adj)

    watched = {"train": setup.masks["train"], "val": setup.masks["val"]}
    fitted = fit(
        model,
        step,
        lambda epoch: split_accuracy(logits(), y, watched),
        epochs=cfg.epochs,
        monitor="val",
        mode="max",
        keep_initial=True,
    )
    history = [{"stage": 0, "epoch": h["epoch"], "train_acc": h["train"], "val_acc": h["val"]} for h in fitted.history]
    if on_model is not None:
        on_model(model)
    acc = split_accuracy(logits(), y, setup.masks)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=setup.ledger,
        history=history,
        seconds=time.perf_counter() - t0,
        model=model,
    )


def per_root_gradients(model: DPGNNModel, x_root: Tensor, x_nbrs: Tensor, mask: Tensor, y: Tensor) -> dict[str, Tensor]:
    """Gradient of each root's cross-entropy on its own 1-hop subgraph, ``{name: [B, *shape]}`` (one vectorised
    ``vmap(grad)``; equal to autograd on each subgraph alone)."""
    from torch.func import functional_call, grad, vmap

    params = {k: p.detach() for k, p in model.named_parameters()}

    def loss_one(p, xr, xn, m, t):
        out = functional_call(model, p, (xr.unsqueeze(0), xn.unsqueeze(0), m.unsqueeze(0)))
        return F.cross_entropy(out, t.unsqueeze(0))

    return vmap(grad(loss_one), in_dims=(None, 0, 0, 0, 0))(params, x_root, x_nbrs, mask, y)


_DPGNN_KEYS = (
    "epsilon",
    "delta",
    "noise",
    "max_degree",
    "hidden",
    "base_layers",
    "head_layers",
    "lr",
    "epochs",
    "batch_size",
    "clip",
    "activation",
)


@register("progap", "dp-gnn", "node", description="DP-GNN (Daigavane et al.): per-root clipped 1-hop subgraphs")
def run_dp_gnn(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """DP-GNN under the method contract: one message-passing layer by construction (``depth`` fixed at 1).

    A batch of one seed (:func:`~dpgnn.methods.dp_gnn_repeats.train_dp_gnn_repeats`): its first layer takes the
    per-root gradients from the feature rows instead of materialising them per root: faster than
    :func:`train_dp_gnn` (``benchmarks/batched_repeats.py``, its R = 1 rows) and equal to it up to float rounding
    (tested). The audits' hooks need :func:`train_dp_gnn` itself."""
    return _dp_gnn_repeats(data, config, seeds=[seed], device=device)[0]


def _config_of(config: Mapping[str, Any]) -> DPGNNConfig:
    return DPGNNConfig(**method_config(config, "node", _DPGNN_KEYS, fixed={"depth": 1}))


def _dp_gnn_repeats(
    data: Data, config: Mapping[str, Any], *, seeds: Sequence[int], device: str = "auto"
) -> list[RunResult]:
    """``run_dp_gnn`` for each of ``seeds``, trained together (:func:`dpgnn.methods.dp_gnn_repeats.
    train_dp_gnn_repeats`): one result per seed, each ``run``'s up to float rounding."""
    from dpgnn.methods.dp_gnn_repeats import train_dp_gnn_repeats

    return [r.to_run_result() for r in train_dp_gnn_repeats(data, _config_of(config), seeds, device=device)]


run_dp_gnn.repeats = _dp_gnn_repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together)
