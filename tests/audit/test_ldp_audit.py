"""LDP audits: tight for correct mechanisms, never above their claim; the broken variant is flagged."""

import pytest

from dpgnn.audit.ldp import BROKEN, MECHANISMS, HalvedScaleLaplace, audit_mechanism, sample_reports


@pytest.mark.parametrize("name", ["laplace", "piecewise", "pgc", "mbm", "1bm", "lpm", "rr"])
@pytest.mark.parametrize("eps", [1.0, 4.0])
def test_correct_mechanisms_tight_and_not_flagged(name, eps):
    r = audit_mechanism(name, eps, trials=100_000, seed=0)
    assert not r["violation"]
    assert r["epsilon_lb"] <= eps
    assert r["epsilon_lb"] >= 0.7 * eps, f"{name} at ε={eps}: audit not tight ({r['epsilon_lb']:.3f})"


def test_gaussian_baseline_is_below_its_claim():
    r = audit_mechanism("agm", 2.0, trials=100_000, seed=0)
    assert 0 < r["epsilon_lb"] < 2.0 and r["delta"] == 1e-10


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_broken_mechanism_is_flagged(eps):
    """The Laplace mechanism with its noise scale halved claims ε but is 2ε-LDP: the audit must catch it."""
    r = audit_mechanism("broken_laplace", eps, trials=100_000, seed=0)
    assert r["violation"]
    assert r["epsilon_lb"] > 1.3 * eps


def test_broken_variant_is_really_halved():
    m = HalvedScaleLaplace(2.0)
    assert m.scale == pytest.approx(0.25) and m.epsilon == 2.0
    assert "broken_laplace" in BROKEN and "broken_laplace" not in MECHANISMS


def test_reports_are_seeded_and_validated():
    a = sample_reports("pgc", 1.0, 100, seed=0)
    b = sample_reports("pgc", 1.0, 100, seed=0)
    assert (a[0] == b[0]).all() and (a[1] == b[1]).all()
    with pytest.raises(ValueError, match="unknown mechanism"):
        sample_reports("nope", 1.0, 100, seed=0)
    with pytest.raises(ValueError):
        sample_reports("pgc", 1.0, 2, seed=0)
