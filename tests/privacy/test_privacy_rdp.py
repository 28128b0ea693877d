"""RDP math: every curve against an independent computation (quadrature, opacus, autodp), soundness, orders."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from dpgnn.privacy import gaussian_epsilon
from dpgnn.privacy import rdp as R


# ------------------------------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------------------------------
def _quad_log(logf, lo, hi, points=None):
    """log ∫ exp(logf) on [lo, hi], normalised by the max of logf on a grid (plain quadrature)."""
    top = max(logf(x) for x in np.linspace(lo, hi, 2001))
    val, _ = integrate.quad(
        lambda x: math.exp(logf(x) - top), lo, hi, points=points, limit=1000, epsabs=0, epsrel=1e-12
    )
    return top + math.log(val)


def renyi_quad(logp, logq, alpha, lo, hi, points=None):
    """D_α(P ‖ Q) = log ∫ p^α q^{1−α} / (α−1) by quadrature over [lo, hi]."""
    return _quad_log(lambda x: alpha * logp(x) + (1 - alpha) * logq(x), lo, hi, points) / (alpha - 1)


def norm_logpdf(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd * math.sqrt(2 * math.pi))


def gaussian_mixture_logs(q, z):
    def lp0(x):
        return norm_logpdf(x, 0, z)

    def lmix(x):
        return float(np.logaddexp(math.log1p(-q) + norm_logpdf(x, 0, z), math.log(q) + norm_logpdf(x, 1, z)))

    return lp0, lmix


def laplace_mixture_logs(q, b):
    def lp0(x):
        return -abs(x) / b - math.log(2 * b)

    def lp1(x):
        return -abs(x - 1) / b - math.log(2 * b)

    def lmix(x):
        return float(np.logaddexp(math.log1p(-q) + lp0(x), math.log(q) + lp1(x)))

    return lp0, lp1, lmix


# ------------------------------------------------------------------------------------------------------------
# default orders
# ------------------------------------------------------------------------------------------------------------
def test_default_orders_are_wide():
    o = R.DEFAULT_ORDERS
    assert o[0] <= 1.01 and np.sum((o > 1) & (o < 2)) >= 50  # fine grid near 1
    assert o[-1] >= 1e4 and np.sum(o >= 1000) >= 20  # dense up to large orders
    assert np.all(np.diff(o) > 0)
    with pytest.raises(ValueError):
        o[0] = 3.0  # read-only
    with pytest.raises(ValueError, match="orders must be finite numbers > 1"):
        R.check_orders([1.0, 2.0])
    with pytest.raises(ValueError):
        R.check_orders([])


# ------------------------------------------------------------------------------------------------------------
# base mechanisms
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("b", [0.5, 2.0, 10.0])
@pytest.mark.parametrize("alpha", [1.3, 2.0, 7.5, 40.0])
def test_laplace_rdp_vs_quadrature(b, alpha):
    lp0, lp1, _ = laplace_mixture_logs(0.5, b)
    ref = renyi_quad(lp1, lp0, alpha, -60 * b, 60 * b + 1, points=[0.0, 1.0])
    assert math.isclose(float(R.rdp_laplace(b, [alpha])[0]), ref, rel_tol=1e-8)


def test_laplace_rdp_limits_and_gaussian():
    b = 3.0
    assert R.rdp_laplace(b, [np.inf])[0] == pytest.approx(1 / b)
    assert R.rdp_laplace(b, [1.0])[0] == pytest.approx(1 / b + math.exp(-1 / b) - 1)
    assert R.rdp_laplace(b, [1e6])[0] == pytest.approx(1 / b, rel=1e-4)
    assert np.all(np.diff(R.rdp_laplace(b, R.DEFAULT_ORDERS)) >= 0)  # RDP is non-decreasing in α
    assert np.allclose(R.rdp_gaussian(2.0, [2.0, 10.0]), [2 / 8, 10 / 8])


# ------------------------------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian
# ------------------------------------------------------------------------------------------------------------
def test_poisson_gaussian_vs_opacus():
    from opacus.accountants.analysis.rdp import compute_rdp

    orders = np.array([1.05, 1.5, 2.0, 2.5, 3.0, 4.7, 8.0, 12.5, 32.0, 64.0, 256.0])
    for q, z in [(0.01, 1.1), (256 / 60000, 1.1), (0.3, 5.0), (0.5, 0.8), (1e-4, 20.0)]:
        ours = R.rdp_poisson_gaussian(q, z, orders)
        ref = np.asarray(compute_rdp(q=q, noise_multiplier=z, steps=1, orders=list(orders)))
        ok = np.isfinite(ref)
        assert ok.sum() >= 8
        # opacus truncates its fractional series at an absolute e^-30 (~1e-7 relative differences); below RDP
        # ~1e-10 both are limited by float64 cancellation in log A (absolute ~1e-15 / (α − 1))
        assert np.allclose(ours[ok], ref[ok], rtol=1e-6, atol=1e-13 / (orders[ok] - 1)), (q, z, ours, ref)


@pytest.mark.parametrize("q,z,alpha", [(0.01, 1.1, 1.05), (0.2, 0.9, 2.5), (0.05, 3.0, 9.3), (0.01, 1.1, 7.0)])
def test_poisson_gaussian_vs_high_precision_quadrature(q, z, alpha):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    qm, zm, am = mp.mpf(q), mp.mpf(z), mp.mpf(alpha)

    def f(x):
        return mp.npdf(x, 0, zm) * ((1 - qm) + qm * mp.exp((2 * x - 1) / (2 * zm * zm))) ** am

    ref = float(mp.log(mp.quad(f, [-mp.inf, -10, 0, 0.5, 1, 10, 40, mp.inf])) / (am - 1))
    assert math.isclose(float(R.rdp_poisson_gaussian(q, z, [alpha])[0]), ref, rel_tol=1e-9)


@pytest.mark.parametrize(
    "q,z,alpha",
    [
        (0.01, 1.0, 1.01),
        (0.01, 1.0, 1.5),
        (0.1, 2.0, 2.0),
        (0.1, 2.0, 3.7),
        (0.3, 0.8, 2.5),
        (0.5, 1.5, 6.0),
        (0.02, 4.0, 20.5),
    ],
)
def test_poisson_gaussian_vs_quadrature(q, z, alpha):
    """Exact RDP = D_α(mix ‖ N(0,σ²)) (Mironov et al. 2019, Thm 5: the dominating direction)."""
    lp0, lmix = gaussian_mixture_logs(q, z)
    ref = renyi_quad(lmix, lp0, alpha, -40 * z, 40 * z + 1 + alpha * 0)
    other = renyi_quad(lp0, lmix, alpha, -40 * z, 40 * z + 1)
    ours = float(R.rdp_poisson_gaussian(q, z, [alpha])[0])
    assert math.isclose(ours, ref, rel_tol=1e-6), (ours, ref)
    assert other <= ours * (1 + 1e-9)


def test_poisson_gaussian_edge_cases():
    assert np.allclose(R.rdp_poisson_gaussian(1.0, 2.0, [2.0, 3.5]), R.rdp_gaussian(2.0, [2.0, 3.5]))
    # non-sorted, repeated orders map back correctly
    a = R.rdp_poisson_gaussian(0.1, 1.0, [5.0, 2.0, 5.0])
    assert a[0] == a[2] and a[1] < a[0]
    # very large orders stay finite and monotone (opacus overflows there)
    big = R.rdp_poisson_gaussian(0.01, 1.1, [1000.0, 5000.0, 1e5])
    assert np.all(np.isfinite(big)) and np.all(np.diff(big) > 0)
    # subsampling only helps
    orders = R.DEFAULT_ORDERS[:200]
    assert np.all(R.rdp_poisson_gaussian(0.05, 1.5, orders) <= R.rdp_gaussian(1.5, orders) + 1e-15)


# ------------------------------------------------------------------------------------------------------------
# Poisson-subsampled Laplace
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q,b", [(0.3, 10.0), (0.3, 1.0), (0.1, 2.5)])
@pytest.mark.parametrize("alpha", [1.2, 2.0, 3.5, 10.0, 33.0])
def test_poisson_laplace_both_directions_vs_quadrature(q, b, alpha):
    lp0, _, lmix = laplace_mixture_logs(q, b)
    fwd = renyi_quad(lmix, lp0, alpha, -80 * b, 80 * b + 1, points=[0.0, 1.0])
    rev = renyi_quad(lp0, lmix, alpha, -80 * b, 80 * b + 1, points=[0.0, 1.0])
    d1, d2 = R.rdp_laplace_subsampled_directions(q, b, alpha)
    assert math.isclose(d1, fwd, rel_tol=1e-7) and math.isclose(d2, rev, rel_tol=1e-7)
    assert float(R.rdp_poisson_laplace(q, b, [alpha])[0]) == pytest.approx(max(d1, d2), rel=1e-12)


def test_poisson_laplace_integer_orders_equal_autodp():
    """Integer orders: the finite binomial sum equals autodp's compose_poisson_subsampled_mechanisms RDP."""
    from autodp import rdp_acct, rdp_bank

    for q, b in [(0.3, 10.0), (0.1, 1.25)]:
        acct = rdp_acct.anaRDPacct()
        acct.compose_poisson_subsampled_mechanisms(lambda x, b=b: rdp_bank.RDP_laplace({"b": b}, x), q, coeff=1)
        ints = np.arange(2, 60, dtype=float)
        ref = acct.get_rdp(ints)
        fwd = np.array([R.rdp_laplace_subsampled_directions(q, b, a)[0] for a in ints])
        assert np.allclose(fwd, ref, rtol=1e-9)
        ours = R.rdp_poisson_laplace(q, b, ints)
        assert np.all(ours >= ref * (1 - 1e-12))  # max of both directions: never below


