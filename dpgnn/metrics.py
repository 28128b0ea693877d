"""The evaluation metrics of the five papers, in one place.

Every paper reports accuracy (equivalently, micro-averaged F1 of single-label predictions); DRW also has a
multi-label dataset (PPI), scored by micro-F1 over all labels with the logits thresholded at 0. Each function
takes raw model outputs (logits or log-probabilities: the argmax is the same) and the targets of the same rows.

- :func:`accuracy`: a Python float; NaN when there are no rows (an empty split has no accuracy, not 0).
- :func:`accuracy_tensor`: the same as a 0-dim tensor, so a training loop can stack several and synchronise once.
- :func:`f1_micro`: accuracy for single-label targets, thresholded micro-F1 for multi-label ones.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["accuracy", "accuracy_tensor", "f1_micro", "split_accuracy"]


def accuracy_tensor(out: Tensor, y: Tensor) -> Tensor:
    """Fraction of rows whose argmax equals ``y`` as a 0-dim float tensor on ``y``'s device (NaN when empty)."""
    if y.numel() == 0:
        return torch.tensor(float("nan"), device=y.device)
    return (out.argmax(dim=-1) == y).float().mean()


def accuracy(out: Tensor, y: Tensor) -> float:
    """Fraction of rows whose argmax equals ``y`` (NaN when there are no rows)."""
    return float((out.argmax(-1) == y).float().mean()) if y.numel() else float("nan")


def f1_micro(out: Tensor, y: Tensor, multilabel: bool = False) -> float:
    """Micro-F1: :func:`accuracy` for single-label ``y``; for multi-label ``y`` (0/1 per label) the logits are
    thresholded at 0 (sigmoid 0.5) and ``2 TP / (2 TP + FP + FN)`` is taken over all labels (0 when both are empty)."""
    if not multilabel:
        return accuracy(out, y)
    pred = out > 0
    t = y > 0.5
    tp = float((pred & t).sum())
    fp = float((pred & ~t).sum())
    fn = float((~pred & t).sum())
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def split_accuracy(out: Tensor, y: Tensor, masks: dict[str, Tensor]) -> dict[str, float]:
    """:func:`accuracy` of ``out`` on each split, ``{name: accuracy(out[mask], y[mask])}``."""
    return {name: accuracy(out[m], y[m]) for name, m in masks.items()}
