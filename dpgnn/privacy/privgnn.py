"""PrivGNN's privacy statements: the paper's accounting and the guarantee the algorithm as run has.

**As published** (Olatunji et al., TMLR 2023, Sec. 5.5, Theorem 7; :func:`dpgnn.privacy.pate.privgnn_epsilon`):
each of the ``|Q|`` answered queries is charged as the Laplace mechanism of scale ``1/λ`` with L1 sensitivity 1 on
the teacher's posterior, on a Poisson(γ) subsample of the private nodes. Two posteriors (points of the probability
simplex) differ by up to **2** in L1 (``e1`` vs ``e2``), so that charge is not a bound for the pseudo-label
``argmax(p + Lap(1/λ)^C)`` the algorithm releases.

**Sound** (this module): one query is a pure-DP mechanism whose ε₀ we derive for ``C`` classes below; the
release is accounted by the exact (ε, δ) of its randomised-response dominating pair
(:mod:`dpgnn.privacy.pure_composition`), which follows how the variant samples and answers:

- ``subsampling="per_query"`` (PrivGNN, KNNRem): each query's teacher sees its own Poisson(γ) subsample, so each
  query is amplified on its own and the ``|Q|`` amplified queries compose;
- ``subsampling="once"`` (SingleGNN): one teacher on one Poisson(γ) subsample answers every query, so the
  ``|Q|``-fold composition is amplified once (pure DP: ``log(1 + γ(e^{|Q|ε₀} − 1))``); amplifying each query as if it
  had its own subsample would under-report ε by up to an order of magnitude.

The value is exact for the dominating pair and never below the truth for any ε₀-DP query; it is exact for the
mechanism when ``C = 2`` (two-class noisy argmax at its worst-case posteriors is randomised response). For ``C > 2``
the worst-case posteriors ``e₁`` / ``e₂`` on every query give a lower bound on the truth
(:func:`dpgnn.audit.argmax.worst_case_pair_epsilon`), below the sound value by the difference between ``C``-class
noisy argmax and randomised response.

Per-query ε₀ of ``M(p) = argmax_j (p_j + Z_j)``, ``Z_j`` i.i.d. Laplace(b = 1/λ), ``p ∈ Δ_C`` (the teacher's
posterior; a neighbouring private graph may change it to any ``p' ∈ Δ_C``):

1. *Sensitivity-2 bound*: releasing ``p + Z`` is the Laplace mechanism with L1 sensitivity ``sup ‖p − p'‖₁ = 2``,
   so it is ``2λ``-DP; the argmax is post-processing. ``ε₀ ≤ 2λ`` for every ``C``.
2. *Exact bound*: ``ε₀(C) = log P_j(e_j) − log P_j(e_k)`` (``k ≠ j``), with ``P_j(p) = Pr[M(p) = j]``.
   Proof. ``ε₀ = max_j sup_{p,p'} log P_j(p)/P_j(p') = max_j log (max_p P_j(p) / min_p P_j(p))``.
   (a) ``P_j`` increases with ``p_j`` and decreases with every ``p_i`` (``i ≠ j``), so moving mass to ``j`` never
   lowers it: ``max_p P_j = P_j(e_j)``. (b) ``P_j(p) = ∫ f(z) Π_{i≠j} F(z + p_j − p_i) dz`` with ``f``, ``F`` the
   Laplace density and CDF, both log-concave; the integrand is jointly log-concave in ``(z, p)`` (sums of concave
   functions of affine maps), so by Prékopa's theorem ``P_j`` is log-concave in ``p``; a log-concave function
   attains its minimum over the simplex at a vertex, and ``P_j(e_j) ≥ P_j(e_k)`` for every ``k``, so
   ``min_p P_j = P_j(e_k)``, the same for every ``k ≠ j`` by symmetry. ∎
   Both probabilities are one-dimensional integrals (:func:`noisy_argmax_distribution`), computed by adaptive
   quadrature on the pieces between the kinks; the reported value adds the quadrature's error estimates in the
   conservative direction. E.g. 10 classes, λ = 1: 1.1374; 5 classes, λ = 0.4: 0.4665 (the issue's sampled
   0.467); 2 classes, λ = 1: 0.965 (< λ), 2 classes, λ = 0.1: 0.0999 (< λ). ``ε₀ ≤ 2λ`` always, and ``ε₀ < λ`` is
   possible; it is not monotone in ``C``, so without ``C`` only ``2λ`` is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from dpgnn.privacy.guarantee import AS_PUBLISHED, SOUND, statement
from dpgnn.privacy.pate import PRIVGNN_ACCOUNTANT, check_lam
from dpgnn.privacy.pure_composition import once_epsilon, per_query_epsilon
from dpgnn.privacy.validation import check_count, check_delta, check_sample_rate

__all__ = [
    "NEIGHBOURING",
    "SOUND_ACCOUNTANT",
    "SUBSAMPLING",
    "check_num_classes",
    "check_subsampling",
    "noisy_argmax_distribution",
    "query_epsilon_exact",
    "query_epsilon",
    "sound_epsilon",
    "statement_as_published",
    "statement_sound",
]

NEIGHBOURING = "add/remove one private node"
#: how the sound ε is computed from ε₀ (the text of a sound statement and of ``dpgnn epsilon privgnn``)
SOUND_ACCOUNTANT = "exact epsilon(delta) of the randomised-response dominating pair (Kairouz-Oh-Viswanath)"


def check_num_classes(num_classes: Any, name: str = "num_classes") -> int:
    """Number of classes ``C``: an integer ≥ 2."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) or int(num_classes) < 2:
        raise ValueError(f"{name} must be an integer >= 2, got {num_classes!r}")
    return int(num_classes)


