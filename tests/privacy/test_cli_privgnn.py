"""``dpgnn epsilon privgnn`` / ``dpgnn epsilon pate``: JSON equals the library, errors name the option, no number."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.privacy.pate import pate_epsilon, privgnn_epsilon, theorem7_epsilon

runner = CliRunner()


def _json(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    return json.loads(lines[0])


def test_privgnn_json_golden():
    out = _json(["privgnn", "--lam", "0.4", "--queries", "1000", "--gamma", "0.3", "--delta", "1e-3", "--json"])
    assert abs(out["epsilon"] - 19.81) <= 0.01
    assert out["epsilon"] == privgnn_epsilon(0.4, 1000, 0.3, 1e-3)
    assert out["epsilon_theorem7"] == pytest.approx(theorem7_epsilon(0.4, 1000, 0.3, 1e-3))
    assert out["accountant"] == "autodp_rdp_acct" and out["queries"] == 1000 and out["gamma"] == 0.3
    assert out["delta"] == 1e-3 and out["lam"] == 0.4
    rdp = _json(
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
            "--accountant",
            "rdp",
            "--json",
        ]
    )
    assert rdp["epsilon"] < out["epsilon"]


def test_privgnn_text():
    res = runner.invoke(app, ["privgnn", "--lam", "0.1", "--queries", "500", "--gamma", "0.3", "--delta", "1e-3"])
    assert res.exit_code == 0 and res.stdout.startswith("privgnn: epsilon = 2.67")


def test_pate_independent_and_votes(tmp_path):
    out = _json(["pate", "--lam", "0.1", "--queries", "1000", "--delta", str(1 / 2500), "--json"])
    assert abs(out["epsilon"] - 47.82) <= 0.01 and out["data_dependent"] is False
    counts = np.tile([20, 0, 0], (5, 1))
    f = tmp_path / "votes.csv"
    np.savetxt(f, counts, delimiter=",", fmt="%d")
    dep = _json(["pate", "--lam", "0.5", "--queries", "5", "--delta", "1e-5", "--votes", str(f), "--json"])
    lib = pate_epsilon(0.5, 5, 1e-5, counts)
    assert dep["data_dependent"] is True and dep["epsilon"] == pytest.approx(lib.epsilon)
    assert dep["epsilon"] < dep["epsilon_data_independent"]
    np.save(tmp_path / "votes.npy", counts)
    dep2 = _json(
        ["pate", "--lam", "0.5", "--queries", "5", "--delta", "1e-5", "--votes", str(tmp_path / "votes.npy"), "--json"]
    )
    assert dep2["epsilon"] == dep["epsilon"]


@pytest.mark.parametrize(
    "args,option",
    [
        (["privgnn", "--lam", "0", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3"], "--lam"),
        (["privgnn", "--lam", "-1", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3"], "--lam"),
        (["privgnn", "--lam", "0.1", "--queries", "10", "--gamma", "1.5", "--delta", "1e-3"], "--gamma"),
        (["privgnn", "--lam", "0.1", "--queries", "10", "--gamma", "0", "--delta", "1e-3"], "--gamma"),
        (["privgnn", "--lam", "0.1", "--queries", "0", "--gamma", "0.3", "--delta", "1e-3"], "--queries"),
        (["privgnn", "--lam", "0.1", "--queries", "10", "--gamma", "0.3", "--delta", "2"], "--delta"),
        (
            ["privgnn", "--lam", "0.1", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3", "--accountant", "x"],
            "--accountant",
        ),
        (["pate", "--lam", "0", "--queries", "10", "--delta", "1e-3"], "--lam"),
        (["pate", "--lam", "0.1", "--queries", "10", "--delta", "0"], "--delta"),
        (["pate", "--lam", "0.1", "--queries", "10", "--delta", "1e-3", "--votes", "/nonexistent.csv"], "--votes"),
    ],
)
def test_bad_inputs_exit_2_without_number(args, option):
    res = runner.invoke(app, args + ["--json"])
    assert res.exit_code == 2
    assert option in res.output
    assert "epsilon" not in res.stdout


def test_votes_row_count_must_match(tmp_path):
    f = tmp_path / "v.csv"
    np.savetxt(f, np.ones((3, 2)), delimiter=",", fmt="%d")
    res = runner.invoke(app, ["pate", "--lam", "0.1", "--queries", "4", "--delta", "1e-3", "--votes", str(f)])
    assert res.exit_code == 2 and "--votes" in res.output
