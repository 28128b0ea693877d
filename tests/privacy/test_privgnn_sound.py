"""PrivGNN's sound per-query ε: noisy argmax with Laplace(1/λ) noise on a probability vector.

The bound is checked against the exact output distribution (numerical integration, independent of the vertex
argument), against sampled output frequencies for 2-10 classes, and the CLI prints it beside the paper's ε.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.privacy.guarantee import check_ledger
from dpgnn.privacy.pate import privgnn_epsilon
from dpgnn.privacy.privgnn import (
    noisy_argmax_distribution,
    query_epsilon,
    query_epsilon_exact,
    sound_epsilon,
    statement_as_published,
    statement_sound,
)

CLASSES = range(2, 11)


def test_issue_values():
    assert query_epsilon_exact(1.0, 10) == pytest.approx(1.137, abs=5e-4)  # issue: 10 classes, λ = 1 → 1.137
    assert query_epsilon_exact(0.4, 5) == pytest.approx(0.467, abs=1e-3)  # issue: 5 classes, λ = 0.4 → 0.467
    assert query_epsilon_exact(0.4, 5) > 0.4 and query_epsilon_exact(1.0, 10) > 1.0  # above the paper's λ


@pytest.mark.parametrize("c", CLASSES)
def test_bound_against_exact_distribution(c):
    """For random posteriors p, p' (and the vertices) every output's log-ratio stays below the bound, the
    vertices attain it, and the bound is below the sensitivity-2 bound 2λ."""
    rng = np.random.default_rng(c)
    for lam in (0.4, 1.0):
        eps0 = query_epsilon_exact(lam, c)
        assert eps0 <= 2 * lam and query_epsilon(lam, c) == eps0 and query_epsilon(lam) == 2 * lam
        e = np.eye(c)
        pv, pw = noisy_argmax_distribution(e[0], lam), noisy_argmax_distribution(e[1], lam)
        assert pv.sum() == pytest.approx(1.0, abs=1e-9) and pw.sum() == pytest.approx(1.0, abs=1e-9)
        assert math.log(pv[0] / pw[0]) == pytest.approx(eps0, abs=1e-9)
        worst = 0.0
        for _ in range(3):
            p, q = rng.dirichlet(np.full(c, 0.3)), rng.dirichlet(np.full(c, 0.3))
            a, b = noisy_argmax_distribution(p, lam), noisy_argmax_distribution(q, lam)
            worst = max(worst, float(np.max(np.abs(np.log(a / b)))))
        assert worst <= eps0


@pytest.mark.parametrize("c", CLASSES)
def test_sampled_audit(c):
    """2·10⁵ noisy argmaxes per input: the empirical log-ratio at the worst output matches the bound (and exceeds
    the paper's per-query λ for c >= 3), no output exceeds it beyond sampling error."""
    lam, n = 1.0, 200_000
    rng = np.random.default_rng(1000 + c)
    e = np.eye(c)
    f = [np.bincount((e[i] + rng.laplace(scale=1 / lam, size=(n, c))).argmax(1), minlength=c) / n for i in (0, 1)]
    eps0 = query_epsilon_exact(lam, c)
    emp = np.log(f[0] / f[1])
    se = np.sqrt((1 - f[0]) / (n * f[0]) + (1 - f[1]) / (n * f[1]))  # delta-method std of the log-ratio
    assert emp[0] == pytest.approx(eps0, abs=5 * se[0])
    assert np.all(np.abs(emp) <= eps0 + 5 * se)
    if c >= 3:
        assert eps0 > lam


def test_sound_composition():
    eps0 = query_epsilon(0.4, 10)
    s = sound_epsilon(0.4, 1000, 0.3, 1e-4, 10)
    assert s <= 1000 * eps0
    assert sound_epsilon(0.4, 1000, 0.3, 1e-4) >= s  # 2λ per query without the class count
    assert sound_epsilon(0.4, 500, 0.3, 1e-4, 10) < s < sound_epsilon(0.4, 1000, 0.5, 1e-4, 10)
    # one unsampled query is randomised response RR(ε₀): δ(ε) = (e^ε₀ − e^ε) / (1 + e^ε₀) in closed form
    closed = math.log(math.exp(eps0) - 1e-4 * (1 + math.exp(eps0)))
    assert sound_epsilon(0.4, 1, 1.0, 1e-4, 10) == pytest.approx(closed, rel=1e-8)
    assert sound_epsilon(0.4, 1, 1.0, 1e-4, 10, subsampling="once") == pytest.approx(closed, rel=1e-8)
    with pytest.raises(ValueError, match="num_classes"):
        sound_epsilon(0.4, 10, 0.3, 1e-4, 1)


def test_statements():
    pub = statement_as_published(0.4, 1000, 0.3, 1e-3, 10, delta_sound=1e-4)
    assert pub["guarantee"] == "as_published" and pub["issues"] and pub["not_covered"] == []
    assert pub["epsilon_sound"] == sound_epsilon(0.4, 1000, 0.3, 1e-4, 10)
    check_ledger(pub)
    assert check_ledger(statement_sound(0.4, 1000, 0.3, 1e-4, 10))["guarantee"] == "sound"


def test_cli_prints_both():
    runner = CliRunner()
    res = runner.invoke(
        app,
        [
            "privgnn",
            "--lam",
            "0.4",
            "--queries",
            "1000",
            "--gamma",
            "0.3",
            "--delta",
            "1e-3",
            "--num-classes",
            "10",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["epsilon"] == privgnn_epsilon(0.4, 1000, 0.3, 1e-3) and abs(out["epsilon"] - 19.81) <= 0.01
    assert out["epsilon_sound"] == sound_epsilon(0.4, 1000, 0.3, 1e-3, 10) > out["epsilon"]
    assert out["num_classes"] == 10 and out["guarantee"] == "as_published"
    res = runner.invoke(
        app, ["privgnn", "--lam", "0.4", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3", "--num-classes", "1"]
    )
    assert res.exit_code == 2 and "--num-classes" in res.output
