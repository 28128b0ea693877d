"""Rényi-DP curves of base and subsampled mechanisms, and the RDP → (ε, δ) conversion (pure math, no state).

All functions take an array of orders ``α > 1`` and return the RDP ``ε(α)`` at each (``inf`` where unbounded).
Noise parameters are multipliers of a sensitivity of 1.

Sources (formulas re-derived and implemented here; see ``tests/privacy`` for the independent cross-checks):

- Gaussian: ``α / (2 z²)`` (Mironov 2017, Prop. 7).
- Laplace with scale ``b``: ``1/(α−1) · log(α/(2α−1) e^{(α−1)/b} + (α−1)/(2α−1) e^{−α/b})`` (Mironov 2017,
  Prop. 6; ``α → ∞`` gives ``1/b``).
- Poisson-subsampled Gaussian, add/remove neighbouring: the exact RDP of Mironov, Talwar & Zhang (2019), for
  integer orders (finite binomial sum) and fractional orders (the two convergent series split at
  ``z₀ = σ² log(1/q − 1) + 1/2``; their signs alternate eventually, and the first omitted term of each series is
  *added* as a bound on the remainder, so the value is never below the truth).
- Poisson-subsampled Laplace, add/remove neighbouring: exact, both directions. ``D_α(mix ‖ P₀)`` at integer
  orders is the finite sum ``Σ_j C(α,j) (1−q)^{α−j} q^j E_{P₀}[(P₁/P₀)^j]`` with ``E[(P₁/P₀)^j] = e^{(j−1)ε_Lap(j)}``
  (the same expression as autodp's ``compose_poisson_subsampled_mechanisms``); fractional orders and the other
  direction ``D_α(P₀ ‖ mix)`` by adaptive quadrature of a bounded integrand on [0, 1] plus closed-form tails,
  with the quadrature error estimate added.
- Sampling without replacement, replace-one neighbouring: the general upper bound of Wang, Balle & Kasiviswanathan
  (AISTATS 2019, Theorem 9), for integer orders ≥ 2, also capped by the unsampled RDP and by the amplified pure-DP
  ε (if any). For the Gaussian, also their strengthened bound (arXiv:1808.00087, Theorem 27: the j ≥ 3 terms use
  forward differences of ``exp(K_Gauss)`` instead of ``2 e^{(j−1)ε(j)}``), as Google's ``dp_accounting`` computes it
  (its forward differences; integer orders ≤ 256), and the minimum of both bounds is taken. Theorem 9 alone was up
  to ~7× looser at high noise (z = 20, q = 0.01, T = 100: ε 0.226 vs 0.033), where the j = 3 term dominates.
- Orders that are not integers, for bounds defined on integers only: the cumulant generating function
  ``K(α) = (α−1) ε(α)`` is convex with ``K(1) = 0``, so its chord between the neighbouring integers is an upper
  bound (as in autodp).
- Conversion (ε, δ): ``ε = min_α  ε_RDP(α) + log((α−1)/α) − (log δ + log α)/(α−1)`` (Balle et al. 2020, Thm 21;
  Canonne, Kamath & Steinke 2020, Prop. 12) — always at most the classic ``ε_RDP(α) + log(1/δ)/(α−1)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.special import gammaln, gammasgn, log_ndtr, logsumexp

from dpgnn.privacy.validation import check_delta, check_positive_finite, check_sample_rate

__all__ = [
    "DEFAULT_ORDERS",
    "check_orders",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_poisson_gaussian",
    "rdp_poisson_laplace",
    "rdp_laplace_subsampled_directions",
    "rdp_sampled_without_replacement",
    "rdp_sampled_without_replacement_gaussian",
    "rdp_to_epsilon",
    "interpolate_integer_cgf",
]


def _default_orders() -> np.ndarray:
    near_one = 1.0 + np.arange(1, 100) / 100.0  # 1.01 … 1.99
    low = np.round(np.arange(2.0, 10.0, 0.1), 10)  # 2.0 … 9.9
    mid = np.arange(10.0, 32.0, 0.5)  # 10 … 31.5
    ints = np.arange(32, 65, dtype=float)  # 32 … 64
    geo = np.unique(np.round(np.geomspace(64, 1e5, 97)))  # 30 per decade (8% steps) up to 1e5
    orders = np.unique(np.concatenate([near_one, low, mid, ints, geo]))
    orders.setflags(write=False)
    return orders


#: Default RDP orders: a fine grid on (1, 2), dense fractional grids up to 32, every integer to 64 and a
#: geometric integer grid (8% steps) up to 1e5 (a narrow grid can be 2× loose at high noise or tiny sampling rates).
DEFAULT_ORDERS: np.ndarray = _default_orders()


def check_orders(orders: Sequence[float] | None) -> np.ndarray:
    """Validated, sorted, unique float array of finite orders > 1 (``None`` → :data:`DEFAULT_ORDERS`)."""
    if orders is None:
        return DEFAULT_ORDERS
    arr = np.asarray(orders, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError("orders must contain at least one order > 1")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 1.0):
        raise ValueError(f"orders must be finite numbers > 1, got min={arr.min()}, max={arr.max()}")
    out = np.unique(arr)
    out.setflags(write=False)
    return out


def _is_int(a: float) -> bool:
    return float(a).is_integer()


# ------------------------------------------------------------------------------------------------------------
# base mechanisms
# ------------------------------------------------------------------------------------------------------------
def rdp_gaussian(noise_multiplier: float, orders: Sequence[float]) -> np.ndarray:
    """RDP of the sensitivity-1 Gaussian mechanism with noise ``z``: ``α / (2 z²)``."""
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    a = np.asarray(orders, dtype=float)
    return a / (2.0 * z * z)


def _laplace_cgf(b: float, a: np.ndarray) -> np.ndarray:
    """``(α−1) ε_Lap(α) = log E_{P0}[(P1/P0)^α]`` for α ≥ 0 (α ≠ 1/2), vectorised; exact 0 at α ∈ {0, 1}."""
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (a - 1.0) / b + np.log(a / (2.0 * a - 1.0))
        t2 = -a / b + np.log((a - 1.0) / (2.0 * a - 1.0))
    # α = 0 and α = 1: one of the two weights is 0 and the other 1 → log 1 = 0
    out = np.logaddexp(np.where(a == 1.0, -np.inf, t2), np.where(a == 0.0, -np.inf, t1))
    out = np.where((a == 0.0) | (a == 1.0), 0.0, out)
    return out


def rdp_laplace(scale: float, orders: Sequence[float]) -> np.ndarray:
    """RDP of the sensitivity-1 (L1) Laplace mechanism with scale ``b`` (Mironov 2017); ``α = ∞`` gives ``1/b``."""
    b = check_positive_finite(scale, "scale")
    a = np.asarray(orders, dtype=float)
    out = np.empty_like(a)
    inf = np.isinf(a)
    one = a == 1.0
    reg = ~(inf | one)
    out[inf] = 1.0 / b
    out[one] = 1.0 / b + math.exp(-1.0 / b) - 1.0
    out[reg] = _laplace_cgf(b, a[reg]) / (a[reg] - 1.0)
    return out


# ------------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------------
def _log_binom_int(n: int, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


_LOG_FACT = np.zeros(1)


def _log_binom_row(n: int) -> np.ndarray:
    """log C(n, k) for k = 0..n from a cached table of log k!."""
    global _LOG_FACT
    if len(_LOG_FACT) <= n:
        _LOG_FACT = gammaln(np.arange(max(n + 1, 2 * len(_LOG_FACT)), dtype=float) + 1.0)
    lf = _LOG_FACT
    return lf[n] - lf[: n + 1] - lf[n::-1]


def _rounding_margin(n_terms: int) -> float:
    """Bound on the relative rounding error of a pairwise float64 sum of ``n_terms`` computed terms."""
    return (math.log2(max(n_terms, 2)) + 4.0) * np.finfo(float).eps


def interpolate_integer_cgf(orders: np.ndarray, cgf_at_int: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """RDP at ``orders`` from a CGF ``K(n) = (n−1)ε(n)`` known at integers ``n ≥ 2`` (chord bound, K(1) = 0)."""
    a = np.asarray(orders, dtype=float)
    lo = np.floor(a)
    hi = np.ceil(a)
    needed = np.unique(np.concatenate([lo[lo >= 2], hi]).astype(np.int64))
    vals = dict(zip(needed.tolist(), np.asarray(cgf_at_int(needed.astype(float)), dtype=float).tolist()))
    vals[1] = 0.0
    k_lo = np.array([vals[int(x)] for x in lo])
    k_hi = np.array([vals[int(x)] for x in hi])
    w = a - lo
    with np.errstate(invalid="ignore"):
        cgf = np.where(w == 0.0, k_lo, (1.0 - w) * k_lo + w * k_hi)
    return cgf / (a - 1.0)


# ------------------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019)
# ------------------------------------------------------------------------------------------------------------
def _log_a_gaussian_int(q: float, z: float, alpha: int) -> float:
    k = np.arange(alpha + 1, dtype=float)
    terms = _log_binom_row(alpha) + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2 * z * z)
    # positive terms: relative rounding error ≤ (log2(n) + 4)·eps; add it so the value is never below the truth
    return float(logsumexp(terms)) + _rounding_margin(len(terms))


def _log_a_gaussian_frac(q: float, z: float, alpha: float, chunk: int = 256, max_terms: int = 1 << 22) -> float:
    """log A_α for fractional α as the sum of two series; the first omitted terms bound the remainders."""
    s2 = z * z
    z0 = s2 * math.log(1.0 / q - 1.0) + 0.5
    lq, l1q = math.log(q), math.log1p(-q)
    lgam_a = gammaln(alpha + 1.0)
    logs, signs = [], []
    start = 0
    while True:
        i = np.arange(start, start + chunk, dtype=float)
        j = alpha - i
        log_coef = lgam_a - gammaln(i + 1.0) - gammaln(alpha - i + 1.0)
        sign = gammasgn(alpha - i + 1.0)
        # ∫_{z<z0} N(0,σ²) r^i = e^{(i²−i)/(2σ²)} Φ((z0 − i)/σ)
        l0 = log_coef + i * lq + j * l1q + (i * i - i) / (2 * s2) + log_ndtr((z0 - i) / z)
        # ∫_{z>z0} N(0,σ²) r^j = e^{(j²−j)/(2σ²)} Φ((j − z0)/σ)
        l1 = log_coef + j * lq + i * l1q + (j * j - j) / (2 * s2) + log_ndtr((j - z0) / z)
        logs.extend([l0, l1])
        signs.extend([sign, sign])
        start += chunk
        chunk = min(2 * chunk, 1 << 16)
        all_l = np.concatenate(logs)
        top = float(np.max(all_l))
        # Past α both series alternate in sign with decreasing terms, so the first omitted term bounds each
        # remainder (it is added below). Stop once that bound is negligible against A − 1 (the RDP scale) or
        # against A itself.
        if start > alpha + 2 and l0[-1] <= l0[-2] and l1[-1] <= l1[-2]:
            tail = math.exp(l0[-1] - top) + math.exp(l1[-1] - top)
            partial = float(np.sum(np.concatenate(signs) * np.exp(all_l - top)))
            if partial > 0:
                log_a = top + math.log(partial)
                log_excess = log_a if log_a > 30 else math.log(abs(math.expm1(log_a)) + 1e-300)
            else:
                log_excess = math.inf
            if tail < math.exp(-38.0) or (tail > 0 and math.log(tail) + top <= math.log(1e-9) + log_excess):
                break
        if start >= max_terms:
            break
    all_s = np.concatenate(signs)
    mags = np.exp(all_l - top)
    total = float(np.sum(all_s * mags))
    # floating-point error of the signed (pairwise) sum, added so that the value is never below the truth
    total += _rounding_margin(len(mags)) * float(np.sum(mags))
    # alternating-series remainder bound: add the magnitude of the first omitted term of each series
    i_next = float(start)
    j_next = alpha - i_next
    log_coef = lgam_a - gammaln(i_next + 1.0) - gammaln(alpha - i_next + 1.0)
    r0 = log_coef + i_next * lq + j_next * l1q + (i_next**2 - i_next) / (2 * s2) + log_ndtr((z0 - i_next) / z)
    r1 = log_coef + j_next * lq + i_next * l1q + (j_next**2 - j_next) / (2 * s2) + log_ndtr((j_next - z0) / z)
    total += math.exp(r0 - top) + math.exp(r1 - top)
    if start >= max_terms:  # pragma: no cover - did not converge: be conservative
        total += float(np.sum(np.exp(all_l[-2 * chunk :] - top)))
    if total <= 0:  # pragma: no cover - numerical breakdown
        return math.inf
    return top + math.log(total)


@functools.lru_cache(maxsize=4096)
def _rdp_poisson_gaussian_cached(q: float, z: float, orders: tuple[float, ...]) -> tuple[float, ...]:
    out = []
    for a in orders:
        if _is_int(a):
            log_a = _log_a_gaussian_int(q, z, int(a))
        else:
            log_a = _log_a_gaussian_frac(q, z, a)
        out.append(max(log_a, 0.0) / (a - 1.0))
    return tuple(out)


def rdp_poisson_gaussian(sample_rate: float, noise_multiplier: float, orders: Sequence[float]) -> np.ndarray:
    """Exact RDP of the Poisson-subsampled Gaussian mechanism (add/remove neighbouring), integer and fractional α."""
    q = check_sample_rate(sample_rate)
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    a = check_orders(orders)
    if q == 1.0:
        return rdp_gaussian(z, a)
    vals = np.array(_rdp_poisson_gaussian_cached(q, z, tuple(float(x) for x in a)))
    return _reorder(vals, a, orders)


def _reorder(vals_sorted: np.ndarray, sorted_orders: np.ndarray, orders: Sequence[float]) -> np.ndarray:
    """Map values computed on the sorted unique grid back to the caller's order sequence."""
    req = np.asarray(orders, dtype=float).ravel()
    idx = np.searchsorted(sorted_orders, req)
    return vals_sorted[idx]


