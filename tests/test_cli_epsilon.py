"""``dpgnn epsilon``: every subcommand refuses every bad value with one line on stderr and a non-zero exit (never a
traceback, nothing on stdout); what an accountant cannot compute is refused the same way; pure accounting imports
no torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from dpgnn.cli.epsilon import app

runner = CliRunner()

#: one valid call per subcommand (option -> value; a flag's value is None)
VALID = {
    "dpsgd": {"-z": "1.1", "-q": "0.01", "-t": "100", "--delta": "1e-5"},
    "laplace": {"-b": "2", "-q": "0.3", "-n": "10", "--delta": "1e-4"},
    "drw": {"-z": "4", "-b": "10", "-n": "140", "-l": "1", "-t": "5", "--delta": "1e-5", "--accountant": "rdp"},
    "fdp": {"-z": "8", "-b": "10", "-n": "140", "-d": "3", "-l": "1", "-t": "5", "--delta": "1e-5"},
    "lpgnn": {"-x": "1", "-y": "1", "-d": "100"},
    "privgnn": {"--lam": "0.4", "--queries": "10", "--gamma": "0.3", "--delta": "1e-3"},
    "pate": {"--lam": "0.4", "--queries": "10", "--delta": "1e-3"},
    "progap": {"--level": "edge", "-k": "2", "--delta": "1e-7", "--sigma": "4"},
    "progap node": {
        "--level": "node",
        "-k": "2",
        "--delta": "1e-5",
        "-z": "1",
        "--max-degree": "10",
        "--batch-size": "10",
        "--train-nodes": "100",
        "--epochs-per-stage": "2",
    },
}
NOT_A_NUMBER = ["abc", ""]
POSITIVE = ["-1", "0", "nan", "inf", "-inf", "1e309"] + NOT_A_NUMBER  # 1e309 parses as inf
RATE = ["-0.1", "0", "1.5", "nan", "inf", "1e300"] + NOT_A_NUMBER
DELTA = ["0", "1", "-1e-5", "nan", "inf", "1e300"] + NOT_A_NUMBER
COUNT = ["0", "-1", "1.5", "1e30"] + NOT_A_NUMBER
NONNEG_INT = ["-1", "1.5", "1e30"] + NOT_A_NUMBER
#: subcommand -> option -> bad values
BAD = {
    "dpsgd": {
        "-z": POSITIVE,
        "-q": RATE,
        "-t": COUNT,
        "--delta": DELTA,
        "--sampling": ["shuffle", ""],
        "--accountant": ["zz", ""],
    },
    "laplace": {"-b": POSITIVE, "-q": RATE, "-n": COUNT, "--delta": DELTA, "--accountant": ["zz"]},
    "drw": {
        "-z": POSITIVE,
        "-b": COUNT + ["71"],
        "-n": COUNT,
        "-l": NONNEG_INT,
        "-r": COUNT,
        "-t": COUNT,
        "--delta": DELTA,
        "--accountant": ["zz"],
    },
    "fdp": {
        "-z": POSITIVE,
        "-b": COUNT + ["141"],
        "-n": COUNT,
        "-d": COUNT,
        "-l": NONNEG_INT,
        "-t": COUNT,
        "--delta": DELTA,
        "--variant": ["x"],
    },
    "lpgnn": {
        "-x": ["-1", "0", "nan"] + NOT_A_NUMBER,
        "-y": ["-1", "0", "nan"] + NOT_A_NUMBER,
        "-d": COUNT,
        "--mechanism": ["zz"],
        "--m": ["0", "101", "1.5"] + NOT_A_NUMBER,
    },
    "privgnn": {
        "--lam": POSITIVE,
        "--queries": COUNT,
        "--gamma": RATE,
        "--delta": DELTA,
        "--accountant": ["zz"],
        "--num-classes": ["1", "0", "-2", "1.5"] + NOT_A_NUMBER,
    },
    "pate": {
        "--lam": POSITIVE,
        "--queries": COUNT,
        "--delta": DELTA,
        "--moments": COUNT + ["1000000000"],
        "--votes": ["/nonexistent/votes.csv"],
    },
    "progap": {
        "--level": ["nodes", ""],
        "-k": COUNT,
        "--delta": DELTA,
        "--sigma": POSITIVE,
        "--accountant": ["zz"],
        "--fidelity": ["x"],
        "--target-epsilon": POSITIVE,
    },
    "progap node": {
        "-z": POSITIVE,
        "--max-degree": COUNT,
        "--batch-size": COUNT + ["101"],
        "--train-nodes": COUNT,
        "--epochs-per-stage": COUNT,
        "--target-epsilon": POSITIVE,
    },
}
#: names an error may use for an option (typer prints "'--noise-multiplier' / '-z'")
LONG = {
    "-z": "--noise-multiplier",
    "-q": "--sample-rate",
    "-t": "--steps",
    "-b": "--scale",
    "-n": "--count",
    "-l": "--walk-length",
    "-r": "--restarts",
    "-d": "--max-degree",
    "-x": "--feature-epsilon",
    "-y": "--label-epsilon",
    "-k": "--depth",
}
LONG_BY_COMMAND = {
    "drw": {"-b": "--batch-size", "-n": "--train-nodes"},
    "fdp": {"-b": "--batch-size", "-n": "--train-nodes", "-l": "--layers"},
    "lpgnn": {"-d": "--num-features"},
}


def _args(command: str, options: dict) -> list:
    out = [command.split()[0]]  # "progap node": the progap subcommand at node level
    for opt, value in options.items():
        out += [opt] if value is None else [opt, value]
    return out


def _cases():
    for command, table in BAD.items():
        for option, values in table.items():
            for value in values:
                yield pytest.param(
                    command,
                    option,
                    _args(command, {**VALID[command], option: value}),
                    id=f"{command} {option}={value!r}",
                )
        for option in VALID[command]:  # every required option missing
            if option != "--accountant":  # the only option of VALID with a default
                rest = {k: v for k, v in VALID[command].items() if k != option}
                yield pytest.param(command, option, _args(command, rest), id=f"{command} missing {option}")


def _assert_one_line_error(res, *names):
    assert res.exit_code not in (0, None), res.stdout
    assert res.stdout == "", f"a refused command printed on stdout: {res.stdout!r}"
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    assert "Traceback" not in res.stderr and (res.exception is None or isinstance(res.exception, SystemExit))
    if names:
        assert any(n in lines[0] for n in names), (names, lines[0])


def test_the_tables_cover_every_subcommand():
    commands = set(typer_commands())
    assert commands == {c.split()[0] for c in VALID} and set(VALID) == set(BAD)


def typer_commands():
    import typer

    return typer.main.get_group(app).list_commands(None)


@pytest.mark.parametrize("command, option, args", list(_cases()))
def test_bad_value_gives_one_line_and_non_zero_exit(command, option, args):
    long = LONG_BY_COMMAND.get(command, {}).get(option, LONG.get(option, option))
    if command == "progap node" and option == "-z":
        long = "--noise-multiplier"
    names = (option, long)
    if option == "--num-classes" or (command == "lpgnn" and option == "-d"):
        names += ("num_classes", "num_features", "[1, d]")
    if command == "lpgnn" and option in ("-x", "-y", "--mechanism", "--m"):  # the library's names (eps_x, m)
        names += ("eps_x", "eps_y", "feature method", "m must")
    if command == "progap" and option == "--level" and args[-1] == "":
        names += ("--level",)
    res = runner.invoke(app, args)
    _assert_one_line_error(res, *names)


@pytest.mark.parametrize(
    "args",
    [
        ["dpsgd", "-z", "1", "-q", "0.1", "-t", "10", "--delta", "1e-5", "--target-epsilon", "1"],  # both
        ["dpsgd", "-q", "0.1", "-t", "10", "--delta", "1e-5"],  # neither
        ["progap", "--level", "node", "-k", "2", "--delta", "1e-5", "-z", "1"],  # node options missing
        ["progap", "--level", "edge", "-k", "2", "--delta", "1e-5", "-z", "1"],  # the other level's noise
        ["nosuch"],
        ["dpsgd", "--bogus"],
    ],
)
def test_inconsistent_options_give_one_line(args):
    _assert_one_line_error(runner.invoke(app, args))


@pytest.mark.parametrize(
    "args, message",
    [
        # the review's example: a PLD over 10^12 steps asked numpy for terabytes (a 182-line MemoryError traceback)
        (
            ["dpsgd", "-z", "1", "-q", "0.01", "-t", "1000000000000", "--delta", "1e-5", "--accountant", "pld"],
            "use the 'rdp' accountant",
        ),
        (["dpsgd", "-z", "1e-6", "-q", "0.01", "-t", "10", "--delta", "1e-5", "--accountant", "pld"], "rdp"),
        (
            ["laplace", "-b", "1e-6", "-q", "0.1", "-n", "1000000000000", "--delta", "1e-5", "--accountant", "pld"],
            "rdp",
        ),
        (
            [
                "dpsgd",
                "--target-epsilon",
                "1",
                "-q",
                "0.01",
                "-t",
                "100000000",
                "--delta",
                "1e-5",
                "--accountant",
                "pld",
            ],
            "rdp",
        ),
        (
            ["dpsgd", "-z", "1", "-q", "1", "-t", "1000000000000", "--delta", "1e-5", "--accountant", "exact_gaussian"],
            "cannot compute",
        ),
        (["privgnn", "--lam", "0.4", "--queries", "1000000000000", "--gamma", "0.3", "--delta", "1e-3"], "--queries"),
        (["pate", "--lam", "0.4", "--queries", "1000000000000", "--delta", "1e-3"], "--queries"),
        (
            [
                "fdp",
                "-z",
                "8",
                "-b",
                "10",
                "-n",
                "140",
                "-d",
                "1000000",
                "-l",
                "1000000000",
                "-t",
                "5",
                "--delta",
                "1e-5",
            ],
            "--layers",
        ),
        # autodp overflows (its RuntimeWarning lines are not printed: one line)
        (
            ["privgnn", "--lam", "1e6", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3", "--num-classes", "10"],
            "cannot compute",
        ),
    ],
)
def test_what_cannot_be_computed_is_refused_in_one_line(args, message):
    res = runner.invoke(app, args)
    _assert_one_line_error(res, message)
    assert res.exit_code == 1


@pytest.mark.parametrize("accountant", ["rdp", "autodp", "autodp_rdp_acct"])
def test_huge_counts_are_computed_by_the_rdp_accountants(accountant):
    res = runner.invoke(
        app,
        [
            "dpsgd",
            "-z",
            "1",
            "-q",
            "0.01",
            "-t",
            "1000000000000",
            "--delta",
            "1e-5",
            "--accountant",
            accountant,
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["epsilon"] > 1e6


def test_pure_accounting_imports_no_torch():
    code = (
        "import sys\nimport dpgnn.cli, dpgnn.cli.epsilon, dpgnn.privacy\n"
        "from dpgnn.cli.epsilon import PAPER_CALCULATORS\n"
        "heavy = ('torch', 'torch_geometric', 'dpgnn.methods', 'dpgnn.series', 'dpgnn.data', 'pandas')\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy[:2]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_unsampled_gaussians_get_the_exact_sound_value_without_loading_a_pld_library():
    """ProGAP's edge level is a composition of unsampled Gaussians: its tightest sound value is the exact composition
    (below the pld accountant's pessimistic one), and neither dp_accounting nor scipy.stats is imported for it."""
    args = ["progap", "--level", "edge", "-k", "3", "--delta", "1e-7", "--sigma", "4", "--accountant", "rdp"]
    out = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    exact = json.loads(runner.invoke(app, [*args[:-1], "exact_gaussian", "--json"]).stdout)
    pld = json.loads(runner.invoke(app, [*args[:-1], "pld", "--json"]).stdout)
    assert out["sound_accountant"] == "exact_gaussian"
    assert out["epsilon_sound"] == exact["epsilon"] == exact["epsilon_sound"] < min(out["epsilon"], pld["epsilon"])
    code = (
        "import sys\nfrom dpgnn.cli import app\n"
        f"try:\n    app({['epsilon', *args]!r})\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('dp_accounting', 'scipy.stats', 'autodp') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout


def test_the_calibration_range_named_in_the_message_is_the_one_searched():
    from dpgnn.cli.epsilon import Z_MAX
    from dpgnn.privacy.calibration import calibrate_noise_multiplier

    assert calibrate_noise_multiplier.__kwdefaults__["upper"] == Z_MAX
    res = runner.invoke(
        app,
        ["dpsgd", "--target-epsilon", "1e-9", "-q", "0.01", "-t", "1000", "--delta", "1e-5", "--sampling", "uniform"],
    )
    _assert_one_line_error(res, "--target-epsilon", f"up to {2 * Z_MAX:g} (std / C)")


def test_an_unparsable_value_is_told_the_valid_range():
    res = runner.invoke(app, ["dpsgd", "-z", "abc", "-q", "0.1", "-t", "10", "--delta", "1e-5"])
    _assert_one_line_error(res, "--noise-multiplier")
    assert "; expected: Noise std / clipping norm C, > 0" in res.stderr
    res = runner.invoke(app, ["laplace", "-b", "1", "-q", "0.1", "--delta", "1e-5"])  # --count missing
    _assert_one_line_error(res, "--count")
    assert "expected: Number of compositions (answered queries), >= 1" in res.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["dpsgd", "-z", "1.1", "-q", "0.004266", "-t", "2000", "--delta", "1e-5", "--sampling", "uniform"],
        ["dpsgd", "-z", "0.6", "-q", "0.001", "-t", "10", "--delta", "1e-5"],
        ["laplace", "-b", "2.5", "-q", "0.3", "-n", "200", "--delta", "1e-4"],
    ],
)
def test_the_default_accountant_is_printed_with_the_tightest_sound_value(args):
    """rdp stays the default (fast, the papers' tables), and every call also gives the tightest sound value we can
    compute: the pld accountant's where it is smaller, never above the default's."""
    out = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    pld = json.loads(runner.invoke(app, [*args, "--json", "--accountant", "pld"]).stdout)
    assert out["accountant"] == "rdp" and out["sound_accountant"] == "pld"
    assert out["epsilon_sound"] == pld["epsilon"] < out["epsilon"]
    text = runner.invoke(app, args).stdout
    assert text.splitlines()[1].startswith("sound: epsilon = ")
