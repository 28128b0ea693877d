"""The private-selection accountant against the exact output distribution of "best of K runs".

On a finite ordered output space a run ``Q`` is a pair of distributions ``p`` (with the record) and ``p'`` (without);
releasing the best of ``K`` runs has ``P[A ≤ y] = E[F(y)^K] = pgf(F(y))`` with ``F`` the CDF of ``Q``, so its output
distribution, and every divergence of it, is computed exactly here, independently of the bounds under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import logsumexp

from dpgnn.privacy.rdp import rdp_to_epsilon
from dpgnn.privacy.selection import (
    PoissonTrials,
    TruncatedNegativeBinomial,
    private_search,
    pure_selection_epsilon,
    selection_epsilon,
    selection_rdp,
)

ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0])
DISTS = [
    TruncatedNegativeBinomial(1.0, 0.1),
    TruncatedNegativeBinomial(0.0, 0.05),
    TruncatedNegativeBinomial(-0.5, 0.02),
    TruncatedNegativeBinomial(2.0, 0.3),
    PoissonTrials(5.0),
]


def best_of_k(p: np.ndarray, trials) -> np.ndarray:
    """Exact output distribution of the best of K runs over outputs 0 < 1 < … (a leading ⊥ for K = 0)."""
    cdf = np.concatenate([[0.0], np.cumsum(p)])
    cdf[-1] = 1.0
    at = np.asarray(trials.pgf(cdf), dtype=float)
    return np.diff(at, prepend=0.0)  # index 0: P[K = 0] = pgf(0) (⊥), then each output


def renyi(p: np.ndarray, q: np.ndarray, lam: float) -> float:
    """D_λ(p ‖ q), in log space (terms of p = 0 drop out; a float difference below 0 counts as 0)."""
    p, q = np.clip(p, 0.0, None), np.clip(q, 0.0, None)
    keep = p > 0
    if np.any(q[keep] == 0):
        return math.inf
    return float(logsumexp(lam * np.log(p[keep]) + (1 - lam) * np.log(q[keep])) / (lam - 1))


@pytest.mark.parametrize("trials", DISTS, ids=lambda t: t.describe())
def test_distribution_mean_pgf_and_samples_agree(trials):
    rng = np.random.default_rng(0)
    h = 1e-6
    assert trials.mean() == pytest.approx((trials.pgf(1.0) - trials.pgf(1.0 - h)) / h, rel=1e-4)
    assert float(trials.pgf(1.0)) == pytest.approx(1.0, abs=1e-12)
    if isinstance(trials, TruncatedNegativeBinomial):
        total = sum(math.exp(trials.log_pmf(k)) for k in range(1, 20000))
        assert total == pytest.approx(1.0, abs=1e-6)
    draws = [trials.sample(rng) for _ in range(4000)]
    assert np.mean(draws) == pytest.approx(trials.mean(), rel=0.1)


def test_with_mean_solves_for_gamma():
    for eta in (1.0, 0.0, 0.5):
        d = TruncatedNegativeBinomial.with_mean(10.0, eta)
        assert d.mean() == pytest.approx(10.0, rel=1e-9)


@pytest.mark.parametrize("eta,gamma", [(1.0, 0.1), (0.0, 0.05), (2.0, 0.3), (-0.5, 0.02)])
def test_pure_dp_bound_holds_on_random_and_extreme_pairs(eta, gamma):
    """Every output of A changes by at most e^{(2+η)ε}, over random ε-DP pairs and two-level extreme pairs."""
    trials = TruncatedNegativeBinomial(eta, gamma)
    rng = np.random.default_rng(1)
    worst = 0.0
    for eps in (0.1, 0.5, 1.0, 2.0):
        bound = pure_selection_epsilon(eps, trials)
        for trial in range(150):
            m = int(rng.integers(2, 8))
            p = rng.dirichlet(np.ones(m) * (0.3 if trial % 2 else 1.0))
            t = rng.choice([-0.5, 0.5], size=m) if trial % 3 else rng.uniform(-0.5, 0.5, size=m)
            q = p * np.exp(eps * t)
            q /= q.sum()  # |log q/p| <= eps/2 + eps/2 = eps
            assert np.max(np.abs(np.log(q / p))) <= eps + 1e-12
            a, b = best_of_k(p, trials)[1:], best_of_k(q, trials)[1:]
            loss = float(np.max(np.abs(np.log(a) - np.log(b))))
            assert loss <= bound + 1e-9, (eps, p, q, loss, bound)
            worst = max(worst, loss / eps)
    # not vacuous: the pairs reach one run's ε, and for η > 0 visibly more (≈ 1.3ε here; the bound is (2+η)ε)
    assert worst > (1.2 if eta > 0 else 0.999)


@pytest.mark.parametrize("trials", DISTS, ids=lambda t: t.describe())
def test_rdp_bound_holds_against_exact_renyi_divergences(trials):
    """ε'(λ) ≥ D_λ(A(D) ‖ A(D')) in both directions, for random pairs with Q's curve computed exactly."""
    rng = np.random.default_rng(2)
    for _ in range(100):
        m = int(rng.integers(2, 6))
        p = rng.dirichlet(np.ones(m))
        q = np.clip(p * np.exp(rng.normal(0, 0.6, size=m)), 1e-12, None)
        q /= q.sum()
        base = np.array([max(renyi(p, q, lam), renyi(q, p, lam)) for lam in ORDERS])
        bound = selection_rdp(base, trials, ORDERS)
        a, b = best_of_k(p, trials), best_of_k(q, trials)
        for lam, eb in zip(ORDERS, bound):
            actual = max(renyi(a, b, lam), renyi(b, a, lam))
            assert actual <= eb + 1e-9, (lam, actual, eb)