# ------------------------------------------------------------------------------------------------------------
# Poisson-subsampled Laplace (exact, both directions, integer orders)
# ------------------------------------------------------------------------------------------------------------
def _logsumexp_finite(terms: np.ndarray) -> float:
    """``log Σ exp(terms)`` of finite terms (scipy's ``logsumexp`` without its per-call overhead: this runs at
    hundreds of orders per calculator call); the sum is numpy's pairwise one."""
    top = float(np.max(terms))
    return top + math.log(float(np.sum(np.exp(terms - top))))


@functools.lru_cache(maxsize=64)
def _laplace_mix_table(q: float, b: float, size: int) -> np.ndarray:
    """``j log(q / (1−q)) + (j−1) ε_Lap(j) − log j!`` for ``j = 0 … size−1``: the part of the binomial terms below
    that does not depend on α, computed once for every integer order of a grid."""
    _log_binom_row(size - 1)  # fills the log-factorial table up to size − 1
    j = np.arange(size, dtype=float)
    table = j * (math.log(q) - math.log1p(-q)) + _laplace_cgf(b, j) - _LOG_FACT[:size]
    table.setflags(write=False)
    return table


def _cgf_mix_over_p0_laplace(q: float, b: float, alpha: int) -> float:
    """log E_{P0}[((1−q) + q P1/P0)^α] for integer α (finite binomial sum): the terms
    ``log C(α, j) + j log q + (α−j) log(1−q) + (j−1) ε_Lap(j)``, j = 0 … α."""
    table = _laplace_mix_table(q, b, 1 << max(alpha, 1).bit_length())  # a power of two > α: few tables per grid
    _log_binom_row(alpha)  # fills the log-factorial table up to α
    lf = _LOG_FACT
    terms = (lf[alpha] + alpha * math.log1p(-q)) + table[: alpha + 1] - lf[alpha::-1]
    return _logsumexp_finite(terms) + _rounding_margin(len(terms))


