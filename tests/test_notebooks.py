"""Every notebook is thin, has exactly one `parameters` cell, and executes end to end with papermill."""

import ast
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from dpgnn.utils import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
#: The course (``notebooks/learn/``) shows short ``dpgnn`` code on purpose and has no paper numbers to compare;
#: the cross-paper comparison (``notebooks/compare/``) and the benchmark (``notebooks/bench/``, one protocol for
#: every method) have none either. They keep the common parameters and run.
COURSE = {"learn"}
NO_REFERENCE = {"learn", "compare", "bench"}


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_structure(path: Path):
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one cell must be tagged `parameters`"
    params = tagged[0].source
    for key in ("profile", "device", "force"):
        assert f"{key}:" in params, f"parameters cell lacks `{key}`"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.get("outputs"), "commit notebooks without outputs"
            if path.parent.name not in COURSE:
                assert "class " not in cell.source and "def " not in cell.source, "logic belongs in the dpgnn package"
    assert nb.cells[0].cell_type == "markdown", "a notebook opens with the paper's claim"
    if path.parent.name in COURSE:
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert "<details>" in text and "Exercises" in text, "a course notebook ends with exercises and hidden answers"
        assert any("teach.explore(" in c.source for c in nb.cells if c.cell_type == "code"), (
            "a course notebook has explorers"
        )
        return
    if path.parent.name in NO_REFERENCE:
        return
    assert any("paper_vs_ours" in c.source or "side_by_side" in c.source for c in nb.cells if c.cell_type == "code"), (
        "a notebook shows the paper's numbers beside ours"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_papermill_sees_every_parameter(path: Path):
    """`papermill --help-notebook` and `-p` rely on papermill's own parser, which drops a line with a second `=`
    (e.g. in its comment) or an annotation such as `int | None`; every assigned name must come through with its help."""
    from papermill.translators import PythonTranslator

    cell = next(
        c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.get("metadata", {}).get("tags", [])
    )
    assigned = [n.target.id for n in ast.parse(cell.source).body if isinstance(n, ast.AnnAssign)]
    inferred = PythonTranslator.inspect(cell)
    assert [p.name for p in inferred] == assigned
    assert all(p.help for p in inferred), "every parameter needs a help comment"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_executes(path: Path, tmp_path, monkeypatch):
    import papermill as pm

    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend, as in JupyterLab
    out = tmp_path / path.name
    pm.execute_notebook(
        str(path),
        str(out),
        parameters={"profile": "test", "device": "cpu"},
        kernel_name="python3",
        cwd=str(ROOT),
        progress_bar=False,
    )
    paper = path.parent.name
    executed = nbformat.read(out, as_version=4)
    images = [
        o
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    ]
    assert images, "the executed notebook shows no figure inline"
    text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "IProgress not found" not in text
    if paper in COURSE:
        return
    assert list((tmp_path / "figures" / "test" / paper).glob("*.pdf")), "the notebook saved no figure"
    if paper in NO_REFERENCE:
        return
    results = list((tmp_path / "results" / "test" / paper).glob("*.csv"))
    assert results, "the notebook stored no results"
    assert any(pd.read_csv(p).shape[0] for p in results)
