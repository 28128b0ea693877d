"""The plain training engine (:func:`fit`) and LPGCN's device-aware full-batch loops with early stopping.

- :func:`fit`: the one epoch loop (step, evaluate, keep the best validation, early stopping) that every plain
  trainer of the five papers runs on; the fast specialised trainers (batched repeats/teachers, ghost clipping)
  implement the method contract without it.

- :func:`train_node_classifier`: Adam on the NLL of the training nodes, early stopping on the validation loss
  (PyTorch-Lightning ``EarlyStopping`` semantics, never before ``min_epochs``), micro-F1 on val/test.
- :func:`train_link_predictor`: a :class:`torch_geometric.nn.VGAE` trained on ``train_pos_edge_index`` with
  reconstruction loss (positives + uniformly sampled negatives) + KL/N, validated every ``check_every`` epochs,
  AUC/AP on the test edges.

Both loops keep host/device synchronisation to what early stopping needs (one scalar per validation), take all
randomness from the torch RNGs (seed them, or pass ``seed``), and never mutate the ``data`` they are given.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dpgnn.utils import make_generator, resolve_device

__all__ = ["EarlyStopping", "FitResult", "NegativeSampler", "fit", "train_node_classifier", "train_link_predictor",
           "micro_f1"]


@dataclass
class EarlyStopping:
    """Early stopping on a monitored value to minimise, as PyTorch-Lightning's ``EarlyStopping(mode="min")``.

    A value improves when ``value < best - min_delta``; otherwise the wait counter grows. ``should_stop`` is true
    once ``wait >= patience``. (The caller decides whether stopping is allowed yet, e.g. ``min_epochs``.)
    A NaN never counts as an improvement.
    """

    patience: int
    min_delta: float = 0.0
    best: float = math.inf
    wait: int = 0
    best_step: int | None = None
    _steps: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if int(self.patience) < 1:
            raise ValueError(f"patience must be >= 1, got {self.patience}")
        if self.min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {self.min_delta}")

    def step(self, value: float) -> bool:
        """Record one monitored value; return True when it is an improvement."""
        self._steps += 1
        if value + self.min_delta < self.best:  # False for NaN
            self.best, self.wait, self.best_step = float(value), 0, self._steps
            return True
        self.wait += 1
        return False

    @property
    def should_stop(self) -> bool:
        return self.wait >= self.patience


def micro_f1(log_probs: Tensor, y: Tensor) -> Tensor:
    """Micro-averaged F1 of single-label predictions (equals accuracy); returns a 0-dim tensor (no sync)."""
    if y.numel() == 0:
        return torch.tensor(float("nan"), device=y.device)
    return (log_probs.argmax(dim=-1) == y).float().mean()


def _mask_index(data: Any, name: str, device: torch.device) -> Tensor:
    mask = getattr(data, name, None)
    if mask is None:
        raise ValueError(f"data has no {name!r}; node classification needs train_mask, val_mask and test_mask")
    mask = torch.as_tensor(mask)
    idx = mask.nonzero(as_tuple=False).view(-1) if mask.dtype == torch.bool else mask.long().view(-1)
    return idx.to(device)


def _check_common(lr: float, weight_decay: float, max_epochs: int, min_epochs: int) -> None:
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
    if max_epochs < 1 or min_epochs < 0 or min_epochs > max_epochs:
        raise ValueError(f"need 0 <= min_epochs <= max_epochs and max_epochs >= 1, got {min_epochs=}, {max_epochs=}")


def _progress(total: int, enabled: bool, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, mininterval=5.0, leave=False)


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
    """Train ``model(x, edge_index) -> log-probabilities`` full batch and evaluate micro-F1.

    Each epoch: one Adam step on the NLL of the training nodes (model in train mode), then the validation NLL in
    eval mode. Early stopping as PyTorch-Lightning's ``EarlyStopping(monitor="val_loss", patience, min_delta)``
    with ``Trainer(min_epochs, max_epochs)``: training ends after the first epoch ``e >= min_epochs`` at which the
    validation loss has not improved for ``patience`` consecutive epochs, or after ``max_epochs``.

    The test is run on the weights at stopping time (the LPGCN authors' behaviour, docs/papers/lpgcn.md#models-and-training);
    ``restore_best=True`` reloads the weights of the epoch with the lowest validation loss instead.

    Returns a dict with ``test_f1``, ``val_f1``, ``train_f1`` (floats in [0, 1]), ``epochs`` (epochs run),
    ``stop_epoch`` (epoch at which early stopping fired, ``None`` if ``max_epochs`` was reached),
    ``best_epoch``/``best_val_loss``, ``restored_best``, ``history`` (per-epoch ``train_loss``/``val_loss``) and
    ``train_time_s``.
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    dev = resolve_device(device)
    x = data.x.to(dev, torch.float32)
    edge_index = data.edge_index.to(dev)
    y = data.y.to(dev).long().view(-1)
    train_idx, val_idx, test_idx = (_mask_index(data, f"{s}_mask", dev) for s in ("train", "val", "test"))
    if train_idx.numel() == 0 or val_idx.numel() == 0:
        raise ValueError("train and validation masks must select at least one node")
    y_train, y_val = y[train_idx], y[val_idx]

    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    stopper = EarlyStopping(patience=patience, min_delta=min_delta)
    best_state: dict[str, Tensor] | None = None
    train_losses: list[Tensor] = []
    val_losses: list[float] = []
    stop_epoch: int | None = None
    # A model whose train-mode forward equals its eval-mode forward (no active dropout, no batch statistics)
    # declares ``train_mode_is_eval = True``; its validation loss for the weights after epoch e is then read
    # off the training forward of epoch e + 1, saving one full forward per epoch (same numbers, see tests).
    shared = bool(getattr(model, "train_mode_is_eval", False))
    bar = _progress(max_epochs, progress, "train")

    def record(ep: int, val_loss: float) -> bool:
        """Log epoch ``ep``'s validation loss; True when training must stop after ``ep``."""
        nonlocal best_state
        val_losses.append(val_loss)
        if stopper.step(val_loss) and restore_best:
            best_state = copy.deepcopy(model.state_dict())
        if bar is not None:
            bar.update(1)
            bar.set_postfix(val_loss=f"{val_loss:.4f}", refresh=False)
        return ep >= min_epochs and stopper.should_stop

    t0 = time.perf_counter()
    epoch = 0
    for epoch in range(1, max_epochs + 1):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        out = model(x, edge_index)
        if shared and epoch > 1:
            # the one sync per epoch: validation loss of the weights after epoch - 1
            if record(epoch - 1, F.nll_loss(out.detach()[val_idx], y_val).item()):
                epoch, stop_epoch = epoch - 1, epoch - 1
                break
        loss = F.nll_loss(out[train_idx], y_train)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.detach())
        if shared:
            continue
        model.eval()
        with torch.no_grad():
            val_loss = F.nll_loss(model(x, edge_index)[val_idx], y_val).item()  # the one sync per epoch
        if record(epoch, val_loss):
            stop_epoch = epoch
            break
    if shared and stop_epoch is None and epoch > 0:  # validation of the last epoch's weights
        model.eval()
        with torch.no_grad():
            if record(epoch, F.nll_loss(model(x, edge_index)[val_idx], y_val).item()):
                stop_epoch = epoch
    if bar is not None:
        bar.close()
    train_time = time.perf_counter() - t0

    restored = False
    if restore_best and best_state is not None:
        model.load_state_dict(best_state)
        restored = True
    model.eval()
    with torch.no_grad():
        out = model(x, edge_index)
        f1s = torch.stack([micro_f1(out[i], y[i]) for i in (train_idx, val_idx, test_idx)]).tolist()
    return {
        "train_f1": f1s[0],
        "val_f1": f1s[1],
        "test_f1": f1s[2],
        "epochs": epoch,
        "stop_epoch": stop_epoch,
        "best_epoch": stopper.best_step,
        "best_val_loss": stopper.best,
        "restored_best": restored,
        "history": {"train_loss": torch.stack(train_losses).tolist(), "val_loss": val_losses},
        "train_time_s": train_time,
        "device": str(dev),
    }


