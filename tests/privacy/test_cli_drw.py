"""``dpgnn epsilon drw`` / ``fdp``: JSON equals the library; q formula; clear errors with exit status 2."""

import json

import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.privacy import GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent, epsilon
from dpgnn.privacy.drw import drw_sound_epsilon, fdp_sound_epsilon
from dpgnn.privacy.fdp import fdp_epsilon

runner = CliRunner()


def _json(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    return json.loads(lines[0])


def test_drw_json_matches_library_and_q_formula():
    # -z is std / C; the replace-one sensitivity 2C makes the event's multiplier 4 / 2 = 2
    out = _json(
        [
            "drw",
            "--noise-multiplier",
            "4",
            "--batch-size",
            "1800",
            "--train-nodes",
            "9716",
            "--walk-length",
            "2",
            "--restarts",
            "2",
            "--steps",
            "50",
            "--delta",
            "1e-5",
            "--json",
        ]
    )
    q = 1800 / -(-9716 // 5)
    assert out["sample_rate"] == pytest.approx(q) and out["min_subgraphs"] == 1944
    ev = SelfComposedEvent(SampledWithoutReplacementEvent(q, GaussianEvent(2.0)), 50)
    assert out["epsilon"] == pytest.approx(epsilon(ev, 1e-5, "autodp"), rel=1e-12)
    assert out["accountant"] == "autodp" and out["restarts"] == 2 and out["steps"] == 50
    assert out["noise_multiplier"] == 4.0 and out["noise_multiplier_accounted"] == 2.0
    assert out["sensitivity"].startswith("2C")
    rdp = _json(
        [
            "drw",
            "-z",
            "4",
            "-b",
            "1800",
            "-n",
            "9716",
            "-l",
            "2",
            "-r",
            "2",
            "-t",
            "50",
            "--delta",
            "1e-5",
            "--accountant",
            "rdp",
            "--json",
        ]
    )
    assert rdp["epsilon"] == pytest.approx(out["epsilon"], rel=0.25)
    assert out["epsilon_sound"] == drw_sound_epsilon(2.0, q, 50, 1e-5) < out["epsilon"]


def test_drw_full_batch_is_plain_gaussian_composition():
    out = _json(["drw", "-z", "8", "-b", "70", "-n", "140", "-l", "1", "-t", "44", "--delta", "1e-5", "--json"])
    assert out["sample_rate"] == 1.0 and out["event"]["inner"] == {"event": "gaussian", "noise_multiplier": 4.0}
    res = runner.invoke(app, ["drw", "-z", "8", "-b", "70", "-n", "140", "-l", "1", "-t", "44", "--delta", "1e-5"])
    assert res.exit_code == 0 and res.stdout.startswith("drw: epsilon = ")
    assert "neighbouring: replace one node's features" in res.stdout and "sensitivity 2C" in res.stdout


def test_fdp_json_matches_library():
    # -z is std / C; K = 21 affected roots, sensitivity 2KC = 42C: the event's multiplier is 168 / 42 = 4
    out = _json(
        ["fdp", "-z", "168", "-b", "70", "-n", "140", "-d", "4", "-l", "2", "-t", "100", "--delta", "1e-5", "--json"]
    )
    assert out["max_affected"] == 21 and out["noise_multiplier_accounted"] == 4.0
    assert out["sensitivity"].startswith("2KC = 42C")
    assert out["epsilon"] == pytest.approx(fdp_epsilon(100, 4.0, 140, 70, 21, 1e-5)[0], rel=1e-12)
    auth = _json(
        [
            "fdp",
            "-z",
            "168",
            "-b",
            "70",
            "-n",
            "140",
            "-d",
            "4",
            "-l",
            "2",
            "-t",
            "100",
            "--delta",
            "1e-5",
            "--variant",
            "authors",
            "--json",
        ]
    )
    assert auth["order"] == 10.0 and auth["epsilon"] >= out["epsilon"]
    assert out["epsilon_sound"] == auth["epsilon_sound"] == fdp_sound_epsilon(100, 4.0, 140, 70, 21, 1e-5)
    assert out["epsilon_sound"] < out["epsilon"]


@pytest.mark.parametrize(
    "args,option",
    [
        (["drw", "-z", "0", "-b", "10", "-n", "140", "-l", "1", "-t", "5", "--delta", "1e-5"], "--noise-multiplier"),
        (["drw", "-z", "1", "-b", "71", "-n", "140", "-l", "1", "-t", "5", "--delta", "1e-5"], "--batch-size"),
        (["drw", "-z", "1", "-b", "10", "-n", "140", "-l", "-1", "-t", "5", "--delta", "1e-5"], "--walk-length"),
        (["drw", "-z", "1", "-b", "10", "-n", "140", "-l", "1", "-r", "0", "-t", "5", "--delta", "1e-5"], "--restarts"),
        (["drw", "-z", "1", "-b", "10", "-n", "140", "-l", "1", "-t", "0", "--delta", "1e-5"], "--steps"),
        (["drw", "-z", "1", "-b", "10", "-n", "140", "-l", "1", "-t", "5", "--delta", "2"], "--delta"),
        (
            ["drw", "-z", "1", "-b", "10", "-n", "140", "-l", "1", "-t", "5", "--delta", "1e-5", "--accountant", "x"],
            "--accountant",
        ),
        (
            ["fdp", "-z", "1", "-b", "141", "-n", "140", "-d", "4", "-l", "1", "-t", "5", "--delta", "1e-5"],
            "--batch-size",
        ),
        (
            ["fdp", "-z", "1", "-b", "10", "-n", "140", "-d", "0", "-l", "1", "-t", "5", "--delta", "1e-5"],
            "--max-degree",
        ),
        (
            [
                "fdp",
                "-z",
                "1",
                "-b",
                "10",
                "-n",
                "140",
                "-d",
                "2",
                "-l",
                "1",
                "-t",
                "5",
                "--delta",
                "1e-5",
                "--variant",
                "x",
            ],
            "--variant",
        ),
    ],
)
def test_bad_options_exit_2_naming_the_option(args, option):
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert option in res.output and "epsilon =" not in res.output
