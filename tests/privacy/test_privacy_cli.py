"""``dpgnn epsilon …``: JSON output equals the library, readable output, errors exit non-zero with no number."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.privacy import dpsgd_event, epsilon

runner = CliRunner()


def _invoke(args, target=app):
    return runner.invoke(target, args)


def test_dpsgd_json_matches_library():
    args = [
        "dpsgd",
        "--noise-multiplier",
        "1.1",
        "--sample-rate",
        str(256 / 60000),
        "--steps",
        "14062",
        "--delta",
        "1e-5",
        "--json",
    ]
    res = _invoke(args)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    assert len(lines) == 1
    out = json.loads(lines[0])
    for key in ("epsilon", "delta", "noise_multiplier", "sample_rate", "steps", "sampling", "accountant", "order"):
        assert key in out
    assert out["epsilon"] == pytest.approx(epsilon(dpsgd_event(1.1, 256 / 60000, 14062), 1e-5), rel=1e-12)
    assert out["epsilon"] == pytest.approx(2.5966, abs=1e-4)
    assert out["accountant"] == "rdp" and out["sampling"] == "poisson" and out["order"] == pytest.approx(8.1)
    assert out["steps"] == 14062 and out["delta"] == 1e-5


def test_dpsgd_uniform_and_text_output():
    res = _invoke(["dpsgd", "-z", "2", "-q", "0.01", "-t", "100", "--delta", "1e-5", "--sampling", "uniform"])
    assert res.exit_code == 0, res.output
    assert re.match(r"dpsgd: epsilon = [0-9.]+ at delta = 1e-05 \[.*sampling=uniform; accountant=rdp", res.stdout)
    assert "neighbouring: replace one record; sensitivity 2C" in res.stdout


def test_dpsgd_z_is_std_over_clip_norm_under_both_samplings():
    """-z is std / C; replace-one (uniform) has sensitivity 2C, so the accountant sees z / 2. With z = 1.08815 the
    true epsilon is at least 6.04 (the review's lower bound); reading z as std / 2C gave 1.39."""
    args = ["dpsgd", "-z", "1.08815", "-q", "0.007003317", "-t", "75", "--delta", "1e-7", "--json"]
    uni = json.loads(_invoke(args + ["--sampling", "uniform"]).stdout)
    assert uni["epsilon"] == epsilon(dpsgd_event(1.08815 / 2, 0.007003317, 75, "uniform"), 1e-7)
    assert uni["epsilon"] >= 6.04 and uni["noise_multiplier"] == 1.08815
    assert uni["noise_multiplier_accounted"] == 1.08815 / 2 and uni["sensitivity"] == "2C"
    assert uni["neighbouring"] == "replace one record"
    poi = json.loads(_invoke(args).stdout)  # Poisson, add/remove: sensitivity C, z unchanged
    assert poi["epsilon"] == epsilon(dpsgd_event(1.08815, 0.007003317, 75), 1e-7)
    assert poi["noise_multiplier_accounted"] == 1.08815 and poi["sensitivity"] == "C"
    assert poi["neighbouring"] == "add/remove one record"


def test_dpsgd_target_epsilon_returns_std_over_clip_norm():
    from dpgnn.privacy import calibrate_noise_multiplier

    res = _invoke(
        [
            "dpsgd",
            "--target-epsilon",
            "2",
            "-q",
            "0.01",
            "-t",
            "100",
            "--delta",
            "1e-5",
            "--sampling",
            "uniform",
            "--json",
        ]
    )
    out = json.loads(res.stdout)
    own = calibrate_noise_multiplier(2.0, 1e-5, sample_rate=0.01, steps=100, sampling="uniform")  # std / 2C
    assert out["noise_multiplier"] == 2 * own.value and out["noise_multiplier_accounted"] == own.value
    assert out["epsilon"] == epsilon(dpsgd_event(out["noise_multiplier"] / 2, 0.01, 100, "uniform"), 1e-5) <= 2.0


def test_laplace_privgnn_golden_via_cli():
    res = _invoke(
        [
            "laplace",
            "--scale",
            "10",
            "--sample-rate",
            "0.3",
            "--count",
            "1000",
            "--delta",
            "1e-3",
            "--accountant",
            "autodp_rdp_acct",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert round(out["epsilon"], 2) == 3.91
    assert out["scale"] == 10.0 and out["count"] == 1000 and out["order"] is None
    res2 = _invoke(["laplace", "--scale", "10", "--sample-rate", "0.3", "--count", "1000", "--delta", "1e-3", "--json"])
    assert json.loads(res2.stdout)["epsilon"] < out["epsilon"]


@pytest.mark.parametrize(
    "args,option",
    [
        (["dpsgd", "-z", "-1", "-q", "0.1", "-t", "10", "--delta", "1e-5"], "--noise-multiplier"),
        (["dpsgd", "-z", "nan", "-q", "0.1", "-t", "10", "--delta", "1e-5"], "--noise-multiplier"),
        (["dpsgd", "-z", "inf", "-q", "0.1", "-t", "10", "--delta", "1e-5"], "--noise-multiplier"),
        (["dpsgd", "-z", "1", "-q", "0", "-t", "10", "--delta", "1e-5"], "--sample-rate"),
        (["dpsgd", "-z", "1", "-q", "1.5", "-t", "10", "--delta", "1e-5"], "--sample-rate"),
        (["dpsgd", "-z", "1", "-q", "0.1", "-t", "0", "--delta", "1e-5"], "--steps"),
        (["dpsgd", "-z", "1", "-q", "0.1", "-t", "10", "--delta", "1"], "--delta"),
        (["dpsgd", "-z", "1", "-q", "0.1", "-t", "10", "--delta", "0"], "--delta"),
        (["dpsgd", "-z", "1", "-q", "0.1", "-t", "10", "--delta", "1e-5", "--sampling", "shuffle"], "--sampling"),
        (["dpsgd", "-z", "1", "-q", "0.1", "-t", "10", "--delta", "1e-5", "--accountant", "zz"], "--accountant"),
        (["laplace", "--scale", "0", "--sample-rate", "0.3", "--count", "10", "--delta", "1e-3"], "--scale"),
        (["laplace", "--scale", "1", "--sample-rate", "-0.3", "--count", "10", "--delta", "1e-3"], "--sample-rate"),
        (["laplace", "--scale", "1", "--sample-rate", "0.3", "--count", "-1", "--delta", "1e-3"], "--count"),
        (["laplace", "--scale", "1", "--sample-rate", "0.3", "--count", "10", "--delta", "-1", "--json"], "--delta"),
    ],
)
def test_bad_input_exits_nonzero_with_message(args, option):
    res = _invoke(args)
    assert res.exit_code != 0
    assert option in res.stderr
    assert res.stdout.strip() == ""  # never a number


def test_missing_option_and_non_integer_steps():
    res = _invoke(["dpsgd", "-z", "1", "-q", "0.1", "--delta", "1e-5"])
    assert res.exit_code != 0 and "--steps" in res.output
    res = _invoke(["dpsgd", "-z", "1", "-q", "0.1", "-t", "1.5", "--delta", "1e-5"])
    assert res.exit_code != 0 and "--steps" in res.output


def test_mounted_under_root_cli():
    root = pytest.importorskip("dpgnn.cli", reason="root CLI not importable yet")
    res = runner.invoke(
        root.app, ["epsilon", "dpsgd", "-z", "1.0", "-q", "0.01", "-t", "100", "--delta", "1e-5", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["epsilon"] == pytest.approx(epsilon(dpsgd_event(1.0, 0.01, 100), 1e-5))


def test_pld_accountant_via_cli():
    res = _invoke(["dpsgd", "-z", "0.6", "-q", "0.001", "-t", "10", "--delta", "1e-5", "--accountant", "pld", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["accountant"] == "pld" and 0.33 <= out["epsilon"] <= 0.336
    assert out["epsilon"] == epsilon(dpsgd_event(0.6, 0.001, 10), 1e-5, "pld")
    res = _invoke(["laplace", "-b", "2.5", "-q", "0.3", "-n", "100", "--delta", "1e-4", "--accountant", "pld"])
    assert res.exit_code == 0 and "accountant=pld" in res.stdout
    # sampling without replacement: the PLD of dpgnn.privacy.sampled_pld, with the replace-one sensitivity 2C
    res = _invoke(
        [
            "dpsgd",
            "-z",
            "1",
            "-q",
            "0.01",
            "-t",
            "10",
            "--delta",
            "1e-5",
            "--sampling",
            "uniform",
            "--accountant",
            "pld",
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["epsilon"] == epsilon(dpsgd_event(0.5, 0.01, 10, "uniform"), 1e-5, "pld")


def test_dpsgd_target_epsilon_calibrates_and_flags_unreachable_targets():
    from dpgnn.privacy import calibrate_noise_multiplier

    res = _invoke(["dpsgd", "--target-epsilon", "2", "-q", "0.01", "-t", "100", "--delta", "1e-5", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    cal = calibrate_noise_multiplier(2.0, 1e-5, sample_rate=0.01, steps=100)
    assert out["noise_multiplier"] == cal.value and out["epsilon"] <= 2.0 and out["target_reached"] is True
    res = _invoke(["dpsgd", "--target-epsilon", "1e6", "-q", "0.01", "-t", "100", "--delta", "1e-5", "--json"])
    assert res.exit_code == 0
    out = json.loads(res.stdout)
    assert out["target_reached"] is False and out["epsilon"] < 1e6
    assert "cannot be reached" in res.stderr and f"{out['epsilon']:.6g}" in res.stderr
    res = _invoke(["dpsgd", "-z", "1", "--target-epsilon", "1", "-q", "0.01", "-t", "100", "--delta", "1e-5"])
    assert res.exit_code == 2 and "exactly one" in res.output
