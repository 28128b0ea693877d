"""Repeats trained as one model: ``R`` seeds of a ProGAP-family stage (:func:`dpgnn.methods.progap.train_stage`)
in one forward and one backward pass, each seed's run equal to its own sequential run up to float rounding.

A :class:`StackedStage` holds the ``R`` seeds' :class:`~dpgnn.nn.progap.StageModel` weights stacked along a seed
axis (a ``Linear`` of shape ``[R, out, in]``). Activations are seed-major, ``[R, rows, width]``: an input shared by
every seed (the features ``X``) is one matrix product with the seeds' weights side by side, a per-seed input one
batched product; training-mode BatchNorm is one native call over ``R·width`` channels (each seed's statistics and
running statistics its own), GroupNorm one call over the ``R·rows`` samples. The JK concatenation is never built:
the head's first product is the sum of the bases' products with their blocks of its weight, divided row-wise by the
JK norm. Seeds never mix: each loss term, gradient, clipping factor, Adam moment, Poisson batch and noise draw
belongs to one seed.

Randomness stays per seed: each seed keeps its own generator and draws from it exactly what the sequential run
draws, in the same order and with the same shapes (Poisson picks ``rand(N_train)``, DP-Adam noise one
``normal_`` per parameter, NAP noise ``randn(N, d)``), so a seed's stream is the one of its sequential run.

:func:`train_stage_repeats` is :func:`~dpgnn.methods.progap.train_stage` for ``R`` seeds: full-batch Adam, or
DP-Adam with per-sample clipping by ghost norms (:class:`~dpgnn.nn.progap.GhostClipper`'s formulas, every sample of
every seed clipped on its own; the seeds' Poisson batches of different sizes padded with rows of zero loss, whose
gradients are exactly zero), and the best-validation epoch restored per seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pad_sequence

from dpgnn.nn.progap import MLP, StageModel
from dpgnn.privacy.progap import stage_steps
from dpgnn.train import GradientStep, NoisyStep, fit

__all__ = ["StackedMLP", "StackedStage", "StackedNAP", "train_stage_repeats", "split_accuracies", "stackable"]

_IGNORE = -100  # the target of a padding row: no loss, no gradient (F.cross_entropy's ignore_index)


def stackable(module: nn.Module) -> str | None:
    """Why ``module`` (an :class:`MLP` or :class:`StageModel`) cannot be trained stacked, or None: dropout draws its
    masks from the global random stream between stages, which one stacked run cannot replay per seed."""
    for m in module.modules():
        if isinstance(m, nn.Dropout) and m.p > 0:
            return "dropout > 0"
    return None


class _Swap(torch.autograd.Function):
    """``x.transpose(0, 1)`` made contiguous, its gradient too: every product then sees dense operands (a strided
    ``bmm`` operand takes a slow path on the CPU)."""

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        return x.transpose(0, 1).contiguous()

    @staticmethod
    def backward(ctx, g: Tensor) -> Tensor:
        return g.transpose(0, 1).contiguous()


def _swap(x: Tensor) -> Tensor:
    """``[a, b, d] -> [b, a, d]``, contiguous (forward and backward)."""
    return _Swap.apply(x)


class _Layer(nn.Module):
    """One layer of :class:`MLP` for ``R`` seeds: ``Linear`` (weight ``[R, out, in]``), then optionally the
    activation and a BatchNorm / one-group GroupNorm (affine ``[R, out]``).

    Inputs are ``[n, in]`` (shared by every seed) or ``[R, n, in]``; outputs ``[R, n, out]``. A shared input is one
    product with the seeds' weights side by side (``[n, R·out]``); BatchNorm runs on that node-major layout
    (``R·out`` channels, one native call), everything else seed-major."""

    def __init__(self, blocks: Sequence[nn.Sequential]) -> None:
        super().__init__()
        first = list(blocks[0])
        lin, rest = first[0], first[1:]
        self.weight = nn.Parameter(torch.stack([b[0].weight.detach() for b in blocks]).clone())
        self.bias = nn.Parameter(torch.stack([b[0].bias.detach() for b in blocks]).clone())
        self.act = rest[0] if rest else None
        norm = rest[1] if len(rest) > 1 else None
        if len(rest) > 2 or not (
            norm is None
            or isinstance(norm, nn.BatchNorm1d)
            or (isinstance(norm, nn.GroupNorm) and norm.num_groups == 1 and norm.affine)
        ):
            raise ValueError(
                f"cannot stack the layer {blocks[0]}: Linear, activation, BatchNorm1d or one-group GroupNorm only"
            )
        self.norm = None if norm is None else "batch" if isinstance(norm, nn.BatchNorm1d) else "group"
        if norm is not None:
            self.eps = norm.eps
            self.norm_weight = nn.Parameter(torch.stack([b[2].weight.detach() for b in blocks]).clone())
            self.norm_bias = nn.Parameter(torch.stack([b[2].bias.detach() for b in blocks]).clone())
            if self.norm == "batch":
                self.momentum = norm.momentum
                for k in ("running_mean", "running_var", "num_batches_tracked"):
                    self.register_buffer(k, torch.stack([getattr(b[2], k) for b in blocks]).clone())
        self.out_features = lin.out_features

    def params(self) -> list[nn.Parameter]:
        """In the order of the sequential layer's ``parameters()``: weight, bias, norm weight, norm bias."""
        return [self.weight, self.bias] + ([self.norm_weight, self.norm_bias] if self.norm else [])

    def linear(self, x: Tensor) -> Tensor:
        """``F.linear`` per seed: ``[n, in]`` (shared) -> ``[n, R, out]`` (node-major),
        ``[R, n, in]`` -> ``[R, n, out]``."""
        r, o, i = self.weight.shape
        if x.dim() == 2:
            return torch.addmm(self.bias.reshape(r * o), x, self.weight.reshape(r * o, i).t()).view(-1, r, o)
        return torch.baddbmm(self.bias.unsqueeze(1), x, self.weight.transpose(1, 2))

    def batch_norm(self, h: Tensor, training: bool) -> Tensor:
        """BatchNorm of node-major ``[n, R, C]`` as ``R·C`` channels (each seed's statistics and running stats)."""
        n, r, c = h.shape
        if training:
            self.num_batches_tracked.add_(1)
        return F.batch_norm(
            h.reshape(n, r * c),
            self.running_mean.view(-1),
            self.running_var.view(-1),
            self.norm_weight.reshape(-1),
            self.norm_bias.reshape(-1),
            training,
            self.momentum,
            self.eps,
        ).view(n, r, c)

    def group_norm(self, h: Tensor) -> tuple[Tensor, Tensor]:
        """One-group GroupNorm of seed-major ``[R, n, C]`` per row: ``(x̂, x̂ ⊙ γ + β)``."""
        r, n, c = h.shape
        stored = F.group_norm(h.reshape(r * n, c), 1, None, None, self.eps).view(r, n, c)
        return stored, torch.addcmul(self.norm_bias.unsqueeze(1), stored, self.norm_weight.unsqueeze(1))

    def forward(self, x: Tensor, training: bool = False) -> Tensor:
        return self.after_linear(self.linear(x), x.dim() == 2, training)

    def after_linear(self, h: Tensor, node_major: bool, training: bool) -> Tensor:
        """Activation and norm on the linear output ``h`` (node-major ``[n, R, out]`` or ``[R, n, out]``);
        seed-major out."""
        if self.act is not None:
            h = self.act(h)
        if self.norm == "batch" and not training:  # the inference kernel's x·α + β, in either layout
            alpha = self.norm_weight * torch.rsqrt(self.running_var + self.eps)
            beta = self.norm_bias - self.running_mean * alpha
            if node_major:
                return _swap(torch.addcmul(beta, h, alpha))
            return torch.addcmul(beta.unsqueeze(1), h, alpha.unsqueeze(1))
        if self.norm == "batch":
            return _swap(self.batch_norm(h if node_major else _swap(h), training))
        if node_major:
            h = _swap(h)
        return self.group_norm(h)[1] if self.norm == "group" else h

    def write_back(self, blocks: Sequence[nn.Sequential]) -> None:
        """Copy seed ``r``'s weights and buffers into ``blocks[r]`` (a layer of the sequential MLP)."""
        with torch.no_grad():
            for r, b in enumerate(blocks):
                b[0].weight.copy_(self.weight[r])
                b[0].bias.copy_(self.bias[r])
                if self.norm:
                    b[2].weight.copy_(self.norm_weight[r])
                    b[2].bias.copy_(self.norm_bias[r])
                if self.norm == "batch":
                    for k in ("running_mean", "running_var", "num_batches_tracked"):
                        getattr(b[2], k).copy_(getattr(self, k)[r])


