"""One ProGAP stage's training: full-batch Adam, or node-level DP-Adam with ghost or opacus per-sample clipping
(docs/papers/progap.md#architecture-and-training, docs/papers/progap.md#node-level-privacy)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dpgnn.methods.hooks import DPStepHook, DPStepInfo
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import GhostClipper, StageModel, gather_rows
from dpgnn.privacy.progap import stage_steps
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos
from dpgnn.train import GradientStep, NoisyStep, fit

__all__ = ["PER_SAMPLE", "DPSettings", "predict", "train_stage"]

PER_SAMPLE = ("ghost", "opacus")  # how node-level DP-Adam computes its clipped gradient sums (train_stage)


@dataclass(frozen=True)
class DPSettings:
    """DP-Adam of one stage: per-sample clipping ``clip``, noise ``noise_multiplier·clip``, Poisson sampling of the
    training rows with rate ``batch_size/N_train`` for ``epochs·max(1, ⌊N_train/batch_size⌋)`` steps."""

    noise_multiplier: float
    batch_size: int
    clip: float = 1.0


def predict(model: nn.Module, *inputs: Tensor) -> Tensor:
    """The model's outputs on ``inputs`` in eval mode, without gradients (what every evaluation of ProGAP, GAP and
    the baselines scores with :func:`dpgnn.metrics.split_accuracy`)."""
    model.eval()
    with torch.no_grad():
        return model(*inputs)


def train_stage(
    model: StageModel,
    xs: Sequence[Tensor],
    y: Tensor,
    masks: dict[str, Tensor],
    *,
    epochs: int,
    lr: float,
    dp: DPSettings | None = None,
    generator: torch.Generator,
    weight_decay: float = 0.0,
    stage: int = 0,
    per_sample: str = "ghost",
    canary: DPStepHook | None = None,
) -> tuple[StageModel, list[dict[str, Any]]]:
    """Train one stage; restore the epoch with the best validation accuracy ("early stopping",
    docs/papers/progap.md#architecture-and-training).

    Both branches run on the plain engine :func:`dpgnn.train.fit` (one ``step`` per epoch, then train/validation
    accuracy in eval mode; the best validation epoch, strictly better than the earlier ones, is restored; the
    initial weights are kept if no epoch has a validation accuracy, e.g. an empty validation split).

    Non-private: full-batch Adam, one step per epoch. With ``dp``: DP-Adam on Poisson-sampled training rows
    (flat per-sample clipping to ``dp.clip``, Gaussian noise ``dp.noise_multiplier·dp.clip`` per coordinate, the
    sum divided by the expected batch size), ``⌊N_train/B⌋`` steps per epoch; the model must hold no BatchNorm (see
    :func:`dpgnn.nn.progap.batchnorm_to_groupnorm`). ``per_sample`` picks how each step's clipped gradient sum
    is computed: ``"ghost"`` (default; :class:`dpgnn.nn.progap.GhostClipper`, exact per-sample norms from
    layer inputs and output gradients, no per-sample gradients stored; fused Adam) or ``"opacus"``
    (``GradSampleModule`` + ``DPOptimizer`` around the default Adam, per-sample gradients materialised; the
    original path, ~3x slower). Both draw the same Poisson batches and the same noise from ``generator`` in the
    same order, so a seed gives the same run up to float rounding (tested). Returns the
    restored model and the per-epoch history (train/val accuracy of the model in eval mode after each epoch).
    ``canary`` (audits only; ghost path): a :class:`dpgnn.methods.hooks.DPStepHook` called around every step's
    noise with the clipped sums ``{parameter name: tensor}`` (Poisson law over the ``N_train`` rows).
    """
    _int(epochs, "epochs", 1)
    _pos(lr, "lr")
    if per_sample not in PER_SAMPLE:
        raise ValueError(f"per_sample must be one of {PER_SAMPLE}, got {per_sample!r}")
    if canary is not None and (dp is None or per_sample != "ghost"):
        raise ValueError("canary needs a DP stage (dp) with per_sample='ghost'")
    train_idx = masks["train"].nonzero().view(-1)
    params = [p for p in model.parameters() if p.requires_grad]
    watched = {"train": masks["train"], "val": masks["val"]}

    def evaluate(epoch: int) -> dict[str, float]:
        return split_accuracy(predict(model, *xs), y, watched)

    if dp is None:
        opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
        x_train, y_train = [gather_rows(x, train_idx) for x in xs], y[train_idx]  # full batch: gathered once per stage
        step = GradientStep(opt, lambda epoch: F.cross_entropy(model(*x_train), y_train))
        fitted = fit(model, step, evaluate, epochs=epochs, monitor="val", mode="max", keep_initial=True)
        return model, _stage_history(fitted, stage)

    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        raise ValueError("DP training needs per-sample normalisation: convert BatchNorm with batchnorm_to_groupnorm")
    q, steps = stage_steps(train_idx.numel(), dp.batch_size, epochs)
    update, close = _dp_update(model, params, xs, y, dp, lr, weight_decay, generator, per_sample, canary, train_idx)
    fitted, sizes = _fit_dp(model, params, train_idx, evaluate, (q, steps // epochs), epochs, generator, update, close)
    hist = _stage_history(fitted, stage)
    hist[-1]["sample_sizes"] = sizes
    return model, hist


def _stage_history(fitted, stage: int) -> list[dict[str, Any]]:
    """The per-epoch history of one stage's :func:`dpgnn.train.fit`, tagged with the stage."""
    return [{"stage": stage, "epoch": h["epoch"], "train_acc": h["train"], "val_acc": h["val"]} for h in fitted.history]


def _dp_update(model, params, xs, y, dp: DPSettings, lr, weight_decay, generator, per_sample, canary, train_idx):
    """The DP-Adam step of :func:`train_stage` on the chosen ``per_sample`` path: ``(update(batch), close())``,
    with the step's :class:`dpgnn.methods.hooks.DPStepInfo` (population ``N_train``, expected batch ``min(B, N)``)."""
    n_train = train_idx.numel()
    expected = min(dp.batch_size, n_train)
    info = DPStepInfo(population=n_train, batch=expected, poisson=True, std=dp.noise_multiplier * dp.clip, clip=dp.clip)
    make = _opacus_update if per_sample == "opacus" else _ghost_update
    return make(model, params, xs, y, dp, info, lr, weight_decay, generator, canary)


def _fit_dp(
    model, params, train_idx: Tensor, evaluate, sampling: tuple[float, int], epochs: int, generator, update, close
):
    """:func:`dpgnn.train.fit` with one epoch of DP-Adam per step: ``sampling = (q, steps_per_epoch)``, each step
    an ``update`` on the rows drawn with rate ``q``; ``close`` and the gradients cleared afterwards. Returns the fit
    and every batch's size."""
    n_train = train_idx.numel()
    q, steps_per_epoch = sampling
    sample_sizes: list[int] = []

    def dp_step(epoch: int) -> None:
        """One epoch of DP-Adam: ``steps_per_epoch`` Poisson-sampled, clipped and noised steps."""
        for _ in range(steps_per_epoch):
            pick = torch.rand(n_train, generator=generator, device=generator.device).to(train_idx.device) < q
            batch = train_idx[pick]
            sample_sizes.append(int(batch.numel()))
            update(batch)

    try:
        fitted = fit(model, dp_step, evaluate, epochs=epochs, monitor="val", mode="max", keep_initial=True)
    finally:
        close()
        for p in params:
            p.grad_sample = None
            p.grad = None
    return fitted, sample_sizes


def _ghost_update(model, params, xs, y, dp: DPSettings, info: DPStepInfo, lr, weight_decay, generator, canary):
    """The ghost path of :func:`train_stage`: ``update(batch)`` is one DP-Adam step on the batch's rows (Σ_i
    clip(∇ℓ_i) by ghost norms; then opacus DPOptimizer's noise draws, one N(0, (zC)²) tensor per parameter in
    parameter order from ``generator``, none when zC = 0, and its 1/B scaling; fused Adam). Returns ``(update,
    close)``."""
    if len({(p.dtype, p.device) for p in params}) > 1:
        raise ValueError(
            "ghost clipping needs all trainable parameters on one device and dtype; use per_sample='opacus'"
        )
    # fused Adam (one kernel per parameter): the same update as the default loop up to float rounding, ~5x
    # less time per step for these small tensors
    fused = all(p.device.type in ("cpu", "cuda") for p in params) or None
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=fused)
    sizes = [p.numel() for p in params]
    noise = torch.empty(sum(sizes), dtype=params[0].dtype, device=params[0].device)
    noise_views = noise.split(sizes)
    clipper = GhostClipper(model, params)
    names = [k for k, p in model.named_parameters() if p.requires_grad]

    def add_noise(sums: dict[str, Tensor]) -> dict[str, Tensor]:
        if info.std > 0:
            for v in noise_views:
                v.normal_(0.0, info.std, generator=generator)
            for s, v in zip(sums.values(), noise_views):
                s += v.view_as(s)
        return sums

    private = NoisyStep(opt, dict(zip(names, params)), add_noise, info.batch, canary=canary, info=info)

    def update(batch: Tensor) -> None:
        if batch.numel() == 0:  # an empty Poisson batch: the step is pure noise
            flat = torch.zeros_like(noise)
        else:
            sums, _ = clipper([gather_rows(x, batch) for x in xs], y[batch], dp.clip)
            flat = torch.cat([g.reshape(-1) for g in sums])
        private({k: v.view_as(p) for k, v, p in zip(names, flat.split(sizes), params)})

    return update, lambda: None


