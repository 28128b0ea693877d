"""The training engine: :func:`fit`, the one epoch loop (step, evaluate, keep the best validation, early
stopping), and the pluggable updates its ``step`` makes.

Every method trains with ``fit(model, step, evaluate, ...)``, where ``step(epoch)`` runs the epoch's updates
through one of two update objects, the only places an optimizer steps:

- :class:`GradientStep`: the plain update (zero the gradients, back-propagate a loss, optionally clip the global
  gradient norm, step); full batch or mini-batch, and opacus' ``DPOptimizer`` (per-sample clipping and noise inside
  the optimizer).
- :class:`NoisyStep`: DP-SGD's update from a batch's clipped gradient sums, whatever computed them (per-sample
  gradients with ``vmap``, ghost norms, the stacked repeats of :mod:`dpgnn.methods.batched`): the audit hook
  around the Gaussian noise (:mod:`dpgnn.methods.hooks`), the division by the batch size, the step.

A method keeps its own sampling and noise draws (its generators, in its order), so a seeded loop moved onto these
gives the same numbers as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

__all__ = ["FitResult", "GradientStep", "NoisyStep", "fit", "last_epoch", "progress_bars"]

_SHOW_PROGRESS = contextvars.ContextVar("dpgnn_show_progress", default=False)
_LAST_EPOCH: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("dpgnn_last_epoch", default=None)


@contextlib.contextmanager
def last_epoch() -> Iterator[list[str]]:
    """Every :func:`fit` run inside the block keeps its last epoch: no selection on the monitored metric, no
    restore, no early stopping, whatever its caller passed (the metric is still evaluated and recorded).

    Where the validation labels are private, a method's best-validation epoch is a selection on private data
    outside its ε; this block removes it without a config field per method (``dpgnn bench``'s private tuning).
    Yields the list of the monitored metrics it overrode, one per :func:`fit` that would have selected.
    """
    overridden: list[str] = []
    token = _LAST_EPOCH.set(overridden)
    try:
        yield overridden
    finally:
        _LAST_EPOCH.reset(token)


@contextlib.contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """Every :func:`fit` run inside the block shows a progress bar over its epochs (``tqdm``, refreshed at most
    every 5 s), whatever its caller passed as ``progress``; ``dpgnn train`` uses it for long runs."""
    token = _SHOW_PROGRESS.set(bool(enabled))
    try:
        yield
    finally:
        _SHOW_PROGRESS.reset(token)


def _progress(total: int, enabled: bool, desc: str):
    if not (enabled or _SHOW_PROGRESS.get()):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, mininterval=5.0, leave=False)


# ---------------------------------------------------------------------------------------------------------------
# The updates a step makes: plain, and DP-SGD from clipped gradient sums
# ---------------------------------------------------------------------------------------------------------------
class GradientStep:
    """The plain update: zero the gradients, back-propagate ``loss(*args)``, clip the global gradient norm (when
    ``max_grad_norm`` is given), step the optimizer.

    Args:
        optimizer: the optimizer of the trained parameters (opacus' ``DPOptimizer`` too: its ``step`` clips the
            per-sample gradients and adds the noise).
        loss: called with the update's arguments; returns the loss to back-propagate, or ``None`` when it has set
            the gradients itself (e.g. an empty Poisson batch given zero per-sample gradients).
        max_grad_norm: clip the norm of all the optimizer's gradients together to this value before the step
            (``torch.nn.utils.clip_grad_norm_``); ``None``: no clipping.

    Returns (a call): the loss, detached, or ``None``.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        loss: Callable[..., Tensor | None],
        *,
        max_grad_norm: float | None = None,
    ) -> None:
        self.optimizer = optimizer
        self.loss = loss
        self.max_grad_norm = max_grad_norm

    def __call__(self, *args: Any) -> Tensor | None:
        """One update: zero the gradients, back-propagate ``loss(*args)``, clip, step; the loss detached or None."""
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss(*args)
        if loss is not None:
            loss.backward()
            if self.max_grad_norm is not None:
                params = [p for group in self.optimizer.param_groups for p in group["params"]]
                nn.utils.clip_grad_norm_(params, self.max_grad_norm)
        self.optimizer.step()
        return None if loss is None else loss.detach()


