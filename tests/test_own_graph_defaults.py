"""``benchmarks/own_graph_defaults.py --table`` on a hand-made CSV: means, sample std, the difference in points,
the bold gap, the errors and the not-run fits (no fit is trained here)."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("own_graph_defaults", ROOT / "benchmarks" / "own_graph_defaults.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows():
    out = []
    for seed, (d, p) in enumerate([(70.0, 80.0), (72.0, 81.0), (74.0, 82.0)]):
        for config, acc in (("defaults", d), ("paper", p)):
            out.append(
                {
                    "method": "progap",
                    "level": "edge",
                    "dataset": "cora",
                    "epsilon": 1.0,
                    "config": config,
                    "seed": seed,
                    "test_acc": acc,
                    "seconds": 2.0,
                }
            )
    out.append(
        {
            "method": "mlp",
            "level": "none",
            "dataset": "cora",
            "epsilon": "",
            "config": "defaults",
            "seed": 0,
            "test_acc": 55.0,
            "seconds": 1.0,
        }
    )
    out.append(
        {
            "method": "gap",
            "level": "node",
            "dataset": "cora",
            "epsilon": 8.0,
            "config": "paper",
            "seed": 0,
            "error": "ValueError: GAPConfig.hops must be an integer in [1, 10], got 0",
            "seconds": 0.1,
        }
    )
    return out


def test_table_from_hand_made_rows(bench, tmp_path):
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=bench.COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(_rows())
    text = bench.write_table(path, tmp_path / "rows.md", datasets=[("cora", None, True)], seeds=(0, 1, 2))
    assert (tmp_path / "rows.md").read_text() == text
    line = next(ln for ln in text.splitlines() if ln.startswith("| cora | progap | edge | 1 |"))
    assert "72.0 ± 2.0 (3)" in line and "81.0 ± 1.0 (3)" in line and "**-9.0**" in line
    mlp = next(ln for ln in text.splitlines() if ln.startswith("| cora | mlp | none | – |"))
    assert "55.0 (1)" in mlp and "| – |" in mlp  # no paper run: no difference
    assert "error: cora gap/node ε=8.0 paper seed 0: ValueError: GAPConfig.hops" in text
    missing = next(ln for ln in text.splitlines() if ln.startswith("- cora:"))
    assert "not stored" in missing and "s per fit" in missing


def test_resume_keys_match_between_jobs_and_rows(bench):
    """A stored row (ε read back from CSV as text) and the job that produced it have the same key."""
    stored = {"method": "progap", "level": "edge", "dataset": "cora", "epsilon": "8.0", "config": "paper", "seed": "2"}
    job = {"method": "progap", "level": "edge", "dataset": "cora", "epsilon": 8.0, "config": "paper", "seed": 2}
    assert bench.row_key(stored) == bench.row_key(job)
    none_row = {**stored, "level": "none", "epsilon": ""}
    assert bench.row_key(none_row) == bench.row_key({**job, "level": "none", "epsilon": None})


def test_paper_configs_are_valid_api_configs(bench):
    """Every paper-tuned entry is accepted by the method's typed config (a bad field would fail every fit)."""
    from dpgnn.api.configs import make_config
    from dpgnn.api.methods import METHODS

    for method, by_level in bench.PAPER.items():
        if method not in METHODS:
            continue
        for by_eps in by_level.values():
            for fields, source in by_eps.values():
                make_config(METHODS[method].config, fields)
                assert source