def _cgf_laplace_mixture_quad(q: float, b: float, e: float) -> float:
    """log E_{P0}[((1−q) + q P1/P0)^e] for any real ``e``, P0 = Lap(0, b), P1 = Lap(1, b).

    ``P1/P0`` is ``e^{−1/b}`` on x ≤ 0, ``e^{1/b}`` on x ≥ 1 (closed-form tails of mass 1/2 and e^{−1/b}/2) and
    ``e^{(2x−1)/b}`` on [0, 1], integrated by adaptive quadrature (the error estimate is added, so the value
    is an upper bound up to floating-point rounding). ``e = α`` gives ``(α−1) D_α(mix ‖ P0)``,
    ``e = 1 − α`` gives ``(α−1) D_α(P0 ‖ mix)``.
    """
    log1p, expm1 = math.log1p, math.expm1  # scalar math: the integrand runs ~10^4 times per calculator call
    part_left = math.log(0.5) + e * log1p(q * expm1(-1.0 / b))
    part_right = math.log(0.5) - 1.0 / b + e * log1p(q * expm1(1.0 / b))

    def f(x: float) -> float:  # log(integrand · 2b); log((1−q) + q r(x)) = log1p(q expm1((2x−1)/b)) on [0, 1]
        return -x / b + e * log1p(q * expm1((2.0 * x - 1.0) / b))

    # e ≥ 0: f is convex (max at an end point); e < 0: f is decreasing (max at 0)
    f_top = max(f(0.0), f(1.0))
    from scipy import integrate  # on use: a slow import that pure Gaussian accounting never needs

    exp = math.exp
    val, err = integrate.quad(lambda x: exp(f(x) - f_top), 0.0, 1.0, epsabs=0.0, epsrel=1e-11, limit=500)
    part_mid = f_top - math.log(2.0 * b) + math.log(val + abs(err))
    return _logsumexp_finite(np.array([part_left, part_mid, part_right]))