# ------------------------------------------------------------------------------------------------------------
# sampling without replacement (WBK 2019 Thm 9)
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("base", ["gaussian", "laplace"])
def test_wor_bound_equals_autodp_general_bound(base):
    from autodp import rdp_acct, rdp_bank

    q = 0.05
    if base == "gaussian":
        z = 1.5

        def func(x):
            return rdp_bank.RDP_gaussian({"sigma": z}, x)

        def ours_fn(a):
            return R.rdp_sampled_without_replacement(q, lambda x: R.rdp_gaussian(z, x), a)
    else:
        b = 2.0

        def func(x):
            return rdp_bank.RDP_laplace({"b": b}, x)

        def ours_fn(a):
            return R.rdp_sampled_without_replacement(q, lambda x: R.rdp_laplace(b, x), a, eps_pure=1 / b)

    acct = rdp_acct.anaRDPacct()
    acct.compose_subsampled_mechanism(func, q, coeff=1)  # improved_bound_flag=False: Theorem 9
    orders = np.array([2.0, 3.0, 4.0, 7.0, 16.0, 50.0, 2.5, 5.25])
    assert np.allclose(ours_fn(orders), acct.get_rdp(orders), rtol=1e-9)


@pytest.mark.parametrize("alpha", [2.0, 4.0, 10.0])
def test_wor_bound_is_above_a_concrete_pair(alpha):
    """Replace-one pair: the sampled record contributes +1/2 or −1/2 → D_α between the two mixtures ≤ bound."""
    q, z = 0.1, 1.0

    def lp(x):
        return float(np.logaddexp(math.log1p(-q) + norm_logpdf(x, 0, z), math.log(q) + norm_logpdf(x, 0.5, z)))

    def lq(x):
        return float(np.logaddexp(math.log1p(-q) + norm_logpdf(x, 0, z), math.log(q) + norm_logpdf(x, -0.5, z)))

    true = renyi_quad(lp, lq, alpha, -40, 40)
    bound = float(R.rdp_sampled_without_replacement(q, lambda x: R.rdp_gaussian(z, x), [alpha])[0])
    assert true <= bound
    assert bound <= float(R.rdp_gaussian(z, [alpha])[0])  # never worse than no sampling