def test_selection_costs_little_over_one_run_and_grows_with_the_runs():
    from dpgnn.privacy.rdp import DEFAULT_ORDERS, rdp_poisson_gaussian

    base = rdp_poisson_gaussian(0.01, 1.0, DEFAULT_ORDERS) * 1000  # a DP-SGD run: 1000 steps, q 0.01, z 1
    one, _ = rdp_to_epsilon(DEFAULT_ORDERS, base, 1e-5)
    few, _ = selection_epsilon(base, TruncatedNegativeBinomial.with_mean(5, 1.0), 1e-5)
    many, _ = selection_epsilon(base, TruncatedNegativeBinomial.with_mean(100, 1.0), 1e-5)
    poisson, _ = selection_epsilon(base, PoissonTrials(10.0), 1e-5)
    assert one < few < many < 3 * one + 20  # far below 100 runs composed
    assert one < poisson and math.isfinite(poisson)


def test_toy_search_releases_the_best_run_with_the_search_in_its_ledger():
    from dpgnn.privacy.rdp import DEFAULT_ORDERS, rdp_gaussian

    base = rdp_gaussian(2.0, DEFAULT_ORDERS)  # one Gaussian release per run, σ/Δ = 2
    seen = []

    def run(cfg, run_seed):
        rng = np.random.default_rng(run_seed)
        score = -abs(cfg["lr"] - 0.1) + 0.01 * rng.normal()  # noisy validation score of the run
        seen.append(cfg)
        return score, {"lr": cfg["lr"]}

    res = private_search(
        run,
        lambda rng: {"lr": float(10 ** rng.uniform(-3, 0))},
        TruncatedNegativeBinomial.with_mean(8, 1.0),
        base_rdp=base,
        delta=1e-5,
        seed=3,
    )
    assert res.runs == len(seen) == len(res.scores) >= 1
    assert res.best == {"lr": res.best_config["lr"]} and res.best_score == max(s for _, s in res.scores)
    led = res.ledger
    assert led["search_included"] and led["epsilon"] > led["epsilon_run"] > 0 and led["runs"] == res.runs
    again = private_search(
        run,
        lambda rng: {"lr": float(10 ** rng.uniform(-3, 0))},
        TruncatedNegativeBinomial.with_mean(8, 1.0),
        base_rdp=base,
        delta=1e-5,
        seed=3,
    )
    assert again.best_config == res.best_config and again.runs == res.runs


@pytest.mark.parametrize(
    "scores,best",
    [([math.nan, 0.2, math.nan, 0.5, 0.1], 3), ([0.3, math.nan, 0.3], 0), ([math.nan, math.nan], 0)],
)
def test_a_run_with_nothing_to_score_is_released_only_when_every_run_is_so(scores, best):
    class Fixed(TruncatedNegativeBinomial):
        def sample(self, rng):
            return len(scores)

    it = iter(range(len(scores)))

    def run(cfg, run_seed):
        i = next(it)
        return scores[i], i

    res = private_search(
        run, lambda rng: {}, Fixed(eta=1.0, gamma=0.5), base_rdp=[0.1], delta=1e-5, orders=[2.0], seed=0
    )
    assert res.best == best and res.runs == len(scores)
    assert res.best_score == scores[best] or (math.isnan(res.best_score) and math.isnan(scores[best]))


@pytest.mark.parametrize("bad", [dict(eta=-1.0, gamma=0.5), dict(eta=1.0, gamma=1.0), dict(eta=1.0, gamma=0.0)])
def test_bad_parameters_are_refused(bad):
    with pytest.raises(ValueError):
        TruncatedNegativeBinomial(**bad)
    with pytest.raises(ValueError):
        PoissonTrials(0.0)
    with pytest.raises(ValueError, match="one value per order"):
        selection_rdp([1.0, 2.0], PoissonTrials(1.0), ORDERS)