class StackedMLP(nn.Module):
    """``R`` seeds' :class:`~dpgnn.nn.progap.MLP` of one architecture, weights stacked (from ``mlps``, which keep
    receiving the trained weights by :meth:`write_back`)."""

    def __init__(self, mlps: Sequence[MLP]) -> None:
        super().__init__()
        reason = stackable(mlps[0])
        if reason:
            raise ValueError(f"cannot stack this MLP: {reason}")
        self.mlps = list(mlps)
        self.layers = nn.ModuleList(_Layer([m.layers[i] for m in mlps]) for i in range(len(mlps[0].layers)))

    def params(self) -> list[nn.Parameter]:
        """The stacked parameters, layer by layer, in the order of the sequential MLP's ``parameters()``."""
        return [p for layer in self.layers for p in layer.params()]

    def forward(self, x: Tensor, training: bool = False) -> Tensor:
        """Every seed's MLP on ``x`` (``[n, in]`` shared by the seeds, or ``[R, n, in]``): ``[R, n, out]``."""
        for layer in self.layers:
            x = layer(x, training)
        return x

    def write_back(self) -> list[MLP]:
        """Copy seed ``r``'s weights and buffers into ``mlps[r]`` and return the ``R`` sequential MLPs."""
        for i, layer in enumerate(self.layers):
            layer.write_back([m.layers[i] for m in self.mlps])
        return self.mlps


