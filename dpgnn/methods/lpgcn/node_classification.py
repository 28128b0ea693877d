"""LPGCN's node classification (Table 2, GCN, micro-F1): the full-batch trainer and one run."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data

from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.lpgcn.common import GLOBAL_SEED, HIDDEN_CODE, _epsilon, _hparams, _label, _method_key
from dpgnn.methods.lpgcn.runs import _check_common, _fit_columns, _perturb_for_run, _result, _run_seed, _with_features
from dpgnn.metrics import accuracy_tensor
from dpgnn.nn import GCN
from dpgnn.train import GradientStep, fit
from dpgnn.utils import (
    resolve_device,
)


def _mask_index(data: Any, name: str, device: torch.device) -> Tensor:
    mask = getattr(data, name, None)
    if mask is None:
        raise ValueError(f"data has no {name!r}; node classification needs train_mask, val_mask and test_mask")
    mask = torch.as_tensor(mask)
    idx = mask.nonzero(as_tuple=False).view(-1) if mask.dtype == torch.bool else mask.long().view(-1)
    return idx.to(device)


def train_node_classifier(
    model: nn.Module,
    data: Any,
    *,
    lr: float,
    weight_decay: float,
    max_epochs: int = 500,
    min_epochs: int = 10,
    patience: int = 20,
    min_delta: float = 0.0,
    device: str | torch.device = "auto",
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Train ``model(x, edge_index) -> log-probabilities`` full batch and evaluate micro-F1 (Table 2, GCN).

    Each epoch (one :func:`dpgnn.train.fit` epoch): one Adam step on the NLL of the training nodes (model in train
    mode), then the validation NLL in eval mode. Early stopping as PyTorch-Lightning's
    ``EarlyStopping(monitor="val_loss", patience, min_delta)`` with ``Trainer(min_epochs, max_epochs)`` (the
    authors' trainer, docs/papers/lpgcn.md#models-and-training): training ends after the first epoch ``e >= min_epochs``
    at which the validation loss has not improved for ``patience`` consecutive epochs, or after ``max_epochs``. (An
    improvement is ``val < best - min_delta``, :func:`dpgnn.train.fit`'s rule.)

    The test is run on the weights at stopping time (the LPGCN authors' behaviour,
    docs/papers/lpgcn.md#models-and-training);
    ``restore_best=True`` reloads the weights of the epoch with the lowest validation loss instead.

    A model whose train-mode forward equals its eval-mode forward (no active dropout, no batch statistics)
    declares ``train_mode_is_eval = True``: the evaluation of the weights after epoch ``e`` then runs their forward
    in train mode with gradients and hands it to epoch ``e + 1``'s step, which back-propagates through it -- one
    full forward per epoch saved, the same numbers (tests compare both paths).

    Returns a dict with ``test_f1``, ``val_f1``, ``train_f1`` (floats in [0, 1]), ``epochs`` (epochs run),
    ``stop_epoch`` (epoch at which early stopping fired, ``None`` if ``max_epochs`` was reached),
    ``best_epoch``/``best_val_loss``, ``restored_best``, ``history`` (per-epoch ``train_loss``/``val_loss``) and
    ``train_time_s``.
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    dev = resolve_device(device)
    x, edge_index, y, masks = _node_inputs(data, dev)
    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    step, evaluate, history, carried = _node_epoch(model, optimizer, x, edge_index, y, masks, max_epochs)

    t0 = time.perf_counter()
    res = fit(
        model,
        step,
        evaluate,
        epochs=max_epochs,
        monitor="val_loss",
        mode="min",
        patience=patience,
        min_epochs=min_epochs,
        min_delta=min_delta,
        restore_best=restore_best,
        progress=progress,
    )
    carried.clear()
    train_time = time.perf_counter() - t0
    return _node_scores(model, x, edge_index, y, masks, res, restore_best, history, train_time, dev)


def _node_inputs(data: Any, dev: torch.device) -> tuple[Tensor, Tensor, Tensor, tuple[Tensor, Tensor, Tensor]]:
    """``(x, edge_index, y, (train, val, test node indices))`` on ``dev``; empty training or validation masks
    raise."""
    x = data.x.to(dev, torch.float32)
    edge_index = data.edge_index.to(dev)
    y = data.y.to(dev).long().view(-1)
    train_idx, val_idx, test_idx = (_mask_index(data, f"{s}_mask", dev) for s in ("train", "val", "test"))
    if train_idx.numel() == 0 or val_idx.numel() == 0:
        raise ValueError("train and validation masks must select at least one node")
    return x, edge_index, y, (train_idx, val_idx, test_idx)


def _node_epoch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: Tensor,
    edge_index: Tensor,
    y: Tensor,
    masks: tuple[Tensor, Tensor, Tensor],
    max_epochs: int,
) -> tuple[Callable[[int], None], Callable[[int], dict[str, float]], dict[str, list], list[Tensor]]:
    """The engine's ``step`` and ``evaluate`` of :func:`train_node_classifier`, the ``history`` they fill
    (``train_loss`` tensors, ``val_loss`` floats) and the forward carried from an evaluation to the next step."""
    train_idx, val_idx, _ = masks
    y_train, y_val = y[train_idx], y[val_idx]
    shared = bool(getattr(model, "train_mode_is_eval", False))
    train_losses: list[Tensor] = []  # kept on the device: the one host sync per epoch is the validation loss
    val_losses: list[float] = []
    carried: list[Tensor] = []  # shared path: the forward of the current weights, made by their evaluation

    def loss(epoch: int) -> Tensor:
        out = carried.pop() if carried else model(x, edge_index)
        return F.nll_loss(out[train_idx], y_train)

    update = GradientStep(optimizer, loss)

    def step(epoch: int) -> None:
        train_losses.append(update(epoch))

    def evaluate(epoch: int) -> dict[str, float]:
        if shared:  # still in train mode (== eval mode for this model); the next step reuses this forward
            with torch.enable_grad() if epoch < max_epochs else torch.no_grad():
                out = model(x, edge_index)
            if epoch < max_epochs:
                carried.append(out)
            out = out.detach()
        else:
            model.eval()
            out = model(x, edge_index)
        val_losses.append(F.nll_loss(out[val_idx], y_val).item())  # the one sync per epoch
        return {"val_loss": val_losses[-1]}

    return step, evaluate, {"train_loss": train_losses, "val_loss": val_losses}, carried


def _node_scores(
    model: nn.Module,
    x: Tensor,
    edge_index: Tensor,
    y: Tensor,
    masks: tuple[Tensor, Tensor, Tensor],
    res: Any,
    restore_best: bool,
    history: dict[str, list],
    train_time: float,
    dev: torch.device,
) -> dict[str, Any]:
    """:func:`train_node_classifier`'s result: micro-F1 of the trained ``model`` on each mask, and the fit's record."""
    model.eval()
    with torch.no_grad():
        out = model(x, edge_index)
        f1s = torch.stack([accuracy_tensor(out[i], y[i]) for i in masks]).tolist()
    return {
        "train_f1": f1s[0],
        "val_f1": f1s[1],
        "test_f1": f1s[2],
        "epochs": res.epochs,
        "stop_epoch": res.epochs if res.stopped_early else None,
        "best_epoch": res.best_epoch or None,
        "best_val_loss": res.best.get("val_loss", math.inf),
        "restored_best": bool(restore_best and res.best_epoch),
        "history": {"train_loss": torch.stack(history["train_loss"]).tolist(), "val_loss": history["val_loss"]},
        "train_time_s": train_time,
        "device": str(dev),
    }


def run_node_classification(
    data: Data,
    dataset_name: str,
    method: str,
    epsilon: float | None,
    *,
    run: int,
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    max_epochs: int = 500,
    min_epochs: int = 10,
    patience: int = 20,
    hidden: int = HIDDEN_CODE,
    hparams: Mapping[str, float] | None = None,
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """One Table-2 node-classification run: fresh perturbation of all nodes' features + fresh 2-layer GCN.

    ``data`` comes from :func:`prepare`. The run's seeds derive from (seed, dataset, method, ε, run), so a cell
    reproduces exactly and runs differ. Hyper-parameters default to :data:`HPARAMS` (Table 4); ``hidden`` to the
    authors' code (16; the paper text says 32 = :data:`HIDDEN_PAPER`). Test micro-F1 at stopping time unless
    ``restore_best``. Returns a flat dict (metric ``micro_f1`` in [0, 1], ledger, timings, config, and the per-epoch
    ``history`` of losses, which stored rows leave out). The GCN runs on the simple graph of ``data.edge_index``
    (repeated pairs merged, :func:`dpgnn.data.transforms.clean_edges`; ``edge_input`` in the row says so).
    """
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)  # a bad (method, ε) is refused before the data are touched
    data, cleaning = with_clean_edges(data, owner="LPGCN")
    hp = _hparams(key, "gcn", hparams)
    run_seed = _run_seed(seed, key, m, eps, run, "node")
    t0 = time.perf_counter()
    x_hat, t_perturb = _perturb_for_run(data.x, m, eps, run_seed, t0)
    num_classes = int(data.y[data.y >= 0].max()) + 1
    model = GCN(data.num_features, hidden, num_classes, dropout=hp["dropout"], cached=True)
    res = train_node_classifier(
        model,
        _with_features(data, x_hat),
        lr=hp["lr"],
        weight_decay=hp["weight_decay"],
        max_epochs=max_epochs,
        min_epochs=min_epochs,
        patience=patience,
        device=device,
        restore_best=restore_best,
        progress=progress,
    )
    config = _node_config(hidden, hp, max_epochs, min_epochs, patience, restore_best)
    extra = _node_extra(res, t_perturb, t0, cleaning)
    return _result(
        "node_classification",
        key,
        m,
        eps,
        run,
        seed,
        run_seed,
        data.num_features,
        config,
        "micro_f1",
        res["test_f1"],
        extra,
    )


def _node_config(
    hidden: int, hp: Mapping[str, float], max_epochs: int, min_epochs: int, patience: int, restore_best: bool
) -> dict[str, Any]:
    """The configuration columns of a node-classification row (they enter its config hash)."""
    return {
        "model": "gcn",
        "hidden": hidden,
        "lr": hp["lr"],
        "weight_decay": hp["weight_decay"],
        "dropout": hp["dropout"],
        "max_epochs": max_epochs,
        "min_epochs": min_epochs,
        "patience": patience,
        "restore_best": restore_best,
    }


def _node_extra(res: dict[str, Any], t_perturb: float, t0: float, cleaning: Any) -> dict[str, Any]:
    """The columns a node-classification row carries beside its metric and config (``duration_s`` since ``t0``)."""
    return {
        "val_micro_f1": res["val_f1"],
        "train_micro_f1": res["train_f1"],
        **_fit_columns(res, t_perturb, t0),
        **({"edge_input": cleaning.describe()} if cleaning.changed else {}),
    }