@functools.lru_cache(maxsize=8192)
def _laplace_poisson_cgfs(q: float, b: float, alpha: float) -> tuple[float, float]:
    """((α−1) D_α(mix‖P0), (α−1) D_α(P0‖mix)); integer α use the exact finite sum for the first direction."""
    if _is_int(alpha):
        k1 = _cgf_mix_over_p0_laplace(q, b, int(alpha))
    else:
        k1 = _cgf_laplace_mixture_quad(q, b, alpha)
    k2 = _cgf_laplace_mixture_quad(q, b, 1.0 - alpha)
    return k1, k2


def rdp_laplace_subsampled_directions(sample_rate: float, scale: float, alpha: int) -> tuple[float, float]:
    """Both Rényi divergences of the Poisson-subsampled Laplace at an order α > 1.

    Returns ``(D_α(mix ‖ P0), D_α(P0 ‖ mix))`` with ``mix = (1−q) Lap(0,b) + q Lap(1,b)``, ``P0 = Lap(0,b)``.
    """
    q = check_sample_rate(sample_rate)
    b = check_positive_finite(scale, "scale")
    alpha = float(alpha)
    if not (math.isfinite(alpha) and alpha > 1):
        raise ValueError(f"alpha must be a finite order > 1, got {alpha}")
    if q == 1.0:
        v = float(rdp_laplace(b, [alpha])[0])
        return v, v
    k1, k2 = _laplace_poisson_cgfs(q, b, alpha)
    return k1 / (alpha - 1.0), k2 / (alpha - 1.0)


