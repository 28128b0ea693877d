"""The speed tables of ``benchmarks/README.md`` are generated: each block between a race script's markers is that
script's ``table()`` of its stored CSV (``python benchmarks/<name>.py --table`` rewrites it after a run)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TABLES = (
    "batched_repeats",
    "drw_repeats",
    "lpgcn_repeats",
    "privgnn_students",
    "progap_repeats",
    "engine_scaling",
    "notebook_startup",
    "sparse_features",
    "kprop_once",
)


@pytest.mark.parametrize("name", TABLES)
def test_the_readme_block_is_the_scripts_table_of_its_csv(name, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module(name)
    try:
        text = module.table()
    finally:
        sys.modules.pop(name, None)
    assert text.count("\n") >= 3  # a header, its rule and at least one measured row
    readme = (BENCHMARKS / "README.md").read_text()
    assert f"<!-- begin {name} -->\n{text}<!-- end {name} -->" in readme, f"run python benchmarks/{name}.py --table"