class StackedStage(nn.Module):
    """``R`` seeds' :class:`~dpgnn.nn.progap.StageModel`: bases (shared with earlier stages, as there), JK
    concatenation, row-wise L2 normalisation and head, for inputs ``[n, in]`` (shared) or ``[n, R, in]``."""

    def __init__(self, bases: Sequence[StackedMLP], head: StackedMLP, *, normalize_jk: bool = True) -> None:
        super().__init__()
        self.bases = nn.ModuleList(bases)
        self.head = head
        self.normalize_jk = normalize_jk
        self.repeats = head.layers[0].weight.size(0)

    def trainable(self) -> list[nn.Parameter]:
        """The trainable parameters in the order of the sequential ``StageModel``'s."""
        return [p for m in (*self.bases, self.head) for p in m.params() if p.requires_grad]

    def forward(self, xs: Sequence[Tensor], training: bool = False) -> Tensor:
        """``head(L2norm(cat_k base_k(x_k)))`` without materialising the concatenation: the head's first product
        is the sum of the bases' products with their blocks of its weight, divided row-wise by the JK norm
        ``sqrt(Σ_k ‖base_k(x_k)‖²)`` (the same function as normalising first, in fewer passes over ``[R, n, ·]``)."""
        outs = [base(x, training) for base, x in zip(self.bases, xs)]
        first = self.head.layers[0]
        blocks = first.weight.split([o.size(-1) for o in outs], dim=2)
        u = torch.stack([torch.bmm(o, w.transpose(1, 2)) for o, w in zip(outs, blocks)]).sum(0)
        if self.normalize_jk:
            sq = torch.stack([torch.linalg.vector_norm(o, dim=-1, keepdim=True) for o in outs]).square().sum(0)
            u = u / sq.sqrt().clamp_min(1e-12)
        h = first.after_linear(u + first.bias.unsqueeze(1), False, training)
        for layer in self.head.layers[1:]:
            h = layer(h, training)
        return h

    def state(self) -> dict[str, Tensor]:
        """Every stacked tensor (parameters and buffers) whose seed slices a restore copies."""
        return {**dict(self.named_parameters()), **dict(self.named_buffers())}

    def write_back(self) -> list[StageModel]:
        """The ``R`` sequential :class:`StageModel`s holding the stacked weights."""
        bases = [b.write_back() for b in self.bases]
        heads = self.head.write_back()
        return [
            StageModel([b[r] for b in bases], heads[r], normalize_jk=self.normalize_jk) for r in range(self.repeats)
        ]

    # -- ghost clipping ------------------------------------------------------------------------------------------
    def _ghost_run(self, module: StackedMLP, x: Tensor, records: list) -> Tensor:
        """:class:`GhostClipper`'s forward of one MLP on seed-major rows: trainable layers record
        (layer, kind, input, output)."""
        for layer in module.layers:
            if not layer.weight.requires_grad:
                x = layer(x, True)
                continue
            if x.dim() != 3:
                raise ValueError("ghost clipping needs each seed's own rows ([R, m, d] inputs)")
            z = layer.linear(x)
            records.append((layer, "linear", x, z))
            x = z if layer.act is None else layer.act(z)
            if layer.norm == "group":
                stored, x = layer.group_norm(x)
                records.append((layer, "group", stored, x))
            elif layer.norm:
                raise ValueError("DP training needs per-sample normalisation (no BatchNorm)")
        return x

    def clipped_sums(self, xs: Sequence[Tensor], y: Tensor, max_norm: float) -> list[Tensor]:
        """``Σ_i clip(∇ℓ_i)`` per seed for rows ``[R, m, ·]`` (targets ``[R, m]``, padding rows ``-100``): stacked
        ``[R, *shape]`` in the order of :meth:`trainable`, each seed's rows clipped as :class:`GhostClipper`."""
        records: list = []
        h = torch.cat([self._ghost_run(base, x, records) for base, x in zip(self.bases, xs)], dim=-1)
        if self.normalize_jk:
            h = F.normalize(h, p=2.0, dim=-1)
        logits = self._ghost_run(self.head, h, records)
        loss = F.cross_entropy(
            logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum", ignore_index=_IGNORE
        )
        grads = torch.autograd.grad(loss, [rec[3] for rec in records])
        with torch.no_grad():
            rows: list[tuple[nn.Parameter, Tensor]] = []  # per-sample gradients that are rows: [R, m, numel]
            outer: list[tuple[nn.Parameter, Tensor, Tensor]] = []
            for (layer, kind, stored, _), g in zip(records, grads):
                if kind == "linear":
                    outer.append((layer.weight, stored, g))
                    rows.append((layer.bias, g))
                else:
                    rows.append((layer.norm_weight, g * stored))
                    rows.append((layer.norm_bias, g))
            block = torch.cat([u for _, u in rows], dim=2)
            sq = (block * block).sum(2)
            if outer:
                prod = torch.stack(
                    [torch.linalg.vector_norm(a, dim=2) * torch.linalg.vector_norm(g, dim=2) for _, a, g in outer]
                )
                sq += (prod * prod).sum(0)
            c = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
            sums = {
                id(p): v
                for (p, _), v in zip(
                    rows, torch.bmm(c.unsqueeze(1), block).squeeze(1).split([u.size(2) for _, u in rows], dim=1)
                )
            }
            for p, a, g in outer:
                sums[id(p)] = torch.bmm((g * c.unsqueeze(2)).transpose(1, 2), a)
        return [sums[id(p)].reshape(p.shape) for p in self.trainable()]


