"""Mechanisms: unbiasedness, analytic variance, empirical LDP guarantee, determinism, bad inputs, registry."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from dpgnn.privacy import (
    AnalyticGaussianMechanism,
    GaussianMechanism,
    Mechanism,
    PGCMechanism,
    PiecewiseMechanism,
    RandomizedResponse,
    analytic_gaussian_sigma,
    available_mechanisms,
    gaussian_delta,
    get_mechanism,
    register_mechanism,
)

FEATURE_MECHS = ["laplace", "piecewise", "pgc"]
N = 200_000


def _mech(name: str, eps: float, low: float = 0.0, high: float = 1.0) -> Mechanism:
    if name in ("gaussian", "analytic_gaussian"):
        return get_mechanism(name, epsilon=eps, delta=1e-5, sensitivity=1.0, low=low, high=high)
    return get_mechanism(name, epsilon=eps, low=low, high=high)


def _repeat(values, n):
    return torch.tensor(values, dtype=torch.float64).repeat(n, 1)  # (n, len(values))


# ------------------------------------------------------------------------------------------------------------
# unbiasedness and variance
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name,eps,low,high",
    [(n, e, lo, hi) for n in FEATURE_MECHS for (e, lo, hi) in [(1.0, 0.0, 1.0), (0.5, -2.0, 3.0), (3.0, 0.0, 1.0)]]
    + [("analytic_gaussian", 1.0, 0.0, 1.0)],
)
def test_unbiased_and_analytic_variance(name, eps, low, high):
    m = _mech(name, eps, low, high)
    values = [low, low + 0.1 * (high - low), (low + high) / 2, low + 0.9 * (high - low), high]
    x = _repeat(values, N)
    y = m(x, generator=1234)
    assert y.shape == x.shape and y.dtype == torch.float64
    var = m.variance(torch.tensor(values, dtype=torch.float64))
    mean = y.mean(0)
    se = torch.sqrt(var / N)
    # unbiased: mean within 5 standard errors of the input, for every input value
    assert torch.all((mean - torch.tensor(values, dtype=torch.float64)).abs() <= 5 * se), (mean, values, se)
    # variance: sample variance vs analytic, tolerance from the sampling distribution of s²
    centred = y - mean
    s2 = (centred**2).sum(0) / (N - 1)
    mu4 = (centred**4).mean(0)
    se_s2 = torch.sqrt((mu4 - s2**2 * (N - 3) / (N - 1)) / N)
    assert torch.all((s2 - var).abs() <= 5 * se_s2), (s2, var, se_s2)


def test_variance_formulas_match_paper_equations():
    eps, a, b = 1.3, -1.0, 2.0
    d = b - a
    x = torch.tensor([-1.0, 0.0, 0.5, 2.0], dtype=torch.float64)
    # PGC eq. (7)
    e = math.exp(eps)
    expect = d**2 * e / (e - 1) ** 2 + (x - a) * (b - x)
    assert torch.allclose(get_mechanism("pgc", epsilon=eps, low=a, high=b).variance(x), expect, rtol=1e-12)
    # LM eq. (10)
    assert torch.allclose(
        get_mechanism("laplace", epsilon=eps, low=a, high=b).variance(x),
        torch.full_like(x, 2 * (d / eps) ** 2),
        rtol=1e-12,
    )
    # PM eq. (27)
    h = math.exp(eps / 2)
    expect_pm = (x - (a + b) / 2) ** 2 / (h - 1) + (h + 3) / (3 * (h - 1) ** 2) * d**2 / 4
    assert torch.allclose(get_mechanism("piecewise", epsilon=eps, low=a, high=b).variance(x), expect_pm, rtol=1e-12)


def test_pgc_bits_probability_and_debiasing():
    eps = 0.8
    m = get_mechanism("pgc", epsilon=eps)
    x = torch.tensor([0.0, 0.25, 1.0], dtype=torch.float64)
    e = math.exp(eps)
    p_expect = 1 / (e + 1) + x * (e - 1) / (e + 1)  # eq. (3)
    assert torch.allclose(m.prob_one(x), p_expect, rtol=1e-12)
    bits = m.perturb(_repeat([0.0, 0.25, 1.0], N), generator=5)
    assert set(torch.unique(bits).tolist()) <= {0.0, 1.0}
    freq = bits.mean(0)
    assert torch.all((freq - p_expect).abs() <= 5 * torch.sqrt(p_expect * (1 - p_expect) / N))
    # eq. (5) de-biasing of the two possible bits
    est = m.estimate(torch.tensor([0.0, 1.0], dtype=torch.float64))
    assert torch.allclose(est, torch.tensor([-1 / (e - 1), e / (e - 1)], dtype=torch.float64), rtol=1e-12)
    with pytest.raises(ValueError, match="bits"):
        m.estimate(torch.tensor([0.5]))


def test_pm_sampling_matches_density():
    m = get_mechanism("piecewise", epsilon=1.0)
    for xv in (0.0, 0.3, 1.0):
        y = m.perturb(torch.full((N,), xv, dtype=torch.float64), generator=9)
        C = m.C
        lo, hi = (1 - C) / 2, (1 + C) / 2
        assert float(y.min()) >= lo - 1e-12 and float(y.max()) <= hi + 1e-12
        edges = torch.linspace(lo, hi, 41, dtype=torch.float64)
        counts = torch.histogram(y, bins=edges).hist
        centres = (edges[:-1] + edges[1:]) / 2
        width = float(edges[1] - edges[0])
        # expected mass per bin by integrating the pdf on a fine grid
        fine = torch.linspace(0, 1, 2001, dtype=torch.float64)[:-1] + 0.5 / 2000
        expected = torch.stack([m.pdf(edges[i] + fine * width, xv).mean() * width for i in range(40)]) * N
        ok = expected > 100
        z = (counts[ok] - expected[ok]) / torch.sqrt(expected[ok])
        assert float(z.abs().max()) < 6, (xv, z)
        assert abs(float(expected.sum()) - N) / N < 1e-3
        del centres


# ------------------------------------------------------------------------------------------------------------
# empirical LDP guarantee
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_pgc_exact_ldp_ratio(eps):
    m = get_mechanism("pgc", epsilon=eps, low=-1.0, high=1.0)
    x = torch.linspace(-1, 1, 101, dtype=torch.float64)
    p1 = m.prob_one(x)
    for p in (p1, 1 - p1):
        ratio = float(p.max() / p.min())
        assert ratio <= math.exp(eps) * (1 + 1e-12)
        assert ratio >= math.exp(eps) * (1 - 1e-9)  # tight at the extremes


@pytest.mark.parametrize("eps,c", [(0.5, 2), (1.0, 7), (3.0, 10)])
def test_rr_transition_matrix_and_ldp(eps, c):
    m = get_mechanism("rr", epsilon=eps, num_classes=c)
    P = m.transition_matrix()
    assert P.shape == (c, c)
    assert torch.allclose(P.sum(1), torch.ones(c, dtype=torch.float64))
    assert math.isclose(float(P[0, 0]), math.exp(eps) / (math.exp(eps) + c - 1), rel_tol=1e-12)
    col_ratio = (P.max(0).values / P.min(0).values).max()
    assert float(col_ratio) <= math.exp(eps) * (1 + 1e-12)
    assert float(col_ratio) >= math.exp(eps) * (1 - 1e-12)
    # empirical transition frequencies
    labels = torch.arange(c).repeat(40_000)
    out = m.perturb(labels, generator=0)
    assert out.dtype == torch.long and int(out.min()) >= 0 and int(out.max()) < c
    counts = torch.zeros(c, c, dtype=torch.float64)
    counts.index_put_((labels, out), torch.ones(len(labels), dtype=torch.float64), accumulate=True)
    freq = counts / 40_000
    assert torch.all((freq - P).abs() <= 5 * torch.sqrt(P * (1 - P) / 40_000) + 1e-12)
    assert torch.equal(m(labels, generator=0), out)  # m(x) = noisy labels
    v = m.variance(torch.tensor([0, c - 1]))
    assert v.shape == (2, c) and torch.allclose(v, P[[0, c - 1]] * (1 - P[[0, c - 1]]))


@pytest.mark.parametrize("name,eps", [("piecewise", 0.5), ("piecewise", 2.0), ("laplace", 1.0), ("laplace", 3.0)])
def test_continuous_mechanisms_empirical_ldp(name, eps):
    m = get_mechanism(name, epsilon=eps)
    n = 400_000
    y_low = m.perturb(torch.zeros(n, dtype=torch.float64), generator=11)
    y_high = m.perturb(torch.ones(n, dtype=torch.float64), generator=12)
    lo = float(torch.quantile(torch.cat([y_low[:100_000], y_high[:100_000]]), 0.001))
    hi = float(torch.quantile(torch.cat([y_low[:100_000], y_high[:100_000]]), 0.999))
    edges = torch.linspace(lo, hi, 31, dtype=torch.float64)
    c_low = torch.histogram(y_low, bins=edges).hist
    c_high = torch.histogram(y_high, bins=edges).hist
    ok = (c_low >= 500) & (c_high >= 500)
    assert int(ok.sum()) >= 10
    log_ratio = torch.log(c_low[ok] / c_high[ok]).abs()
    slack = 5 * torch.sqrt(1 / c_low[ok] + 1 / c_high[ok])  # s.e. of a log count ratio
    assert torch.all(log_ratio <= eps + slack), (log_ratio.max(), eps)
    # and the mechanism is not trivially over-private: some bin ratio reaches close to e^eps
    assert float(log_ratio.max()) >= 0.8 * eps


def test_pm_density_ratio_exact():
    eps = 1.7
    m = get_mechanism("piecewise", epsilon=eps)
    C = m.C
    y = torch.linspace((1 - C) / 2, (1 + C) / 2, 5001, dtype=torch.float64)
    dens = torch.stack([m.pdf(y, xv) for xv in np.linspace(0, 1, 21)])
    ratio = dens.max(0).values / dens.min(0).values
    assert float(ratio.max()) <= math.exp(eps) * (1 + 1e-12)
    assert float(ratio.max()) >= math.exp(eps) * (1 - 1e-12)


# ------------------------------------------------------------------------------------------------------------
# determinism, devices, types
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FEATURE_MECHS + ["rr", "gaussian", "analytic_gaussian"])
def test_same_seed_same_output_including_zero(name):
    if name == "rr":
        m = get_mechanism("rr", epsilon=1.0, num_classes=4)
        x = torch.arange(4).repeat(50)
    elif name == "gaussian":
        m = get_mechanism("gaussian", epsilon=0.5, delta=1e-5, sensitivity=1.0)
        x = torch.rand(200, dtype=torch.float64)
    else:
        m = _mech(name, 1.0)
        x = torch.rand(200, dtype=torch.float64)
    a0, b0 = m(x, generator=0), m(x, generator=0)
    a1 = m(x, generator=1)
    assert torch.equal(a0, b0)
    assert not torch.equal(a0, a1)  # 0 is a real seed, not "no seed"
    g1, g2 = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    assert torch.equal(m.perturb(x, generator=g1), m.perturb(x, generator=g2))
    assert torch.equal(m.perturb(x, generator=np.int64(7)), m.perturb(x, generator=7))
    torch.manual_seed(3)
    c1 = m.perturb(x)
    torch.manual_seed(3)
    assert torch.equal(c1, m.perturb(x))  # None uses the (seeded) global RNG


def test_numpy_in_numpy_out_and_dtypes():
    m = get_mechanism("pgc", epsilon=1.0)
    xn = np.random.default_rng(0).random(50)
    out = m(xn, generator=0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert np.allclose(out, m(torch.from_numpy(xn), generator=0).numpy())
    x32 = torch.rand(10)
    for name in FEATURE_MECHS:
        mm = get_mechanism(name, epsilon=1.0)
        assert mm(x32, generator=0).dtype == torch.float32
        assert mm.variance(x32).dtype == torch.float32
    assert m.perturb(torch.tensor([0, 1, 1]), generator=0).is_floating_point()  # integer features accepted
    rr = get_mechanism("rr", epsilon=1.0, num_classes=3)
    assert isinstance(rr(np.array([0, 1, 2]), generator=0), np.ndarray)


def test_input_not_mutated():
    x = torch.tensor([1.5, 0.2])
    m = get_mechanism("laplace", epsilon=1.0, clip=True)
    with pytest.warns(UserWarning, match="clipped 1"):
        m(x, generator=0)
    assert torch.equal(x, torch.tensor([1.5, 0.2]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", FEATURE_MECHS)
def test_cuda_device(name):
    m = get_mechanism(name, epsilon=1.0)
    x = torch.rand(1000, device="cuda")
    y = m(x, generator=0)
    assert y.device.type == "cuda" and torch.equal(y, m(x, generator=0))
    y_cpu_gen = m(x, generator=torch.Generator().manual_seed(0))  # CPU generator, CUDA data
    assert y_cpu_gen.device.type == "cuda"
    assert m.variance(x).device.type == "cuda"


# ------------------------------------------------------------------------------------------------------------
# domain checks and bad parameters
# ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FEATURE_MECHS)
def test_out_of_range_refused_or_clipped(name):
    m = get_mechanism(name, epsilon=1.0, low=0.0, high=1.0)
    with pytest.raises(ValueError, match=r"x has 1 entries outside \[low, high\] = \[0, 1\]"):
        m(torch.tensor([0.5, 1.2]))
    with pytest.raises(ValueError, match=r"outside \[low, high\]"):
        m.perturb(torch.tensor([-0.01]))
    with pytest.raises(ValueError, match="NaN"):
        m(torch.tensor([0.5, float("nan")]))
    mc = get_mechanism(name, epsilon=1.0, clip=True)
    with pytest.warns(UserWarning, match="clipped"):
        y = mc(torch.tensor([0.5, 7.0], dtype=torch.float64), generator=0)
    assert y.shape == (2,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mc(torch.tensor([0.5]), generator=0)  # no warning when nothing is clipped


@pytest.mark.parametrize(
    "name,kwargs,exc,match",
    [
        ("pgc", {"epsilon": 0.0}, ValueError, "epsilon must be > 0"),
        ("pgc", {"epsilon": -1.0}, ValueError, "epsilon must be > 0"),
        ("laplace", {"epsilon": float("inf")}, ValueError, "use no mechanism for the non-private RAW baseline"),
        ("laplace", {"epsilon": float("nan")}, ValueError, "epsilon must be a finite number"),
        ("laplace", {"epsilon": True}, TypeError, "epsilon must be a real number"),
        ("piecewise", {"epsilon": "1"}, TypeError, "epsilon must be a real number"),
        ("piecewise", {"epsilon": 1.0, "low": 1.0, "high": 1.0}, ValueError, "low must be < high"),
        ("piecewise", {"epsilon": 1.0, "low": 2.0, "high": 1.0}, ValueError, "low must be < high"),
        ("pgc", {"epsilon": 1.0, "low": 0.0, "high": float("inf")}, ValueError, "finite"),
        ("rr", {"epsilon": 1.0}, TypeError, "num_classes"),
        ("rr", {"epsilon": 1.0, "num_classes": 1}, ValueError, "num_classes must be an integer >= 2"),
        ("rr", {"epsilon": 1.0, "num_classes": 2.5}, TypeError, "num_classes must be an integer"),
        ("gaussian", {"epsilon": 0.5, "sensitivity": 1.0}, TypeError, "requires delta"),
        ("gaussian", {"epsilon": 0.5, "delta": 1e-5}, TypeError, "requires sensitivity"),
        ("gaussian", {"epsilon": 0.5, "delta": 0.0, "sensitivity": 1.0}, ValueError, r"delta must lie in .*\(0, 1\)"),
        ("gaussian", {"epsilon": 0.5, "delta": 1.0, "sensitivity": 1.0}, ValueError, r"\(0, 1\)"),
        ("gaussian", {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 0.0}, ValueError, "sensitivity must be"),
        ("gaussian", {"epsilon": 2.0, "delta": 1e-5, "sensitivity": 1.0}, ValueError, "analytic_gaussian"),
        ("analytic_gaussian", {"epsilon": 1.0, "delta": float("nan"), "sensitivity": 1.0}, ValueError, "delta"),
        ("analytic_gaussian", {"epsilon": 1.0, "delta": 1e-5, "sensitivity": -2.0}, ValueError, "sensitivity"),
        ("pgc", {"epsilon": 1.0, "num_classes": 3}, TypeError, "unexpected keyword"),
    ],
)
def test_bad_parameters_raise(name, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        get_mechanism(name, **kwargs)


def test_rr_bad_labels():
    m = get_mechanism("rr", epsilon=1.0, num_classes=3)
    with pytest.raises(ValueError, match=r"outside \[0, num_classes\) = \[0, 3\)"):
        m(torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="outside"):
        m(torch.tensor([-1]))
    with pytest.raises(TypeError, match="integer labels"):
        m(torch.tensor([0.0, 1.0]))
    with pytest.raises(TypeError):
        m([0, 1])
    with pytest.raises(TypeError, match="generator"):
        m(torch.tensor([0]), generator="seed")


def test_bad_generator_and_input_types():
    m = get_mechanism("laplace", epsilon=1.0)
    with pytest.raises(TypeError, match="generator"):
        m(torch.tensor([0.5]), generator=1.5)
    with pytest.raises(TypeError, match="generator"):
        m(torch.tensor([0.5]), generator=True)
    with pytest.raises(TypeError, match="torch.Tensor or a numpy array"):
        m([0.5])
    with pytest.raises(TypeError, match="real numbers"):
        m(torch.tensor([True]))


# ------------------------------------------------------------------------------------------------------------
# Gaussian calibration
# ------------------------------------------------------------------------------------------------------------
def test_classic_gaussian_sigma():
    m = get_mechanism("gaussian", epsilon=0.5, delta=1e-5, sensitivity=2.0)
    assert isinstance(m, GaussianMechanism)
    assert math.isclose(m.sigma, 2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel_tol=1e-15)
    # the classic bound is valid (and loose): its delta at epsilon is below the target
    assert gaussian_delta(m.noise_multiplier, 0.5) <= 1e-5


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-5), (4.0, 1e-3), (20.0, 1e-8)])
def test_analytic_gaussian_sigma_tight(eps, delta):
    m = get_mechanism("Analytic-Gaussian", epsilon=eps, delta=delta, sensitivity=3.0)
    assert isinstance(m, AnalyticGaussianMechanism)
    z = m.sigma / 3.0
    assert gaussian_delta(z, eps) <= delta
    assert gaussian_delta(z * (1 - 1e-9), eps) > delta  # smallest such sigma (to 1e-9)
    if eps < 1:
        assert m.sigma < get_mechanism("gaussian", epsilon=eps, delta=delta, sensitivity=3.0).sigma


def test_gaussian_delta_matches_numerical_integration():
    """δ(ε) = E_{L~N(μ, 2μ)}[(1 − e^{ε−L})_+] with μ = 1/(2z²) (privacy loss of the Gaussian), by quadrature."""
    from scipy import integrate, stats

    for z, eps in [(0.8, 0.5), (2.0, 1.0), (5.0, 0.1)]:
        mu = 1 / (2 * z * z)
        sd = math.sqrt(2 * mu)

        def f(loss, eps=eps, mu=mu, sd=sd):
            return (1 - math.exp(eps - loss)) * stats.norm.pdf(loss, mu, sd)

        val, _ = integrate.quad(f, eps, mu + 40 * sd, epsabs=1e-14, epsrel=1e-12)
        assert math.isclose(gaussian_delta(z, eps), val, rel_tol=1e-7), (z, eps)
    # the known value of Balle & Wang's calibration: eps=1, delta=1e-5 -> sigma ≈ 3.7306
    assert abs(analytic_gaussian_sigma(1.0, 1e-5) - 3.7306) < 5e-4


# ------------------------------------------------------------------------------------------------------------
# registry and docs
# ------------------------------------------------------------------------------------------------------------
def test_registry_names_and_aliases():
    assert isinstance(get_mechanism("PGC", epsilon=1), PGCMechanism)
    assert isinstance(get_mechanism("duchi", epsilon=1), PGCMechanism)
    assert isinstance(get_mechanism("Piece-Wise", epsilon=1), PiecewiseMechanism)
    assert isinstance(get_mechanism("R_R", epsilon=1, num_classes=2), RandomizedResponse)
    with pytest.raises(ValueError, match="valid names: .*laplace.*pgc.*piecewise.*rr"):
        get_mechanism("gauss", epsilon=1)
    names = available_mechanisms()
    for n in ("laplace", "piecewise", "pgc", "duchi", "rr", "gaussian", "analytic_gaussian"):
        assert n in names


def test_register_mechanism():
    from dpgnn.privacy import mechanisms

    class Shifted(PGCMechanism):
        """Test mechanism."""

        name = "shifted_test"

    try:
        register_mechanism("shifted-test", Shifted)
        assert isinstance(get_mechanism("SHIFTED_TEST", epsilon=2.0), Shifted)
        register_mechanism("shifted-test", Shifted)  # same class again is fine
        with pytest.raises(ValueError, match="already registered"):
            register_mechanism("shiftedtest", PGCMechanism)
        with pytest.raises(TypeError, match="subclass"):
            register_mechanism("bad", dict)
    finally:
        mechanisms._REGISTRY.pop("shiftedtest", None)
        mechanisms._DISPLAY.pop("shiftedtest", None)


@pytest.mark.parametrize(
    "cls",
    sorted(
        {cls for cls in __import__("dpgnn.privacy.mechanisms", fromlist=["_REGISTRY"])._REGISTRY.values()},
        key=lambda c: c.__name__,
    ),
    ids=lambda c: c.__name__,
)
def test_docstrings_state_privacy_facts(cls):
    doc = cls.__doc__.lower()
    assert "neighbouring" in doc and "sensitivity" in doc and "guarantee" in doc
    assert ("eq" in doc) or ("theorem" in doc) or ("docs/papers/" in doc)


def test_ledger():
    led = get_mechanism("pgc", epsilon=2.0).ledger()
    assert led["mechanism"] == "pgc" and led["epsilon"] == 2.0 and led["delta"] == 0.0
    assert "LDP" in led["guarantee"]
    g = get_mechanism("analytic_gaussian", epsilon=1.0, delta=1e-5, sensitivity=1.0).ledger()
    assert g["delta"] == 1e-5 and g["sigma"] > 0
