"""DRW's models and evaluation: the full-graph features (:func:`split_features`, :func:`eval_features`), the
scores of one forward (the metric is :func:`dpgnn.metrics.f1_micro`: accuracy, or thresholded micro-F1 on PPI)
and :func:`prediction_spread`."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from dpgnn.methods.drw.data import (
    DRWData,
)
from dpgnn.metrics import f1_micro
from dpgnn.nn.drw import SplitFeatures, build_model


def _make(d: DRWData, kind: str, num_layers: int, hidden: int, device) -> nn.Module:
    return build_model(kind, d.x.shape[1], d.num_classes, num_layers, hidden).to(device)


def split_features(x: Tensor, max_density: float = 0.2) -> SplitFeatures | None:
    """``x`` as :class:`SplitFeatures` when at most ``max_density`` of its entries differ from their column's most
    frequent value (bag-of-words: the products with the first layer are then sparse), else ``None``."""
    split = SplitFeatures(x)
    return split if split.density <= max_density else None


def eval_features(x: Tensor, max_density: float = 0.2) -> Tensor | SplitFeatures:
    """The full-graph features for evaluation: :func:`split_features` when it applies, else ``x`` itself."""
    split = split_features(x, max_density)
    return x if split is None else split


@torch.no_grad()
def _scores(
    model: nn.Module,
    d: DRWData,
    x: Tensor | SplitFeatures,
    adj: Tensor | None,
    splits: dict[str, Tensor],
    predictions: list | None = None,
    out: Tensor | None = None,
) -> dict[str, float]:
    """One full-graph forward in eval mode (or its given output ``out``), then :func:`dpgnn.metrics.f1_micro` on
    each split's rows; ``predictions`` (a list) receives the test rows' predicted classes (single-label data)."""
    if out is None:
        model.eval()
        out = model(x, adj)
        model.train()
    if predictions is not None and not d.multilabel:
        predictions.append(out[splits["test"]].argmax(-1).cpu())
    y = d.y.to(out.device)
    return {name: f1_micro(out[i], y[i], d.multilabel) for name, i in splits.items()}


def prediction_spread(pred: Tensor | None, num_classes: int) -> dict[str, float]:
    """How concentrated a model's predictions are: ``top_class_share`` (fraction of rows given the most frequent
    predicted class) and ``class_entropy`` (entropy of the predicted-class distribution / log C: 0 = one class
    everywhere, 1 = uniform). NaN without predictions (multi-label data)."""
    if pred is None or pred.numel() == 0:
        return {"top_class_share": math.nan, "class_entropy": math.nan}
    p = torch.bincount(pred, minlength=num_classes).double() / pred.numel()
    nz = p[p > 0]
    return {"top_class_share": float(p.max()), "class_entropy": float(-(nz * nz.log()).sum() / math.log(num_classes))}