class NegativeSampler:
    """Uniform negative edges for a fixed positive edge set, drawn from an explicit ``torch.Generator``.

    Samples ordered pairs ``(i, j)``, ``i != j``, uniformly among those not in ``pos_edge_index`` -- the
    distribution of PyG's ``negative_sampling(pos_edge_index, num_nodes)`` used inside ``VGAE.recon_loss`` -- but
    vectorised on the device and with its own generator (PyG's uses Python's global ``random`` and costs ~60 ms
    per call on a Twitch-sized graph). Draws are with replacement; like PyG, after a few rounds of rejection it
    returns what it has (only relevant for nearly complete graphs).
    """

    def __init__(self, pos_edge_index: Tensor, num_nodes: int, generator: torch.Generator) -> None:
        if num_nodes < 2:
            raise ValueError("negative sampling needs at least 2 nodes")
        self.n = int(num_nodes)
        self.device = pos_edge_index.device
        self.generator = generator
        self.population = self.n * (self.n - 1)
        self.pos_keys = torch.unique(self._keys(pos_edge_index))
        self.p_valid = max(1.0 - self.pos_keys.numel() / self.population, 1e-12)

    def _keys(self, edge_index: Tensor) -> Tensor:
        row, col = edge_index
        keep = row != col
        row, col = row[keep], col[keep]
        return row * (self.n - 1) + col - (col > row).long()

    def _edges(self, keys: Tensor) -> Tensor:
        row = torch.div(keys, self.n - 1, rounding_mode="floor")
        col = keys - row * (self.n - 1)
        col = col + (col >= row).long()
        return torch.stack([row, col])

    def _is_positive(self, keys: Tensor) -> Tensor:
        # binary search in the sorted positive keys (cheaper and less thread-hungry than torch.isin's sort)
        if self.pos_keys.numel() == 0:
            return torch.zeros_like(keys, dtype=torch.bool)
        idx = torch.searchsorted(self.pos_keys, keys).clamp_(max=self.pos_keys.numel() - 1)
        return self.pos_keys[idx] == keys

    def __call__(self, num_samples: int) -> Tensor:
        if self.pos_keys.numel() >= self.population:
            return torch.empty(2, 0, dtype=torch.long, device=self.device)
        out: list[Tensor] = []
        have = 0
        for _ in range(3):
            k = int(1.1 * (num_samples - have) / self.p_valid) + 8
            draw = torch.randint(self.population, (k,), generator=self.generator, device=self.device)
            draw = draw[~self._is_positive(draw)]
            out.append(draw)
            have += draw.numel()
            if have >= num_samples:
                break
        return self._edges(torch.cat(out)[:num_samples])


