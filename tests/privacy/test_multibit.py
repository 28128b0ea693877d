"""Multi-bit mechanism (LPGNN Algorithm 1): rule for m, rectifier unbiasedness, exact and empirical LDP, CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.privacy import MultiBitMechanism, get_mechanism, optimal_m


def test_registered_and_m_rule():
    mech = get_mechanism("multibit", epsilon=1.0)
    assert isinstance(mech, MultiBitMechanism) and isinstance(get_mechanism("MBM", epsilon=1.0), MultiBitMechanism)
    # m* = max(1, min(d, floor(eps / 2.18)))
    assert [optimal_m(e, 1432) for e in (0.01, 0.1, 1, 2, 3)] == [1, 1, 1, 1, 1]
    assert optimal_m(4.36, 1432) == 2 and optimal_m(10.0, 1432) == 4 and optimal_m(100.0, 5) == 5
    assert mech.m_for(1432) == 1
    assert get_mechanism("multibit", epsilon=8.0, m=3).m_for(10) == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": 1.0, "m": 0}, r"m must be"),
        ({"epsilon": 1.0, "m": 2.5}, r"m must be"),
        ({"epsilon": 1.0, "m": 5, "num_features": 4}, r"\[1, 4\]"),
    ],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_mechanism("multibit", **kwargs)


def test_bad_inputs():
    mech = get_mechanism("multibit", epsilon=1.0, m=4)
    with pytest.raises(ValueError, match=r"\[1, 3\]"):
        mech.perturb(torch.rand(2, 3), 0)
    with pytest.raises(ValueError, match="outside"):
        get_mechanism("multibit", epsilon=1.0).perturb(torch.full((2, 3), 1.5), 0)
    with pytest.raises(ValueError, match=r"\{-1, 0, 1\}"):
        mech.estimate(torch.full((2, 5), 0.5))


@pytest.mark.parametrize("m", [1, 3, 6])
def test_encoder_shape_support_and_seed(m):
    mech = get_mechanism("multibit", epsilon=2.0, m=m)
    x = torch.rand(50, 6, generator=torch.Generator().manual_seed(1))
    out = mech.perturb(x, 7)
    assert set(out.unique().tolist()) <= {-1.0, 0.0, 1.0}
    assert ((out != 0).sum(dim=1) == m).all()
    assert torch.equal(out, mech.perturb(x, 7))
    assert not torch.equal(out, mech.perturb(x, 8))
    row, col, sign = mech.encode_sparse(x, 7)
    dense = torch.zeros_like(x)
    dense[row, col] = sign
    assert torch.equal(dense, out)


@pytest.mark.parametrize("m", [1, 2, 5])
def test_rectifier_unbiased_and_variance(m):
    d, n = 5, 200_000
    x = torch.tensor([0.0, 0.2, 0.5, 0.9, 1.0], dtype=torch.float64)
    mech = get_mechanism("multibit", epsilon=1.5, m=m, low=0.0, high=1.0)
    est = mech(x.expand(n, d).contiguous(), 3)
    var = mech.variance(x)
    # independent variance formula: E[x'^2] - x^2 with P(x*_i != 0) = m/d
    c = d / (2 * m) * (math.exp(1.5 / m) + 1) / (math.exp(1.5 / m) - 1)
    assert torch.allclose(var, torch.as_tensor(c * c * m / d - (x - 0.5) ** 2), rtol=1e-12)
    se = (var / n).sqrt()
    assert ((est.mean(0) - x).abs() <= 5 * se).all(), (est.mean(0), x)
    assert torch.allclose(est.var(0), var, rtol=0.03)


def _all_outputs(d: int, m: int):
    for support in itertools.combinations(range(d), m):
        for signs in itertools.product((-1.0, 1.0), repeat=m):
            out = [0.0] * d
            for i, s in zip(support, signs):
                out[i] = s
            yield out


@pytest.mark.parametrize("eps, m", [(0.5, 1), (1.0, 2), (3.0, 3), (6.0, 2)])
def test_exact_ldp_ratio_over_all_outputs(eps, m):
    """Enumerate every report of a d = 3 vector: P(x*|x) / P(x*|x') <= e^eps, with equality at the extremes."""
    mech = get_mechanism("multibit", epsilon=eps, m=m)
    rng = np.random.default_rng(0)
    inputs = [np.zeros(3), np.ones(3), np.array([0.0, 1.0, 0.3])] + [rng.random(3) for _ in range(4)]
    worst = 0.0
    for x, xp in itertools.permutations(inputs, 2):
        total = 0.0
        for out in _all_outputs(3, m):
            p, q = mech.output_probability(x, out), mech.output_probability(xp, out)
            total += p
            assert p > 0 and q > 0
            worst = max(worst, p / q)
        assert total == pytest.approx(1.0, abs=1e-12)
    assert worst <= math.exp(eps) * (1 + 1e-12)
    assert worst == pytest.approx(math.exp(eps), rel=1e-9)  # x = 0 vs x = 1 attains the bound


def test_empirical_output_ratio_below_e_eps():
    """Sampled reports: empirical frequencies match the exact law and their ratios stay below e^eps."""
    eps, n = 1.0, 400_000
    mech = get_mechanism("multibit", epsilon=eps, m=1)
    freqs = []
    for value in (0.0, 1.0):
        x = torch.full((n, 2), value, dtype=torch.float64)
        out = mech.perturb(x, 11)
        code = (out[:, 0] + 1) * 3 + (out[:, 1] + 1)  # 4 possible reports
        counts = torch.bincount(code.long(), minlength=9).double() / n
        freqs.append(counts)
        for out_vec in _all_outputs(2, 1):
            k = int((out_vec[0] + 1) * 3 + (out_vec[1] + 1))
            exact = mech.output_probability([value, value], out_vec)
            assert counts[k].item() == pytest.approx(exact, abs=5 * math.sqrt(exact / n))
    nz = (freqs[0] > 0) & (freqs[1] > 0)
    ratio = (freqs[0][nz] / freqs[1][nz]).max().item()
    assert ratio <= math.exp(eps) * 1.03 and ratio > math.exp(eps) * 0.97


def test_one_bit_is_m_equals_d():
    mech = get_mechanism("multibit", epsilon=4.0, m=4)
    out = mech.perturb(torch.rand(10, 4), 0)
    assert (out != 0).all()
    # each coordinate is then the eps/d randomised bit rescaled by d
    assert mech.scale(4) == pytest.approx(4 / 2 / 4 / math.tanh(4.0 / 8))


# -- dpgnn epsilon lpgnn -------------------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_lpgnn_json_and_independent_check():
    res = runner.invoke(
        app, ["lpgnn", "--feature-epsilon", "1", "--label-epsilon", "2", "--num-features", "3", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip())
    assert out["epsilon"] == pytest.approx(3.0) and out["delta"] == 0.0 and out["m"] == 1
    # independent: exact worst ratio of the joint report (multi-bit features x RR label, c = 4 classes)
    mech = get_mechanism("multibit", epsilon=1.0, m=1)
    rr = get_mechanism("rr", epsilon=2.0, num_classes=4).transition_matrix().numpy()
    worst = 0.0
    for (x, y), (xp, yp) in itertools.permutations([(np.zeros(3), 0), (np.ones(3), 1), (np.full(3, 0.5), 2)], 2):
        for out_vec in _all_outputs(3, 1):
            for lab in range(4):
                p = mech.output_probability(x, out_vec) * rr[y, lab]
                q = mech.output_probability(xp, out_vec) * rr[yp, lab]
                worst = max(worst, p / q)
    assert math.log(worst) == pytest.approx(out["epsilon"], rel=1e-9)
    assert math.log(worst) <= out["epsilon"] + 1e-12  # never under-reported


def test_cli_lpgnn_text_inf_and_errors():
    res = runner.invoke(app, ["lpgnn", "-x", "inf", "-y", "1", "-d", "10"])
    assert res.exit_code == 0 and "epsilon = inf" in res.stdout
    res = runner.invoke(app, ["lpgnn", "-x", "1", "-y", "1", "-d", "10", "--mechanism", "agm", "--json"])
    assert json.loads(res.stdout)["delta"] == 1e-10
    for args, msg in (
        [["-x", "0", "-y", "1", "-d", "3"], "--feature-epsilon"],
        [["-x", "1", "-y", "-2", "-d", "3"], "--label-epsilon"],
        [["-x", "1", "-y", "1", "-d", "3", "--m", "4"], "[1, 3]"],
        [["-x", "1", "-y", "1", "-d", "3", "--mechanism", "xyz"], "--mechanism"],
    ):
        res = runner.invoke(app, ["lpgnn", *args, "--json"])
        assert res.exit_code == 2 and msg in res.output and not res.stdout.strip().startswith("{")