def rdp_poisson_laplace(sample_rate: float, scale: float, orders: Sequence[float]) -> np.ndarray:
    """Exact RDP of the Poisson-subsampled Laplace mechanism (add/remove neighbouring): the max of both
    directions at every order, capped by the amplified pure-DP ε = log(1 + q(e^{1/b} − 1))."""
    q = check_sample_rate(sample_rate)
    b = check_positive_finite(scale, "scale")
    a = check_orders(orders)
    if q == 1.0:
        return rdp_laplace(b, np.asarray(orders, dtype=float))

    vals = np.array([max(_laplace_poisson_cgfs(q, b, float(x))) / (x - 1.0) for x in a])
    eps_pure = math.log1p(q * math.expm1(1.0 / b))
    vals = np.minimum(vals, eps_pure)
    return _reorder(vals, a, orders)


# ------------------------------------------------------------------------------------------------------------
# sampling without replacement (Wang, Balle & Kasiviswanathan 2019, Theorem 9)
# ------------------------------------------------------------------------------------------------------------
def rdp_sampled_without_replacement(
    sample_rate: float,
    base_rdp: Callable[[np.ndarray], np.ndarray],
    orders: Sequence[float],
    eps_pure: float = math.inf,
) -> np.ndarray:
    """General RDP upper bound for subsampling without replacement (replace-one), WBK 2019 Theorem 9.

    ``base_rdp(alphas)`` is the base mechanism's RDP (vectorised, integer α ≥ 2); ``eps_pure`` its pure-DP ε
    (``ε(∞)``; ``inf`` for the Gaussian). For integer ``α ≥ 2``::

        K(α) ≤ log(1 + q² C(α,2) min{4(e^{ε(2)}−1), e^{ε(2)} min{2, (e^{ε(∞)}−1)²}}
                     + Σ_{j=3}^{α} q^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)}−1)^j})

    also capped by the unsampled ``ε(α)`` and by the amplified pure ε ``log(1 + q(e^{ε(∞)} − 1))``.
    """
    q = check_sample_rate(sample_rate)
    a = check_orders(orders)
    if q == 1.0:
        return np.asarray(base_rdp(np.asarray(orders, dtype=float)), dtype=float)
    lq = math.log(q)
    log_em1_inf = math.inf if math.isinf(eps_pure) else (math.log(math.expm1(eps_pure)) if eps_pure > 0 else -math.inf)
    eps2 = float(np.asarray(base_rdp(np.array([2.0])))[0])

    def cgf(ints: np.ndarray) -> np.ndarray:
        out = np.empty(len(ints))
        n_max = int(ints.max())
        jj = np.arange(3, n_max + 1, dtype=float)
        eps_j = np.asarray(base_rdp(jj), dtype=float) if len(jj) else np.zeros(0)
        # log of e^{(j−1)ε(j)} min{2, (e^{ε∞}−1)^j}
        common = (jj - 1.0) * eps_j + np.minimum(math.log(2.0), jj * log_em1_inf) + jj * lq
        two = 2 * lq + min(math.log(4.0) + math.log(math.expm1(eps2)), eps2 + min(math.log(2.0), 2.0 * log_em1_inf))
        for idx, n in enumerate(ints):
            n = int(n)
            terms = [0.0, float(_log_binom_int(n, np.array(2.0))) + two]
            if n >= 3:
                m = n - 2
                terms_j = _log_binom_row(n)[3:] + common[:m]
                k = float(logsumexp(np.concatenate([terms, terms_j])))
            else:
                k = float(logsumexp(terms))
            out[idx] = min(k, (n - 1.0) * float(np.asarray(base_rdp(np.array([float(n)])))[0]))
        return out

    vals = interpolate_integer_cgf(a, cgf)
    if math.isfinite(eps_pure):
        vals = np.minimum(vals, math.log1p(q * math.expm1(eps_pure)))
    return _reorder(vals, a, orders)