def _vgae_loss(model: nn.Module, x: Tensor, enc_edges: Tensor, pos: Tensor, neg: Tensor, n: int) -> Tensor:
    z = model.encode(x, enc_edges)
    return model.recon_loss(z, pos, neg) + (1.0 / n) * model.kl_loss()


def train_link_predictor(
    model: nn.Module,
    data: Any,
    *,
    lr: float,
    weight_decay: float,
    max_epochs: int = 500,
    min_epochs: int = 100,
    check_every: int = 10,
    patience: int = 10,
    min_delta: float = 0.0,
    device: str | torch.device = "auto",
    seed: int | None = None,
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Train a :class:`torch_geometric.nn.VGAE` for link prediction and report test AUC/AP.

    ``data`` needs ``x``, ``train_pos_edge_index``, ``val_pos_edge_index``, ``test_pos_edge_index`` and
    ``test_neg_edge_index`` (``val_neg_edge_index`` is used for the reported validation AUC if present). The
    encoder always sees ``train_pos_edge_index``. Loss = ``recon_loss(z, train_pos, sampled negatives) + KL/N``;
    every ``check_every`` epochs the same loss is computed in eval mode on the validation positives (with fresh
    negatives sampled against them, as PyG's ``recon_loss`` does). Early stopping counts *checks*: training ends at
    the first check at epoch ``>= min_epochs`` after ``patience`` checks without improvement, or at
    ``max_epochs``. Test on the weights at stopping time unless ``restore_best``.

    ``seed`` seeds the negative-edge generator; ``None`` draws it from torch's global RNG (so
    :func:`dpgnn.utils.seed_everything` makes the whole run reproducible).
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    if check_every < 1:
        raise ValueError(f"check_every must be >= 1, got {check_every}")
    for name in ("train_pos_edge_index", "val_pos_edge_index", "test_pos_edge_index", "test_neg_edge_index"):
        if getattr(data, name, None) is None:
            raise ValueError(f"data has no {name!r}; split the edges first (dpgnn.data.split_edges)")
    dev = resolve_device(device)
    x = data.x.to(dev, torch.float32)
    n = x.size(0)
    train_pos = data.train_pos_edge_index.to(dev)
    val_pos = data.val_pos_edge_index.to(dev)
    if seed is None:
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
    gen = make_generator(seed, dev)
    train_neg = NegativeSampler(train_pos, n, gen)
    val_neg = NegativeSampler(val_pos, n, gen)

    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    stopper = EarlyStopping(patience=patience, min_delta=min_delta)
    best_state: dict[str, Tensor] | None = None
    train_losses: list[Tensor] = []
    val_losses: list[float] = []
    stop_epoch: int | None = None
    bar = _progress(max_epochs, progress, "train")
    t0 = time.perf_counter()
    epoch = 0
    for epoch in range(1, max_epochs + 1):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loss = _vgae_loss(model, x, train_pos, train_pos, train_neg(train_pos.size(1)), n)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.detach())
        if bar is not None:
            bar.update(1)
        if epoch % check_every:
            continue
        model.eval()
        with torch.no_grad():
            val_loss = _vgae_loss(model, x, train_pos, val_pos, val_neg(val_pos.size(1)), n).item()
        val_losses.append(val_loss)
        if stopper.step(val_loss) and restore_best:
            best_state = copy.deepcopy(model.state_dict())
        if epoch >= min_epochs and stopper.should_stop:
            stop_epoch = epoch
            break
    if bar is not None:
        bar.close()
    train_time = time.perf_counter() - t0

    restored = False
    if restore_best and best_state is not None:
        model.load_state_dict(best_state)
        restored = True
    model.eval()
    with torch.no_grad():
        z = model.encode(x, train_pos)
        test_auc, test_ap = model.test(z, data.test_pos_edge_index.to(dev), data.test_neg_edge_index.to(dev))
        val_auc = val_ap = float("nan")
        if getattr(data, "val_neg_edge_index", None) is not None:
            val_auc, val_ap = model.test(z, val_pos, data.val_neg_edge_index.to(dev))
    return {
        "test_auc": float(test_auc),
        "test_ap": float(test_ap),
        "val_auc": float(val_auc),
        "val_ap": float(val_ap),
        "epochs": epoch,
        "stop_epoch": stop_epoch,
        "best_epoch": None if stopper.best_step is None else stopper.best_step * check_every,
        "best_val_loss": stopper.best,
        "restored_best": restored,
        "history": {"train_loss": torch.stack(train_losses).tolist(), "val_loss": val_losses},
        "train_time_s": train_time,
        "device": str(dev),
    }