class StackedNAP:
    """:class:`~dpgnn.methods.progap.NAP` for ``R`` seeds: one adjacency (or one per seed, node level: each seed
    bounds degrees with its own draw), one generator per seed, each seed's noise ``randn(N, d)`` drawn from its own
    generator as the sequential query draws it. :attr:`queries` counts the queries of one seed's run. Embeddings are
    seed-major ``[R, N, d]``, in and out."""

    def __init__(self, naps: Sequence[Any]) -> None:
        self.naps = list(naps)
        self.shared = len({id(n.adj) for n in self.naps}) == 1
        self.queries = 0

    def __call__(self, h: Tensor) -> Tensor:
        """One aggregation query of every seed: rows of ``h`` (``[R, N, d]``) L2-normalised, aggregated over the
        adjacency, plus each seed's ``σ·randn(N, d)`` when its σ > 0; ``[R, N, d]``."""
        self.queries += 1
        for nap in self.naps:
            nap.queries += 1
        r, n, d = h.shape
        h = F.normalize(h, p=2.0, dim=-1)
        if self.shared:  # one product for every seed: node-major [N, R·d]
            out = (self.naps[0].adj @ h.transpose(0, 1).reshape(n, r * d)).view(n, r, d).transpose(0, 1).contiguous()
        else:
            out = torch.stack([nap.adj @ h[i] for i, nap in enumerate(self.naps)])
        for i, nap in enumerate(self.naps):
            if nap.sigma > 0:
                noise = torch.randn((n, d), generator=nap.generator, device=nap.generator.device)
                out[i] = out[i] + nap.sigma * noise.to(out.device)
        return out


