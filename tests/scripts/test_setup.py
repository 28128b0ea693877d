"""``source scripts/setup.sh`` activates the environment without changing the caller's shell options."""

import importlib.util
import os
import subprocess
import sys

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


def _source(
    tmp_path, venv, before: str = "", extras: str = "", installer: str = "pip", env_extra: dict | None = None
) -> subprocess.CompletedProcess:
    script = (
        f'{before}\nset -o > {tmp_path / "before"}\nsource {SETUP}\necho "status=$?"\n'
        f'set -o > {tmp_path / "after"}\necho "mpl=${{MPLBACKEND-unset}}"\necho "path=$PATH"\necho alive\n'
    )
    drop = ("MPLBACKEND", "DPGNN_TORCH_INDEX_URL", "DPGNN_EXTRAS", "DPGNN_INSTALLER")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PIP_")}
    env.update(DPGNN_VENV=str(venv), DPGNN_INSTALLER=installer, **(env_extra or {}))
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


def _fake_uv(tmp_path, venv, uv_exit: int = 0):
    """The fake venv gets a ``uv`` that logs its arguments; its ``python`` runs uv_options.py for real."""
    py = venv / "bin" / "python"
    py.write_text(
        f'#!/bin/sh\necho "$@" >> {tmp_path / "calls.txt"}\n'
        f'case "$1" in *uv_options.py) exec {sys.executable} "$@";; esac\nexit 0\n'
    )
    uv = venv / "bin" / "uv"
    uv.write_text(
        f'#!/bin/sh\necho "$@" >> {tmp_path / "uv_calls.txt"}\n[ "$1" = --version ] && exit 0\nexit {uv_exit}\n'
    )
    uv.chmod(0o755)


def test_uv_installs_with_pips_configuration(tmp_path):
    venv = _fake_venv(tmp_path, 0)
    _fake_uv(tmp_path, venv)
    pip_env = {
        "PIP_CONFIG_FILE": os.devnull,  # only the variables below: none of this machine's pip.conf
        "PIP_FIND_LINKS": "/somewhere/wheels",
        "PIP_EXTRA_INDEX_URL": "file:///a/simple file:///b/simple",
        "PIP_CONSTRAINT": "/somewhere/constraints.txt",
        "PIP_INDEX_URL": "https://mirror.example/simple",
        "DPGNN_TORCH_INDEX_URL": "https://torch.example/cpu",
    }
    res = _source(tmp_path, venv, installer="uv", env_extra=pip_env)
    assert "status=0" in res.stdout, res.stdout + res.stderr
    assert "with uv" in res.stdout and "pip" not in (tmp_path / "calls.txt").read_text().replace("uv_options", "")
    uv_calls = (tmp_path / "uv_calls.txt").read_text().splitlines()
    torch, project = [call for call in uv_calls if call != "--version"]
    for call in (torch, project):
        assert call.startswith(f"pip install --python {venv}/bin/python -q --compile-bytecode")
        assert "--find-links=/somewhere/wheels --constraint=/somewhere/constraints.txt" in call
        assert "--extra-index-url=file:///a/simple --extra-index-url=file:///b/simple" in call
        assert "--index-strategy unsafe-best-match" in call  # pip's choice: the best version over all indexes
    assert torch.endswith("--index-url=https://torch.example/cpu torch==2.13.0") and "mirror" not in torch
    assert project.endswith(f"--index-url=https://mirror.example/simple -e {ROOT}")
    assert (venv / ".dpgnn-setup").exists()


def test_failed_uv_falls_back_to_pip(tmp_path):
    venv = _fake_venv(tmp_path, 0)
    _fake_uv(tmp_path, venv, uv_exit=2)
    res = _source(tmp_path, venv, installer="uv", env_extra={"PIP_CONFIG_FILE": os.devnull})
    assert "status=0" in res.stdout, res.stdout + res.stderr
    assert res.stdout.count("[setup] uv failed: installing with pip instead") == 1
    calls = (tmp_path / "calls.txt").read_text()
    assert "-m pip install -q torch==2.13.0" in calls and f"-m pip install -q -e {ROOT}\n" in calls
    assert (venv / ".dpgnn-setup").exists()


def test_missing_uv_falls_back_to_pip(tmp_path):
    venv = _fake_venv(tmp_path, 0)  # its pip "installs" uv without a uv appearing; and none on PATH
    env = {"PATH": f"{tmp_path / 'nobin'}:/usr/bin:/bin"}
    res = _source(tmp_path, venv, installer="uv", env_extra=env)
    assert "status=0" in res.stdout, res.stdout + res.stderr
    assert "[setup] uv is not available: installing with pip" in res.stdout
    calls = (tmp_path / "calls.txt").read_text()
    assert "-m pip install -q uv" in calls and f"-m pip install -q -e {ROOT}\n" in calls


def test_pip_config_maps_to_uv_options():
    spec = importlib.util.spec_from_file_location("uv_options", ROOT / "scripts" / "uv_options.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    listing = (
        ":env:.find-links='/env/wheels'\n:env:.default-timeout='180'\nglobal.cert='/c.crt'\n"
        "global.constraint='/etc/c.txt'\nglobal.extra-index-url='file:///x file:///y'\n"
        "global.find-links='/file/wheels'\ninstall.no-index='true'\n"
    )
    settings = mod.effective(listing)
    assert settings["find-links"] == "/env/wheels"  # PIP_* beats the files, as in pip
    assert mod.uv_options(settings) == [
        "--extra-index-url=file:///x",
        "--extra-index-url=file:///y",
        "--find-links=/env/wheels",
        "--constraint=/etc/c.txt",
        "--no-index",
        "env:SSL_CERT_FILE=/c.crt",
        "env:UV_HTTP_TIMEOUT=180",
    ]
