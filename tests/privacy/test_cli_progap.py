"""``dpgnn epsilon progap``: JSON output, calibration (ε ≤ target), reference tables, bad inputs exit 2 naming the
option."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from dpgnn.cli import app
from dpgnn.privacy import ComposedEvent, GaussianEvent, PoissonSampledEvent, SelfComposedEvent, epsilon
from dpgnn.privacy.analytic import gaussian_epsilon

runner = CliRunner()


def _run(*args):
    res = runner.invoke(app, ["epsilon", "progap", *map(str, args)])
    return res


def _json(*args):
    res = _run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_edge_epsilon_matches_independent_gaussian_profile():
    out = _json("--level", "edge", "--sigma", 6.617, "--depth", 2, "--delta", 1e-7)
    # K Gaussians of std sigma = one Gaussian of std sigma/sqrt(K) (Balle-Wang exact profile)
    assert out["epsilon"] == pytest.approx(gaussian_epsilon(6.617 / math.sqrt(2), 1e-7), rel=1e-9)
    assert out["epsilon"] == pytest.approx(1.0, abs=1e-3)  # docs/papers/progap.md#edge-level-privacy table, K=2, eps=1
    # Theorem 4.1 at that sigma (docs/papers/progap.md#edge-level-privacy)
    assert out["epsilon_paper_bound"] == pytest.approx(1.236, abs=1e-3)
    assert out["sigma"] == 6.617 and out["accountant"] == "exact_gaussian"


@pytest.mark.parametrize("k,eps,expected", [(1, 0.25, 17.343), (3, 1.0, 8.104), (5, 4.0, 2.902)])
def test_edge_calibration_reproduces_spec_sigma(k, eps, expected):
    out = _json("--level", "edge", "--target-epsilon", eps, "--depth", k, "--delta", 1e-7)
    assert out["calibrated"] and out["epsilon"] <= eps
    assert out["sigma"] == pytest.approx(expected, rel=5e-4)  # 3 significant digits (and more)


@pytest.mark.parametrize("k,ours,authors", [(1, 4.679, 4.977), (2, 6.617, 7.038), (3, 8.104, 8.620)])
def test_edge_calibration_authors_code_fidelity(k, ours, authors):
    # measured side by side: the official code's NAP falls back to autodp's RDP composition (autodp 0.2.3.1)
    paper = _json("--level", "edge", "--target-epsilon", 1, "--depth", k, "--delta", 1e-7)
    auth = _json("--level", "edge", "--target-epsilon", 1, "--depth", k, "--delta", 1e-7, "--fidelity", "authors_code")
    assert paper["sigma"] == pytest.approx(ours, abs=1e-3) and paper["fidelity"] == "paper"
    assert auth["sigma"] == pytest.approx(authors, abs=1e-3) and auth["fidelity"] == "authors_code"
    assert auth["accountant"] == "autodp_composition" and auth["epsilon"] <= 1.0
    # the looser accountant is still a valid bound: the exact ε of the authors' σ is below the target
    exact = _json("--level", "edge", "--sigma", auth["sigma"], "--depth", k, "--delta", 1e-7)
    assert exact["epsilon"] < auth["epsilon"] <= 1.0


def test_node_epsilon_and_calibration():
    common = (
        "--level",
        "node",
        "--depth",
        1,
        "--max-degree",
        100,
        "--batch-size",
        256,
        "--train-nodes",
        19804,
        "--epochs-per-stage",
        5,
        "--delta",
        1e-5,
    )
    cal = _json(*common, "--target-epsilon", 8)
    # docs/papers/progap.md#node-level-privacy
    assert cal["epsilon"] <= 8 and cal["noise_multiplier"] == pytest.approx(0.773, abs=2e-3)
    given = _json(*common, "--noise-multiplier", cal["noise_multiplier"])
    assert given["epsilon"] == pytest.approx(cal["epsilon"], rel=1e-9)
    # the same event built by hand, through the independent RDP accountant
    q, steps = 256 / 19804, 5 * 19804 // 256  # the authors' count (386) >= the 5 * (19804 // 256) = 385 trained
    z = cal["noise_multiplier"]
    ev = ComposedEvent([GaussianEvent(z), SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(z)), 2 * steps)])
    assert epsilon(ev, 1e-5, "rdp") == pytest.approx(given["epsilon"], rel=0.05)
    assert given["epsilon_paper_bound"] >= given["epsilon"]
    assert given["sample_rate"] == pytest.approx(q) and given["steps_per_stage"] == steps
    assert given["sigma_nap"] == pytest.approx(10 * z)


@pytest.mark.parametrize("epochs,depth,expected", [(5, 2, 0.982), (10, 1, 0.833), (10, 3, 1.236)])
def test_node_calibration_reproduces_spec_z_to_three_digits(epochs, depth, expected):
    # docs/papers/progap.md#node-level-privacy reference z (N_train = 19,804, B = 256, delta = 1e-5, eps = 8); with the
    # trained step count (E * floor(N/B)) these come out 0.1% lower (0.981, 0.832, 1.236): the accountant counts
    # floor(E*N/B) steps
    from dpgnn.privacy import progap as pg

    assert pg.accounted_steps(19804, 256, epochs) == epochs * 19804 // 256 > pg.stage_steps(19804, 256, epochs)[1]
    cal = pg.calibrate_noise(
        "node",
        8.0,
        1e-5,
        aggregations=depth,
        dpsgd_runs=depth + 1,
        train_nodes=19804,
        batch_size=256,
        epochs=epochs,
        accountant="autodp",
        rtol=1e-5,
    )
    assert cal.epsilon <= 8.0 and round(cal.value, 3) == expected


def test_text_output():
    res = _run("--level", "edge", "--sigma", 4, "--depth", 1, "--delta", 1e-6)
    assert res.exit_code == 0 and "epsilon =" in res.stdout and "Theorem 4.1" in res.stdout


@pytest.mark.parametrize(
    "args,option",
    [
        (("--level", "graph", "--sigma", 1, "--depth", 1, "--delta", 1e-5), "--level"),
        (("--level", "edge", "--sigma", -1, "--depth", 1, "--delta", 1e-5), "--sigma"),
        (("--level", "edge", "--sigma", 1, "--depth", 0, "--delta", 1e-5), "--depth"),
        (("--level", "edge", "--sigma", 1, "--depth", 1, "--delta", 2), "--delta"),
        (("--level", "edge", "--depth", 1, "--delta", 1e-5), "--target-epsilon"),
        (("--level", "edge", "--sigma", 1, "--target-epsilon", 1, "--depth", 1, "--delta", 1e-5), "exactly one"),
        (("--level", "edge", "--noise-multiplier", 1, "--depth", 1, "--delta", 1e-5), "--noise-multiplier"),
        (("--level", "edge", "--sigma", 1, "--depth", 1, "--delta", 1e-5, "--max-degree", 3), "--max-degree"),
        (("--level", "node", "--noise-multiplier", 1, "--depth", 1, "--delta", 1e-5), "--max-degree"),
        (
            (
                "--level",
                "node",
                "--noise-multiplier",
                1,
                "--depth",
                1,
                "--delta",
                1e-5,
                "--max-degree",
                5,
                "--batch-size",
                500,
                "--train-nodes",
                100,
                "--epochs-per-stage",
                1,
            ),
            "--batch-size",
        ),
        (("--level", "edge", "--target-epsilon", 0, "--depth", 1, "--delta", 1e-5), "--target-epsilon"),
        (("--level", "edge", "--sigma", 1, "--depth", 1, "--delta", 1e-5, "--fidelity", "official"), "--fidelity"),
    ],
)
def test_bad_inputs_exit_2_and_name_the_option(args, option):
    res = _run(*args, "--json")
    assert res.exit_code == 2
    assert option in res.output
    assert not res.stdout.strip().startswith("{")


def test_unreachable_target_says_so_and_names_the_returned_epsilon():
    """``--target-epsilon 1e5`` is out of reach: the output says so and names ε = 546, never "calibrated to"."""
    res = _run("--level", "edge", "--target-epsilon", "1e5", "--depth", 2, "--delta", 1e-7)
    assert res.exit_code == 0, res.output
    assert "calibrated to" not in res.stdout
    assert "cannot be reached" in res.stderr and "epsilon = 546.142" in res.stderr
    assert "NOT reached" in res.stdout
    out = _json("--level", "edge", "--target-epsilon", "1e5", "--depth", 2, "--delta", 1e-7)
    assert out["target_reached"] is False and out["epsilon"] == pytest.approx(546.142, abs=1e-3)
    ok = _json("--level", "edge", "--target-epsilon", 1, "--depth", 2, "--delta", 1e-7)
    assert ok["target_reached"] is True


def test_node_level_prints_the_tightest_sound_value_beside_the_authors_accountant():
    """autodp (the authors' accountant, which calibrates the stored runs) is 1.06-1.08x above the PLD of the same
    steps; the calculator gives both, the tighter as epsilon_sound."""
    args = [
        "epsilon",
        "progap",
        "--level",
        "node",
        "-k",
        "2",
        "-z",
        "1.5",
        "--delta",
        "1e-5",
        "--batch-size",
        "256",
        "--train-nodes",
        "10000",
        "--epochs-per-stage",
        "10",
        "--max-degree",
        "100",
        "--json",
    ]
    out = json.loads(runner.invoke(app, args).stdout)
    pld = json.loads(runner.invoke(app, [*args, "--accountant", "pld"]).stdout)
    assert out["accountant"] == "autodp" and out["sound_accountant"] == "pld"
    assert out["epsilon_sound"] == pytest.approx(pld["epsilon"]) and out["epsilon_sound"] < out["epsilon"]
