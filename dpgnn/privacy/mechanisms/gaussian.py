"""Central Gaussian mechanisms: the classic and the analytic calibration."""

from __future__ import annotations

import math
from typing import Any

import torch

from dpgnn.privacy.analytic import analytic_gaussian_sigma, classic_gaussian_sigma
from dpgnn.privacy.mechanisms.base import (
    Mechanism,
    _normal,
)
from dpgnn.privacy.validation import check_delta, check_epsilon, check_positive_finite, check_range


class GaussianMechanism(Mechanism):
    """Gaussian mechanism with the classic calibration (Dwork & Roth 2014, Theorem A.1).

    ``y = x + N(0, σ²)`` per entry with ``σ = Δ₂ √(2 ln(1.25/δ)) / ε``.

    - Neighbouring relation: any two inputs ``x, x'`` with ``‖x − x'‖₂ ≤ sensitivity`` (the caller states what
      a neighbouring dataset changes: an edge, a node, one example).
    - Sensitivity: ``sensitivity`` = Δ₂, the L2 sensitivity (required).
    - Guarantee: (ε, δ)-DP; the classic bound is proven for ε < 1 only, so ε ≥ 1 is refused (use
      ``analytic_gaussian``).
    - Variance: σ² per entry. ``perturb`` returns the noisy value; ``estimate`` is the identity.

    ``low``/``high`` are optional here (default: unbounded). When given, inputs outside are refused like for
    the local mechanisms; they do not enter σ (the L2 sensitivity is explicit).
    """

    name = "gaussian"
    neighbouring = "inputs at L2 distance <= sensitivity (as stated by the caller)"

    def __init__(
        self,
        epsilon: float,
        low: float | None = None,
        high: float | None = None,
        *,
        delta: float = None,
        sensitivity: float = None,
        clip: bool = False,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if delta is None:
            raise TypeError(f"{self.name} requires delta, a float in (0, 1)")
        if sensitivity is None:
            raise TypeError(f"{self.name} requires sensitivity, the L2 sensitivity (a finite float > 0)")
        self.delta = check_delta(delta)
        self.l2_sensitivity = check_positive_finite(sensitivity, "sensitivity")
        if low is None and high is None:
            self.low, self.high = -math.inf, math.inf
        else:
            if low is None or high is None:
                raise TypeError("pass both low and high (or neither) to a Gaussian mechanism")
            self.low, self.high = check_range(low, high)
        if not isinstance(clip, bool):
            raise TypeError(f"clip must be a bool, got {clip!r}")
        self.clip = clip
        self.sigma = self._calibrate()

    def _calibrate(self) -> float:
        return classic_gaussian_sigma(self.epsilon, self.delta, self.l2_sensitivity)

    @property
    def sensitivity(self) -> float:
        """Δ₂, the L2 sensitivity the caller stated (σ is calibrated to it, not to ``[low, high]``)."""
        return self.l2_sensitivity

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ₂."""
        return self.sigma / self.l2_sensitivity

    @property
    def guarantee(self) -> str:
        """``"(<ε>, <δ>)-DP"`` (central DP, for the neighbouring relation the sensitivity states)."""
        return f"({self.epsilon:g}, {self.delta:g})-DP"

    def ledger(self) -> dict[str, Any]:
        """:meth:`Mechanism.ledger` plus ``sigma``, the calibrated noise standard deviation."""
        out = super().ledger()
        out["sigma"] = self.sigma
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"sensitivity={self.l2_sensitivity:g}, sigma={self.sigma:.6g})"
        )

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        return x + self.sigma * _normal(x.shape, gen, x.device, x.dtype)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full_like(x, self.sigma**2)


class AnalyticGaussianMechanism(GaussianMechanism):
    """Gaussian mechanism with the analytic calibration of Balle & Wang (ICML 2018, Theorem 8 / Algorithm 1).

    σ is the smallest value (bisection to a relative 1e-12, rounded up) such that
    ``Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ``; valid for every ε > 0.

    - Neighbouring relation: any two inputs at L2 distance ≤ ``sensitivity``.
    - Sensitivity: ``sensitivity`` = Δ₂ (required).
    - Guarantee: (ε, δ)-DP (tight for the Gaussian mechanism).
    - Variance: σ² per entry.
    """

    name = "analytic_gaussian"

    def _calibrate(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.l2_sensitivity)
