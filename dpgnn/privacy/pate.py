"""Accounting of teacher–student label release: PrivGNN (Olatunji et al., TMLR 2023) and PATE (Papernot et al. 2017).

Both schemes answer ``|Q|`` label queries about public nodes with a Laplace-noised argmax computed from private
data; only the labels (and the student trained on them) are released, so the student inherits the labels' (ε, δ).

PrivGNN (paper Sec. 3.1.4, Thm. 7, App. B; docs/papers/privgnn.md#privacy-accounting)
    Each query trains a teacher on a Poisson(γ) subsample of the private nodes and releases
    ``argmax(posterior + Lap(0, 1/λ)^c)``. The posterior is a probability vector, so its L1 sensitivity is 1 and
    one query is the Laplace mechanism with scale ``b = 1/λ`` (pure λ-DP) on a Poisson subsample; |Q| queries
    compose adaptively. Neighbouring: add/remove one private node (with its edges).
    :func:`privgnn_event` builds that event; :func:`privgnn_epsilon` converts it with the authors' accountant
    (autodp ``anaRDPacct``, classic conversion optimised over the order; ``accountant="autodp_rdp_acct"``) or any
    accountant of :mod:`dpgnn.privacy.accountant`. :func:`theorem7_epsilon` is the paper's closed form (loose, and
    derived with RDP at order 2 but converted at order 3 -- shown only beside the accountant);
    :func:`order2_epsilon` is the same order-2 bound converted at its own order (a valid bound).
    :func:`implied_delta` inverts ε(δ) for a given ε: it finds the δ at which a reported ε is reproduced.

PATE (Papernot et al. 2017, "Semi-supervised knowledge transfer ...", Sec. 3 and App. B;
docs/papers/privgnn.md#baselines)
    ``n`` teachers trained on disjoint partitions vote; Laplace(0, 1/λ) noise is added to each vote count and the
    noisy argmax is released. One query is (2λ)-DP under replace-one neighbouring (one record changes one teacher's
    vote, two counts by 1). The moments accountant bounds the log moment generating function of the privacy loss
    at orders ``l = 1..moments``: data-independently by ``min(2λ²l(l+1), 2λl)`` (:func:`pate_logmgf_independent`),
    data-dependently through the probability ``q`` that the noisy argmax differs from the plurality
    (:func:`pate_noisy_max_q`, :func:`pate_logmgf`). ε(δ) = min_l (Σ_queries logmgf + log(1/δ)) / l
    (:func:`pate_epsilon`). Beside the data-independent bound, ``epsilon_data_independent_rr`` uses the exact
    worst-case log-moment of a (2λ)-DP answer, randomised response (:func:`pate_logmgf_rr`), and ``epsilon_sound``
    the exact ε(δ) of |Q| composed (2λ)-DP answers (Kairouz, Oh & Viswanath 2015): sound and the tightest; the
    tables keep the paper's. The data-dependent value itself depends on the private votes (it is not a DP release
    unless smoothed, as Papernot et al. note); PrivGNN's Table 2 reports it for PATE-M/PATE-G.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.events import Event, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpgnn.privacy.pure_composition import per_query_epsilon
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite, check_sample_rate

__all__ = [
    "PRIVGNN_ACCOUNTANT",
    "check_lam",
    "privgnn_event",
    "privgnn_epsilon",
    "theorem7_epsilon",
    "order2_epsilon",
    "implied_delta",
    "pate_noisy_max_q",
    "pate_logmgf",
    "pate_logmgf_independent",
    "pate_logmgf_rr",
    "PateEpsilon",
    "pate_epsilon",
    "vote_counts",
]

#: The PrivGNN authors' accountant (docs/papers/privgnn.md#privacy-accounting): autodp's anaRDPacct with the classic RDP
#: -> (ε, δ) conversion.
PRIVGNN_ACCOUNTANT = "autodp_rdp_acct"


def check_lam(lam: Any, name: str = "lam") -> float:
    """λ = 1/β, the inverse Laplace scale: a finite number > 0 (λ ≤ 0 would mean no or negative noise scale)."""
    return check_positive_finite(lam, name)


# ------------------------------------------------------------------------------------------------------------
# PrivGNN
# ------------------------------------------------------------------------------------------------------------
def privgnn_event(lam: float, queries: int, gamma: float) -> Event:
    """|Q| adaptive compositions of the Laplace mechanism (scale 1/λ, L1 sensitivity 1) on a Poisson(γ) subsample."""
    lam = check_lam(lam)
    n = check_count(queries, "queries")
    g = check_sample_rate(gamma, "gamma")
    base: Event = LaplaceEvent(1.0 / lam)
    if g < 1.0:
        base = PoissonSampledEvent(g, base)
    return SelfComposedEvent(base, n) if n > 1 else base


@lru_cache(maxsize=4096)
def _privgnn_epsilon(lam: float, queries: int, gamma: float, delta: float, accountant: str) -> float:
    return float(get_accountant(accountant).compose(privgnn_event(lam, queries, gamma)).get_epsilon(delta))


def privgnn_epsilon(
    lam: float, queries: int, gamma: float, delta: float, accountant: str = PRIVGNN_ACCOUNTANT
) -> float:
    """ε of a PrivGNN release (|Q| answered queries) at ``delta``; default = the authors' accountant.

    ``accountant="rdp"`` gives our exact Poisson-subsampled Laplace RDP with the tight conversion (never larger).
    Results are cached (the computation is deterministic in its arguments).
    """
    lam = check_lam(lam)
    n = check_count(queries, "queries")
    g = check_sample_rate(gamma, "gamma")
    d = check_delta(delta)
    return _privgnn_epsilon(lam, n, g, d, str(accountant))


def _laplace_rdp2(lam: float) -> float:
    """RDP of the sensitivity-1 Laplace mechanism with scale 1/λ at order 2: log(⅔e^λ + ⅓e^{−2λ})."""
    return math.log(2.0 / 3.0 * math.exp(lam) + 1.0 / 3.0 * math.exp(-2.0 * lam))


def _subsampled_rdp2(lam: float, gamma: float) -> float:
    """Poisson-subsampled order-2 RDP bound of App. B eq. (4): log(1 − γ² + γ² e^{ε_Lap(2)})."""
    return math.log1p(gamma * gamma * math.expm1(_laplace_rdp2(lam)))


def theorem7_epsilon(lam: float, queries: int, gamma: float, delta: float) -> float:
    """The paper's Theorem 7 closed form: log(1/√δ) + |Q| log(1 + γ²(⅔e^λ + ⅓e^{−2λ} − 1)).

    Shown only for comparison. The proof takes the RDP of order 2 but converts it with the order-3 term
    log(1/δ)/(3−1) (its eq. (6) pairs ε(α−1) with log(1/δ)/(α−1)), so it is not a valid instance of Lemma 5;
    :func:`order2_epsilon` is the same bound converted at order 2.
    """
    lam, n, g, d = (
        check_lam(lam),
        check_count(queries, "queries"),
        check_sample_rate(gamma, "gamma"),
        check_delta(delta),
    )
    return 0.5 * math.log(1.0 / d) + n * _subsampled_rdp2(lam, g)


def order2_epsilon(lam: float, queries: int, gamma: float, delta: float) -> float:
    """A valid closed-form bound: the order-2 RDP of Theorem 7's proof with its own conversion, log(1/δ) + |Q|·ε(2)."""
    lam, n, g, d = (
        check_lam(lam),
        check_count(queries, "queries"),
        check_sample_rate(gamma, "gamma"),
        check_delta(delta),
    )
    return math.log(1.0 / d) + n * _subsampled_rdp2(lam, g)


