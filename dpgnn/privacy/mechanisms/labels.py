"""Label randomised response (LPGNN)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import torch

from dpgnn.privacy.mechanisms.base import (
    ArrayLike,
    GeneratorLike,
    Mechanism,
    _randint,
    _resolve_generator,
    _uniform,
)
from dpgnn.privacy.validation import check_epsilon


class RandomizedResponse(Mechanism):
    """Generalised randomised response on labels (LPGNN paper; docs/papers/lpgnn.md#label-randomised-response),
    ``c = num_classes``.

    Keeps the true label with probability ``e^ε/(e^ε + c − 1)``, otherwise outputs one of the other ``c − 1``
    labels uniformly at random. :meth:`transition_matrix` gives ``P[i, j] = P(out = j | in = i)``.

    - Neighbouring relation: LDP — any two labels of one node.
    - Sensitivity: the ratio ``P(out|y)/P(out|y')`` is at most ``e^ε`` for every output.
    - Guarantee: ε-LDP per label.
    - ``perturb`` and ``m(x)`` return the noisy labels (``estimate`` is the identity: no unbiased *label*
      exists; use the transition matrix for forward correction).
    - ``variance(labels)`` returns the per-class indicator variance of the one-hot report,
      ``P(out=k|y)(1 − P(out=k|y))``, with shape ``labels.shape + (c,)``.

    ``low``/``high`` are accepted for a uniform factory signature and ignored: the domain is ``{0, …, c−1}``
    (``m.low = 0``, ``m.high = c − 1``). Labels must be an integer tensor/array.
    """

    name = "rr"
    neighbouring = "LDP: any two labels of one node"

    def __init__(
        self, epsilon: float, low: float = 0.0, high: float = 1.0, *, num_classes: int = None, clip: bool = False
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if num_classes is None:
            raise TypeError("rr requires num_classes (an integer >= 2)")
        if isinstance(num_classes, bool) or not isinstance(num_classes, (numbers.Integral, np.integer)):
            raise TypeError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if int(num_classes) < 2:
            raise ValueError(f"num_classes must be an integer >= 2, got {num_classes}")
        if clip:
            raise ValueError("clip=True is not supported for labels: labels outside [0, num_classes) are an error")
        self.clip = False
        self.num_classes = int(num_classes)
        self.low, self.high = 0.0, float(self.num_classes - 1)
        self.delta = 0.0

    @property
    def keep_probability(self) -> float:
        """e^ε/(e^ε + c − 1)."""
        return 1.0 / (1.0 + (self.num_classes - 1) * math.exp(-self.epsilon))

    @property
    def sensitivity(self) -> float:
        """1.0: a node changes one label (the ``e^ε`` ratio bound is the guarantee, not a calibration input)."""
        return 1.0

    @property
    def guarantee(self) -> str:
        """``"<ε>-LDP per label"``."""
        return f"{self.epsilon:g}-LDP per label"

    def ledger(self) -> dict[str, Any]:
        """:meth:`Mechanism.ledger` plus ``num_classes``."""
        out = super().ledger()
        out["num_classes"] = self.num_classes
        return out

    def __repr__(self) -> str:
        return f"RandomizedResponse(epsilon={self.epsilon:g}, num_classes={self.num_classes})"

    def transition_matrix(self) -> torch.Tensor:
        """``c × c`` float64 matrix ``P[i, j] = P(out = j | in = i)`` (rows sum to 1)."""
        c = self.num_classes
        p = self.keep_probability
        mat = torch.full((c, c), (1.0 - p) / (c - 1), dtype=torch.float64)
        mat.fill_diagonal_(p)
        return mat

    def _labels(self, y: Any, arg: str) -> tuple[torch.Tensor, bool]:
        was_numpy = isinstance(y, np.ndarray)
        if was_numpy:
            t = torch.from_numpy(np.ascontiguousarray(y))
        elif isinstance(y, torch.Tensor):
            t = y
        else:
            raise TypeError(f"{arg} must be a torch.Tensor or a numpy array of integer labels, got {type(y).__name__}")
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            raise TypeError(f"{arg} must hold integer labels in [0, {self.num_classes}), got dtype {t.dtype}")
        if t.numel() and bool(((t < 0) | (t >= self.num_classes)).any()):
            raise ValueError(
                f"{arg} has labels outside [0, num_classes) = [0, {self.num_classes}) "
                f"(min={int(t.min())}, max={int(t.max())})"
            )
        return t.long(), was_numpy

    @staticmethod
    def _back(t: torch.Tensor, was_numpy: bool) -> ArrayLike:
        return t.cpu().numpy() if was_numpy else t

    def perturb(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        """Node side: each integer label of ``x`` kept w.p. :attr:`keep_probability`, else one of the other
        ``c − 1`` labels uniformly; int64 labels of the same shape (numpy in, numpy out)."""
        y, was_numpy = self._labels(x, "x")
        gen = _resolve_generator(generator, y.device)
        return self._back(self._perturb(y, gen), was_numpy)

    def __call__(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        """The noisy labels, :meth:`perturb` (no unbiased label estimate exists)."""
        return self.perturb(x, generator)

    def estimate(self, sent: ArrayLike) -> ArrayLike:
        """The reported labels themselves (checked, as int64); correct with :meth:`transition_matrix` instead."""
        y, was_numpy = self._labels(sent, "sent")
        return self._back(y, was_numpy)

    def variance(self, x: ArrayLike) -> ArrayLike:
        """Per-class variance ``P(out=k|y)(1 − P(out=k|y))`` of the one-hot report of each label of ``x``: float64,
        shape ``x.shape + (c,)``."""
        y, was_numpy = self._labels(x, "x")
        probs = self.transition_matrix().to(y.device)[y]
        return self._back(probs * (1.0 - probs), was_numpy)

    def _perturb(self, y: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        keep = _uniform(y.shape, gen, y.device, torch.float64) < self.keep_probability
        shift = _randint(1, self.num_classes, y.shape, gen, y.device)
        return torch.where(keep, y, (y + shift) % self.num_classes)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - variance() is overridden
        raise NotImplementedError
