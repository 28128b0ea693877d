"""The environment files agree: one torch version everywhere, inside pyproject's range and opacus' minimum."""

import re

import yaml
from packaging.specifiers import SpecifierSet

from dpgnn.utils import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def _deps() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower(): d for d in deps}


def test_torch_pins_agree():
    setup = re.search(r"DPGNN_TORCH_VERSION:-([0-9.]+)", (ROOT / "scripts" / "setup.sh").read_text()).group(1)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert f"torch=={setup}" in pip
    assert any("download.pytorch.org/whl/cpu" in line for line in pip)
    assert not any(str(d).startswith("pytorch") for d in env["dependencies"])
    torch = SpecifierSet(_deps()["torch"].removeprefix("torch"))
    assert setup in torch and "2.5.1" not in torch  # opacus 1.6 needs torch >= 2.6


def test_declared_dependencies():
    deps = _deps()
    for name, spec in {
        "dask": "==2026.8.0",
        "distributed": "==2026.8.0",
        "dask-jobqueue": "==0.9.0",
        "dp-accounting": "==0.6.0",
        "ipywidgets": "==8.1.9",
        "filelock": ">=3.12",
    }.items():
        assert deps[name] == name + spec
    assert "seaborn" not in deps and "ogb" not in deps  # nothing imports them
