"""One privacy statement per paper: the method's ledger and the ``dpgnn epsilon`` calculator are built by the same
functions (``dpgnn.privacy.<paper>``), so they agree on every input."""

import json
import math

import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app
from dpgnn.methods import drw as method_drw
from dpgnn.methods import lpgnn as method_lpgnn
from dpgnn.privacy import drw as P_drw
from dpgnn.privacy import lpgnn as P_lpgnn

runner = CliRunner()


def test_lpgnn_method_uses_the_privacy_statement():
    assert method_lpgnn.privacy_ledger is P_lpgnn.privacy_ledger and method_lpgnn.AGM_DELTA == P_lpgnn.AGM_DELTA
    assert method_lpgnn.REPLACEMENTS is P_lpgnn.REPLACEMENTS


@pytest.mark.parametrize("mechanism", P_lpgnn.FEATURE_MECHANISMS)
@pytest.mark.parametrize("eps_x, eps_y", [(1.0, 2.0), (0.1, math.inf), (math.inf, 1.0), (math.inf, math.inf)])
def test_lpgnn_row_ledger_and_calculator_agree(mechanism, eps_x, eps_y):
    d = 50
    row = P_lpgnn.privacy_ledger(mechanism, eps_x, eps_y, d)
    res = runner.invoke(
        app, ["lpgnn", "-x", str(eps_x), "-y", str(eps_y), "-d", str(d), "--mechanism", mechanism, "--json"]
    )
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    as_float = lambda v: math.inf if v == "inf" else v  # noqa: E731
    assert as_float(cli["epsilon"]) == row["epsilon"] and cli["delta"] == row["delta"]
    assert cli.get("m") == row["m"]
    if row["level"] != "none":  # nothing private at all: the row says non-private, the calculator ε = inf
        assert cli["neighbouring"] == row["neighbouring"]
    assert row["delta"] == (P_lpgnn.AGM_DELTA if mechanism == "agm" and math.isfinite(eps_x) else 0.0)


def test_lpgnn_statement_refuses_false_claims():
    with pytest.raises(ValueError, match="false privacy claim"):
        P_lpgnn.privacy_ledger("raw", 1.0, 1.0, 10)
    with pytest.raises(ValueError, match="eps_x=inf"):
        P_lpgnn.privacy_ledger("rnd", 1.0, 1.0, 10)
    with pytest.raises(ValueError, match=r"\[1, 10\]"):
        P_lpgnn.privacy_ledger("mbm", 1.0, 1.0, 10, m=11)


@pytest.mark.parametrize(
    "z, b, n, L, r, t",
    [(4.0, 70, 140, 1, 1, 100), (2.0, 46, 140, 2, 1, 9), (4.0, 28, 140, 2, 2, 50), (8.0, 10, 140, 1, 1, 1)],
)
def test_drw_calculator_reports_the_event_and_epsilon_of_the_method_ledger(z, b, n, L, r, t):
    # the method adds std z * 2C; the calculator's -z is std / C = 2z
    res = runner.invoke(
        app,
        [
            "drw",
            "-z",
            str(2 * z),
            "-b",
            str(b),
            "-n",
            str(n),
            "-l",
            str(L),
            "-r",
            str(r),
            "-t",
            str(t),
            "--delta",
            "1e-5",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    method = "drw-r" if r == 2 else "drw"
    q = method_drw.sampler_bound(method, b, n, L)
    row = P_drw.run_accounting(method, noise_multiplier=z, steps=t, delta=1e-5, sample_rate=q)
    assert cli["sample_rate"] == q and cli["event"] == row["event"] and cli["epsilon"] == row["epsilon"]
    assert method_drw.drw_epsilon is P_drw.drw_epsilon and method_drw.guarantee_fields is P_drw.guarantee_fields


@pytest.mark.parametrize("variant", ["paper", "authors"])
def test_fdp_calculator_and_method_ledger_agree(variant):
    # the method adds std z * 2KC (K = 21); the calculator's -z is std / C = 2 * 21 * 4 = 168
    res = runner.invoke(
        app,
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
            variant,
            "--json",
        ],
    )
    cli = json.loads(res.stdout)
    row = P_drw.run_accounting(
        "fdp",
        noise_multiplier=4.0,
        steps=100,
        delta=1e-5,
        num_train=140,
        batch=70,
        max_affected=21,
        fdp_variant=variant,
    )
    assert cli["epsilon"] == row["epsilon"] and cli["event"]["inner"] == row["event"]
    assert cli["event"] == P_drw.fdp_event(4.0, 140, 70, 21, 100).to_dict()
