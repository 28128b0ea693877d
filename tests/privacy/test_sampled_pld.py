"""Tight PLDs for sampling without replacement and FDP's hypergeometric sampling (dpgnn.privacy.sampled_pld), checked
against brute force on tiny datasets (every batch enumerated, hockey-stick divergences by numerical integration),
against lower bounds from concrete pairs of neighbouring datasets, and against the RDP accountants."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import hypergeom, norm

from dpgnn.privacy import drw as D
from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.events import GaussianEvent, LaplaceEvent, SampledWithoutReplacementEvent
from dpgnn.privacy.fdp import FdpSampledGaussianEvent, fdp_epsilon
from dpgnn.privacy.sampled_pld import MAX_COMPOSITIONS, fdp_lower_bound_pld, fdp_pld, wor_pld

GRID = np.linspace(-30.0, 34.0, 16001)  # output axis of the 1-D brute force (σ ≤ 4, shifts ≤ 4)
DX = GRID[1] - GRID[0]


def _hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)) * DX)


def _batch_mixture(grads: list[float], batch: int, sigma: float) -> np.ndarray:
    """Density of sum(grads[S]) + N(0, σ²) with S uniform among the batch-subsets: every subset enumerated."""
    subsets = list(itertools.combinations(range(len(grads)), batch))
    return sum(norm.pdf(GRID, sum(grads[i] for i in s), sigma) for s in subsets) / len(subsets)


@pytest.mark.parametrize("z", [0.7, 1.5])
def test_one_step_matches_the_brute_force_worst_case_over_datasets(z):
    """n = 5 records, batches of 2 (q = 0.4), gradients in [-1, 1] (C = 1, replace-one sensitivity 2, σ = 2z): the
    worst δ over a grid of datasets and both orders, every batch enumerated, equals ours (both directions are
    attained by one pair of datasets) and never exceeds it."""
    n, b, sigma = 5, 2, 2.0 * z
    pld = wor_pld("gaussian", z, b / n)
    values = (-1.0, 0.0, 1.0)
    for eps in (0.0, 0.25, 0.5, 1.0):
        worst = 0.0
        for others in itertools.product(values, repeat=2):  # the 4 other records take two values (symmetry)
            rest = [others[0], others[0], others[1], others[1]]
            for gi, gj in itertools.product(values, repeat=2):
                p, q = _batch_mixture(rest + [gi], b, sigma), _batch_mixture(rest + [gj], b, sigma)
                worst = max(worst, _hockey(p, q, eps))
        ours = pld.get_delta_for_epsilon(eps)
        assert worst <= ours + 1e-7
        assert ours <= worst * 1.01 + 1e-6


def test_lebeda_symmetric_pair_is_below_a_pair_of_datasets_under_fixed_batch_size():
    """Why the pair ((1-q)N(0)+qN(C), (1-q)N(0)+qN(-C)) is not used: with a fixed batch size the records that fill
    the batch when the replaced one is left out can carry its gradient, and that pair of datasets (all C, one -C)
    has a larger δ. Ours covers it."""
    z, q, sigma = 1.0, 0.2, 2.0
    n0 = norm.pdf(GRID, 0, sigma)
    lebeda = ((1 - q) * n0 + q * norm.pdf(GRID, 1, sigma), (1 - q) * n0 + q * norm.pdf(GRID, -1, sigma))
    concrete = ((1 - q) * n0 + q * norm.pdf(GRID, 2, sigma), n0)
    ours = wor_pld("gaussian", z, q)
    for eps in (0.3, 0.6, 1.0):
        assert _hockey(*lebeda, eps) < 0.5 * _hockey(*concrete, eps) <= ours.get_delta_for_epsilon(eps)


def test_two_steps_cover_every_order_of_directions():
    """Adaptive training can put one step in each direction (the other records' gradients equal the replaced
    record's old or new gradient): ours bounds all four orders, computed by 2-D integration."""
    z, q, sigma = 1.0, 0.2, 2.0
    x = np.linspace(-20.0, 22.0, 2101)
    h = x[1] - x[0]
    n0 = norm.pdf(x, 0, sigma)
    mix = (1 - q) * n0 + q * norm.pdf(x, 2, sigma)
    ours = wor_pld("gaussian", z, q).self_compose(2)
    for eps in (0.0, 0.3, 1.0):
        for (p1, q1), (p2, q2) in itertools.product([(mix, n0), (n0, mix)], repeat=2):
            exact = float(np.sum(np.maximum(np.outer(p1, p2) - math.exp(eps) * np.outer(q1, q2), 0.0)) * h * h)
            assert exact <= ours.get_delta_for_epsilon(eps) + 1e-6


def _hockey_curve(p: np.ndarray, q: np.ndarray, h: float):
    """``α ↦ H_α(P ‖ Q)`` of two densities on a grid (vectorised over α)."""
    loss = np.log(p / q)
    order = np.argsort(loss)[::-1]
    cum_p, cum_q, sorted_loss = np.cumsum(p[order]) * h, np.cumsum(q[order]) * h, loss[order]

    def curve(alpha: np.ndarray) -> np.ndarray:
        n = np.searchsorted(-sorted_loss, -np.log(alpha), side="left")  # how many losses exceed log α
        top = np.maximum(n - 1, 0)
        return np.where(n > 0, cum_p[top] - alpha * cum_q[top], 0.0)

    return curve


def test_an_adaptive_attack_needs_the_symmetrised_pair():
    """Two steps; the other records' gradients at step 2 follow step 1's output, so the attack picks step 2's
    direction where it gains most: δ = ∫ p_1(y) max_c H_{e^{ε − L_1(y)}}(P_c ‖ Q_c) dy. That exceeds both fixed-
    direction compositions (the maximum of the two directions composed separately would under-report) and stays
    below ours."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    z, q, sigma = 1.0, 0.2, 2.0
    x = np.linspace(-20.0, 22.0, 8401)
    h = x[1] - x[0]
    n0 = norm.pdf(x, 0, sigma)
    mix = (1 - q) * n0 + q * norm.pdf(x, 2, sigma)
    remove, add = _hockey_curve(mix, n0, h), _hockey_curve(n0, mix, h)
    ours = wor_pld("gaussian", z, q).self_compose(2)
    separate = pld_lib.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=1e-4).self_compose(2)
    for eps in (0.0, 0.3, 1.0):
        alpha = np.exp(eps - np.log(mix / n0))  # step 1 in the remove direction
        attack = float(np.sum(mix * np.maximum(remove(alpha), add(alpha))) * h)
        assert separate.get_delta_for_epsilon(eps) * 1.02 < attack <= ours.get_delta_for_epsilon(eps)


@pytest.mark.parametrize(
    "z,q,steps,delta", [(1.0, 0.01, 1000, 1e-5), (4.0, 0.45, 500, 1e-7), (2.0, 0.9, 300, 1e-5), (0.8, 0.1, 100, 1e-5)]
)
def test_without_replacement_between_a_concrete_pair_and_rdp(z, q, steps, delta):
    """(b) never below the exact ε of one pair of datasets (all gradients C, one turned to -C: the fixed-direction
    composition, dp_accounting's optimistic rounding at a finer grid); (c) below the RDP accountant."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    ev = SampledWithoutReplacementEvent(q, GaussianEvent(z))
    ours = get_accountant("pld").compose(ev, steps).get_epsilon(delta)
    lower = pld_lib.from_gaussian_mechanism(
        z, sampling_prob=q, pessimistic_estimate=False, use_connect_dots=False, value_discretization_interval=1e-4
    ).self_compose(steps)
    assert lower.get_epsilon_for_delta(delta) <= ours
    assert ours < get_accountant("rdp").compose(ev, steps).get_epsilon(delta)


def test_laplace_without_replacement_brute_force_and_rdp():
    b, q = 1.0, 0.25
    pld = wor_pld("laplace", b, q)
    lap = lambda mu: 0.5 / b * np.exp(-np.abs(GRID - mu) / b)  # noqa: E731
    mix, base = (1 - q) * lap(0.0) + q * lap(1.0), lap(0.0)
    for eps in (0.0, 0.1, 0.2):
        worst = max(_hockey(mix, base, eps), _hockey(base, mix, eps))
        assert worst <= pld.get_delta_for_epsilon(eps) + 1e-6 <= worst + 2e-3
    ev = SampledWithoutReplacementEvent(q, LaplaceEvent(b))
    pld = get_accountant("pld").compose(ev, 50).get_epsilon(1e-5)
    assert pld < get_accountant("rdp").compose(ev, 50).get_epsilon(1e-5)


def test_fdp_brute_force_on_a_tiny_graph():
    """n = 5 roots, batches of 2, K = 2 affected roots (gradients +1 everywhere, the affected ones -1 in D'): the
    exact δ of that pair (every batch enumerated) is below ours, which is below the multi-term RDP."""
    n, b, k, z = 5, 2, 2, 1.0
    sigma = z * 2 * k
    p = _batch_mixture([1.0] * n, b, sigma)
    q = _batch_mixture([-1.0] * k + [1.0] * (n - k), b, sigma)
    pld = fdp_pld(z, n, b, k)
    for eps in (0.0, 0.2, 0.5):
        exact = max(_hockey(p, q, eps), _hockey(q, p, eps))
        assert exact <= pld.get_delta_for_epsilon(eps) + 1e-7
    step = FdpSampledGaussianEvent(z, n, b, k)
    for t in (1, 10, 100):
        ours = get_accountant("pld").compose(step, t).get_epsilon(1e-5)
        lower = fdp_lower_bound_pld(z, n, b, k, interval=1e-2).self_compose(t).get_epsilon_for_delta(1e-5)
        assert lower <= ours
        assert ours <= fdp_epsilon(t, z, n, b, k, 1e-5)[0]


def test_fdp_pair_against_its_closed_form_and_the_count_revealed_everywhere():
    """For ε ≥ 0 our δ is (1 − p0)·Σ_{i≥1} p̃_i H_α(N(i/(zK)) ‖ N(0)), α = 1 + (e^ε − 1)/(1 − p0) (Gaussian closed
    form), below the pair with the count revealed in every batch (the dual of the multi-term RDP, Σ_i p_i δ_i(ε))
    and above the pair of graphs with the count hidden."""
    z, n, b, k = 2.0, 140, 70, 5
    pld = fdp_pld(z, n, b, k)
    i = np.arange(1, k + 1)
    w = hypergeom.pmf(i, n, k, b)
    p0 = hypergeom.pmf(0, n, k, b)
    mu = i / (z * k)

    def gauss(eps):
        return norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * norm.cdf(-mu / 2 - eps / mu)

    lower = fdp_lower_bound_pld(z, n, b, k)
    for eps in (0.0, 0.1, 0.5, 1.0):
        closed = float(np.sum(w * gauss(math.log1p(math.expm1(eps) / (1 - p0)))))
        ours = pld.get_delta_for_epsilon(eps)
        assert closed <= ours <= closed + 3e-4
        revealed = float(np.sum(w * gauss(eps)))  # equal total variation at ε = 0, strictly larger after
        assert ours <= revealed + 1e-12 and (eps == 0.0 or ours < revealed)
        assert lower.get_delta_for_epsilon(eps) <= ours


def test_fdp_with_one_affected_root_is_sampling_without_replacement():
    fdp, wor = fdp_pld(2.0, 140, 70, 1), wor_pld("gaussian", 2.0, 0.5)
    for eps in (0.0, 0.5, 2.0):
        assert fdp.get_delta_for_epsilon(eps) == wor.get_delta_for_epsilon(eps)


def test_huge_counts_are_refused_in_one_line_and_the_sound_values_fall_back_to_rdp():
    ev = SampledWithoutReplacementEvent(0.01, GaussianEvent(1.0))
    with pytest.raises(ValueError, match=r"count must be in \[1, 100000000\].*'rdp'"):
        get_accountant("pld").compose(ev, MAX_COMPOSITIONS + 1).get_epsilon(1e-5)
    steps = 10**9
    assert D.drw_sound_epsilon(20.0, 0.001, steps, 1e-5) == get_accountant("rdp").compose(
        ev.__class__(0.001, GaussianEvent(20.0)), steps
    ).get_epsilon(1e-5)
    assert D.fdp_sound_epsilon(steps, 50.0, 1000, 10, 5, 1e-5) == fdp_epsilon(steps, 50.0, 1000, 10, 5, 1e-5)[0]
    # a step too large to build (10^5 affected-root counts): the RDP value, no MemoryError
    big = (10, 0.01, 10**6, 10**5, 10**5, 1e-5)
    assert D.fdp_sound_epsilon(*big) == fdp_epsilon(*big)[0]


def test_drw_and_fdp_runs_carry_the_tight_sound_epsilon_and_keep_the_published_one():
    drw = D.run_accounting("drw", noise_multiplier=4.0, steps=300, delta=1e-7, sample_rate=0.45)
    assert drw["epsilon"] == D.drw_epsilon(4.0, 0.45, 300, 1e-7)  # the authors' accountant, unchanged
    assert drw["epsilon_sound"] < 0.6 * drw["epsilon"]
    fdp = D.run_accounting("fdp", noise_multiplier=4.0, steps=100, delta=1e-5, num_train=140, batch=70, max_affected=5)
    assert fdp["epsilon"] == fdp_epsilon(100, 4.0, 140, 70, 5, 1e-5)[0]
    assert fdp["epsilon_sound"] < fdp["epsilon"]
    # rate 1 (no sampling): the exact Gaussian composition
    exact = get_accountant("exact_gaussian").compose(GaussianEvent(8.0), 177).get_epsilon(1e-5)
    assert D.drw_sound_epsilon(8.0, 1.0, 177, 1e-5) == pytest.approx(exact, rel=1e-12)
    assert D.drw_sound_epsilon(8.0, 1.0, 0, 1e-5) == 0.0


def test_dpsgd_calculator_with_uniform_sampling_uses_the_pld():
    """``dpgnn epsilon dpsgd --sampling uniform --accountant pld`` composes the event it prints with the
    without-replacement PLD (it used to be refused), below the ``rdp`` value."""
    import json

    from typer.testing import CliRunner

    from dpgnn.cli.epsilon import app

    args = ["dpsgd", "-z", "1.0", "-q", "0.01", "-t", "100", "--delta", "1e-5", "--sampling", "uniform", "--json"]
    res = CliRunner().invoke(app, args + ["--accountant", "pld"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    leaf = out["event"]["inner"] if out["event"]["event"] == "self_composed" else out["event"]
    ev = SampledWithoutReplacementEvent(leaf["sample_rate"], GaussianEvent(leaf["inner"]["noise_multiplier"]))
    assert out["epsilon"] == get_accountant("pld").compose(ev, 100).get_epsilon(1e-5)
    rdp = json.loads(CliRunner().invoke(app, args).stdout.strip().splitlines()[-1])
    assert out["epsilon"] < 0.8 * rdp["epsilon"]
