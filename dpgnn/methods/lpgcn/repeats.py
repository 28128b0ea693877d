"""LPGCN node-classification runs of one Table-2 configuration trained together:
:func:`run_node_classification_repeats` trains the runs (repeat indices) of one (dataset, mechanism, ε, training)
configuration in one loop and returns, per run, the row :func:`~dpgnn.methods.lpgcn.run_node_classification`
returns for it, the same numbers bit for bit on the CPU (tested; timings aside).

Each run is set up exactly as its sequential run: its features perturbed with its own generator, then the global
stream seeded with its model seed builds its GCN. The global stream's state right after is handed to the run's own
generator, from which it draws its dropout masks in the sequential order (one ``bernoulli_`` of the hidden layer per
training forward, as ``F.dropout`` draws on the CPU). Each run keeps its own :class:`~dpgnn.nn.GCN` and its own Adam
moments (one optimizer over every run's parameters: Adam updates each parameter on its own).

Shared per epoch: the graph convolutions (one propagation over the runs' columns side by side, ``[N, R·k]``, the
normalised adjacency computed once), the activations and the log-softmax, and the first layer itself, computed once
per epoch instead of twice: the evaluation of the weights after epoch ``e`` computes it with gradients and epoch
``e + 1``'s step back-propagates through it (dropout comes after the first layer, so the training forward equals the
evaluation's up to there). Products with a run's own features and weights (each layer's ``x Wᵀ`` and its gradients)
stay per run, on operands laid out as in its sequential run, so they give the same bits. What a loss does not read
is not computed: the second layer's propagation and log-softmax run at the loss's nodes only (training or
validation), the first layer's propagation at their neighbours only, over the edges into those nodes in the graph's
order (a sum there is the full graph's term for term; the terms left out are the exact zeros the sequential run adds).

Early stopping is per run (:func:`dpgnn.train.fit`'s rule): a run that stops leaves the batch, the others go on.
Runs that cannot share the loop run one after the other (:func:`batchable`): dropout on a GPU (its fused kernel
draws from the device's default generator) and runs inside :func:`dpgnn.train.last_epoch`. Timings: each row's
``perturb_time_s`` is its own, ``train_time_s`` and ``duration_s`` share the batch's time equally.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.lpgcn.common import GLOBAL_SEED, HIDDEN_CODE, _epsilon, _hparams, _label, _method_key
from dpgnn.methods.lpgcn.node_classification import (
    _node_config,
    _node_extra,
    _node_inputs,
    _node_scores,
    run_node_classification,
)
from dpgnn.methods.lpgcn.runs import _check_common, _perturb_for_run, _result, _run_seed, _with_features
from dpgnn.nn import GCN
from dpgnn.train import _LAST_EPOCH, FitResult, GradientStep, _improves
from dpgnn.utils import resolve_device

__all__ = ["batchable", "run_node_classification_repeats"]


def batchable(device: str | torch.device, dropout: float) -> str | None:
    """Why the runs of a configuration cannot train in one loop on ``device`` with ``dropout``, or None."""
    if _LAST_EPOCH.get() is not None:
        return "inside dpgnn.train.last_epoch every run keeps its own last epoch"
    if resolve_device(device).type != "cpu" and dropout > 0:
        return "dropout on an accelerator draws from the device's default generator"
    return None


class _OwnGrad(torch.autograd.Function):
    """Identity whose backward hands on a contiguous gradient: a run's products get their gradient laid out as in
    its sequential run, not as a column block of the runs' side-by-side gradient."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        """``x`` itself (a view)."""
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Tensor:
        """The gradient, contiguous."""
        return grad.contiguous()


class _Run:
    """One run of the batch: its perturbed features, GCN, dropout generator, selection state and history."""

    def __init__(self, data: Data, x: Tensor, model: GCN, generator: torch.Generator, t_perturb: float) -> None:
        self.data, self.x, self.model, self.generator, self.t_perturb = data, x, model, generator, t_perturb
        self.best_value, self.best_epoch, self.wait, self.epochs = math.inf, 0, 0, 0
        self.best: dict[str, float] = {}
        self.best_state: dict[str, Tensor] | None = None
        self.stopped = False  # early stopping ended the run
        self.history: dict[str, list] = {"train_loss": [], "val_loss": []}
        self.batch_size = 1  # the number of runs trained together

    def select(self, epoch: int, val: float, restore_best: bool, patience: int, min_epochs: int) -> None:
        """Record epoch ``epoch``'s validation loss; :func:`dpgnn.train.fit`'s selection and early stopping."""
        self.history["val_loss"].append(val)
        self.epochs = epoch
        if _improves(val, self.best_value, "min", 0.0):
            self.best_value, self.best, self.best_epoch, self.wait = val, {"val_loss": val}, epoch, 0
            if restore_best:
                self.best_state = copy.deepcopy(self.model.state_dict())
        else:
            self.wait += 1
        if not (epoch < min_epochs or self.wait < int(patience)):
            self.stopped = True

    def fit_result(self) -> FitResult:
        """What :func:`dpgnn.train.fit` returns for this run (its per-epoch history aside)."""
        last = {"val_loss": self.history["val_loss"][-1]}
        return FitResult(self.best, self.best_epoch, last, self.epochs, self.stopped, [])