def implied_delta(
    target_epsilon: float,
    lam: float,
    queries: int,
    gamma: float,
    *,
    accountant: str = PRIVGNN_ACCOUNTANT,
    rel_tol: float = 1e-4,
    bracket: tuple[float, float] = (1e-12, 0.5),
) -> float:
    """The δ at which ``privgnn_epsilon(lam, queries, gamma, δ, accountant)`` equals ``target_epsilon``.

    ε(δ) is non-increasing in δ; bisection on log δ inside ``bracket``. Raises ``ValueError`` when the target is not
    attained inside the bracket.
    """
    target = check_positive_finite(target_epsilon, "target_epsilon")
    lo, hi = math.log(bracket[0]), math.log(bracket[1])

    def eps(logd: float) -> float:
        return privgnn_epsilon(lam, queries, gamma, math.exp(logd), accountant)

    e_lo, e_hi = eps(lo), eps(hi)
    if not (e_hi <= target <= e_lo):
        raise ValueError(f"target_epsilon={target} is outside [{e_hi:.4g}, {e_lo:.4g}], the ε range for δ in {bracket}")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if eps(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < rel_tol:
            break
    return math.exp(0.5 * (lo + hi))


# ------------------------------------------------------------------------------------------------------------
# PATE moments accountant (Papernot et al. 2017)
# ------------------------------------------------------------------------------------------------------------
def vote_counts(teacher_preds: np.ndarray, num_classes: int | None = None) -> np.ndarray:
    """Vote counts per query from teacher predictions of shape ``[n_teachers, n_queries]`` (class ids >= 0)."""
    p = np.asarray(teacher_preds)
    if p.ndim != 2:
        raise ValueError(f"teacher_preds must have shape [n_teachers, n_queries], got {p.shape}")
    if p.size and (p.min() < 0 or not np.issubdtype(p.dtype, np.integer)):
        raise ValueError("teacher_preds must hold non-negative integer class ids")
    c = int(p.max()) + 1 if num_classes is None else int(num_classes)
    if p.size and p.max() >= c:
        raise ValueError(f"num_classes={c} is smaller than the largest class id + 1 ({int(p.max()) + 1})")
    out = np.zeros((p.shape[1], c), dtype=np.int64)
    for j in range(p.shape[0]):
        np.add.at(out, (np.arange(p.shape[1]), p[j]), 1)
    return out


def pate_noisy_max_q(counts: Sequence[float], lam: float) -> float:
    """Upper bound on Pr[noisy argmax ≠ plurality class] with Laplace(1/λ) noise on each count.

    Papernot et al. 2017, Prop. 7: q ≤ Σ_{j ≠ j*} (2 + λ(n_{j*} − n_j)) / (4 exp(λ(n_{j*} − n_j))), capped at
    1 − 1/c (c = number of classes).
    """
    lam = check_lam(lam)
    n = np.asarray(counts, dtype=float)
    if n.ndim != 1 or n.size < 2:
        raise ValueError(f"counts must be a 1-d vector over >= 2 classes, got shape {n.shape}")
    win = int(np.argmax(n))
    gaps = lam * (n[win] - np.delete(n, win))
    q = float(np.sum((2.0 + gaps) / (4.0 * np.exp(gaps))))
    return min(q, 1.0 - 1.0 / n.size)


def pate_logmgf_independent(lam: float, order: int) -> float:
    """Data-independent bound on the log-moment of one (2λ)-DP noisy-max answer: min(2λ²l(l+1), 2λl)."""
    lam = check_lam(lam)
    eps = 2.0 * lam
    return min(0.5 * eps * eps * order * (order + 1), eps * order)


def pate_logmgf_rr(lam: float, order: int) -> float:
    """Exact worst-case log-moment of one (2λ)-DP answer: that of binary randomised response with ε = 2λ.

    Every ε-DP pair of output distributions is a post-processing of randomised response RR_ε (Kairouz, Oh &
    Viswanath 2015, Thm. 2.4 / the proof of their composition theorem), so by the data-processing inequality the
    log-moment ``log E[(P/Q)^l]`` of any ε-DP mechanism is at most RR_ε's, and RR_ε attains it:
    ``log((e^{ε(l+1)} + e^{−εl}) / (1 + e^ε))``. Always ≤ :func:`pate_logmgf_independent` (the moments
    accountant's ``min(ε²l(l+1)/2, εl)``), up to ~1.5× smaller at the orders PATE uses.
    """
    lam = check_lam(lam)
    eps = 2.0 * lam
    m = int(order)
    if m < 1:
        raise ValueError(f"order must be an integer >= 1, got {order!r}")
    return float(np.logaddexp(eps * (m + 1), -eps * m) - np.logaddexp(0.0, eps))


def pate_logmgf(q: float, lam: float, order: int) -> float:
    """Data-dependent log-moment bound of one answer (Papernot et al. 2017, Thm. 3 with ε = 2λ), ≤ the independent one.

    For q < (e^{2λ} − 1)/(e^{4λ} − 1) (the theorem's condition; we use q < 1/2 together with the finiteness of the
    expression, as the reference implementation) the bound is
    log((1−q)((1−q)/(1−e^{2λ}q))^l + q e^{2λl}); otherwise the data-independent bound.
    """
    lam = check_lam(lam)
    eps = 2.0 * lam
    indep = pate_logmgf_independent(lam, order)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must lie in [0, 1], got {q}")
    if q < 0.5:
        denom = 1.0 - math.exp(eps) * q
        if denom > 0:
            t = (1.0 - q) * ((1.0 - q) / denom) ** order + q * math.exp(eps * order)
            if t > 0 and math.isfinite(t):
                return min(indep, math.log(t))
    return indep


@dataclass(frozen=True)
class PateEpsilon:
    """ε of a PATE release: data-dependent (``None`` without votes) and data-independent, with their best orders."""

    epsilon: float
    epsilon_data_independent: float
    order: int
    order_data_independent: int
    delta: float
    queries: int
    lam: float
    data_dependent: bool
    #: data-independent ε from the exact randomised-response log-moments (:func:`pate_logmgf_rr`), same orders and
    #: conversion: a sound, tighter value beside the paper's (which the tables reproduce)
    epsilon_data_independent_rr: float | None = None
    #: the tightest sound value: exact ε(δ) of |Q| composed (2λ)-DP answers (Kairouz–Oh–Viswanath,
    #: :func:`dpgnn.privacy.pure_composition.per_query_epsilon` without subsampling)
    epsilon_sound: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, in a new plain dict (for result ledgers)."""
        return dict(self.__dict__)


def pate_epsilon(
    lam: float, queries: int, delta: float, counts: np.ndarray | None = None, moments: int = 8
) -> PateEpsilon:
    """Moments-accountant ε of |Q| PATE answers with Laplace(1/λ) vote noise, at ``delta``.

    ``counts`` (shape ``[queries, classes]``, the teachers' vote counts per answered query) gives the data-dependent
    value; without it (or always, in ``epsilon_data_independent``) the data-independent bound
    min_l (|Q|·min(2λ²l(l+1), 2λl) + log(1/δ)) / l over l = 1..``moments``.
    """
    lam = check_lam(lam)
    n = check_count(queries, "queries")
    d = check_delta(delta)
    m = check_count(moments, "moments")
    orders = np.arange(1, m + 1)
    indep = np.array([n * pate_logmgf_independent(lam, int(o)) for o in orders])
    eps_ind = (indep + math.log(1.0 / d)) / orders
    i_ind = int(np.argmin(eps_ind))
    eps_rr = float(np.min((np.array([n * pate_logmgf_rr(lam, int(o)) for o in orders]) + math.log(1.0 / d)) / orders))
    sound = min(per_query_epsilon(2.0 * lam, 1.0, n, d), eps_rr, float(eps_ind[i_ind]))
    if counts is None:
        return PateEpsilon(
            float(eps_ind[i_ind]),
            float(eps_ind[i_ind]),
            int(orders[i_ind]),
            int(orders[i_ind]),
            d,
            n,
            lam,
            False,
            eps_rr,
            sound,
        )
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2 or c.shape[0] != n:
        raise ValueError(f"counts must have shape [queries={n}, classes], got {c.shape}")
    if (c < 0).any():
        raise ValueError("counts must be non-negative vote counts")
    qs = [pate_noisy_max_q(row, lam) for row in c]
    dep = np.array([sum(pate_logmgf(q, lam, int(o)) for q in qs) for o in orders])
    eps_dep = (dep + math.log(1.0 / d)) / orders
    i_dep = int(np.argmin(eps_dep))
    return PateEpsilon(
        float(eps_dep[i_dep]),
        float(eps_ind[i_ind]),
        int(orders[i_dep]),
        int(orders[i_ind]),
        d,
        n,
        lam,
        True,
        eps_rr,
        sound,
    )
