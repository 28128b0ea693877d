"""Exact (ε, δ) of compositions of (subsampled) pure-DP mechanisms, through randomised-response dominating pairs.

**Why randomised response.** Every ε₀-DP mechanism ``M`` is dominated by randomised response ``RR(ε₀)``: for every
pair of neighbouring inputs and every ``α ≥ 1``, the hockey-stick divergence ``H_α(M(D) ‖ M(D'))`` is at most
``H_α(P ‖ Q)`` with ``P = (p, 1 − p)``, ``Q = (1 − p, p)``, ``p = e^ε₀ / (1 + e^ε₀)`` (Kairouz, Oh & Viswanath 2015,
Thm. 2.2: the privacy region of an ε₀-DP mechanism lies inside RR's), and the ``n``-fold adaptive composition of
ε₀-DP mechanisms is dominated by ``RR(ε₀)^n`` (their Thm. 3.3). The privacy loss of ``RR^n`` depends only on the
number ``k`` of outputs that agree with ``P``, so ``RR^n`` reduces to two binomials on ``k ∈ {0, …, n}``.

**Poisson subsampling** (add/remove one record, each record kept with probability ``γ``; Zhu, Dong & Wang 2022,
Thm. 11, or directly from ``H_α(γB + (1−γ)A ‖ A) = γ·H_{α'}(B ‖ A)``, ``α' = 1 + (α − 1)/γ``): if ``(P, Q)``
dominates the mechanism on the subsample, ``(γP + (1−γ)Q, Q)`` dominates the subsampled mechanism when the record is
removed and ``(Q, γP + (1−γ)Q)`` when it is added. ``δ(ε)`` is the larger of the two orderings (the relation is
symmetric). Two ways to subsample appear in the teacher–student schemes:

- :func:`per_query_epsilon` — *a fresh subsample per query* (PrivGNN, KNNRem): each query is dominated by the binary
  pair ``(γP + (1−γ)Q, Q)``, and ``n`` of them by the product, i.e. ``Bin(n, a)`` vs ``Bin(n, b)`` with
  ``a = γp + (1−γ)(1−p)``, ``b = 1 − p``.
- :func:`once_epsilon` — *one subsample for all queries* (SingleGNN): the whole ``n``-query release is one
  mechanism of the subsample, dominated by ``RR(ε₀)^n``; subsampling it once gives the pair
  ``(γ·Bin(n, p) + (1−γ)·Bin(n, 1−p), Bin(n, 1−p))``. Its pure-DP value is ``log(1 + γ(e^{nε₀} − 1))``.

Both pairs are evaluated exactly: ``δ(ε) = Σ_k max(0, A_k − e^ε B_k)`` in log space over the ``n + 1`` outcomes,
and ``ε(δ)`` is the smallest ε on a bisection grid of relative width 1e-10 with ``δ(ε) ≤ δ``, rounded up. Because the
pairs dominate, the values are sound for every ε₀-DP query mechanism; they are exact (tight) when the query mechanism
is randomised response itself (e.g. a two-class noisy argmax at its worst-case posteriors).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from dpgnn.privacy.validation import check_count, check_delta, check_sample_rate

__all__ = [
    "MAX_QUERIES",
    "hockey_stick",
    "pair_epsilon",
    "per_query_pairs",
    "once_pairs",
    "per_query_epsilon",
    "once_epsilon",
    "once_pure_epsilon",
]

#: relative width of the final bisection bracket (the returned ε is its upper end)
_RTOL = 1e-10
#: most queries composed exactly (the pairs hold queries + 1 outcomes: about 40 s and 0.6 GB at 10^7)
MAX_QUERIES = 10**7


def _check_queries(queries: int) -> int:
    n = check_count(queries, "queries")
    if n > MAX_QUERIES:
        raise ValueError(f"queries must be at most {MAX_QUERIES:,} for the exact composition, got {n:,}")
    return n


def _check_eps0(eps0: float) -> float:
    if (
        isinstance(eps0, bool)
        or not isinstance(eps0, (int, float, np.floating))
        or not math.isfinite(eps0)
        or eps0 <= 0
    ):
        raise ValueError(f"eps0 must be a finite number > 0, got {eps0!r}")
    return float(eps0)


def _log_binom_pmf(n: int, log_p: float, log_q: float) -> np.ndarray:
    """``log Bin(n, p)(k)`` for ``k = 0..n`` from ``log p`` and ``log(1 − p)`` (no cancellation)."""
    k = np.arange(n + 1, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0) + k * log_p + (n - k) * log_q


def hockey_stick(log_a: np.ndarray, log_b: np.ndarray, epsilon: float) -> float:
    """``δ(ε) = Σ_k max(0, A_k − e^ε B_k)`` of two distributions on the same finite support, given as log-pmfs."""
    log_a, log_b = np.asarray(log_a, dtype=float), np.asarray(log_b, dtype=float)
    loss = log_a - log_b
    hit = loss > epsilon
    if not hit.any():
        return 0.0
    # A_k (1 − e^{ε − L_k}) for the outcomes whose privacy loss L_k exceeds ε
    terms = log_a[hit] + np.log1p(-np.exp(epsilon - loss[hit]))
    return float(np.exp(logsumexp(terms)))


def pair_epsilon(pairs: list[tuple[np.ndarray, np.ndarray]], delta: float) -> float:
    """The smallest ``ε ≥ 0`` (rounded up to a relative 1e-10) with ``δ(ε) ≤ delta`` for every pair ``(A, B)`` of
    log-pmfs: ``max_k log(A_k / B_k)`` bounds it from above (δ = 0 there), bisection finds it."""
    d = check_delta(delta)

    def worst(eps: float) -> float:
        return max(hockey_stick(a, b, eps) for a, b in pairs)

    if worst(0.0) <= d:
        return 0.0
    hi = max(float(np.max(a - b)) for a, b in pairs)
    lo = 0.0
    while hi - lo > _RTOL * max(hi, 1e-12):
        mid = 0.5 * (lo + hi)
        if worst(mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi


def _rr_logs(eps0: float) -> tuple[float, float]:
    """``(log p, log(1 − p))`` of randomised response ``RR(ε₀)``, ``p = e^ε₀ / (1 + e^ε₀)``."""
    return -math.log1p(math.exp(-eps0)), -math.log1p(math.exp(eps0))


def per_query_pairs(eps0: float, gamma: float, queries: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Remove/add dominating pairs of ``queries`` ε₀-DP queries, each on its own Poisson(γ) subsample."""
    lp, lq = _rr_logs(_check_eps0(eps0))
    g = check_sample_rate(gamma, "gamma")
    n = _check_queries(queries)
    # a = γp + (1 − γ)(1 − p): probability that the subsampled query answers as P does
    log_a = np.logaddexp(math.log(g) + lp, math.log1p(-g) + lq) if g < 1.0 else lp
    log_1a = np.logaddexp(math.log(g) + lq, math.log1p(-g) + lp) if g < 1.0 else lq
    mix, base = _log_binom_pmf(n, float(log_a), float(log_1a)), _log_binom_pmf(n, lq, lp)
    return [(mix, base), (base, mix)]


