"""The ``pld`` accountant's size check: it refuses in one line what it cannot build, and changes no number it lets
through (compared with ``dp_accounting`` called directly, without the check)."""

from __future__ import annotations

import math

import pytest

from dpgnn.privacy import GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent, epsilon
from dpgnn.privacy.pld_limits import (
    MAX_STEP_POINTS,
    TooLargeToAccount,
    bounded_convolutions,
    check_steps,
    step_points,
)


def _direct(z: float, q: float, steps: int, delta: float) -> float:
    """ε of ``steps`` Poisson-subsampled Gaussians straight from dp_accounting (no dpgnn code in between)."""
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(
        dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-3
    )
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), steps)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize(
    "z, q, steps",
    [
        (0.6, 0.001, 10),  # dense step PMF
        (1.0, 0.02, 300),
        (4.0, 1e-6, 200),  # a 3-point (sparse) step PMF: the dense path is taken without size ** steps
        (30.0, 0.01, 5),  # sparse, few steps: the library's own sparse composition
    ],
)
def test_numbers_are_unchanged(z, q, steps):
    ours = epsilon(SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(z)), steps), 1e-5, "pld")
    assert ours == _direct(z, q, steps, 1e-5)


def test_a_composition_above_the_limit_is_refused_before_it_is_allocated():
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(
        dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-3
    )
    with bounded_convolutions(max_points=1000), pytest.raises(TooLargeToAccount, match=r"limit 1,000\); use"):
        acc.compose(dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.0)), 300)
    with bounded_convolutions():  # restored afterwards, and the default limit lets it through
        acc.compose(dpa.PoissonSampledDpEvent(0.02, dpa.GaussianDpEvent(1.0)), 300)
    from dp_accounting.pld import common, pld_pmf

    assert common.self_convolve.__module__ == "dp_accounting.pld.common"
    assert pld_pmf.SparsePLDPmf.self_compose.__module__ == "dp_accounting.pld.pld_pmf"


def test_the_accountant_refuses_in_one_line():
    ev = SelfComposedEvent(PoissonSampledEvent(0.01, GaussianEvent(1.0)), 10**12)
    with pytest.raises(TooLargeToAccount) as info:
        epsilon(ev, 1e-5, "pld")
    assert "\n" not in str(info.value) and "'rdp'" in str(info.value)
    assert math.isfinite(epsilon(ev, 1e-5, "rdp"))  # what the message offers works


@pytest.mark.parametrize("z, q", [(0.2, 1.0), (0.5, 1.0), (1.0, 1.0), (1.0, 0.01), (4.0, 0.5), (100.0, 1.0)])
def test_the_step_estimate_is_above_the_real_size(z, q):
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    pld = pld_lib.from_gaussian_mechanism(z, sampling_prob=q, value_discretization_interval=1e-3)
    real = max(pld._pmf_remove.size, pld._pmf_add.size)
    est = step_points(PoissonSampledEvent(q, GaussianEvent(z)) if q < 1 else GaussianEvent(z), 1e-3)
    assert real <= est  # an upper estimate; close without sampling (which only narrows the loss range)
    assert q < 1 or est <= 1.2 * real + 100


def test_a_step_too_small_to_build_is_refused():
    check_steps(((GaussianEvent(0.05), 10),), 1e-3)
    with pytest.raises(TooLargeToAccount, match="one step"):
        check_steps(((GaussianEvent(1e-3), 10),), 1e-3)
    assert step_points(LaplaceEvent(1e-6), 1e-3) > MAX_STEP_POINTS
