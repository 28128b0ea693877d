"""Exact privacy profile of the Gaussian mechanism (Balle & Wang, ICML 2018, "Improving the Gaussian mechanism").

For a Gaussian mechanism with L2 sensitivity ``Δ`` and noise standard deviation ``σ`` the tight (ε, δ) curve is
(Balle & Wang 2018, Theorem 8)::

    δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ)

It depends on ``σ/Δ`` only (the *noise multiplier* ``z``). A composition of K Gaussian mechanisms with noise
multipliers ``z_1..z_K`` is exactly one Gaussian mechanism with ``z = (Σ z_k^-2)^-1/2`` (the privacy-loss random
variables are Gaussian and add up), which is what autodp's ``ComposeGaussian`` + ``get_approxDP`` compute.

Everything here is pure float math (no state). Root finding always returns the *conservative* end of the final
bracket: ``epsilon_for_delta`` returns an ε whose δ(ε) ≤ the requested δ, ``sigma_for_epsilon`` a σ whose
δ(ε; σ) ≤ δ.
"""

from __future__ import annotations

import math

from scipy.special import log_ndtr

from dpgnn.privacy.validation import check_delta, check_epsilon, check_positive_finite

__all__ = ["gaussian_delta", "gaussian_epsilon", "analytic_gaussian_sigma", "classic_gaussian_sigma"]

_REL_TOL = 1e-12


def gaussian_delta(noise_multiplier: float, epsilon: float) -> float:
    """δ(ε) of the Gaussian mechanism with noise multiplier ``z = σ/Δ`` (Balle & Wang 2018, Thm 8).

    ``epsilon`` may be 0 (then δ is the total-variation distance ``2Φ(1/(2z)) − 1``).
    """
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon}")
    a = 1.0 / (2.0 * z) - eps * z
    b = -1.0 / (2.0 * z) - eps * z
    la = float(log_ndtr(a))
    lb = float(log_ndtr(b))
    # δ = Φ(a) − e^ε Φ(b) = Φ(a) · (1 − exp(ε + log Φ(b) − log Φ(a))), stable when both terms are tiny.
    diff = eps + lb - la
    if diff >= 0.0:  # can only happen through rounding when δ underflows
        return 0.0
    return math.exp(la) * -math.expm1(diff)


def gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Smallest ε (up to a relative 1e-12, rounded up) such that the Gaussian mechanism is (ε, δ)-DP.

    Bisection on the decreasing function ``ε ↦ δ(ε)``; the returned ε satisfies ``gaussian_delta(z, ε) ≤ δ``.
    """
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    d = check_delta(delta)
    if gaussian_delta(z, 0.0) <= d:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(z, hi) > d:
        lo, hi = hi, 2.0 * hi
        if hi > 1e8:  # pragma: no cover - would need z ~ 1e-8
            raise ArithmeticError(f"epsilon for noise_multiplier={z}, delta={d} exceeds 1e8")
    while hi - lo > _REL_TOL * max(hi, 1e-300):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gaussian_delta(z, mid) > d:
            lo = mid
        else:
            hi = mid
    assert gaussian_delta(z, hi) <= d
    return hi


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest σ (relative tolerance 1e-12, rounded up) making the Gaussian mechanism (ε, δ)-DP.

    Balle & Wang (2018) analytic calibration, by bisection on ``log σ`` (δ(ε; σ) is decreasing in σ).
    Valid for every ε > 0 (unlike the classic bound, which needs ε < 1).
    """
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    sens = check_positive_finite(sensitivity, "sensitivity")
    lo, hi = 1e-3, 1.0
    while gaussian_delta(hi, eps) > d:
        lo, hi = hi, hi * 2.0
    while gaussian_delta(lo, eps) <= d:
        hi, lo = lo, lo / 2.0
        if lo < 1e-300:  # pragma: no cover
            break
    while hi - lo > _REL_TOL * hi:
        mid = math.sqrt(lo * hi) if hi / lo > 1.5 else 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if gaussian_delta(mid, eps) > d:
            lo = mid
        else:
            hi = mid
    assert gaussian_delta(hi, eps) <= d
    return hi * sens


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """σ = Δ₂ √(2 ln(1.25/δ)) / ε (Dwork & Roth 2014, Thm A.1), proven only for ε < 1 (refused otherwise)."""
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    sens = check_positive_finite(sensitivity, "sensitivity")
    if eps >= 1.0:
        raise ValueError(
            f"epsilon must be < 1 for the classic Gaussian bound (Dwork & Roth Thm A.1), got {eps}; "
            "use the 'analytic_gaussian' mechanism for epsilon >= 1"
        )
    return sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps
