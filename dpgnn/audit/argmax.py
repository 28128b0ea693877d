"""Audit of one PrivGNN query: the noisy argmax of a teacher's posterior (PrivGNN Algorithm 1, line 7).

The PrivGNN accountant (:func:`dpgnn.privacy.pate.privgnn_event`) composes, per answered query, the Laplace
mechanism with scale ``1/λ`` and **L1 sensitivity 1** (before Poisson subsampling), i.e. a pure ``λ``-DP step.
The audit releases the pseudo-label ``argmax(p + Lap(1/λ)^c)`` (:func:`dpgnn.methods.privgnn.noisy_argmax`, the
project's implementation) for two posteriors a neighbouring private graph can produce at the same query node —
the teacher is retrained on a subsample that differs by one node, so in the worst case its posterior moves from
one vertex of the simplex to another (``e_0`` vs ``e_1``, L1 distance 2) — and tests "label = 0" with a
Clopper–Pearson bound. A bound above ``λ`` says the per-query step is not ``λ``-DP as accounted.

``noise_on="log_softmax"`` is the authors' code (noise on log-probabilities, whose range is unbounded): the label is
then deterministic for one-hot posteriors and the audit's bound is limited only by the number of trials.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy.special import gammaln

from dpgnn.audit.bounds import epsilon_lower_bound
from dpgnn.methods.privgnn import noisy_argmax
from dpgnn.privacy.guarantee import AS_PUBLISHED, statement
from dpgnn.privacy.privgnn import NEIGHBOURING, query_epsilon
from dpgnn.privacy.pure_composition import pair_epsilon
from dpgnn.utils import make_generator, stable_seed

__all__ = [
    "audit_noisy_argmax",
    "exact_label_probabilities",
    "exact_epsilon",
    "NOISE_ON",
    "query_statement",
    "worst_case_release_pairs",
    "worst_case_release_epsilon",
]

NOISE_ON = ("posterior", "log_softmax")


def query_statement(lam: float, num_classes: int, noise_on: str = "posterior") -> dict[str, Any]:
    """Guarantee fields of one PrivGNN query charged as the accountant's base event (ε = λ, Laplace with L1
    sensitivity 1): ``as_published``, the posterior's L1 sensitivity being 2 -- PrivGNN's statement
    (:func:`dpgnn.privacy.privgnn.statement_as_published`) for one query without subsampling, built here with
    :func:`dpgnn.privacy.guarantee.statement` because that builder's composed sound ε needs δ > 0; the sound ε of one
    query (δ = 0) is the per-query ε₀(C) of :func:`dpgnn.privacy.privgnn.query_epsilon`. With
    ``noise_on="log_softmax"`` (the authors' code) the sensitivity is unbounded and no finite ε holds
    (``epsilon_per_query_sound`` = ∞)."""
    if noise_on not in NOISE_ON:
        raise ValueError(f"noise_on must be one of {NOISE_ON}, got {noise_on!r}")
    eps0 = query_epsilon(lam, num_classes)
    issues = [
        f"the posterior's L1 sensitivity is 2, not 1: noisy argmax is eps0(C)-DP per query (eps0 = {eps0:.6g} "
        f"for C = {num_classes}), see dpgnn.privacy.privgnn"
    ]
    if noise_on == "log_softmax":
        eps0 = math.inf
        issues.append(
            "noise on log-softmax (authors' code): unbounded sensitivity, the accountant's epsilon does "
            "not apply (epsilon = inf)"
        )
    return statement(
        AS_PUBLISHED,
        f"{NEIGHBOURING} (one query, no subsampling)",
        accounted=f"1 Laplace(1/lambda={1 / lam:g}) query on the {noise_on}, L1 sensitivity 1 (paper "
        "Sec. 5.5 / Theorem 7, the base event of PrivGNN's accountant)",
        issues=issues,
        epsilon_per_query_sound=eps0,
        num_classes=num_classes,
    )


def exact_label_probabilities(lam: float, num_classes: int) -> tuple[float, float]:
    """``P(label 0 | posterior e_0)`` and ``P(label 0 | e_1)`` of ``argmax(p + Lap(1/λ)^c)`` by numerical
    integration (scipy): ``∫ f(n) F(1+n)^{c−1} dn`` and ``∫ f(n) F(n)^{c−2} F(n−1) dn`` (f, F: Laplace pdf/cdf)."""
    from scipy import integrate, stats

    lap = stats.laplace(scale=1.0 / float(lam))
    c = int(num_classes)
    a = integrate.quad(lambda n: lap.pdf(n) * lap.cdf(1.0 + n) ** (c - 1), -math.inf, math.inf, limit=200)[0]
    b = integrate.quad(lambda n: lap.pdf(n) * lap.cdf(n) ** (c - 2) * lap.cdf(n - 1.0), -math.inf, math.inf, limit=200)[
        0
    ]
    return a, b


def exact_epsilon(lam: float, num_classes: int) -> float:
    """The ε that the test "label = 0" (or its complement) proves for the pair (e_0, e_1), without sampling error."""
    a, b = exact_label_probabilities(lam, num_classes)
    return max(math.log(a / b), math.log((1.0 - b) / (1.0 - a)))


def worst_case_release_pairs(
    lam: float, num_classes: int, gamma: float, queries: int, subsampling: str = "per_query"
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Remove/add pairs (log-pmfs) of a whole PrivGNN release at its worst-case neighbouring graphs: the teacher's
    posterior is ``e_0`` when the subsample holds the extra node and ``e_1`` when it does not, at every query.

    Per query the label is 0, 1 or another class with probabilities ``(a, b, r)`` under ``e_0`` and ``(b, a, r)``
    under ``e_1`` (:func:`exact_label_probabilities`), so the counts ``(n_0, n_1)`` of the ``|Q|`` labels are a
    sufficient statistic (multinomial). ``subsampling="per_query"`` (PrivGNN): each query holds the node with
    probability γ on its own; ``"once"`` (SingleGNN): every query holds it, or none, with probability γ. The pair's
    exact ε(δ) is a lower bound on the release's true ε (one admissible pair of graphs)."""
    a, b = exact_label_probabilities(lam, num_classes)
    r = max(0.0, 1.0 - a - b)
    n = int(queries)
    n0, n1 = np.meshgrid(np.arange(n + 1.0), np.arange(n + 1.0), indexing="ij")
    keep = n0 + n1 <= n if r > 0 else n0 + n1 == n
    n0, n1 = n0[keep], n1[keep]
    coef = gammaln(n + 1.0) - gammaln(n0 + 1.0) - gammaln(n1 + 1.0) - gammaln(n - n0 - n1 + 1.0)
    rest = (n - n0 - n1) * (math.log(r) if r > 0 else 0.0)

    def log_pmf(p0: float, p1: float) -> np.ndarray:
        return coef + n0 * math.log(p0) + n1 * math.log(p1) + rest

    without = log_pmf(b, a)
    if subsampling == "once":
        with_node = (
            np.logaddexp(math.log(gamma) + log_pmf(a, b), math.log1p(-gamma) + without) if gamma < 1 else log_pmf(a, b)
        )
    elif subsampling == "per_query":
        with_node = log_pmf(gamma * a + (1 - gamma) * b, gamma * b + (1 - gamma) * a)
    else:
        raise ValueError(f"subsampling must be 'per_query' or 'once', got {subsampling!r}")
    return [(with_node, without), (without, with_node)]


def worst_case_release_epsilon(
    lam: float, num_classes: int, gamma: float, queries: int, delta: float, subsampling: str = "per_query"
) -> float:
    """Exact ε(δ) of :func:`worst_case_release_pairs`: a lower bound on a PrivGNN release's true ε."""
    return pair_epsilon(worst_case_release_pairs(lam, num_classes, gamma, queries, subsampling), delta)


def audit_noisy_argmax(
    lam: float, *, num_classes: int, trials: int, seed: int, noise_on: str = "posterior", alpha: float = 0.05
) -> dict[str, Any]:
    """``trials`` pseudo-labels from posterior ``e_0`` and from ``e_1``; the test "label = 0" is fixed in advance
    (no choice to pay for), so all trials measure it. Claimed per-query ε = λ (the accountant's base event)."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    gen = make_generator(stable_seed("argmax-audit", float(lam), num_classes, noise_on, seed))
    counts = []
    for hot in (0, 1):
        p = torch.zeros(trials, num_classes, dtype=torch.float64)
        p[:, hot] = 1.0
        counts.append(int((noisy_argmax(p, lam, gen, noise_on=noise_on) == 0).sum()))
    tp, fp = counts
    b = epsilon_lower_bound(tp, trials - tp, fp, trials - fp, alpha=alpha)
    return {
        "epsilon": float(lam),
        "epsilon_lb": b.epsilon_lb,
        "epsilon_point": b.epsilon_point,
        "tpr": b.tpr,
        "fpr": b.fpr,
        "trials": trials,
        "num_classes": num_classes,
        "noise_on": noise_on,
        "alpha": alpha,
        "violation": bool(b.epsilon_lb > lam),
        "epsilon_if_l1_sensitivity_2": 2.0 * float(lam),
        "delta": 0.0 if math.isfinite(lam) else 0.0,
    }