def split_accuracies(logits: Tensor, y: Tensor, masks: dict[str, Tensor]) -> dict[str, Tensor]:
    """:func:`dpgnn.metrics.split_accuracy` per seed: ``{name: [R] accuracies}`` of logits ``[R, n, C]`` (NaN for
    an empty split)."""
    correct = (logits.argmax(-1) == y).float()
    r = logits.size(0)
    return {
        k: correct[:, m].mean(1) if bool(m.any()) else torch.full((r,), math.nan, device=logits.device)
        for k, m in masks.items()
    }


def _rows(x: Tensor, idx: Tensor) -> Tensor:
    """The rows ``idx`` of a shared ``[N, d]`` or seed-major ``[R, N, d]`` input, for every seed."""
    return x.index_select(x.dim() - 2, idx)


def _per_seed_rows(x: Tensor, idx: Tensor) -> Tensor:
    """Seed ``r``'s rows ``idx[r]`` (``idx``: ``[R, m]``) of a shared ``[N, d]`` or seed-major ``[R, N, d]``:
    ``[R, m, d]``."""
    if x.dim() == 2:
        return x.index_select(0, idx.reshape(-1)).view(*idx.shape, x.size(1))
    r, n, d = x.shape
    offsets = torch.arange(0, r * n, n, device=idx.device).unsqueeze(1)
    return x.reshape(r * n, d).index_select(0, (idx + offsets).reshape(-1)).view(r, -1, d)


# ---------------------------------------------------------------------------------------------------------------
# training: train_stage for R seeds
# ---------------------------------------------------------------------------------------------------------------
def train_stage_repeats(
    model: StackedStage,
    xs: Sequence[Tensor],
    y: Tensor,
    masks: dict[str, Tensor],
    *,
    epochs: int,
    lr: float,
    generators: Sequence[torch.Generator],
    dp: Any = None,
    stage: int = 0,
) -> list[list[dict[str, Any]]]:
    """:func:`dpgnn.methods.progap.train_stage` (``per_sample="ghost"``, no weight decay) for the ``R`` seeds of
    ``model``; ``xs`` are the cached inputs (``[N, in]`` shared by every seed or ``[R, N, in]``), ``generators``
    the seeds' own. Every epoch scores the model in eval mode on the training and validation rows and each seed
    keeps its own best validation epoch (strictly better than its earlier ones; its initial weights if none is),
    restored at the end. Returns each seed's history as :func:`~dpgnn.methods.progap.train_stage` returns it
    (``sample_sizes`` of every DP step on the last epoch's entry)."""
    if len(generators) != model.repeats:
        raise ValueError(f"{model.repeats} seeds need {model.repeats} generators, got {len(generators)}")
    watched = (masks["train"] | masks["val"]).nonzero().view(-1)
    watched_masks = {k: masks[k].index_select(0, watched) for k in ("train", "val")}
    xs_watched = [_rows(x, watched) for x in xs]
    y_watched = y.index_select(0, watched)

    def evaluate() -> dict[str, Tensor]:
        with torch.no_grad():
            return split_accuracies(model(xs_watched, training=False), y_watched, watched_masks)

    train_idx = masks["train"].nonzero().view(-1)
    sample_sizes: list[list[int]] = [[] for _ in generators]
    if dp is None:
        step = _full_batch_step(model, xs, y, train_idx, lr)
    else:
        step = _dp_step(model, xs, y, train_idx, dp, epochs, lr, generators, sample_sizes)
    hist = _fit(model, step, evaluate, epochs, stage)
    if dp is not None:
        for h, sizes in zip(hist, sample_sizes):
            h[-1]["sample_sizes"] = sizes
    return hist


def _fit(model: StackedStage, step, evaluate, epochs: int, stage: int) -> list[list[dict[str, Any]]]:
    """The selection of :func:`dpgnn.train.fit` (``monitor="val"``, ``mode="max"``, ``keep_initial=True``), one per
    seed, on :func:`~dpgnn.train.fit`: a seed's slice of every stacked tensor is saved at each of its improvements
    and restored at the end."""
    state = model.state()
    best = {k: v.detach().clone() for k, v in state.items()}
    best_val = torch.full((model.repeats,), -math.inf, dtype=torch.float64)
    hist: list[list[dict[str, Any]]] = [[] for _ in range(model.repeats)]

    def select(epoch: int) -> dict[str, float]:
        nonlocal best_val
        acc = evaluate()
        train, val = acc["train"].tolist(), acc["val"].tolist()
        for r, h in enumerate(hist):
            h.append({"stage": stage, "epoch": epoch, "train_acc": train[r], "val_acc": val[r]})
        val_t = torch.tensor(val, dtype=torch.float64)
        better = val_t > best_val  # NaN never improves
        if bool(better.any()):
            best_val = torch.where(better, val_t, best_val)
            with torch.no_grad():
                for k, v in state.items():
                    sel = better.to(v.device)
                    best[k][sel] = v.detach()[sel]
        return {}

    fit(None, step, select, epochs=int(epochs), monitor=None, restore_best=False)
    with torch.no_grad():
        for k, v in state.items():
            v.copy_(best[k])
    return hist


