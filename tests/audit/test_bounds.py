"""ε from TPR/FPR, Clopper–Pearson bounds and the one-run audit against known values."""

import math

import numpy as np
import pytest
from scipy import stats

from dpgnn.audit.bounds import (
    clopper_pearson,
    epsilon_from_rates,
    epsilon_lower_bound,
    epsilon_lower_bounds,
    one_run_epsilon_lower_bound,
    one_run_guess_audit,
    one_run_p_value,
    threshold_audit,
)


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (57, 1000), (500, 1000)])
def test_clopper_pearson_matches_scipy_binomtest(k, n):
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    lo, hi = clopper_pearson(k, n, 0.05)
    assert lo == pytest.approx(ci.low, abs=1e-12)
    assert hi == pytest.approx(ci.high, abs=1e-12)


def test_clopper_pearson_known_values_and_sides():
    # zero successes in n trials: the one-sided upper bound is 1 - alpha^(1/n) (the "rule of three" limit)
    assert clopper_pearson(0, 100, 0.05, "upper")[1] == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    assert clopper_pearson(100, 100, 0.05, "lower")[0] == pytest.approx(0.05 ** (1 / 100), rel=1e-9)
    lo1 = clopper_pearson(30, 100, 0.05, "lower")[0]
    lo2 = clopper_pearson(30, 100, 0.10)[0]  # two-sided at 0.10 = one-sided at 0.05
    assert lo1 == pytest.approx(lo2, rel=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        dict(successes=-1, trials=3),
        dict(successes=4, trials=3),
        dict(successes=1, trials=0),
        dict(successes=1.5, trials=3),
    ],
)
def test_clopper_pearson_rejects_bad_counts(bad):
    with pytest.raises(ValueError):
        clopper_pearson(**bad)


def test_epsilon_from_rates_known_values():
    # randomized response with ε = 1: TPR = e/(1+e), FPR = 1/(1+e) gives exactly ε = 1
    p = math.e / (1 + math.e)
    assert epsilon_from_rates(p, 1 - p) == pytest.approx(1.0, rel=1e-12)
    # TPR = 0.5, FPR = 0.5 e^{-2} (Laplace tail test) -> ln(0.5 / (0.5 e^-2)) = 2
    assert epsilon_from_rates(0.5, 0.5 * math.exp(-2)) == pytest.approx(2.0, rel=1e-12)
    # δ reduces the bound: ln((TPR - δ)/FPR)
    assert epsilon_from_rates(0.5, 0.1, delta=0.05) == pytest.approx(max(math.log(0.45 / 0.1), math.log(0.9 / 0.5)))
    assert epsilon_from_rates(0.3, 0.3) == 0.0
    assert epsilon_from_rates(0.5, 0.0) == math.inf
    with pytest.raises(ValueError):
        epsilon_from_rates(1.2, 0.1)


def test_epsilon_lower_bound_is_below_point_and_converges():
    # exact RR(ε = 1) counts: the lower bound is below 1 and approaches it as trials grow
    p = math.e / (1 + math.e)
    prev = 0.0
    for n in (1_000, 100_000, 10_000_000):
        tp, fp = round(p * n), round((1 - p) * n)
        b = epsilon_lower_bound(tp, n - tp, fp, n - fp)
        assert b.epsilon_lb < b.epsilon_point
        assert b.epsilon_lb < 1.0 + 1e-3
        assert b.epsilon_lb > prev
        prev = b.epsilon_lb
    assert prev > 0.99


def test_epsilon_lower_bound_uses_the_four_bounds_at_alpha_over_4():
    b = epsilon_lower_bound(700, 300, 200, 800, alpha=0.05)
    lo = clopper_pearson(700, 1000, 0.0125, "lower")[0]
    hi = clopper_pearson(200, 1000, 0.0125, "upper")[1]
    lo2 = clopper_pearson(800, 1000, 0.0125, "lower")[0]
    hi2 = clopper_pearson(300, 1000, 0.0125, "upper")[1]
    assert b.epsilon_lb == pytest.approx(max(math.log(lo / hi), math.log(lo2 / hi2)), rel=1e-12)
    vec = epsilon_lower_bounds(np.array([700]), 1000, np.array([200]), 1000)
    assert vec[0] == pytest.approx(b.epsilon_lb, rel=1e-9)


def test_epsilon_lower_bound_coverage_under_the_null():
    """A test on an exactly ε-DP randomized response: the 95% lower bound exceeds ε in at most ~5% of repeats."""
    rng = np.random.default_rng(0)
    eps, n = 1.0, 2000
    p = math.exp(eps) / (1 + math.exp(eps))
    above = 0
    for _ in range(400):
        tp, fp = rng.binomial(n, p), rng.binomial(n, 1 - p)
        above += epsilon_lower_bound(int(tp), n - int(tp), int(fp), n - int(fp)).epsilon_lb > eps
    assert above <= 0.05 * 400


def test_threshold_audit_separates_choice_and_measurement():
    rng = np.random.default_rng(1)
    s_in, s_out = rng.laplace(1.0, 1.0, 200_000), rng.laplace(0.0, 1.0, 200_000)  # 1-DP Laplace
    t, b = threshold_audit(s_in, s_out)
    assert 0.9 < b.epsilon_lb <= 1.0
    assert b.trials_in == 100_000  # measured on the second half only


def test_one_run_p_value_known_values():
    # δ = 0: the p-value is the binomial tail P[Bin(r, e^ε/(1+e^ε)) >= v]
    q = 1 / (1 + math.exp(-1.0))
    assert one_run_p_value(1000, 100, 80, 1.0) == pytest.approx(stats.binom.sf(79, 100, q), rel=1e-12)
    # ε = 0: a fair coin
    assert one_run_p_value(100, 10, 10, 0.0) == pytest.approx(0.5**10, rel=1e-12)
    # δ > 0 only adds
    assert one_run_p_value(1000, 100, 80, 1.0, 1e-5) > one_run_p_value(1000, 100, 80, 1.0)
    with pytest.raises(ValueError):
        one_run_p_value(10, 5, 6, 1.0)


def test_one_run_lower_bound_is_the_rejection_boundary():
    lb = one_run_epsilon_lower_bound(1000, 100, 90, alpha=0.05)
    assert one_run_p_value(1000, 100, 90, lb) < 0.05
    assert one_run_p_value(1000, 100, 90, lb + 1e-3) >= 0.05
    assert one_run_epsilon_lower_bound(1000, 100, 50) == 0.0  # chance-level guessing proves nothing
    # perfect guesses on more guesses prove more
    assert one_run_epsilon_lower_bound(1000, 200, 200) > one_run_epsilon_lower_bound(1000, 100, 100)


def test_one_run_guess_audit_counts_and_bonferroni():
    included = np.array([True] * 50 + [False] * 50)
    scores = np.where(included, 1.0, 0.0) + np.linspace(0, 0.1, 100)  # perfect separation
    res = one_run_guess_audit(scores, included, guesses=[10, 25])
    assert res["v"] == res["r"] == 50
    assert res["epsilon_lb"] == pytest.approx(one_run_epsilon_lower_bound(100, 50, 50, alpha=0.025), abs=1e-5)
    with pytest.raises(ValueError):
        one_run_guess_audit(scores, included, guesses=[60])