def _laplace_pdf(z: float, b: float) -> float:
    return math.exp(-abs(z) / b) / (2.0 * b)


def _laplace_cdf(z: float, b: float) -> float:
    return 0.5 * math.exp(z / b) if z < 0 else 1.0 - 0.5 * math.exp(-z / b)


def _prob_of(j: int, p: np.ndarray, b: float) -> tuple[float, float]:
    """``(P_j(p), error estimate)``: ``∫ f(z) Π_{i≠j} F(z + p_j − p_i) dz`` split at the kinks."""
    from scipy import integrate

    shifts = np.delete(p[j] - p, j)

    def integrand(z: float) -> float:
        out = _laplace_pdf(z, b)
        for s in shifts:
            out *= _laplace_cdf(z + s, b)
        return out

    kinks = sorted({0.0, *(-float(s) for s in shifts)})
    edges = [-math.inf, *kinks, math.inf]
    val = err = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        v, e = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)
        val += v
        err += e
    return val, err


def noisy_argmax_distribution(p: Sequence[float], lam: float) -> np.ndarray:
    """Exact output distribution of ``argmax(p + Lap(1/λ)^C)`` for one vector ``p`` (numerical integration)."""
    lam = check_lam(lam)
    v = np.asarray(p, dtype=float).ravel()
    if v.size < 2 or not np.isfinite(v).all():
        raise ValueError(f"p must be a finite vector of >= 2 entries, got {p!r}")
    return np.array([_prob_of(j, v, 1.0 / lam)[0] for j in range(v.size)])


@lru_cache(maxsize=1024)
def _exact(lam: float, c: int) -> float:
    b = 1.0 / lam
    top, e_top = _prob_of(0, np.eye(c)[0], b)
    bot, e_bot = _prob_of(0, np.eye(c)[1], b)
    # conservative: numerator rounded up, denominator down (plus a relative 1e-12 for the arithmetic)
    return math.log((top + e_top) / (bot - e_bot)) + 1e-12 * max(1.0, lam)


def query_epsilon_exact(lam: float, num_classes: int) -> float:
    """ε₀ of one noisy-argmax query for ``C`` classes (the exact worst case, module docstring item 2)."""
    return _exact(check_lam(lam), check_num_classes(num_classes))


def query_epsilon(lam: float, num_classes: int | None = None) -> float:
    """The per-query pure-DP ε₀ used for the sound accounting: ``min(2λ, exact(C))``, ``2λ`` without ``C``."""
    lam = check_lam(lam)
    if num_classes is None:
        return 2.0 * lam
    return min(2.0 * lam, query_epsilon_exact(lam, num_classes))


#: how a PrivGNN variant subsamples the private nodes: a fresh subsample per query, or one for all queries
SUBSAMPLING = ("per_query", "once")