# ---------------------------------------------------------------------------------------------------------------
# The plain training engine: one loop for every method that trains epoch by epoch and keeps the best validation
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class FitResult:
    """What :func:`fit` returns.

    ``best``: the metrics of the selected epoch (the last one when nothing is monitored); ``best_epoch``: that
    epoch (``0`` = the initial weights, kept only with ``keep_initial=True`` when no epoch improves on them);
    ``last``: the metrics of the last epoch run; ``epochs``: epochs run; ``stopped_early``: patience ran out;
    ``history``: one dict per epoch (``epoch``, the step's ``loss`` when it returned one, then the metrics).
    """

    best: dict[str, float]
    best_epoch: int
    last: dict[str, float]
    epochs: int
    stopped_early: bool
    history: list[dict[str, Any]]


def _improves(value: float, best: float, mode: str, min_delta: float) -> bool:
    if value != value:  # NaN never improves
        return False
    return value > best + min_delta if mode == "max" else value < best - min_delta


def fit(model: nn.Module | None, step, evaluate=None, *, epochs: int, monitor: str | None = "val",
        mode: str = "max", patience: int | None = None, min_epochs: int = 0, min_delta: float = 0.0,
        restore_best: bool = True, keep_initial: bool = False, progress: bool = False,
        desc: str = "train") -> FitResult:
    """Run ``epochs`` epochs of ``step`` with evaluation, selection of the best epoch and early stopping.

    Each epoch ``e = 1..epochs``: ``model.train()``; ``loss = step(e)`` (the epoch's update: one full-batch step
    or many mini-batch steps; may return a loss, a float, a dict of floats or ``None``); then, when ``evaluate`` is
    given, ``metrics = evaluate(e)`` under ``torch.no_grad()`` (a dict of floats, e.g. ``{"train": .., "val": ..,
    "test": ..}``; ``evaluate`` puts the model in eval mode itself).

    Selection: the epoch whose ``metrics[monitor]`` is best (``mode="max"``: strictly greater than the best so far
    plus ``min_delta``; ``"min"``: strictly smaller minus ``min_delta``; NaN never improves, ties keep the earlier
    epoch). ``restore_best`` reloads that epoch's weights at the end (a copy of the state dict is taken at each
    improvement); otherwise the final weights stay and only ``best`` reports the selected epoch's metrics.
    ``keep_initial``: the initial weights count as epoch 0 with no metrics, kept when no epoch improves (e.g. all
    validation values NaN). ``monitor=None``: no selection, ``best`` is the last epoch.

    Early stopping: with ``patience``, training ends after the first epoch ``e >= min_epochs`` at which the monitored
    value has not improved for ``patience`` consecutive evaluations (PyTorch-Lightning ``EarlyStopping`` semantics).

    All randomness belongs to ``step``/``evaluate`` (their generators), so a seeded loop moved onto ``fit`` gives the
    same numbers as before.
    """
    epochs = int(epochs)
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    if mode not in ("max", "min"):
        raise ValueError(f"mode must be 'max' or 'min', got {mode!r}")
    if monitor is not None and evaluate is None:
        raise ValueError("monitor needs an evaluate function")
    if patience is not None and (monitor is None or int(patience) < 1):
        raise ValueError(f"patience needs a monitored metric and must be >= 1, got {patience}")
    if min_delta < 0:
        raise ValueError(f"min_delta must be >= 0, got {min_delta}")
    best_value = -math.inf if mode == "max" else math.inf
    best: dict[str, float] = {}
    best_epoch, wait, stopped = 0, 0, False
    best_state = copy.deepcopy(model.state_dict()) if (model is not None and restore_best and keep_initial) else None
    history: list[dict[str, Any]] = []
    metrics: dict[str, float] = {}
    bar = _progress(epochs, progress, desc)
    epoch = 0
    for epoch in range(1, epochs + 1):
        if model is not None:
            model.train()
        out = step(epoch)
        record: dict[str, Any] = {"epoch": epoch}
        if isinstance(out, dict):
            record.update({k: float(v) for k, v in out.items()})
        elif out is not None:
            record["loss"] = float(out)
        if evaluate is not None:
            with torch.no_grad():
                metrics = dict(evaluate(epoch))
            record.update(metrics)
        history.append(record)
        if bar is not None:
            bar.update(1)
        if monitor is None:
            best, best_epoch = metrics, epoch
            continue
        if monitor not in metrics:
            raise KeyError(f"evaluate returned no {monitor!r} (got {sorted(metrics)})")
        if _improves(float(metrics[monitor]), best_value, mode, min_delta):
            best_value, best, best_epoch, wait = float(metrics[monitor]), metrics, epoch, 0
            if model is not None and restore_best:
                best_state = copy.deepcopy(model.state_dict())
        else:
            wait += 1
            if patience is not None and epoch >= min_epochs and wait >= int(patience):
                stopped = True
                break
    if bar is not None:
        bar.close()
    if model is not None and restore_best and best_state is not None:  # none: no epoch improved, final weights
        model.load_state_dict(best_state)
    return FitResult(best=best, best_epoch=best_epoch, last=metrics, epochs=epoch, stopped_early=stopped,
                     history=history)
