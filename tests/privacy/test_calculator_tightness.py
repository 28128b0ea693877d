"""Every ``dpgnn epsilon`` calculator against an independent computation on small cases (benchmarks/
epsilon_tightness.py measures the papers' configurations): ours is never below the truth and within 5 % of it where
the calculator claims to be tight. DRW / FDP / uniform sampling: tests/privacy/test_sampled_pld.py."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import comb
from scipy.stats import laplace, norm

from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.events import GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpgnn.privacy.lpgnn import budget
from dpgnn.privacy.pate import pate_epsilon
from dpgnn.privacy.privgnn import query_epsilon, sound_epsilon
from dpgnn.privacy.progap import privacy_ledger

X = np.linspace(-40.0, 41.0, 200001)
DX = X[1] - X[0]


def _eps_from_delta(delta_of_eps, delta: float, hi: float = 50.0) -> float:
    if delta_of_eps(0.0) <= delta:
        return 0.0
    return brentq(lambda e: delta_of_eps(e) - delta, 0.0, hi, xtol=1e-10)


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)) * DX)


@pytest.mark.parametrize("kind,noise,q", [("gaussian", 1.0, 0.05), ("gaussian", 0.7, 0.3), ("laplace", 1.0, 0.2)])
def test_dpsgd_and_laplace_one_step_against_numerical_integration(kind, noise, q):
    """Poisson sampling, add/remove: the pair ((1-q)A + qB, A) in both orders integrated on a fine grid."""
    dist = norm if kind == "gaussian" else laplace
    a, b = dist.pdf(X, 0, noise), dist.pdf(X, 1, noise)
    mix = (1 - q) * a + q * b
    exact = _eps_from_delta(lambda e: max(_hockey(mix, a, e), _hockey(a, mix, e)), 1e-5)
    inner = GaussianEvent(noise) if kind == "gaussian" else LaplaceEvent(noise)
    ev = PoissonSampledEvent(q, inner)
    pld = get_accountant("pld").compose(ev).get_epsilon(1e-5)
    assert exact - 1e-6 <= pld <= exact * 1.05 + 1e-4
    assert get_accountant("rdp").compose(ev).get_epsilon(1e-5) >= exact - 1e-6


def test_lpgnn_budget_is_the_exact_composition_of_two_pure_reports():
    """At δ = 0 the exact ε of an ε_x- and an ε_y-DP report composed is ε_x + ε_y: randomised response pairs (which
    dominate every pure-DP report) have a positive hockey-stick just below the sum and zero at it."""
    ex, ey = 1.0, 0.5
    out = budget(ex, ey, 100, "mbm")
    assert out["epsilon"] == ex + ey and out["delta"] == 0.0
    p = lambda e: np.array([math.exp(e), 1.0]) / (1 + math.exp(e))  # noqa: E731
    pp, qq = np.outer(p(ex), p(ey)).ravel(), np.outer(p(ex)[::-1], p(ey)[::-1]).ravel()
    hs = lambda e: float(np.maximum(pp - math.exp(e) * qq, 0).sum())  # noqa: E731
    assert hs(ex + ey) < 1e-15 < 1e-6 < hs(ex + ey - 1e-3)


def _binomial_pair_epsilon(a: float, b: float, n: int, delta: float) -> float:
    """Exact ε of n copies of ((a, 1-a), (b, 1-b)) and of the swapped pair, by enumerating the binomial counts."""
    k = np.arange(n + 1)
    pa = comb(n, k) * a**k * (1 - a) ** (n - k)
    pb = comb(n, k) * b**k * (1 - b) ** (n - k)

    def hs(e):
        return max(
            float(np.maximum(pa - math.exp(e) * pb, 0).sum()),
            float(np.maximum(pb - math.exp(e) * pa, 0).sum()),
        )

    return _eps_from_delta(hs, delta, hi=n * 10.0)


def test_privgnn_sound_epsilon_against_enumeration():
    lam, n, g, d, c = 0.4, 30, 0.3, 1e-4, 10
    eps0 = query_epsilon(lam, c)
    p = math.exp(eps0) / (1 + math.exp(eps0))
    exact = _binomial_pair_epsilon(g * p + (1 - g) * (1 - p), 1 - p, n, d)
    assert exact - 1e-8 <= sound_epsilon(lam, n, g, d, c) <= exact * (1 + 1e-6) + 1e-8


def test_pate_sound_epsilon_is_the_kairouz_oh_viswanath_composition():
    lam, n, d = 0.1, 40, 1e-5
    p = math.exp(2 * lam) / (1 + math.exp(2 * lam))
    exact = _binomial_pair_epsilon(p, 1 - p, n, d)
    assert pate_epsilon(lam, n, d).epsilon_sound == pytest.approx(exact, rel=1e-6)


def _gaussian_exact(mu: float, delta: float) -> float:
    return _eps_from_delta(lambda e: norm.cdf(mu / 2 - e / mu) - math.exp(e) * norm.cdf(-mu / 2 - e / mu), delta)


@pytest.mark.parametrize("k,sigma", [(1, 4.679), (3, 2.0)])
def test_progap_edge_is_the_exact_gaussian_composition(k, sigma):
    led = privacy_ledger("edge", depth=k, delta=1e-7, noise=sigma)
    assert led["epsilon"] == pytest.approx(_gaussian_exact(math.sqrt(k) / sigma, 1e-7), rel=1e-6)


def test_progap_node_pld_and_autodp_against_the_pair():
    """K Gaussians + (K+1)·T Poisson-subsampled Gaussian steps: dp_accounting on a 10× finer grid."""
    from dp_accounting.pld import privacy_loss_distribution as lib

    kw = dict(depth=2, delta=1e-5, noise=4.0, max_degree=10, batch_size=64, train_nodes=640, epochs=2)
    led = privacy_ledger("node", **kw)
    q, steps = led["sample_rate"], led["steps_per_run"] * led["dpsgd_runs"]
    ref = lib.from_gaussian_mechanism(4.0 / math.sqrt(2), value_discretization_interval=1e-4).compose(
        lib.from_gaussian_mechanism(4.0, sampling_prob=q, value_discretization_interval=1e-4).self_compose(steps)
    )
    exact = ref.get_epsilon_for_delta(1e-5)
    pld = privacy_ledger("node", **kw, accountant="pld")["epsilon"]
    assert exact <= pld <= exact * 1.05
    assert led["epsilon"] >= exact
    ev = SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(4.0)), steps)
    assert get_accountant("pld").compose(ev).get_epsilon(1e-5) <= pld


def test_tiny_noise_falls_back_to_the_rdp_bound_instead_of_overflowing():
    """At z = 0.04 the privacy losses leave float range inside the PLD: the sound value is then the RDP bound."""
    from dpgnn.privacy.accountant import get_accountant
    from dpgnn.privacy.drw import drw_event, drw_sound_epsilon

    rdp = get_accountant("rdp").compose(drw_event(0.04, 0.5, 10)).get_epsilon(1e-5)
    assert drw_sound_epsilon(0.04, 0.5, 10, 1e-5) == rdp and math.isfinite(rdp)