# ------------------------------------------------------------------------------------------------------------
# conversion
# ------------------------------------------------------------------------------------------------------------
def test_conversion_formula_and_classic_bound():
    orders = np.array([1.5, 2.0, 8.0, 32.0])
    rdp = np.array([0.01, 0.02, 0.1, 0.5])
    eps, order = R.rdp_to_epsilon(orders, rdp, 1e-5)
    manual = rdp + np.log((orders - 1) / orders) - (np.log(1e-5) + np.log(orders)) / (orders - 1)
    assert eps == pytest.approx(manual.min()) and order == orders[np.argmin(manual)]
    classic = (rdp + np.log(1e5) / (orders - 1)).min()
    assert eps < classic
    assert R.rdp_to_epsilon([2.0], [0.0], 0.5)[0] == 0.0  # clipped at 0
    assert R.rdp_to_epsilon([2.0], [np.inf], 0.5)[0] == math.inf
    with pytest.raises(ValueError, match="delta"):
        R.rdp_to_epsilon(orders, rdp, 0.0)
    with pytest.raises(ValueError, match="same length"):
        R.rdp_to_epsilon(orders, rdp[:2], 1e-5)


@pytest.mark.parametrize("z", [0.5, 1.0, 3.0, 10.0, 50.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-7])
def test_rdp_conversion_is_sound_for_the_gaussian(z, delta):
    """RDP-derived ε is never below the exact (Balle–Wang) ε of the same Gaussian, and not far above."""
    eps, _ = R.rdp_to_epsilon(R.DEFAULT_ORDERS, R.rdp_gaussian(z, R.DEFAULT_ORDERS), delta)
    exact = gaussian_epsilon(z, delta)
    assert eps >= exact
    assert eps <= 1.35 * exact + 1e-3


def test_wide_grid_is_tighter_than_a_narrow_one():
    narrow = np.arange(2, 65, dtype=float)
    # high noise (optimal order > 64) and many cheap steps (optimal order near 1)
    for rdp_fn, delta in [
        (lambda o: R.rdp_gaussian(60.0, o), 1e-8),
        (lambda o: 20000 * R.rdp_poisson_gaussian(0.05, 0.7, o), 1e-5),
    ]:
        wide_eps, wide_order = R.rdp_to_epsilon(R.DEFAULT_ORDERS, rdp_fn(R.DEFAULT_ORDERS), delta)
        narrow_eps, _ = R.rdp_to_epsilon(narrow, rdp_fn(narrow), delta)
        assert wide_eps < 0.9 * narrow_eps, (wide_eps, narrow_eps, wide_order)
