import nbformat
import pandas as pd
import pytest

from dpgnn.runner import discover, load_manifest, reproduce


def _notebook(body: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile: str = "smoke"\ndevice: str = "auto"\nforce: bool = False')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


@pytest.fixture
def project(tmp_path):
    for paper, name, body in [
        ("alpha", "01_ok.ipynb", "from pathlib import Path\nPath('out_' + profile + '.txt').write_text(device)"),
        ("alpha", "02_fail.ipynb", "raise ValueError('deliberate failure')"),
        ("beta", "01_ok.ipynb", "x = 1"),
    ]:
        (tmp_path / "notebooks" / paper).mkdir(parents=True, exist_ok=True)
        nbformat.write(_notebook(body), tmp_path / "notebooks" / paper / name)
    return tmp_path


@pytest.mark.slow
def test_reproduce_manifest_failure_isolation_and_resume(project):
    manifest = reproduce(["alpha", "beta"], profile="smoke", device="cpu", jobs=2, root=project, report=False)
    status = dict(zip(manifest["paper"] + "/" + manifest["notebook"], manifest["status"]))
    assert status == {"alpha/01_ok.ipynb": "ok", "alpha/02_fail.ipynb": "failed", "beta/01_ok.ipynb": "ok"}
    failed = manifest[manifest["status"] == "failed"].iloc[0]
    assert "deliberate failure" in failed["error"]
    # parameters were injected and the working directory is the project root
    assert (project / "out_smoke.txt").read_text() == "cpu"
    assert (project / "papermill_runs" / "smoke" / "alpha" / "01_ok.ipynb").exists()
    # second run: succeeded notebooks are cached, the failed one runs again
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=project, report=False)
    status = dict(zip(manifest["notebook"][manifest["paper"] == "alpha"], manifest["status"][manifest["paper"] == "alpha"]))
    assert status == {"01_ok.ipynb": "cached", "02_fail.ipynb": "failed"}
    # --force re-executes
    manifest = reproduce(["beta"], profile="smoke", device="cpu", root=project, report=False, force=True)
    assert manifest.set_index("paper").loc["beta", "status"] == "ok"
    assert len(load_manifest("smoke", project)) == 3


def test_discover_and_bad_input(project):
    assert [(p, nb.name) for p, nb in discover(None, project)] == [
        ("alpha", "01_ok.ipynb"), ("alpha", "02_fail.ipynb"), ("beta", "01_ok.ipynb")]
    with pytest.raises(ValueError, match="unknown paper"):
        discover(["gamma"], project)
    with pytest.raises(ValueError, match="profile"):
        reproduce(["alpha"], profile="huge", root=project)
    with pytest.raises(ValueError, match="jobs"):
        reproduce(["alpha"], jobs=0, root=project)
