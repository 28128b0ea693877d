"""Local (per-feature ε-LDP) mechanisms of the LPGCN paper, appendix A: Laplace, piecewise, PGC."""

from __future__ import annotations

import math

import torch

from dpgnn.privacy.mechanisms.base import (
    ArrayLike,
    Mechanism,
    _exponential,
    _uniform,
)


class LaplaceMechanism(Mechanism):
    """Laplace mechanism (LM), LPGCN paper appendix A.1, eqs. (9)–(10).

    ``y* = x + Lap(Δ/ε)`` independently per entry, no clipping of the output.

    - Neighbouring relation: LDP — any two values ``x, x'`` in ``[low, high]`` of one node's feature.
    - Sensitivity: ``Δ = high − low`` (L1, per entry).
    - Guarantee: ε-LDP per feature entry (a node with ``d`` features spends ``d·ε``).
    - Variance (eq. 10): ``2 (Δ/ε)²``, independent of ``x``.
    - ``perturb`` returns the noisy value, ``estimate`` is the identity.
    """

    name = "laplace"

    @property
    def scale(self) -> float:
        """Laplace scale b = Δ/ε."""
        return self.span / self.epsilon

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        # Lap(b) = b (E1 − E2) with E1, E2 ~ Exp(1) independent: exact, never infinite.
        e1 = _exponential(x.shape, gen, x.device, x.dtype)
        e2 = _exponential(x.shape, gen, x.device, x.dtype)
        return x + self.scale * (e1 - e2)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full_like(x, 2.0 * self.scale**2)