#: largest integer order at which the Gaussian-specific WBK Theorem 27 bound is evaluated (dp_accounting's limit;
#: above it both libraries fall back to the general bound)
WOR_GAUSSIAN_MAX_ORDER = 256


@functools.lru_cache(maxsize=512)
def _wor_gaussian_log_deltas(z: float) -> np.ndarray:
    """log |Δ^i exp(K)|(0), i = 0..258, with ``K(x) = x(x+1)/(2z²)`` (dp_accounting's forward differences)."""
    from dp_accounting.rdp import rdp_privacy_accountant as _dpa_rdp

    deltas, _ = _dpa_rdp._get_forward_diffs(lambda x: x * 1.0 * (x + 1) / (2.0 * z * z), WOR_GAUSSIAN_MAX_ORDER)
    out = np.asarray(deltas, dtype=float)
    out.setflags(write=False)
    return out


def _wor_gaussian_theorem27_cgf(q: float, z: float, alpha: int) -> float:
    """``K(α) = (α−1) ε(α)`` of the Gaussian (sensitivity 1, replace-one) sampled without replacement at rate
    ``q``: WBK Theorem 27, integer ``2 ≤ α ≤ 256``, term by term as ``dp_accounting`` 0.6.0
    (``_compute_rdp_sample_wor_gaussian_int``)::

        log(1 + q² C(α,2) min{4(e^{ε(2)}−1), 2e^{ε(2)}}
              + Σ_{j=3}^{α} q^j C(α,j) min{4 √(|Δ^{2⌊j/2⌋}| |Δ^{2⌈j/2⌉}|), 2 e^{(j−1)ε(j)}})

    where ``Δ^k`` is the k-th forward difference at 0 of ``exp((x(x+1))/(2z²))``.
    """
    deltas = _wor_gaussian_log_deltas(z)
    e2 = 2.0 / (2.0 * z * z)
    lq = math.log(q)
    two = (
        2 * lq
        + float(_log_binom_int(alpha, np.array(2.0)))
        + min(math.log(4.0) + e2 + math.log(-math.expm1(-e2)), e2 + math.log(2.0))
    )
    if alpha == 2:
        return float(np.logaddexp(0.0, two))
    j = np.arange(3, alpha + 1)
    lo = deltas[(2 * np.floor(j / 2.0)).astype(int) - 1]
    hi = deltas[(2 * np.ceil(j / 2.0)).astype(int) - 1]
    cgf_jm1 = (j - 1.0) * j / (2.0 * z * z)
    terms = np.minimum(math.log(4.0) + 0.5 * (lo + hi), math.log(2.0) + cgf_jm1) + j * lq + _log_binom_row(alpha)[3:]
    return float(logsumexp(np.concatenate([[0.0, two], terms])))


