"""Exact ε of subsampled pure-DP compositions (:mod:`dpgnn.privacy.pure_composition`) and the teacher–student
ledgers built on it, against independent computations: Kairouz–Oh–Viswanath's closed form, direct sums over the
outcomes of small pairs, and the worst-case pair of neighbouring graphs of a whole PrivGNN / SingleGNN release."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpgnn.audit.argmax import exact_label_probabilities, worst_case_release_epsilon
from dpgnn.methods.privgnn import privacy_ledger
from dpgnn.privacy.privgnn import query_epsilon, sound_epsilon
from dpgnn.privacy.pure_composition import (
    hockey_stick,
    once_epsilon,
    once_pure_epsilon,
    pair_epsilon,
    per_query_epsilon,
)


def _kov_delta(eps0: float, k: int, eps: float) -> float:
    """Kairouz, Oh & Viswanath 2015 (Thm. 3.3): the exact δ(ε) of k-fold composition of ε₀-DP, as a sum over the
    number of disagreeing outputs (no subsampling)."""
    total = 0.0
    for i in range(k + 1):
        loss = (k - 2 * i) * eps0
        if loss > eps:
            p_in = math.comb(k, i) * math.exp((k - i) * eps0) / (1 + math.exp(eps0)) ** k
            p_out = math.comb(k, i) * math.exp(i * eps0) / (1 + math.exp(eps0)) ** k
            total += p_in - math.exp(eps) * p_out
    return total


def _delta_direct(pa: np.ndarray, pb: np.ndarray, eps: float) -> float:
    return float(np.maximum(0.0, pa - math.exp(eps) * pb).sum())


def test_hockey_stick_is_the_direct_sum():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.dirichlet(np.ones(7)), rng.dirichlet(np.ones(7))
        for eps in (0.0, 0.3, 1.7):
            assert hockey_stick(np.log(a), np.log(b), eps) == pytest.approx(_delta_direct(a, b, eps), abs=1e-15)


@pytest.mark.parametrize("eps0,k,delta", [(0.5, 10, 1e-5), (0.1, 50, 1e-3), (1.3, 7, 1e-2)])
def test_unsampled_composition_is_kairouz_oh_viswanath(eps0, k, delta):
    eps = per_query_epsilon(eps0, 1.0, k, delta)
    assert _kov_delta(eps0, k, eps) <= delta * (1 + 1e-9)
    assert _kov_delta(eps0, k, eps * (1 - 1e-6)) > delta  # the smallest such ε: tight
    assert once_epsilon(eps0, 1.0, k, delta) == pytest.approx(eps, rel=1e-9)  # γ = 1: one subsample = every query


def test_per_query_pair_is_the_product_of_subsampled_randomised_response():
    """Brute force over all 2^n outputs of n Poisson-subsampled RR(ε₀) queries, both orderings."""
    eps0, g, n, delta = 0.9, 0.3, 6, 1e-3
    p = math.exp(eps0) / (1 + math.exp(eps0))
    a, b = g * p + (1 - g) * (1 - p), 1 - p  # P(output 1) with / without the record
    outs = list(itertools.product((0, 1), repeat=n))
    with_r = np.array([math.prod(a if o else 1 - a for o in out) for out in outs])
    without = np.array([math.prod(b if o else 1 - b for o in out) for out in outs])
    eps = per_query_epsilon(eps0, g, n, delta)
    worst = max(_delta_direct(with_r, without, eps), _delta_direct(without, with_r, eps))
    assert worst <= delta * (1 + 1e-9)
    assert (
        max(_delta_direct(with_r, without, eps * (1 - 1e-6)), _delta_direct(without, with_r, eps * (1 - 1e-6))) > delta
    )


def test_once_is_below_the_pure_bound_and_above_per_query():
    eps0, g, n = 0.2, 0.1, 40
    pure = once_pure_epsilon(eps0, g, n)
    assert pure == pytest.approx(math.log(1 + g * (math.exp(n * eps0) - 1)), rel=1e-12)
    for delta in (1e-2, 1e-5, 1e-9):
        assert per_query_epsilon(eps0, g, n, delta) <= once_epsilon(eps0, g, n, delta) <= pure


def _worst_delta(lam: float, c: int, g: float, n: int, eps: float, once: bool) -> float:
    """δ(ε) of a release at its worst-case neighbouring graphs (posterior e₀ with the node, e₁ without, at every
    query), summed directly over the label counts with probabilities from scipy's Laplace (independent of
    :mod:`dpgnn.privacy`)."""
    a, b = exact_label_probabilities(lam, c)
    r = 1 - a - b
    out = []
    for n0 in range(n + 1):
        for n1 in range(n + 1 - n0):
            coef = math.comb(n, n0) * math.comb(n - n0, n1) * r ** (n - n0 - n1)
            p_without = coef * b**n0 * a**n1
            if once:
                p_with = g * coef * a**n0 * b**n1 + (1 - g) * p_without
            else:
                p_with = coef * (g * a + (1 - g) * b) ** n0 * (g * b + (1 - g) * a) ** n1
            out.append((p_with, p_without))
    pw, po = np.array(out).T
    return max(_delta_direct(pw, po, eps), _delta_direct(po, pw, eps))


def test_singlegnn_ledger_covers_the_worst_case_release():
    """One teacher on one subsample answers every query: the worst case (its posterior e₀ with the node, e₁
    without, on all 123 queries) has δ(ε_sound) ≤ δ; amplifying each query on its own (ε_sound 7.97) gave δ ≈ 1."""
    led = privacy_ledger("singlegnn", lam=1.04, queries=123, gamma=0.113, delta=1e-4, num_classes=3)
    assert _worst_delta(1.04, 3, 0.113, 123, led["epsilon_sound"], once=True) <= 1e-4
    assert _worst_delta(1.04, 3, 0.113, 123, 7.97, once=True) > 0.1
    assert led["epsilon_sound"] >= worst_case_release_epsilon(1.04, 3, 0.113, 123, 1e-4, "once") > 80
    assert any("one subsample" in i for i in led["issues"])
    # PrivGNN and KNNRem draw a subsample per query: amplified per query, and still above their worst case
    for method in ("privgnn", "knnrem"):
        sound = privacy_ledger(method, lam=1.04, queries=123, gamma=0.113, delta=1e-4, num_classes=3)["epsilon_sound"]
        assert _worst_delta(1.04, 3, 0.113, 123, sound, once=False) <= 1e-4
        assert sound < led["epsilon_sound"]


@pytest.mark.parametrize("subsampling", ["per_query", "once"])
def test_two_classes_is_exact(subsampling):
    """Two-class noisy argmax at e₀ / e₁ is randomised response: the sound ε equals the worst case's."""
    lam, g, n, delta = 0.3, 0.2, 60, 1e-4
    ours = sound_epsilon(lam, n, g, delta, 2, subsampling=subsampling)
    assert ours == pytest.approx(worst_case_release_epsilon(lam, 2, g, n, delta, subsampling), rel=1e-6)