class PiecewiseMechanism(Mechanism):
    """Piecewise mechanism (PM) of Wang et al. (ICDE 2019), LPGCN paper appendix A.3, eqs. (21)–(27).

    ``t = 2(x−α)/Δ − 1 ∈ [−1, 1]``; ``C = (e^{ε/2}+1)/(e^{ε/2}−1)``; ``ℓ(t) = (C+1)/2·t − (C−1)/2``,
    ``r(t) = ℓ(t) + C − 1``; ``t*`` has density ``p = (e^ε − e^{ε/2})/(2e^{ε/2}+2)`` on ``[ℓ, r]`` and ``p/e^ε``
    on ``[−C, ℓ) ∪ (r, C]`` (eq. 22); the report is ``y* = Δ(t*+1)/2 + α`` (eq. 26), unbiased for ``x``.
    Sampling is exact: the piece is drawn by its probability mass (left ``(ℓ+C)p/e^ε``, centre ``(C−1)p``,
    right ``(C−r)p/e^ε``) and the value uniformly inside it.

    - Neighbouring relation: LDP — any two values in ``[low, high]`` of one node's feature.
    - Sensitivity: the density ratio between any two inputs is at most ``e^ε`` (domain ``Δ = high − low``).
    - Guarantee: ε-LDP per feature entry.
    - Variance (eq. 27): ``(x − (α+β)/2)²/(e^{ε/2}−1) + Δ²/4 · (e^{ε/2}+3)/(3(e^{ε/2}−1)²)``.
    - ``perturb`` returns ``y*`` (the noisy value, in ``[α + Δ(1−C)/2, α + Δ(1+C)/2]``), ``estimate`` is the identity.
    """

    name = "piecewise"

    @property
    def C(self) -> float:
        """Half-width of the output domain of t*: (e^{ε/2}+1)/(e^{ε/2}−1) = coth(ε/4)."""
        return 1.0 / math.tanh(self.epsilon / 4.0)

    @property
    def p(self) -> float:
        """High density level of t* (eq. 22): (e^ε − e^{ε/2})/(2e^{ε/2}+2) = e^{ε/2}/(2C)."""
        return math.exp(self.epsilon / 2.0) / (2.0 * self.C) if self.epsilon < 1400 else math.inf

    def _t(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * (x - self.low) / self.span - 1.0

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        C = self.C
        t = self._t(x)
        left = (C + 1.0) / 2.0 * t - (C - 1.0) / 2.0
        right = left + C - 1.0
        low_density = math.exp(-self.epsilon / 2.0) / (2.0 * C)  # p / e^ε
        mass_left = (left + C) * low_density
        mass_right = (C - right) * low_density
        u_piece = _uniform(x.shape, gen, x.device, x.dtype)
        u_inside = _uniform(x.shape, gen, x.device, x.dtype)
        in_left = u_piece < mass_left
        in_right = u_piece >= 1.0 - mass_right
        start = torch.where(in_left, torch.full_like(t, -C), torch.where(in_right, right, left))
        stop = torch.where(in_left, left, torch.where(in_right, torch.full_like(t, C), right))
        t_star = start + u_inside * (stop - start)
        return self.span * (t_star + 1.0) / 2.0 + self.low

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        em1 = math.expm1(self.epsilon / 2.0)
        t = self._t(x)
        var_t = t**2 / em1 + (em1 + 4.0) / (3.0 * em1**2)
        return self.span**2 / 4.0 * var_t

    def pdf(self, y: ArrayLike, x: float) -> torch.Tensor:
        """Density of the report ``y*`` at ``y`` given the input ``x`` (for audits of the LDP ratio)."""
        x_t = self._check_domain(torch.as_tensor([float(x)], dtype=torch.float64), "x")
        y_t = torch.as_tensor(y, dtype=torch.float64)
        C = self.C
        t = float(self._t(x_t))
        left = (C + 1.0) / 2.0 * t - (C - 1.0) / 2.0
        right = left + C - 1.0
        t_star = 2.0 * (y_t - self.low) / self.span - 1.0
        jac = 2.0 / self.span
        high = math.exp(self.epsilon / 2.0) / (2.0 * C)
        low = math.exp(-self.epsilon / 2.0) / (2.0 * C)
        dens = torch.where(
            (t_star >= left) & (t_star <= right),
            torch.tensor(high, dtype=torch.float64),
            torch.tensor(low, dtype=torch.float64),
        )
        dens = torch.where((t_star < -C) | (t_star > C), torch.zeros_like(dens), dens)
        return dens * jac


class PGCMechanism(Mechanism):
    """1-bit mechanism of PGC, LPGCN paper eqs. (3), (5), (7) (a rescaled Duchi et al. mechanism; alias ``duchi``).

    Node side (eq. 3): ``y ∈ {0,1}`` with ``P(y=1) = 1/(e^ε+1) + (x−α)/Δ · (e^ε−1)/(e^ε+1)``.
    Server side (eq. 5): ``y* = ((e^ε+1)·y − 1)/(e^ε−1) · Δ + α``, an unbiased estimate of ``x``.

    - Neighbouring relation: LDP — any two values in ``[low, high]`` of one node's feature.
    - Sensitivity: ``P(y|x)`` ranges over ``[1/(e^ε+1), e^ε/(e^ε+1)]`` for ``x ∈ [α, β]`` (domain ``Δ = β − α``).
    - Guarantee: ε-LDP per feature entry (Theorem 1 of the paper; ratio of output probabilities ≤ e^ε).
    - Variance (eq. 7): ``Δ² e^ε/(e^ε−1)² + (x−α)(β−x)``.
    - ``perturb`` returns the bits (same float dtype as ``x``); ``estimate`` de-biases bits (eq. 5).
    """

    name = "pgc"

    def prob_one(self, x: ArrayLike) -> ArrayLike:
        """Exact ``P(y = 1 | x)`` of eq. (3), per entry."""
        t, was_numpy, out_dtype = self._to_tensor(x, "x")
        t = self._check_domain(t, "x")
        return self._from_tensor(self._prob_one(t), was_numpy, out_dtype)

    def _prob_one(self, x: torch.Tensor) -> torch.Tensor:
        th = math.tanh(self.epsilon / 2.0)  # (e^ε−1)/(e^ε+1)
        return (1.0 - th) / 2.0 + (x - self.low) / self.span * th

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        u = _uniform(x.shape, gen, x.device, x.dtype)
        return (u < self._prob_one(x)).to(x.dtype)

    def _estimate(self, sent: torch.Tensor) -> torch.Tensor:
        if bool(((sent != 0) & (sent != 1)).any()):
            raise ValueError("sent must hold the PGC bits y in {0, 1}")
        coth = 1.0 / math.tanh(self.epsilon / 2.0)  # (e^ε+1)/(e^ε−1)
        inv = 1.0 / math.expm1(self.epsilon)  # 1/(e^ε−1)
        return (sent * coth - inv) * self.span + self.low

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        base = self.span**2 / (4.0 * math.sinh(self.epsilon / 2.0) ** 2)  # Δ² e^ε/(e^ε−1)²
        return base + (x - self.low) * (self.high - x)