def _full_batch_step(model: StackedStage, xs: Sequence[Tensor], y: Tensor, train_idx: Tensor, lr: float):
    """One full-batch Adam step per epoch on the sum of the seeds' mean cross-entropies (each seed's gradient is
    its own loss's)."""
    opt = torch.optim.Adam(model.trainable(), lr=lr, weight_decay=0.0)
    x_train = [_rows(x, train_idx) for x in xs]
    n = train_idx.numel()
    target = y.index_select(0, train_idx).expand(model.repeats, n).reshape(-1)

    def loss(epoch: int) -> Tensor:
        logits = model(x_train, training=True)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target, reduction="sum") / n

    update = GradientStep(opt, loss)

    def step(epoch: int) -> None:
        update(epoch)

    return step


def _dp_step(
    model: StackedStage,
    xs: Sequence[Tensor],
    y: Tensor,
    train_idx: Tensor,
    dp: Any,
    epochs: int,
    lr: float,
    generators: Sequence[torch.Generator],
    sample_sizes: list[list[int]],
):
    """One epoch of DP-Adam for every seed, as the ghost path of ``train_stage``: per step and per seed, Poisson
    picks ``rand(N_train) < q`` from the seed's generator, the clipped sum of its rows, one ``normal_(0, zC)`` per
    parameter (in parameter order) from the same generator, the ``1/B`` scaling and a fused Adam update."""
    params = model.trainable()
    n_train = train_idx.numel()
    q, steps = stage_steps(n_train, dp.batch_size, epochs)
    per_epoch = steps // int(epochs)
    expected = min(dp.batch_size, n_train)
    std = dp.noise_multiplier * dp.clip
    fused = all(p.device.type in ("cpu", "cuda") for p in params) or None
    opt = torch.optim.Adam(params, lr=lr, weight_decay=0.0, fused=fused)
    repeats = model.repeats
    sizes = [p[0].numel() for p in params]
    noise = torch.empty(repeats, sum(sizes), dtype=params[0].dtype, device=params[0].device)
    noise_views = [noise[r].split(sizes) for r in range(repeats)]  # seed r's draws, in the sequential order
    noise_of = [v.view(p.shape) for v, p in zip(noise.split(sizes, dim=1), params)]  # [R, *shape] views
    pad = int(train_idx[0])
    dev = train_idx.device

    def add_noise(sums: dict[str, Tensor]) -> dict[str, Tensor]:
        if std == 0:
            return {k: g.contiguous() for k, g in sums.items()}
        for views, gen in zip(noise_views, generators):
            for v in views:
                v.normal_(0.0, std, generator=gen)
        # (Σ clip + noise) / B, as the sequential flat buffer; a fresh contiguous gradient (fused Adam reads a
        # strided gradient as if it were contiguous)
        return {k: g + z for (k, g), z in zip(sums.items(), noise_of)}

    private = NoisyStep(opt, {str(i): p for i, p in enumerate(params)}, add_noise, expected)

    def step(epoch: int) -> None:
        for _ in range(per_epoch):
            batches = []
            for r, gen in enumerate(generators):
                batches.append(train_idx[torch.rand(n_train, generator=gen, device=gen.device).to(dev) < q])
                sample_sizes[r].append(int(batches[-1].numel()))
            counts = [b.numel() for b in batches]
            if max(counts) == 0:  # every batch empty: every step pure noise
                sums = [torch.zeros_like(p) for p in params]
            else:
                idx = pad_sequence(batches, batch_first=True, padding_value=pad)  # [R, m]: seed r's rows, padding
                valid = torch.arange(idx.size(1), device=dev) < torch.tensor(counts, device=dev).unsqueeze(1)
                target = torch.where(valid, y[idx], torch.full_like(idx, _IGNORE))
                sums = model.clipped_sums([_per_seed_rows(x, idx) for x in xs], target, dp.clip)
            private({str(i): g for i, g in enumerate(sums)})

    return step
