"""The code version stored with every result row names the commit of a git checkout."""

import subprocess

from dpgnn.utils import ROOT, code_version, versions


def test_code_version_names_the_commit():
    v = code_version()
    assert v.startswith("0.")
    if (ROOT / ".git").exists():
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        assert f"+g{head}" in v


def test_versions_starts_with_the_code_version():
    assert versions().split(";")[0] == f"dpgnn={code_version()}"
    assert "torch=" in versions()