def check_subsampling(value: Any) -> str:
    """``value`` if it is one of :data:`SUBSAMPLING`, else ``ValueError``."""
    if value not in SUBSAMPLING:
        raise ValueError(f"subsampling must be one of {list(SUBSAMPLING)}, got {value!r}")
    return str(value)


def sound_epsilon(
    lam: float,
    queries: int,
    gamma: float,
    delta: float,
    num_classes: int | None = None,
    *,
    subsampling: str = "per_query",
) -> float:
    """ε of a PrivGNN release as run: ``|Q|`` noisy-argmax queries of pure-DP ε₀ each (:func:`query_epsilon`) on
    Poisson(γ) subsamples, ``subsampling="per_query"`` (PrivGNN, KNNRem) or ``"once"`` (SingleGNN); the exact ε(δ)
    of the randomised-response dominating pair (:mod:`dpgnn.privacy.pure_composition`)."""
    lam = check_lam(lam)
    n = check_count(queries, "queries")
    g = check_sample_rate(gamma, "gamma")
    d = check_delta(delta)
    how = check_subsampling(subsampling)
    eps0 = query_epsilon(lam, None if num_classes is None else check_num_classes(num_classes))
    return per_query_epsilon(eps0, g, n, d) if how == "per_query" else once_epsilon(eps0, g, n, d)


def _sound_text(queries: int, gamma: float, subsampling: str) -> str:
    if subsampling == "once":
        return f"{queries} noisy-argmax queries answered by one teacher on one Poisson({gamma:g}) subsample"
    return f"{queries} noisy-argmax queries, each on its own Poisson({gamma:g}) subsample"


def statement_as_published(
    lam: float,
    queries: int,
    gamma: float,
    delta: float,
    num_classes: int | None = None,
    *,
    accountant: str = PRIVGNN_ACCOUNTANT,
    delta_sound: float | None = None,
    not_covered: Sequence[str] = (),
    subsampling: str = "per_query",
) -> dict[str, Any]:
    """Guarantee fields of a PrivGNN row reported with the paper's ε, with the sound ε beside it (at
    ``delta_sound``, default ``delta``: the δ the paper states, where its tables need a larger one to reproduce).

    PrivGNN selects nothing on private labels (teachers are any function of their private subgraph, which the
    per-query ε covers; the student trains on public nodes and noisy pseudo-labels), so ``not_covered`` is empty
    unless the caller names a step (e.g. Credit's feature standardisation over all nodes). ``subsampling="once"``
    (SingleGNN) adds the issue that the paper's per-query amplification does not hold for one shared subsample.
    """
    how = check_subsampling(subsampling)
    issues = [
        "the posterior's L1 sensitivity is 2, not 1: noisy argmax is eps0(C)-DP per query, see dpgnn.privacy.privgnn"
    ]
    if how == "once":
        issues.append(
            "one teacher on one subsample answers every query: the queries are amplified by "
            "subsampling once, not each on its own"
        )
    d_sound = delta if delta_sound is None else delta_sound
    return statement(
        AS_PUBLISHED,
        NEIGHBOURING,
        not_covered=not_covered,
        accounted=f"{queries} Poisson({gamma:g})-subsampled Laplace(1/lambda={1 / lam:g}) queries, L1 sensitivity 1 "
        f"(paper Sec. 5.5 / Theorem 7; accountant {accountant})",
        issues=issues,
        epsilon_sound=sound_epsilon(lam, queries, gamma, d_sound, num_classes, subsampling=how),
        delta_sound=d_sound,
        epsilon_per_query_sound=query_epsilon(lam, num_classes),
        num_classes=num_classes,
    )


def statement_sound(
    lam: float,
    queries: int,
    gamma: float,
    delta: float,
    num_classes: int | None = None,
    *,
    subsampling: str = "per_query",
) -> dict[str, Any]:
    """Guarantee fields of a PrivGNN row whose ``epsilon`` is :func:`sound_epsilon`."""
    eps0 = query_epsilon(lam, num_classes)
    return statement(
        SOUND,
        NEIGHBOURING,
        accounted=f"{_sound_text(queries, gamma, check_subsampling(subsampling))}, pure eps0 = {eps0:.6g} each "
        f"({'exact for C = ' + str(num_classes) if num_classes else 'sensitivity-2 bound 2*lambda'}); "
        f"{SOUND_ACCOUNTANT}",
        epsilon_per_query_sound=eps0,
        num_classes=num_classes,
    )
