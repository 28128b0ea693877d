"""FDP multi-term hypergeometric RDP accountant: formula vs an independent computation, monotonicity, errors."""

import math

import numpy as np
import pytest

from dpgnn.privacy import rdp as R
from dpgnn.privacy.fdp import FdpSampledGaussianEvent, fdp_epsilon, fdp_rdp, max_affected


def _brute_rdp(alpha: int, z: float, n: int, k: int, b: int) -> float:
    """Independent: exact hypergeometric pmf with integer binomials, plain sum (Daigavane et al., Theorem 1)."""
    total = 0.0
    for i in range(0, min(k, b) + 1):
        p = math.comb(k, i) * math.comb(n - k, b - i) / math.comb(n, b)
        total += p * math.exp(alpha * (alpha - 1) * (2 * i) ** 2 / (2 * (2 * k * z) ** 2))
    return math.log(total) / (alpha - 1)


def test_max_affected():
    assert max_affected(2, 1) == 3 and max_affected(4, 1) == 5
    assert max_affected(2, 2) == 7 and max_affected(4, 2) == 21
    assert max_affected(1, 3) == 4 and max_affected(7, 0) == 1
    for d in range(2, 6):
        for L in range(0, 4):
            assert max_affected(d, L) == sum(d**j for j in range(L + 1))


@pytest.mark.parametrize("z,n,k,b", [(1.0, 140, 5, 70), (4.0, 140, 21, 46), (2.0, 9716, 7, 2000), (8.0, 50, 3, 1)])
def test_rdp_matches_independent_sum(z, n, k, b):
    alphas = [2, 3, 5, 10, 17]
    ours = fdp_rdp(alphas, z, n, b, k)
    ref = [_brute_rdp(a, z, n, k, b) for a in alphas]
    np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_single_affected_root_is_a_bernoulli_mixture():
    # K = 1: gamma = log(1 - q + q exp(alpha(alpha-1)/(2 z^2))) / (alpha - 1), q = B/N
    z, n, b = 1.5, 200, 30
    a = np.array([1.5, 2.0, 4.0, 12.0])
    q = b / n
    closed = np.log1p(q * np.expm1(a * (a - 1) / (2 * z * z))) / (a - 1)
    np.testing.assert_allclose(fdp_rdp(a, z, n, b, 1), closed, rtol=1e-10)
    # and it never undercuts the exact (tighter) RDP of the same Gaussian without sampling scaled by q = 1
    full = fdp_rdp(a, z, n, n, 1)
    np.testing.assert_allclose(full, R.rdp_gaussian(z, a), rtol=1e-10)


def test_epsilon_monotone_in_steps_and_noise():
    eps_t = [fdp_epsilon(t, 2.0, 140, 70, 5, 1e-5)[0] for t in (1, 5, 20, 100, 400)]
    assert all(x < y for x, y in zip(eps_t, eps_t[1:]))
    eps_z = [fdp_epsilon(100, z, 140, 70, 5, 1e-5)[0] for z in (1, 2, 4, 8)]
    assert all(x > y for x, y in zip(eps_z, eps_z[1:]))
    assert fdp_epsilon(0, 2.0, 140, 70, 5, 1e-5)[0] == 0.0


def test_conversions_and_authors_variant():
    t, z, n, b, k, d = 127, 4.0, 140, 70, 5, 1e-5
    paper, order = fdp_epsilon(t, z, n, b, k, d)
    authors, a10 = fdp_epsilon(t, z, n, b, k, d, orders=[10.0], conversion="classic")
    assert a10 == 10.0 and authors >= paper
    gamma10 = _brute_rdp(10, z, n, k, b)
    assert authors == pytest.approx(t * gamma10 + math.log(1 / d) / 9, rel=1e-9)
    # the tight conversion at the chosen order equals the shared RDP->(eps, delta) conversion
    e2, _ = R.rdp_to_epsilon([order], [t * fdp_rdp([order], z, n, b, k)[0]], d)
    assert paper == pytest.approx(e2, rel=1e-9)
    assert FdpSampledGaussianEvent(z, n, b, k).epsilon(t, d)[0] == paper


@pytest.mark.parametrize(
    "args,match",
    [
        ((10, 0.0, 140, 70, 5, 1e-5), "noise_multiplier"),
        ((10, 1.0, 140, 141, 5, 1e-5), "batch_size"),
        ((10, 1.0, 140, 70, 0, 1e-5), "max_affected"),
        ((10, 1.0, 140, 70, 5, 1.0), "delta"),
        ((-1, 1.0, 140, 70, 5, 1e-5), "steps"),
        ((10, math.inf, 140, 70, 5, 1e-5), "noise_multiplier"),
    ],
)
def test_bad_inputs(args, match):
    with pytest.raises(ValueError, match=match):
        fdp_epsilon(*args)
    with pytest.raises(ValueError, match="orders"):
        fdp_rdp([1.0], 1.0, 10, 2, 1)
    with pytest.raises(ValueError, match="conversion"):
        fdp_epsilon(1, 1.0, 10, 2, 1, 1e-5, conversion="exact")
    with pytest.raises(ValueError, match="max_degree"):
        max_affected(0, 1)


# -- the FDP step is an event of the algebra -------------------------------------------------------------------
@pytest.mark.parametrize(
    "t, z, n, b, k, d",
    [
        (100, 4.0, 140, 70, 21, 1e-5),
        (1, 8.0, 140, 46, 21, 1e-5),
        (300, 2.0, 120, 60, 5, 1e-5),
        (515, 0.347, 13204, 256, 101, 1e-5),
    ],
)
def test_rdp_accountant_composes_the_fdp_event_as_the_direct_computation(t, z, n, b, k, d):
    from dpgnn.privacy import RdpAccountant, SelfComposedEvent
    from dpgnn.privacy.fdp import FDP_ORDERS

    step = FdpSampledGaussianEvent(z, n, b, k)
    eps, order = RdpAccountant(FDP_ORDERS).compose(SelfComposedEvent(step, t)).get_epsilon_and_order(d)
    direct, direct_order = fdp_epsilon(t, z, n, b, k, d)
    assert eps == pytest.approx(direct, rel=1e-12, abs=1e-12) and order == direct_order
    # composing the step T times, or mixing it with other events, is the same algebra
    assert RdpAccountant(FDP_ORDERS).compose(step, t).get_epsilon(d) == pytest.approx(direct, rel=1e-12)
    # the default (wider) order grid can only be tighter or equal
    assert RdpAccountant().compose(step, t).get_epsilon(d) <= direct + 1e-12


@pytest.mark.parametrize("name", ["autodp", "autodp_rdp_acct", "exact_gaussian"])
def test_accountants_without_the_fdp_curve_refuse_it_clearly(name):
    from dpgnn.privacy import GaussianEvent, get_accountant
    from dpgnn.privacy.events import ComposedEvent

    step = FdpSampledGaussianEvent(1.0, 10, 2, 3)
    acc = get_accountant(name)
    assert not acc.supports(step)
    for event in (step, ComposedEvent([GaussianEvent(1.0), step])):
        with pytest.raises(NotImplementedError, match=f"'{name}' accountant does not support"):
            acc.compose(event)