class _Batch:
    """The shared inputs of the runs' forwards: the graph normalised once, the labels and the masks, and the edges
    each propagation needs (a loss reads the second layer at its mask's nodes only, which read the first layer at
    their neighbours only)."""

    def __init__(self, runs: list[_Run], dev: torch.device) -> None:
        _, edge_index, self.y, self.masks = _node_inputs(runs[0].data, dev)
        n = runs[0].x.size(0)
        ei, w = gcn_norm(edge_index, None, n, False, True, "source_to_target", torch.float32)
        into = []  # per split (train, validation): its nodes' incoming edges, in the graph's order
        for idx in self.masks[:2]:
            mine = torch.zeros(n, dtype=torch.bool, device=dev)
            mine[idx] = True
            into.append(mine[ei[1]])
        self.second_edges = [(ei[:, e], w[e]) for e in into]
        needed = torch.zeros(n, dtype=torch.bool, device=dev)
        needed[ei[0][into[0] | into[1]]] = True  # the hidden rows the second layer reads
        self.first_edges = (ei[:, needed[ei[1]]], w[needed[ei[1]]])
        self.conv = runs[0].model.conv1  # its propagate (the message passing of every GCNConv) serves both layers
        self.dropout = runs[0].model.dropout

    def propagate(self, blocks: list[Tensor], biases: list[Tensor], edges: tuple[Tensor, Tensor]) -> Tensor:
        """``[Â z_1 + b_1 … Â z_R + b_R]`` over ``edges`` (rows without an edge there: the bias alone): the runs'
        pre-propagation outputs side by side in one propagation, each run's bias added to its own block (whose
        gradient, contiguous, sums to the bias's as in its run)."""
        z = torch.cat([_OwnGrad.apply(b) for b in blocks], dim=1)
        out = self.conv.propagate(edges[0], x=z, edge_weight=edges[1])
        k = blocks[0].size(1)
        return torch.cat([_OwnGrad.apply(out[:, i * k : (i + 1) * k] + b) for i, b in enumerate(biases)], dim=1)

    def first(self, runs: list[_Run]) -> Tensor:
        """ReLU of every run's first graph convolution, ``[N, R·hidden]`` (exact at the rows the second layer
        reads), with gradients."""
        blocks = [F.linear(r.x, r.model.conv1.lin.weight) for r in runs]
        return F.relu(self.propagate(blocks, [r.model.conv1.bias for r in runs], self.first_edges))

    def second(self, runs: list[_Run], h: Tensor, split: int) -> Tensor:
        """Log-probabilities ``[n, R, classes]`` of the runs at the nodes of mask ``split`` (0 train, with dropout:
        each run's mask from its own generator, drawn for every node; 1 validation) from their hidden layers
        ``h``."""
        k = h.size(1) // len(runs)
        if split == 0 and self.dropout > 0:
            p = self.dropout
            noise = [h.new_empty(h.size(0), k).bernoulli_(1 - p, generator=r.generator).div_(1 - p) for r in runs]
            h = h * torch.cat(noise, dim=1)
        blocks = [
            F.linear(h[:, i * k : (i + 1) * k].contiguous(), r.model.conv2.lin.weight) for i, r in enumerate(runs)
        ]
        out = self.propagate(blocks, [r.model.conv2.bias for r in runs], self.second_edges[split])
        out = out[self.masks[split]]
        return F.log_softmax(out.view(out.size(0), len(runs), -1), dim=-1)

    def losses(self, out: Tensor, split: int) -> list[Tensor]:
        """Each run's mean NLL on the nodes of mask ``split`` (``out``: :meth:`second` of that split)."""
        target = self.y[self.masks[split]]
        return [F.nll_loss(out[:, i].contiguous(), target) for i in range(out.size(1))]


def _train(runs: list[_Run], batch: _Batch, opt: torch.optim.Optimizer, cfg: Mapping[str, Any]) -> None:
    """The epochs of every run, the runs that have not stopped together: each epoch one Adam step on the summed
    training losses of the live runs (each run's gradient is its own loss's), then their validation losses and
    :meth:`_Run.select`; the first layer of the evaluation is carried into the next step while no run stops."""
    carried: Tensor | None = None  # the live runs' first layer at their current weights, with gradients
    live = list(runs)

    def loss(epoch: int) -> Tensor:
        nonlocal carried
        h = carried if carried is not None else batch.first(live)
        carried = None
        losses = batch.losses(batch.second(live, h, 0), 0)
        for r, value in zip(live, losses):
            r.history["train_loss"].append(value.detach())
        return torch.stack(losses).sum()

    update = GradientStep(opt, loss)
    for epoch in range(1, int(cfg["max_epochs"]) + 1):
        for r in live:
            r.model.train()
        update(epoch)
        for r in live:
            r.model.eval()
        h = batch.first(live)
        with torch.no_grad():
            vals = torch.stack(batch.losses(batch.second(live, h.detach(), 1), 1)).tolist()
        for r, val in zip(live, vals):
            r.select(epoch, val, cfg["restore_best"], cfg["patience"], cfg["min_epochs"])
        still = [r for r in live if not r.stopped]
        carried = h if len(still) == len(live) and epoch < int(cfg["max_epochs"]) else None
        live = still
        if not live:
            break
    for r in runs:
        if cfg["restore_best"] and r.best_state is not None:
            r.model.load_state_dict(r.best_state)