@pytest.mark.parametrize("c", [3, 10])
def test_sound_is_never_below_the_worst_case(c):
    for lam, g, n in [(0.1, 0.3, 200), (1.0, 0.3, 80)]:
        for how in ("per_query", "once"):
            assert sound_epsilon(lam, n, g, 1e-4, c, subsampling=how) >= worst_case_release_epsilon(
                lam, c, g, n, 1e-4, how
            )


def test_pair_epsilon_is_zero_when_delta_covers_everything_and_refuses_bad_input():
    assert pair_epsilon([(np.log([0.5, 0.5]), np.log([0.5, 0.5]))], 1e-6) == 0.0
    with pytest.raises(ValueError, match="eps0"):
        per_query_epsilon(0.0, 0.5, 10, 1e-5)
    with pytest.raises(ValueError, match="gamma"):
        once_epsilon(0.5, 1.5, 10, 1e-5)
    with pytest.raises(ValueError, match="at most 10,000,000"):
        per_query_epsilon(0.5, 0.5, 10**12, 1e-5)  # refused before any array is allocated
    with pytest.raises(ValueError, match="subsampling"):
        sound_epsilon(0.5, 10, 0.5, 1e-5, 3, subsampling="twice")
    assert query_epsilon(0.1, 2) < 0.1  # ε₀ < λ is possible: the bound is ε₀ ≤ 2λ, no lower bound λ
