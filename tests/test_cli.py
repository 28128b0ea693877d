"""The top-level CLI: bad input gives one line and exit status 2 (never a traceback, nothing written); help is fast
(no torch/PyG at import); choices, --version, the data group."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from dpgnn import cli
from dpgnn import runner as batch
from dpgnn.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "paper"], "no reference data for ['paper']"),  # the profile given as a paper name
        (["report", "--profile", "nosuch"], "'nosuch' is not one of"),
        (["reproduce", "nosuch"], "unknown paper series ['nosuch']"),
        (["reproduce", "lpgcn", "--profile", "nosuch"], "'nosuch' is not one of"),
        (["reproduce", "--device", "gpu"], "'gpu' is not one of"),
        (["reproduce", "--notebook", "lpgcn/99"], "matches none"),
        (["reproduce", "lpgcn", "-p", "runs"], "expected key=value"),
        (["reproduce", "lpgcn", "-p", "profile=paper"], "set by --profile"),
        (["reproduce", "lpgcn", "-p", "nosuch=1"], "no selected notebook has a parameter 'nosuch'"),
        (["data", "info", "nosuch"], "Unknown dataset 'nosuch'"),
        (["data", "fetch", "nosuch"], "Unknown dataset 'nosuch'"),
        (["data", "fetch", "cora", "--variant", "nosuch"], "Unknown variant 'nosuch'"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, message, tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.replace("│", " ").split())
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert not any(tmp_path.iterdir()), "a refused command wrote something"


def test_help_is_fast_and_shows_choices():
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom dpgnn.cli import app\n"
        "outs = [CliRunner().invoke(app, a).output for a in (['--help'], ['reproduce', '--help'], "
        "['report', '--help'])]\n"
        "print(sorted(m for m in ('torch', 'torch_geometric', 'pandas', 'scipy') if m in sys.modules))\n"
        "print('\\n'.join(outs))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.splitlines()[0] == "[]", "dpgnn --help imported heavy modules"
    assert "smoke|test|paper" in out and "auto|cpu|cuda" in out and "rerun|keep" in out
    assert "locate" not in out and "data" in out and "epsilon" in out


def test_choices_match_the_runner_and_version():
    assert cli.PROFILES == batch.PROFILES and cli.DEVICES == batch.DEVICES and cli.STALE == batch.STALE
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("dpgnn 0.1.0")


def test_data_list_has_no_missing_value_markers():
    res = runner.invoke(app, ["data", "list"])
    assert res.exit_code == 0, res.output
    assert "<NA>" not in res.output and "nan" not in res.output.split()
    assert sum(line.lstrip().startswith("fb100-") for line in res.output.splitlines()) <= 3
    assert "fb100-<university>" in res.output