def _start(
    data: Data, key: str, m: str, eps: float, run: int, seed: int, hidden: int, hp: Mapping[str, float]
) -> tuple[_Run, int]:
    """Run ``run``'s perturbed features and GCN, drawn as its sequential run draws them, and its run seed."""
    run_seed = _run_seed(seed, key, m, eps, run, "node")
    t0 = time.perf_counter()
    x_hat, t_perturb = _perturb_for_run(data.x, m, eps, run_seed, t0)
    num_classes = int(data.y[data.y >= 0].max()) + 1
    model = GCN(data.num_features, hidden, num_classes, dropout=hp["dropout"], cached=True)
    generator = torch.Generator()
    generator.set_state(torch.get_rng_state())  # the global stream the sequential run's dropout draws from
    return _Run(_with_features(data, x_hat), x_hat, model, generator, t_perturb), run_seed


def run_node_classification_repeats(
    data: Data,
    dataset_name: str,
    method: str,
    epsilon: float | None,
    *,
    runs: Sequence[int],
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    max_epochs: int = 500,
    min_epochs: int = 10,
    patience: int = 20,
    hidden: int = HIDDEN_CODE,
    hparams: Mapping[str, float] | None = None,
    restore_best: bool = False,
) -> list[dict[str, Any]]:
    """:func:`~dpgnn.methods.lpgcn.run_node_classification` for each repeat index of ``runs`` (its other
    arguments as there), trained together: one row per run, in order, each equal to the sequential run's row
    (timings aside). Where :func:`batchable` says no, the runs run one after the other."""
    runs = list(runs)
    if not runs or any(isinstance(r, bool) or not isinstance(r, int) for r in runs):
        raise ValueError(f"runs must be a non-empty list of ints, got {runs!r}")
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)
    hp = _hparams(key, "gcn", hparams)
    train = {"max_epochs": max_epochs, "min_epochs": min_epochs, "patience": patience, "restore_best": restore_best}
    if len(runs) == 1 or batchable(device, hp["dropout"]) is not None:
        return [
            run_node_classification(
                data,
                dataset_name,
                method,
                epsilon,
                run=r,
                seed=seed,
                device=device,
                hidden=hidden,
                hparams=hparams,
                **train,
            )
            for r in runs
        ]
    _check_common(hp["lr"], hp["weight_decay"], max_epochs, min_epochs)
    dev = resolve_device(device)
    t0 = time.perf_counter()
    data, cleaning = with_clean_edges(data, owner="LPGCN")
    started = [_start(data, key, m, eps, r, seed, hidden, hp) for r in runs]
    batch_runs = [b for b, _ in started]
    for r in batch_runs:
        r.batch_size = len(batch_runs)
        r.x = r.x.to(dev, torch.float32)
        r.model.to(dev)
    batch = _Batch(batch_runs, dev)
    params = [p for r in batch_runs for p in r.model.parameters()]
    opt = torch.optim.Adam(params, lr=hp["lr"], weight_decay=hp["weight_decay"])
    t1 = time.perf_counter()
    _train(batch_runs, batch, opt, train)
    torch.set_rng_state(batch_runs[-1].generator.get_state())  # where the last sequential run leaves the stream
    train_time = (time.perf_counter() - t1) / len(runs)
    config = _node_config(hidden, hp, max_epochs, min_epochs, patience, restore_best)
    ident = {"key": key, "method": m, "eps": eps, "seed": seed}
    return [
        _row(b, r, run_seed, ident, config, train_time, t0, cleaning, dev) for r, (b, run_seed) in zip(runs, started)
    ]


def _row(
    b: _Run,
    run: int,
    run_seed: int,
    ident: Mapping[str, Any],
    config: dict[str, Any],
    train_time: float,
    t0: float,
    cleaning: Any,
    dev: torch.device,
) -> dict[str, Any]:
    """Run ``run``'s row, as :func:`~dpgnn.methods.lpgcn.run_node_classification` builds it: the trained GCN's
    micro-F1 on each mask, the fit's record; ``duration_s`` the batch's time since ``t0`` shared equally."""
    x, edge_index, y, masks = _node_inputs(b.data, dev)
    restore_best = bool(config["restore_best"])
    res = _node_scores(b.model, x, edge_index, y, masks, b.fit_result(), restore_best, b.history, train_time, dev)
    extra = _node_extra(res, b.t_perturb, t0, cleaning)
    extra["duration_s"] = (time.perf_counter() - t0) / b.batch_size
    key, m, eps, seed = ident["key"], ident["method"], ident["eps"], ident["seed"]
    nf = b.data.num_features
    return _result(
        "node_classification", key, m, eps, run, seed, run_seed, nf, config, "micro_f1", res["test_f1"], extra
    )
