"""The released student and the non-private baselines (B1-B3, Table 7's MLP), all on :func:`dpgnn.train.fit`
(final epoch, no selection: docs/papers/privgnn.md#algorithm), and the hooks the membership-inference audit
(:mod:`dpgnn.audit.mia`) uses: :func:`fit_sage` and :func:`log_posteriors`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from dpgnn.methods.privgnn.data import PrivGNNData
from dpgnn.metrics import accuracy
from dpgnn.nn.privgnn import MLP, SAGE, BatchedSAGETeachers, mean_neighbours, teacher_step
from dpgnn.train import GradientStep, fit
from dpgnn.utils import make_generator, resolve_device, stable_seed


def _fit(
    model: torch.nn.Module,
    x: Tensor,
    edge_index: Tensor,
    train_idx: Tensor,
    target: Tensor,
    *,
    epochs: int,
    lr: float,
    device: torch.device,
    history: list[dict[str, Any]] | None = None,
) -> torch.nn.Module:
    """Full-batch Adam for ``epochs`` epochs on NLL (hard labels) or cross-entropy with soft labels (any model), on
    :func:`dpgnn.train.fit` (final epoch, no selection); ``history`` (a list) receives the per-epoch loss."""
    model = model.to(device)
    x, edge_index, train_idx, target = x.to(device), edge_index.to(device), train_idx.to(device), target.to(device)
    soft = target.dim() == 2

    def loss(epoch: int) -> Tensor:
        logp = model(x, edge_index)[train_idx]
        return -(target * logp).sum(1).mean() if soft else F.nll_loss(logp, target)

    _fit_final_epoch(model, GradientStep(torch.optim.Adam(model.parameters(), lr=lr), loss), epochs, history)
    return model


def _fit_final_epoch(
    model: torch.nn.Module, step: Callable[[int], Tensor], epochs: int, history: list[dict[str, Any]] | None = None
) -> None:
    """``epochs`` epochs of ``step`` (one epoch's updates) on :func:`dpgnn.train.fit` with no selection: the model
    keeps the final epoch's weights and is left in eval mode; ``history`` (a list) receives the per-epoch loss."""
    res = fit(model, step, epochs=epochs, monitor=None, restore_best=False)
    if history is not None:
        history.extend(res.history)
    model.eval()


def _graph_inputs(x: Tensor, edge_index: Tensor, device: torch.device) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """[x, Āx] (the first layer's fixed input, computed once), flat edges and 1/deg of one graph."""
    n = x.size(0)
    xx = torch.cat([x, mean_neighbours(x, edge_index, n)], dim=1)
    inv = 1.0 / torch.bincount(edge_index[1], minlength=n).clamp(min=1).float().unsqueeze(1)
    return xx.to(device), edge_index[0].to(device), edge_index[1].to(device), inv.to(device)


def _fit_sage(
    x: Tensor,
    edge_index: Tensor,
    train_idx: Tensor,
    target: Tensor,
    *,
    seed: int,
    epochs: int,
    hidden: int,
    dropout: float,
    lr: float,
    num_classes: int,
    device: torch.device,
    init: SAGE | None = None,
    history: list[dict[str, Any]] | None = None,
) -> BatchedSAGETeachers:
    """One 2-layer SAGE (as :class:`SAGE`; BatchNorm over all nodes) trained transductively on one graph, with the
    neighbour means of the input precomputed once, on :func:`dpgnn.train.fit` (final epoch, no selection). ``init``
    copies a (pre-trained) :class:`SAGE`'s weights; ``history`` (a list) receives the per-epoch training loss."""
    xx, src, dst, inv = _graph_inputs(x, edge_index, device)
    n = x.size(0)
    model = BatchedSAGETeachers(
        1, x.size(1), hidden, num_classes, dropout=dropout, generators=[make_generator(seed)]
    ).to(device)
    if init is not None:
        _copy_into_batch(init, model)
    loss_mask = torch.zeros(1, n, device=device)
    loss_mask[0, train_idx.to(device)] = 1.0
    if target.dim() == 2:
        y = torch.zeros(1, n, target.size(1), device=device)
        y[0, train_idx.to(device)] = target.to(device)
    else:
        y = torch.zeros(1, n, dtype=torch.long, device=device)
        y[0, train_idx.to(device)] = target.to(device)
    step = teacher_step(
        model, xx.unsqueeze(0), torch.ones(1, n, device=device), y, src, dst, inv, lr=lr, loss_mask=loss_mask
    )
    _fit_final_epoch(model, step, epochs, history)
    return model


def _sage_accuracy(
    model: BatchedSAGETeachers, x: Tensor, edge_index: Tensor, idx: Tensor, y: Tensor, device: torch.device
) -> float:
    """Accuracy of a trained SAGE on the ``idx`` nodes of the graph (x, edges) (:func:`dpgnn.metrics.accuracy`)."""
    return accuracy(log_posteriors(model, x, edge_index, device)[idx], y[idx])


def _copy_into_batch(m: SAGE, batched: BatchedSAGETeachers, b: int = 0) -> None:
    d, h = batched.in_channels, batched.hidden
    with torch.no_grad():
        batched.w1[b, :d].copy_(m.conv1.lin_r.weight.t())
        batched.w1[b, d:].copy_(m.conv1.lin_l.weight.t())
        batched.b1[b].copy_(m.conv1.lin_l.bias)
        batched.gamma[b].copy_(m.bn.weight)
        batched.beta[b].copy_(m.bn.bias)
        batched.running_mean[b].copy_(m.bn.running_mean)
        batched.running_var[b].copy_(m.bn.running_var)
        batched.w2[b, :h].copy_(m.conv2.lin_r.weight.t())
        batched.w2[b, h:].copy_(m.conv2.lin_l.weight.t())
        batched.b2[b].copy_(m.conv2.lin_l.bias)


def _pretrain(
    model: SAGE,
    x: Tensor,
    edge_index: Tensor,
    *,
    epochs: int,
    lr: float,
    generator: torch.Generator,
    device: torch.device,
) -> None:
    """Unsupervised GraphSAGE pre-training on the public graph (App. D.7): the first layer's embeddings of linked
    nodes are pulled together and of random pairs pushed apart (link reconstruction, one negative per edge)."""
    x, edge_index = x.to(device), edge_index.to(device)
    opt = torch.optim.Adam(list(model.conv1.parameters()) + list(model.bn.parameters()), lr=lr)
    n = x.size(0)
    src, dst = edge_index

    def loss(epoch: int) -> Tensor:
        h = model.embed(x, edge_index)
        neg = torch.randint(0, n, (src.numel(),), generator=generator).to(device)
        return F.softplus(-(h[src] * h[dst]).sum(1)).mean() + F.softplus((h[src] * h[neg]).sum(1)).mean()

    _fit_final_epoch(model, GradientStep(opt, loss), epochs)


def train_student(
    graphs: PrivGNNData,
    train_nodes: Tensor,
    labels: Tensor,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    pretrain_epochs: int = 0,
    device: str = "auto",
) -> dict[str, Any]:
    """The released student: GraphSAGE trained transductively on the public graph with ``labels`` of
    ``train_nodes`` (hard [n] or soft [n, c]); accuracy on the public test nodes at the final epoch
    (docs/papers/privgnn.md#algorithm).
    ``pretrain_epochs > 0``: unsupervised pre-training of the first layer on the public graph first (App. D.7).
    Returns ``accuracy``, ``train_time_s``, the ``model`` and its per-epoch ``history`` (training loss)."""
    dev = resolve_device(device)
    t0 = time.perf_counter()
    init = None
    history: list[dict[str, Any]] = []
    if pretrain_epochs:
        torch.manual_seed(stable_seed(seed, "pretrain-init"))
        init = SAGE(graphs.num_features, hidden, graphs.num_classes, dropout=dropout).to(dev)
        _pretrain(
            init,
            graphs.x_pub,
            graphs.edge_pub,
            epochs=pretrain_epochs,
            lr=lr,
            generator=make_generator(stable_seed(seed, "pretrain")),
            device=dev,
        )
    model = _fit_sage(
        graphs.x_pub,
        graphs.edge_pub,
        train_nodes,
        labels,
        seed=stable_seed(seed, "student"),
        epochs=epochs,
        hidden=hidden,
        dropout=dropout,
        lr=lr,
        num_classes=graphs.num_classes,
        device=dev,
        init=init,
        history=history,
    )
    acc = _sage_accuracy(model, graphs.x_pub, graphs.edge_pub, graphs.pub_test, graphs.y_pub, dev)
    return {"accuracy": acc, "train_time_s": time.perf_counter() - t0, "model": model, "history": history}


def baseline_b1(
    graphs: PrivGNNData,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    device: str = "auto",
) -> dict[str, Any]:
    """B1 (non-private, inductive): SAGE on the whole private graph with all its labels, tested on public test."""
    return _train_baseline(graphs, "b1", seed=seed, epochs=epochs, hidden=hidden, dropout=dropout, lr=lr, device=device)


def baseline_b2(
    graphs: PrivGNNData,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    device: str = "auto",
) -> dict[str, Any]:
    """B2 (non-private, transductive): SAGE on the public graph with the TRUE labels of all public-train nodes."""
    return _train_baseline(graphs, "b2", seed=seed, epochs=epochs, hidden=hidden, dropout=dropout, lr=lr, device=device)


def baseline_b3(
    graphs: PrivGNNData,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    device: str = "auto",
) -> dict[str, Any]:
    """B3 (App. D.4): one SAGE on the union of the private graph and the public graph (both edge sets), trained on
    all private nodes and the public-train nodes, tested on public test. Returns ``accuracy`` and ``history`` (no
    model)."""
    out = _train_baseline(graphs, "b3", seed=seed, epochs=epochs, hidden=hidden, dropout=dropout, lr=lr, device=device)
    return {"accuracy": out["accuracy"], "history": out["history"]}


def _baseline_graphs(graphs: PrivGNNData, which: str) -> tuple[Tensor, Tensor, Tensor, Tensor, tuple[Tensor, ...]]:
    """What baseline ``which`` (``"b1"``, ``"b2"``, ``"b3"``) trains and tests on.

    Returns:
        ``(x, edges, train nodes, labels, test)``: the training graph, its training nodes and the labels of all its
        nodes; ``test`` = ``(x, edges, public test nodes, labels)`` of the graph the model is tested on (B1: the
        public graph; B2, B3: the training graph, which holds the public nodes).
    """
    n_priv = graphs.num_private
    if which == "b1":
        x, ei, train, y = graphs.x_priv, graphs.edge_priv, torch.arange(n_priv), graphs.y_priv
        return x, ei, train, y, (graphs.x_pub, graphs.edge_pub, graphs.pub_test, graphs.y_pub)
    if which == "b2":
        x, ei, train, y = graphs.x_pub, graphs.edge_pub, graphs.pub_train, graphs.y_pub
        return x, ei, train, y, (x, ei, graphs.pub_test, y)
    if which == "b3":
        x = torch.cat([graphs.x_priv, graphs.x_pub])
        ei = torch.cat([graphs.edge_priv, graphs.edge_pub + n_priv], dim=1)
        train = torch.cat([torch.arange(n_priv), graphs.pub_train + n_priv])
        y = torch.cat([graphs.y_priv, graphs.y_pub])
        return x, ei, train, y, (x, ei, graphs.pub_test + n_priv, y)
    raise ValueError(f"which must be 'b1', 'b2' or 'b3', got {which!r}")


def _train_baseline(
    graphs: PrivGNNData,
    which: str,
    *,
    seed: int,
    epochs: int,
    hidden: int,
    dropout: float,
    lr: float,
    device: str,
) -> dict[str, Any]:
    """Baseline ``which`` (B1-B3, :func:`_baseline_graphs`): the SAGE trained on its training graph
    on the seed stream ``(seed, which)``, tested on the public test nodes.

    Returns:
        ``accuracy``, the ``model`` and its per-epoch ``history`` (training loss).
    """
    dev = resolve_device(device)
    x, edge_index, train, y, test = _baseline_graphs(graphs, which)
    history: list[dict[str, Any]] = []
    model = _fit_sage(
        x,
        edge_index,
        train,
        y[train],
        seed=stable_seed(seed, which),
        epochs=epochs,
        hidden=hidden,
        dropout=dropout,
        lr=lr,
        num_classes=graphs.num_classes,
        device=dev,
        history=history,
    )
    return {"accuracy": _sage_accuracy(model, *test, dev), "model": model, "history": history}


def mlp_baseline(
    graphs: PrivGNNData, *, seed: int, epochs: int = 200, lr: float = 0.01, device: str = "auto"
) -> dict[str, Any]:
    """Table 7 MLP: features only, trained on the public-train nodes' true labels, tested on public test."""
    dev = resolve_device(device)
    torch.manual_seed(stable_seed(seed, "mlp"))
    history: list[dict[str, Any]] = []
    model = _fit(
        MLP(graphs.num_features, graphs.num_classes),
        graphs.x_pub[graphs.pub_train],
        graphs.edge_pub[:, :0],
        torch.arange(graphs.pub_train.numel()),
        graphs.y_pub[graphs.pub_train],
        epochs=epochs,
        lr=lr,
        device=dev,
        history=history,
    )
    with torch.no_grad():
        out = model(graphs.x_pub[graphs.pub_test].to(dev))
    return {"accuracy": accuracy(out.cpu(), graphs.y_pub[graphs.pub_test]), "history": history}


# hooks for audits (membership inference, dpgnn.audit.mia): the same SAGE as B1/the student, any graph
def fit_sage(
    x: Tensor,
    edge_index: Tensor,
    train_idx: Tensor,
    target: Tensor,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    num_classes: int,
    device: str = "auto",
) -> BatchedSAGETeachers:
    """The 2-layer SAGE of B1 and the student, trained transductively on one graph with ``target`` labels of
    ``train_idx`` (a shadow model has the target's architecture and training recipe)."""
    return _fit_sage(
        x,
        edge_index,
        train_idx,
        target,
        seed=seed,
        epochs=epochs,
        hidden=hidden,
        dropout=dropout,
        lr=lr,
        num_classes=num_classes,
        device=resolve_device(device),
    )


@torch.no_grad()
def log_posteriors(model: BatchedSAGETeachers, x: Tensor, edge_index: Tensor, device: str = "auto") -> Tensor:
    """Eval-mode log-probabilities [N, c] of a trained SAGE (B1, the student, a shadow) on the graph (x, edges):
    what black-box query access to the released model returns."""
    dev = resolve_device(device)
    xx, src, dst, inv = _graph_inputs(x, edge_index, dev)
    return model.predict_graph(xx, src, dst, inv)[0].cpu()
