"""The top-level CLI answers bad input with one line and exit status 2, never a traceback."""

import pytest
from typer.testing import CliRunner

from dpgnn.cli import app

runner = CliRunner()


@pytest.mark.parametrize("args, message", [
    (["report", "paper"], "no reference data for ['paper']"),  # the profile given as a paper name
    (["reproduce", "nosuch"], "unknown paper series ['nosuch']"),
    (["reproduce", "lpgcn", "--profile", "nosuch"], "profile must be one of"),
])
def test_bad_input_exits_2_with_one_line(args, message):
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert message in res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