def rdp_sampled_without_replacement_gaussian(
    sample_rate: float, noise_multiplier: float, orders: Sequence[float]
) -> np.ndarray:
    """RDP of the sensitivity-1 Gaussian sampled without replacement (replace-one): the smaller of WBK Theorem 9
    (:func:`rdp_sampled_without_replacement`, every order) and WBK Theorem 27 (integer orders ≤ 256; fractional
    orders by the CGF chord between neighbouring integers), both valid upper bounds."""
    q = check_sample_rate(sample_rate)
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    a = check_orders(orders)
    general = rdp_sampled_without_replacement(q, lambda x: rdp_gaussian(z, x), a)
    if q == 1.0:
        return _reorder(np.asarray(general, dtype=float), a, orders)
    small = a <= WOR_GAUSSIAN_MAX_ORDER
    if np.any(small):

        def cgf(ints: np.ndarray) -> np.ndarray:
            return np.array(
                [min(_wor_gaussian_theorem27_cgf(q, z, int(n)), (n - 1.0) * n / (2.0 * z * z)) for n in ints]
            )

        strengthened = interpolate_integer_cgf(a[small], cgf)
        general = general.copy()
        general[small] = np.minimum(general[small], strengthened)
    return _reorder(general, a, orders)


# ------------------------------------------------------------------------------------------------------------
# conversion
# ------------------------------------------------------------------------------------------------------------
def rdp_to_epsilon(orders: Sequence[float], rdp: Sequence[float], delta: float) -> tuple[float, float]:
    """(ε, optimal order) from an RDP curve, tight conversion ``ε(α) + log((α−1)/α) − (log δ + log α)/(α−1)``.

    The result is clipped at 0. Orders with infinite or NaN RDP are ignored; if none is finite, ``(inf, nan)``.
    """
    d = check_delta(delta)
    a = np.asarray(orders, dtype=float).ravel()
    r = np.asarray(rdp, dtype=float).ravel()
    if a.shape != r.shape:
        raise ValueError(f"orders and rdp must have the same length, got {a.shape} and {r.shape}")
    if np.any(a <= 1.0):
        raise ValueError("orders must be > 1")
    if np.any(r < 0):
        raise ValueError("rdp values must be >= 0")
    with np.errstate(invalid="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(d) + np.log(a)) / (a - 1.0)
    eps = np.where(np.isfinite(eps), eps, np.inf)
    if not np.any(np.isfinite(eps)):
        return math.inf, math.nan
    i = int(np.argmin(eps))
    return max(float(eps[i]), 0.0), float(a[i])