def _opacus_update(model, params, xs, y, dp: DPSettings, info: DPStepInfo, lr, weight_decay, generator, canary):
    """The opacus path of :func:`train_stage`: ``GradSampleModule`` + ``DPOptimizer`` around the default Adam
    (per-sample gradients materialised, clipped and noised by the optimizer). Returns ``(update, close)``."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    gsm = GradSampleModule(model, loss_reduction="mean")
    opt = DPOptimizer(
        torch.optim.Adam(params, lr=lr, weight_decay=weight_decay),
        noise_multiplier=dp.noise_multiplier,
        max_grad_norm=dp.clip,
        expected_batch_size=info.batch,
        loss_reduction="mean",
        generator=generator,
    )

    def loss(batch: Tensor) -> Tensor | None:
        if batch.numel() == 0:  # an empty Poisson batch: zero per-sample gradients, the step is pure noise
            for p in params:
                p.grad_sample = torch.zeros((0, *p.shape), device=p.device)
            return None
        picked = [gather_rows(x, batch) for x in xs]  # opacus' grad samplers take dense rows
        return F.cross_entropy(gsm(*[r if r.layout == torch.strided else r.to_dense() for r in picked]), y[batch])

    step = GradientStep(opt, loss)

    def update(batch: Tensor) -> None:
        gsm.train()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            step(batch)

    return update, gsm._close
