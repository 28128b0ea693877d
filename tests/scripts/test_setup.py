"""``source scripts/setup.sh`` activates the environment without changing the caller's shell options."""

import os
import subprocess

import pytest

from dpgnn.utils import ROOT

SETUP = ROOT / "scripts" / "setup.sh"


def _fake_venv(tmp_path, python_exit: int):
    """A venv whose ``python`` accepts every command and exits with ``python_exit`` (no real installation)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    py.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls.txt"}\nexit {python_exit}\n')
    py.chmod(0o755)
    return venv


def _source(tmp_path, venv, before: str = "", extras: str = "") -> subprocess.CompletedProcess:
    script = (
        f'{before}\nset -o > {tmp_path / "before"}\nsource {SETUP}\necho "status=$?"\n'
        f'set -o > {tmp_path / "after"}\necho "mpl=${{MPLBACKEND-unset}}"\necho "path=$PATH"\necho alive\n'
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "DPGNN_TORCH_INDEX_URL", "DPGNN_EXTRAS")}
    env["DPGNN_VENV"] = str(venv)
    if extras:
        env["DPGNN_EXTRAS"] = extras
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("before", ["", "set -u", "set -o pipefail"])
def test_sourced_setup_leaves_shell_options_unchanged(tmp_path, before):
    venv = _fake_venv(tmp_path, 0)
    res = _source(tmp_path, venv, before)
    assert res.returncode == 0, res.stderr
    assert "status=0" in res.stdout and "alive" in res.stdout
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()
    assert "mpl=unset" in res.stdout  # matplotlib's backend is left to Jupyter (inline figures)
    assert f"path={venv}/bin:" in res.stdout
    calls = (tmp_path / "calls.txt").read_text()
    assert "install -q torch==2.13.0" in calls and "-m ipykernel install" in calls
    assert (venv / ".dpgnn-setup").exists()
    # a second run finds the stamp and installs nothing
    (tmp_path / "calls.txt").unlink()
    assert "status=0" in _source(tmp_path, venv).stdout
    assert not (tmp_path / "calls.txt").exists()


def test_extras_come_on_top_of_the_stamped_environment(tmp_path):
    venv = _fake_venv(tmp_path, 0)
    assert "status=0" in _source(tmp_path, venv).stdout
    calls = (tmp_path / "calls.txt").read_text()
    assert f"install -q -e {ROOT}\n" in calls and "[dev]" not in calls  # the smoke run's set-up: no test packages
    (tmp_path / "calls.txt").unlink()
    assert "status=0" in _source(tmp_path, venv, extras="dev").stdout
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls == [f"-m pip install -q -e {ROOT}[dev]"]  # only the extras: no torch, no kernel, no pip upgrade
    (tmp_path / "calls.txt").unlink()
    for extras in ("dev", ""):
        assert "status=0" in _source(tmp_path, venv, extras=extras).stdout
    assert not (tmp_path / "calls.txt").exists()


def test_failed_setup_returns_an_error_and_keeps_the_shell(tmp_path):
    venv = _fake_venv(tmp_path, 3)
    res = _source(tmp_path, venv)
    assert "status=3" in res.stdout and "alive" in res.stdout  # the caller's shell survives
    assert "[setup] failed" in res.stderr
    assert (tmp_path / "before").read_text() == (tmp_path / "after").read_text()
    assert f"path={venv}/bin:" not in res.stdout and not (venv / ".dpgnn-setup").exists()


def test_executed_setup_exits_with_the_error(tmp_path):
    venv = _fake_venv(tmp_path, 3)
    env = {**os.environ, "DPGNN_VENV": str(venv)}
    res = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 3
