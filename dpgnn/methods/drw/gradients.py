"""DRW's per-subgraph gradients, their clipping and the Gaussian noise (docs/papers/drw.md#dp-training-step):
:func:`per_subgraph_grads` (``vmap``) and :func:`clipped_grad_sum` (Gram matrices) give the same clipped sums."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, grad, vmap

from dpgnn.data.random_walks import (
    Subgraphs,
)
from dpgnn.nn.drw import SplitFeatures
from dpgnn.privacy.validation import check_positive as _positive


def dense_subgraph_inputs(
    x: Tensor, subs: Subgraphs, index: Tensor | None = None, *, features: bool = True
) -> tuple[Tensor | None, Tensor]:
    """Padded features [B, S, F] (None without ``features``: the first layer over
    :class:`~dpgnn.nn.drw.SplitFeatures` reads node ids instead) and per-subgraph ``D^{-1/2}(A+I)D^{-1/2}``
    [B, S, S] (padding rows/cols zero)."""
    nodes = subs.nodes if index is None else subs.nodes[index]
    adj = subs.adj if index is None else subs.adj[index]
    mask = nodes >= 0
    xb = x[nodes.clamp(min=0)] * mask.unsqueeze(-1).to(x.dtype) if features else None
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
    xb: Tensor | None,
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

    ``split`` (the full feature matrix as :class:`SplitFeatures`) with ``nodes`` (``[B, S]`` node ids of the
    subgraphs' rows, ``-1`` = padding) makes the first layer sparse too, and ``xb`` is not read (it may be None):
    ``X_i Wᵀ`` is gathered from ``x Wᵀ`` over the batch's distinct nodes (computed over the sparse rest),
    ``a_i a_iᵀ = Â_i X_i X_iᵀ Â_iᵀ`` comes from the ``S × S`` Gram matrices of the rows (:meth:`SplitFeatures.gram`,
    from the sparse rest), and the weight sum ``Σ_i (Â_iᵀ c_i g_i)ᵀ X_i`` is ``xᵀ V`` over those nodes, with ``V``
    the rows of all subgraphs added up per node.
    """
    lins = list(model.lins)
    h = xb
    inputs, outputs = [], []
    if split is not None:  # the batch's distinct nodes, and each subgraph row's place among them
        rows, slot = torch.unique(nodes.clamp(min=0), return_inverse=True)
    for i, lin in enumerate(lins):
        if i == 0 and split is not None:
            mask = (nodes >= 0).unsqueeze(-1).to(ab.dtype)
            xw = split.rows_matmul(rows, lin.weight.detach().T)[slot] * mask
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
            gram = split.gram(nodes).to(ab.dtype)
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
            v = torch.zeros(rows.numel(), u.shape[-1], dtype=u.dtype, device=u.device)
            v.index_add_(0, slot.flatten()[valid], u.flatten(0, 1)[valid])
            sums[kw] = split.rows_tmatmul(rows, v).T
        else:
            sums[kw] = (g * cw[:, None, None]).flatten(0, 1).T @ a.flatten(0, 1)
        sums[kb] = cb @ gb
    return sums