class NoisyStep:
    """DP-SGD's update from one batch's clipped gradient sums (the clipping is the caller's).

    A call with ``sums`` (``{name: Σ_i clip(∇ℓ_i)}``, the names of ``params``): ``canary.before_noise(sums,
    info)``, which may add to the sums in place; ``noisy = noise(sums)``, the method's Gaussian noise drawn from its
    own generator (in place or not); ``canary.after_noise(noisy, info)``; each parameter's gradient set to
    ``noisy[name] / batch``; the optimizer step.

    Args:
        optimizer: the optimizer of ``params``.
        params: ``{name: parameter}``, the parameters the sums are the gradients of.
        noise: adds the step's noise to the sums and returns the noisy sums.
        batch: the divisor of the noisy sums (the expected or exact batch size).
        canary: an audit hook (:class:`dpgnn.methods.hooks.DPStepHook`) or ``None``.
        info: the :class:`dpgnn.methods.hooks.DPStepInfo` the hook is given, unless a call gives its own.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        params: Mapping[str, Tensor],
        noise: Callable[[dict[str, Tensor]], Mapping[str, Tensor]],
        batch: float,
        *,
        canary: Any = None,
        info: Any = None,
    ) -> None:
        self.optimizer = optimizer
        self.params = dict(params)
        self.noise = noise
        self.batch = batch
        self.canary = canary
        self.info = info

    def __call__(self, sums: dict[str, Tensor], info: Any = None) -> None:
        """One update from the clipped gradient sums ``sums`` (the class docstring's sequence); ``info`` overrides
        the :class:`~dpgnn.methods.hooks.DPStepInfo` given at construction for this step."""
        info = self.info if info is None else info
        if self.canary is not None:
            self.canary.before_noise(sums, info)
        noisy = self.noise(sums)
        if self.canary is not None:
            self.canary.after_noise(noisy, info)
        for name, p in self.params.items():
            p.grad = noisy[name] / self.batch
        self.optimizer.step()


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


def _record(epoch: int, out: Any) -> dict[str, Any]:
    """An epoch's history entry: its number and what its step returned (a loss, or a dict of floats)."""
    record: dict[str, Any] = {"epoch": epoch}
    if isinstance(out, dict):
        record.update({k: float(v) for k, v in out.items()})
    elif out is not None:
        record["loss"] = float(out)
    return record


def _check_fit(epochs: int, evaluate, monitor: str | None, mode: str, patience: int | None, min_delta: float) -> None:
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


def _selection(epochs, evaluate, monitor, mode, patience, min_delta, restore_best) -> tuple[Any, bool, Any]:
    """``fit``'s arguments checked, and its ``(monitor, restore_best, patience)``: as given, or, inside
    :func:`last_epoch`, no selection, no restore and no early stopping (the monitor turned off is recorded)."""
    _check_fit(epochs, evaluate, monitor, mode, patience, min_delta)
    overridden = _LAST_EPOCH.get()
    if overridden is None or monitor is None:
        return monitor, restore_best, patience
    overridden.append(monitor)
    return None, False, None


def fit(
    model: nn.Module | None,
    step,
    evaluate=None,
    *,
    epochs: int,
    monitor: str | None = "val",
    mode: str = "max",
    patience: int | None = None,
    min_epochs: int = 0,
    min_delta: float = 0.0,
    restore_best: bool = True,
    keep_initial: bool = False,
    stop: Callable[[int], bool] | None = None,
    progress: bool = False,
    desc: str = "train",
) -> FitResult:
    """Run ``epochs`` epochs of ``step`` with evaluation, selection of the best epoch and early stopping.

    Each epoch ``e = 1..epochs``: ``model.train()``; ``loss = step(e)`` (the epoch's updates, made with
    :class:`GradientStep` or :class:`NoisyStep`: one full-batch step or many mini-batch steps; may return a loss, a
    float, a dict of floats or ``None``); then, when ``evaluate`` is
    given, ``metrics = evaluate(e)`` under ``torch.no_grad()`` (a dict of floats, e.g. ``{"train": .., "val": ..,
    "test": ..}``; ``evaluate`` puts the model in eval mode itself).

    Selection: the epoch whose ``metrics[monitor]`` is best (``mode="max"``: strictly greater than the best so far
    plus ``min_delta``; ``"min"``: strictly smaller minus ``min_delta``; NaN never improves, ties keep the earlier
    epoch). ``restore_best`` reloads that epoch's weights at the end (a copy of the state dict is taken at each
    improvement); otherwise the final weights stay and only ``best`` reports the selected epoch's metrics.
    ``keep_initial``: the initial weights count as epoch 0 with no metrics, kept when no epoch improves (e.g. all
    validation values NaN). ``monitor=None``: no selection, ``best`` is the last epoch (always in :func:`last_epoch`).

    Early stopping: with ``patience``, training ends after the first epoch ``e >= min_epochs`` at which the monitored
    value has not improved for ``patience`` consecutive evaluations (PyTorch-Lightning ``EarlyStopping`` semantics).
    ``stop(epoch)``, when given, is asked after each epoch (and its selection); ``True`` ends training there.

    All randomness belongs to ``step``/``evaluate`` (their generators), so a seeded loop moved onto ``fit`` gives the
    same numbers as before.
    """
    epochs = int(epochs)
    monitor, restore_best, patience = _selection(epochs, evaluate, monitor, mode, patience, min_delta, restore_best)
    best_value = -math.inf if mode == "max" else math.inf
    best: dict[str, float] = {}
    best_epoch, wait, stopped = 0, 0, False
    best_state = copy.deepcopy(model.state_dict()) if (model is not None and restore_best and keep_initial) else None
    history: list[dict[str, Any]] = []
    metrics: dict[str, float] = {}
    bar = _progress(epochs, progress, desc)
    for epoch in range(1, epochs + 1):  # epochs >= 1: the loop binds epoch
        if model is not None:
            model.train()
        record = _record(epoch, step(epoch))
        if evaluate is not None:
            with torch.no_grad():
                metrics = dict(evaluate(epoch))
            record.update(metrics)
        history.append(record)
        if bar is not None:
            bar.update(1)
        if monitor is None:
            best, best_epoch = metrics, epoch
        elif monitor not in metrics:
            raise KeyError(f"evaluate returned no {monitor!r} (got {sorted(metrics)})")
        elif _improves(float(metrics[monitor]), best_value, mode, min_delta):
            best_value, best, best_epoch, wait = float(metrics[monitor]), metrics, epoch, 0
            if model is not None and restore_best:
                best_state = copy.deepcopy(model.state_dict())
        else:
            wait += 1
        patient = patience is None or epoch < min_epochs or wait < int(patience)
        if not patient or (stop is not None and stop(epoch)):
            stopped = True
            break
    if bar is not None:
        bar.close()
    if model is not None and restore_best and best_state is not None:  # none: no epoch improved, final weights
        model.load_state_dict(best_state)
    return FitResult(
        best=best, best_epoch=best_epoch, last=metrics, epochs=epoch, stopped_early=stopped, history=history
    )
