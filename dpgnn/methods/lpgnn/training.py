"""LPGNN's training: Drop's targets and probabilities, the noisy model-selection rule, the batched trainer
(:func:`train_batched`) and the straightforward per-run loop (:func:`train_reference`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.lpgnn.common import LABEL_METHODS, _choice, _steps
from dpgnn.methods.lpgnn.features import transition_matrix
from dpgnn.metrics import accuracy_tensor
from dpgnn.nn.lpgnn import Backbone, BatchedBackbone, BatchedFeatures, KProp, kprop, normalized_adjacency
from dpgnn.train import GradientStep, fit
from dpgnn.utils import resolve_device


def drop_targets(noisy: Tensor, train_idx: Tensor, adj: Tensor | None, steps: int, num_classes: int) -> Tensor:
    """Drop's hard training targets (docs/papers/lpgnn.md#drop-training-and-model-selection):
    ``argmax softmax(Â^{K_y} Y')`` on the training nodes.

    ``noisy`` is ``(N,)`` or ``(N, R)`` with ``-1`` for unlabelled nodes (their rows of ``Y'`` are zero). ``K_y = 0``
    returns the noisy labels. As in the authors' code, a training node without a labelled non-self neighbour
    within ``K_y`` hops gets a uniform row and hence class 0. Returns ``(n_train,)`` or ``(n_train, R)``.
    """
    k = _steps(steps, "K_y")
    if k == 0:
        return noisy[train_idx]
    y1 = F.one_hot(noisy.clamp(min=0), num_classes).float() * (noisy >= 0).unsqueeze(-1)
    prop = torch.softmax(kprop(y1, adj, k), dim=-1)
    return prop[train_idx].argmax(dim=-1)


def label_probabilities(logits: Tensor, T: Tensor | None, adj: Tensor | None, steps: int) -> tuple[Tensor, Tensor]:
    """``(P(y|x), P(ỹ|x))``: softmax, forward correction ``·T`` (if ``T``), then ``softmax(Â^{K_y} ·)`` if K_y > 0."""
    p = torch.softmax(logits, dim=-1)
    q = p @ T if T is not None else p
    if steps:
        q = torch.softmax(kprop(q, adj, steps), dim=-1)
    return p, q


def selection_step(
    best: dict[str, Tensor] | None,
    val_loss: Tensor,
    val_acc: Tensor,
    train_acc: Tensor,
    test_acc: Tensor,
    max_acc: float,
    epoch: int,
) -> dict[str, Tensor]:
    """One epoch of the model-selection rule without clean labels
    (docs/papers/lpgnn.md#drop-training-and-model-selection), vectorised over repeats.

    The first epoch initialises the best state; a later epoch becomes best iff ``val_loss < best_val_loss`` and
    ``best_val_acc < val_acc <= max_acc`` and ``best_train_acc < train_acc <= 1.05·max_acc`` (``max_acc`` = the
    RR keep probability, the best accuracy attainable against noisy labels). Returns the updated state.
    """
    cur = {
        "val_loss": val_loss,
        "val_acc": val_acc,
        "train_acc": train_acc,
        "test_acc": test_acc,
        "epoch": torch.full_like(val_loss, float(epoch)),
    }
    if best is None:
        return cur
    ok = (
        (val_loss < best["val_loss"])
        & (best["val_acc"] < val_acc)
        & (val_acc <= max_acc + 1e-12)
        & (best["train_acc"] < train_acc)
        & (train_acc <= 1.05 * max_acc + 1e-12)
    )
    return {k: torch.where(ok, cur[k], best[k]) for k in cur}


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------
def _masks(data: Data, dev: torch.device) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(getattr(data, f"{s}_mask").nonzero(as_tuple=True)[0].to(dev) for s in ("train", "val", "test"))


def _nll(q: Tensor, target: Tensor) -> Tensor:
    """Mean over nodes of −log(q[target] + 1e-20); ``q`` (n, R, c), ``target`` (n, R) → (R,)."""
    return -torch.log(q.gather(-1, target.unsqueeze(-1)).squeeze(-1) + 1e-20).mean(0)


def train_batched(
    data: Data,
    features: BatchedFeatures,
    noisy: Tensor,
    *,
    backbone: str,
    seeds: Sequence[int],
    lr: float,
    weight_decay: float,
    dropout: float,
    k_y: int,
    label_method: str,
    eps_y: float,
    epochs: int = 500,
    device: str = "auto",
    kprop_adj: Tensor | None = None,
    threads: int | None = 1,
    models: bool = False,
) -> dict[str, Any]:
    """Train ``R = len(seeds)`` runs at once (batched weights, one Adam) with Drop and noisy model selection.

    ``noisy`` is ``(N, R)`` (``-1`` = unlabelled). Each epoch: one full-batch Adam step on the Drop loss of the
    training nodes (summed over repeats, so each repeat gets its own gradient); the weights after each step are
    evaluated without dropout (noisy validation loss/accuracy, noisy training accuracy, clean test accuracy) and
    fed to the selection rule of :func:`selection_step` -- all on the device, no host synchronisation inside the
    loop. The first layer (KProp + aggregation + SELU) comes before any dropout, so the evaluation of the weights
    after epoch ``e`` reuses the first layer of epoch ``e + 1``'s training forward (same numbers, one KProp less).

    ``threads``: torch intra-op threads on the CPU during training (restored afterwards; ``None`` = leave as is).
    The sparse products here are small and latency-bound: with several threads on a shared 2-core machine they
    ran 10-20× slower than with one (measured), so the default is 1.

    ``models``: also return ``"models"``, each repeat's :class:`~dpgnn.nn.lpgnn.Backbone` with the weights of
    its selected epoch (in eval mode; its input is ``KProp(k_x)`` of the repeat's features).
    """
    dev = resolve_device(device)
    with _cpu_threads(dev, threads):
        problem = _BatchedProblem.build(data, noisy, backbone, seeds, dropout, k_y, label_method, eps_y, dev, kprop_adj)
        return _fit_batched(problem, features, lr, weight_decay, epochs, models)


@contextlib.contextmanager
def _cpu_threads(dev: torch.device, threads: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``threads`` while the block runs on the CPU (``None``: left as they are)."""
    if threads is None or dev.type != "cpu":
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class _BatchedProblem:
    """What :func:`train_batched`'s epochs read: the initialised model, graph operators, targets and masks."""

    model: BatchedBackbone
    ops: dict[str, Any]
    adj: Tensor
    fc: Tensor | None
    k_y: int
    max_acc: float
    targets: Tensor
    masks: tuple[Tensor, Tensor, Tensor]
    labels: tuple[Tensor, Tensor, Tensor]  # noisy train, noisy validation, clean test (as a column)

    @classmethod
    def build(
        cls,
        data: Data,
        noisy: Tensor,
        backbone: str,
        seeds: Sequence[int],
        dropout: float,
        k_y: int,
        label_method: str,
        eps_y: float,
        dev: torch.device,
        kprop_adj: Tensor | None,
    ) -> _BatchedProblem:
        """The problem of :func:`train_batched`'s arguments, on ``dev`` (the model initialised from ``seeds``)."""
        lm = _choice(label_method, LABEL_METHODS, "label_method")
        data, _ = with_clean_edges(data, owner="LPGNN")  # repeated pairs merged, as in run_cell
        n = data.num_nodes
        c = int(data.num_classes)
        train_idx, val_idx, test_idx = _masks(data, dev)
        T = transition_matrix(eps_y, c).to(dev)
        max_acc = float(T[0, 0])
        fc = None if lm == "ce" else T
        ky = _steps(k_y, "K_y") if lm == "drop" else 0
        adj = kprop_adj if kprop_adj is not None else normalized_adjacency(data.edge_index, n)
        adj = adj.to(dev)
        noisy = noisy.to(dev)
        targets = drop_targets(noisy, train_idx, adj, ky, c)
        y_train, y_val = noisy[train_idx], noisy[val_idx]
        y_test = data.y.to(dev)[test_idx].unsqueeze(1)
        model = BatchedBackbone.initialised(backbone, data.num_features, c, seeds, dropout=dropout).to(dev)
        ops = {k: v.to(dev) for k, v in BatchedBackbone.graph_ops(backbone, data.edge_index, n).items()}
        masks, labels = (train_idx, val_idx, test_idx), (y_train, y_val, y_test)
        return cls(model, ops, adj, fc, ky, max_acc, targets, masks, labels)


def _fit_batched(
    p: _BatchedProblem, features: BatchedFeatures, lr: float, weight_decay: float, epochs: int, models: bool = False
) -> dict[str, Any]:
    """:func:`train_batched`'s epochs on the engine and its result: the selected epoch's metrics per repeat (and,
    with ``models``, the selected epoch's weights, kept per repeat on the device)."""
    model, ops, fc = p.model, p.ops, p.fc
    (train_idx, val_idx, test_idx), (y_train, y_val, y_test) = p.masks, p.labels
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best = None
    kept = {k: v.detach().clone() for k, v in model.named_parameters()} if models else None

    def evaluate(x1: Tensor, epoch: int) -> None:
        nonlocal best
        prob, pc = label_probabilities(model.head(x1, ops, training=False), fc, None, 0)
        pred = prob.argmax(-1)
        best = selection_step(
            best,
            _nll(pc[val_idx], y_val),
            (pred[val_idx] == y_val).float().mean(0),
            (pred[train_idx] == y_train).float().mean(0),
            (pred[test_idx] == y_test).float().mean(0),
            p.max_acc,
            epoch,
        )
        if kept is not None:  # the repeats whose selected epoch is this one keep these weights
            chosen = best["epoch"] == float(epoch)
            for k, v in model.named_parameters():
                kept[k] = torch.where(chosen.view(-1, *[1] * (v.dim() - 1)), v.detach(), kept[k])

    def loss(epoch: int) -> Tensor:
        x1 = model.hidden(features, ops)  # the weights after epoch - 1: shared by their evaluation and this step
        if epoch > 1:
            with torch.no_grad():
                evaluate(x1.detach(), epoch - 1)
        _, q = label_probabilities(model.head(x1, ops, training=True), fc, p.adj, p.k_y)
        return _nll(q[train_idx], p.targets).sum()

    t0 = time.perf_counter()
    update = GradientStep(opt, loss)

    def step(epoch: int) -> None:  # the loss stays on the device: no host sync per epoch
        update(epoch)

    fit(model, step, epochs=epochs, monitor=None, restore_best=False)
    model.eval()
    with torch.no_grad():
        evaluate(model.hidden(features, ops), epochs)
    out: dict[str, Any] = {k: v.cpu().tolist() for k, v in best.items()}
    out["train_time_s"] = time.perf_counter() - t0
    out["max_acc"] = p.max_acc
    if kept is not None:
        with torch.no_grad():
            for k, v in model.named_parameters():
                v.copy_(kept[k])
        out["models"] = [model.backbone(r).eval() for r in range(model.r)]
    return out


def train_reference(
    data: Data,
    x: Tensor,
    noisy: Tensor,
    *,
    backbone: str,
    seed: int,
    lr: float,
    weight_decay: float,
    dropout: float,
    k_x: int,
    k_y: int,
    label_method: str,
    eps_y: float,
    epochs: int = 500,
    device: str = "auto",
) -> dict[str, Any]:
    """The straightforward per-run loop: KProp module (cached) + PyG backbone, one run, Python-side selection, on the
    plain engine :func:`dpgnn.train.fit` (each epoch: one Adam step, then the noisy evaluation and the selection rule).

    Same model, loss and selection rule as :func:`train_batched` for a single repeat (``x`` dense ``N × d``,
    ``noisy`` ``(N,)``); used as the speed baseline and as an independent check of the batched trainer (which
    :func:`dpgnn.fit` runs with one repeat). Returns the selected epoch's metrics, ``max_acc`` and ``model``: the
    backbone with the selected epoch's weights (in eval mode; its input is ``KProp(k_x)`` of the features).
    """
    dev = resolve_device(device)
    lm = _choice(label_method, LABEL_METHODS, "label_method")
    data, _ = with_clean_edges(data, owner="LPGNN")  # repeated pairs merged, as in run_cell
    c = int(data.num_classes)
    train_idx, val_idx, test_idx = _masks(data, dev)
    T = transition_matrix(eps_y, c).to(dev)
    max_acc = float(T[0, 0])
    fc = None if lm == "ce" else T
    ky = k_y if lm == "drop" else 0
    ei = data.edge_index.to(dev)
    adj = normalized_adjacency(data.edge_index, data.num_nodes).to(dev)
    noisy = noisy.to(dev)
    targets = drop_targets(noisy, train_idx, adj, ky, c)
    torch.manual_seed(int(seed))
    model = Backbone(backbone, data.num_features, c, dropout=dropout).to(dev)
    prop = KProp(k_x, cached=True)
    xt = prop(x.to(dev, torch.float32), ei)
    mean = model.neighbour_mean(xt, ei)  # the fixed input's first aggregation, once
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    y_test = data.y.to(dev)[test_idx]
    best: dict[str, float] | None = None

    def loss(epoch: int) -> Tensor:
        _, q = label_probabilities(model(xt, ei, neighbour_mean=mean), fc, adj, ky)
        return -torch.log(q[train_idx].gather(1, targets.unsqueeze(1)) + 1e-20).mean()

    step = GradientStep(opt, loss)

    def evaluate(epoch: int) -> dict[str, float]:
        nonlocal best
        model.eval()
        p, pc = label_probabilities(model(xt, ei, neighbour_mean=mean), fc, None, 0)
        cur = {
            "val_loss": (-torch.log(pc[val_idx].gather(1, noisy[val_idx].unsqueeze(1)) + 1e-20)).mean().item(),
            "val_acc": accuracy_tensor(p[val_idx], noisy[val_idx]).item(),
            "train_acc": accuracy_tensor(p[train_idx], noisy[train_idx]).item(),
            "test_acc": accuracy_tensor(p[test_idx], y_test).item(),
            "epoch": float(epoch),
        }
        # the selection rule of :func:`selection_step` (not a single monitored value, so fit does not select)
        if best is None or (
            cur["val_loss"] < best["val_loss"]
            and best["val_acc"] < cur["val_acc"] <= max_acc + 1e-12
            and best["train_acc"] < cur["train_acc"] <= 1.05 * max_acc + 1e-12
        ):
            best = cur
            selected.clear()
            selected.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return cur

    selected: list[dict[str, Tensor]] = []  # the weights of the selected epoch (the model returned)
    fit(model, step, evaluate, epochs=epochs, monitor=None, restore_best=False)
    model.load_state_dict(selected[0])
    model.eval()
    return {**best, "max_acc": max_acc, "model": model}