def once_pairs(eps0: float, gamma: float, queries: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Remove/add dominating pairs of ``queries`` ε₀-DP queries answered from one Poisson(γ) subsample."""
    lp, lq = _rr_logs(_check_eps0(eps0))
    g = check_sample_rate(gamma, "gamma")
    n = _check_queries(queries)
    with_rec, without = _log_binom_pmf(n, lp, lq), _log_binom_pmf(n, lq, lp)
    mix = np.logaddexp(math.log(g) + with_rec, math.log1p(-g) + without) if g < 1.0 else with_rec
    return [(mix, without), (without, mix)]


def per_query_epsilon(eps0: float, gamma: float, queries: int, delta: float) -> float:
    """Exact ε(δ) of the dominating pair of ``queries`` ε₀-DP queries, each on a fresh Poisson(γ) subsample."""
    return pair_epsilon(per_query_pairs(eps0, gamma, queries), delta)


def once_epsilon(eps0: float, gamma: float, queries: int, delta: float) -> float:
    """Exact ε(δ) of the dominating pair of ``queries`` ε₀-DP queries answered from one Poisson(γ) subsample."""
    return pair_epsilon(once_pairs(eps0, gamma, queries), delta)


def once_pure_epsilon(eps0: float, gamma: float, queries: int) -> float:
    """Pure-DP ε of ``queries`` ε₀-DP queries from one Poisson(γ) subsample: ``log(1 + γ(e^{nε₀} − 1))``."""
    total = _check_eps0(eps0) * check_count(queries, "queries")
    g = check_sample_rate(gamma, "gamma")
    # log(1 + γ(e^t − 1)) = t + log(γ + (1 − γ) e^{−t}), stable for large t
    return total + math.log(g + (1.0 - g) * math.exp(-total))
