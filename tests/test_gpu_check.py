"""The GPU acceptance run's pure parts (``benchmarks/gpu_check_rows.py``, ``benchmarks/gpu_check.py``) on hand-made
rows: matching the rows of two computations of the same cells, the ledger and accuracy verdicts, the exit line,
the cut of the grids, and the stored CPU rows covering the grids the check runs. No device, no training."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rows_mod():
    return _load("gpu_check_rows")


@pytest.fixture(scope="module")
def check_mod(rows_mod):
    return _load("gpu_check")


def _rows(paper="lpgnn", cells=4, runs=3, base=70.0, ledger=None):
    out = []
    for c in range(cells):
        for r in range(runs):
            led = ledger or {"level": "node-ldp", "epsilon": 2.0, "event": {"count": 3, "inner": [1.0, 0.5]}}
            out.append(
                {
                    "paper": paper,
                    "store": "runs",
                    "config_hash": f"{c:04d}",
                    "metric": "accuracy",
                    "run": r,
                    "value": base + c + 0.1 * r,
                    "level": "node-ldp",
                    "epsilon": 2.0,
                    "delta": 0.0,
                    "ledger": json.dumps(led),
                }
            )
    return pd.DataFrame(out)


def _verdicts(checks):
    return {c.name: c.verdict for c in checks}


def test_identical_rows_pass_every_check(rows_mod):
    ref = _rows()
    checks, pairs = rows_mod.compare_rows(ref.copy(), ref, label="t")
    assert _verdicts(checks) == {"config hashes": "pass", "ledger columns": "pass", "accuracy lpgnn": "pass"}
    assert len(pairs) == len(ref) and (pairs["diff"] == 0).all()


def test_rows_read_back_as_text_match_the_typed_rows(rows_mod):
    ref = _rows()
    text = ref.astype(str)
    text.loc[0, "run"] = "0.0"  # an int column read as float elsewhere
    checks, pairs = rows_mod.compare_rows(text, ref, label="t")
    assert all(c.verdict == "pass" for c in checks) and len(pairs) == len(ref)


def test_a_key_column_only_one_side_has_is_empty_on_the_other(rows_mod):
    ref = _rows().assign(checkpoint="")  # e.g. the reference holds DRW rows with checkpoints, the test rows none
    checks, pairs = rows_mod.compare_rows(_rows(), ref, label="t")
    assert all(c.verdict == "pass" for c in checks) and len(pairs) == len(ref)
    checks, _ = rows_mod.compare_rows(_rows(), ref.assign(checkpoint="eps=1"), label="t")
    assert _verdicts(checks)["config hashes"] == "fail" and _verdicts(checks)["ledger columns"] == "fail"


def test_a_digit_only_config_hash_is_not_a_number(rows_mod):
    ref = _rows(cells=1)
    test = ref.assign(config_hash="4")  # "0000" and "4" are different cells, "0000" and "0" too
    checks, _ = rows_mod.compare_rows(test, ref, label="t")
    assert _verdicts(checks)["config hashes"] == "fail"
    checks, _ = rows_mod.compare_rows(ref.assign(config_hash="0"), ref, label="t")
    assert _verdicts(checks)["config hashes"] == "fail"


def test_missing_cells_and_rows_fail_the_config_hash_check(rows_mod):
    ref = _rows()
    checks, _ = rows_mod.compare_rows(ref.iloc[:-1], ref, label="t", subset=True)  # a row of a cell lost
    assert _verdicts(checks)["config hashes"] == "fail"
    fewer = ref[ref["config_hash"] != "0003"]
    checks, _ = rows_mod.compare_rows(fewer, ref, label="t", subset=True)  # a subset of the cells: fine
    assert _verdicts(checks)["config hashes"] == "pass"
    checks, _ = rows_mod.compare_rows(fewer, ref, label="t", subset=False)
    assert _verdicts(checks)["config hashes"] == "fail"
    checks, _ = rows_mod.compare_rows(ref, fewer, label="t")  # a cell the reference lacks
    c = next(c for c in checks if c.name == "config hashes")
    assert c.verdict == "fail" and "not in the reference" in c.detail


def test_the_same_hash_in_another_store_is_another_cell(rows_mod):
    ref = pd.concat([_rows(), _rows().assign(store="fig2_runs")], ignore_index=True)
    test = ref[ref["store"] == "runs"]
    checks, pairs = rows_mod.compare_rows(test, ref, label="t")
    assert _verdicts(checks)["config hashes"] == "pass" and len(pairs) == len(test)


def test_ledger_numbers_within_rtol_pass_and_beyond_it_fail(rows_mod):
    ref = _rows()
    near = _rows(ledger={"level": "node-ldp", "epsilon": 2.0 * (1 + 1e-7), "event": {"count": 3, "inner": [1.0, 0.5]}})
    assert _verdicts(rows_mod.compare_rows(near, ref, label="t")[0])["ledger columns"] == "pass"
    far = _rows(ledger={"level": "node-ldp", "epsilon": 2.0, "event": {"count": 3, "inner": [1.0, 0.6]}})
    checks, _ = rows_mod.compare_rows(far, ref, label="t")
    c = next(c for c in checks if c.name == "ledger columns")
    assert c.verdict == "fail" and "ledger.event.inner[1]" in c.detail
    top = ref.assign(epsilon=2.5)
    assert _verdicts(rows_mod.compare_rows(top, ref, label="t")[0])["ledger columns"] == "fail"


def test_ledger_diff(rows_mod):
    diff = rows_mod.ledger_diff
    assert diff({"a": math.nan, "b": [1, 2]}, {"a": math.nan, "b": [1.0, 2.0]}) == []
    assert diff(math.inf, 1e308) == ["."]
    assert diff({"a": 1}, {"a": 1, "b": 2}) == ["b"]
    assert diff([1, 2], [1, 2, 3]) == ["."]
    assert diff('{"x": "Infinity"}', {"x": "Infinity"}) == []
    assert diff("none", "none") == [] and diff("", "nan") == []
    assert diff("sound", "as_published") == ["."]


def test_accuracy_noise_passes_a_shift_or_gross_differences_fail(rows_mod):
    ref = _rows(cells=6)
    noise = [0.8, -0.5, 0.3, -0.9, 0.6, -0.2]
    noisy = ref.assign(value=ref["value"] + [noise[i % 6] for i in range(len(ref))])
    assert _verdicts(rows_mod.compare_rows(noisy, ref, label="t")[0])["accuracy lpgnn"] == "pass"
    shifted = ref.assign(value=ref["value"] + 5.0)
    checks, _ = rows_mod.compare_rows(shifted, ref, label="t")
    c = next(c for c in checks if c.name == "accuracy lpgnn")
    assert c.verdict == "fail" and c.value == pytest.approx(5.0)
    gross = ref.assign(value=ref["value"] + [20.0 if i % 2 else -20.0 for i in range(len(ref))])  # mean 0
    assert _verdicts(rows_mod.compare_rows(gross, ref, label="t")[0])["accuracy lpgnn"] == "fail"
    lopsided = ref.assign(value=ref["value"].where(ref.index != 0, math.nan))
    assert _verdicts(rows_mod.compare_rows(lopsided, ref, label="t")[0])["accuracy lpgnn"] == "fail"


def test_fractions_are_scaled_to_points(rows_mod):
    ref = _rows(paper="privgnn", base=0.5)
    ref["value"] = ref["value"] / 100.0  # 0.005 .. 0.0053: fractions
    shifted = ref.assign(value=ref["value"] + 0.05)  # five points
    c = next(c for c in rows_mod.compare_rows(shifted, ref, label="t")[0] if c.name == "accuracy privgnn")
    assert c.verdict == "fail" and c.value == pytest.approx(5.0)


def test_summary_line(rows_mod):
    Check = rows_mod.Check
    ok = [Check("a", "x", "pass"), Check("a", "y", "info")]
    assert rows_mod.summary_line(ok)[0] == 0
    code, line = rows_mod.summary_line(ok + [Check("b", "z", "skip")])
    assert code == 2 and "b/z" in line
    code, line = rows_mod.summary_line(ok + [Check("b", "z", "skip"), Check("c", "w", "fail")])
    assert code == 1 and line.startswith("gpu_check: FAIL") and "c/w" in line and "\n" not in line


def test_first_cells_filters_datasets_then_cuts(check_mod):
    cells = [{"dataset": d, "i": i} for i, d in enumerate(["cora", "amazon", "cora", "cora", "citeseer"])]
    cut = check_mod.first_cells(lambda cfg: cells, ("cora", "citeseer"), 2, None)
    assert [c["i"] for c in cut] == [0, 2]
    assert [c["i"] for c in check_mod.first_cells(lambda cfg: cells, ("cora", "citeseer"), 0, None)] == [0, 2, 3, 4]


def test_batched_speed_has_a_threshold_on_the_gpu_only(check_mod):
    assert check_mod.speed_verdict(1.3, "cuda") == "pass"
    assert check_mod.speed_verdict(0.9, "cuda") == "fail"
    assert check_mod.speed_verdict(0.9, "cpu") == "info"


def test_the_stored_cpu_rows_cover_the_grids_the_check_runs(check_mod):
    """The GPU run compares its rows with these: a change of a grid, a profile or the selection that moves config
    hashes needs ``python benchmarks/gpu_check.py --write-reference`` (else the GPU run fails its first row check)."""
    ref = pd.read_csv(check_mod.REFERENCE, dtype=str, keep_default_na=False)
    stored = set(zip(ref["paper"], ref["config_hash"]))
    missing = check_mod.planned(check_mod.selection(0)) - stored
    assert not missing, f"{len(missing)} cells of the check not in {check_mod.REFERENCE.name}: {min(missing)}"
    files = check_mod.mirror_files()
    assert "planetoid/ind.cora.x" in files and "facebook100/Amherst41.mat" in files


def test_the_warm_up_computes_a_cell_with_the_profiles_settings(check_mod, capsys):
    """The warm-up calls the engine as the grid does (typed settings, one cell) and reports a pass; here on the
    CPU with LPGCN's first cell, the check's cheapest paper."""
    import argparse

    pairs = [(s, cfg) for s, cfg in check_mod.selection(1) if s.paper == "lpgcn"]
    report = check_mod.Report("unused", argparse.Namespace())
    assert check_mod.phase_warm_up(report, pairs, "cpu", 1) == set()
    assert [(c.phase, c.name, c.verdict) for c in report.checks] == [("warm-up", "lpgcn", "pass")]
    assert "row(s)" in capsys.readouterr().out


def test_the_readme_quotes_the_stored_gpu_run(check_mod):
    """``benchmarks/README.md``'s ``gpu_check`` block is :func:`readme_block` of the stored run (regenerate it with
    ``python benchmarks/gpu_check.py --readme`` after committing a new run)."""
    block = check_mod.readme_block()
    checks = pd.read_csv(check_mod.RESULTS / "gpu_check.csv")
    assert f"{(checks['verdict'] == 'pass').sum()} pass" in block
    body = (ROOT / "benchmarks" / "README.md").read_text()
    assert f"<!-- begin gpu_check -->\n{block}<!-- end gpu_check -->" in body


def test_the_front_door_phase_fits_each_method_and_reports_a_failing_one(check_mod, monkeypatch):
    """Every level of each method is fitted and predicts; a level that raises fails its method only, with the
    exception's first line, and the next method still runs."""
    import argparse

    import dpgnn

    report = check_mod.Report("unused", argparse.Namespace())
    check_mod.phase_front_door(report, "cpu", ["mlp", "mbm"])
    assert [(c.name, c.verdict) for c in report.checks] == [("mlp", "pass"), ("mbm", "pass")]
    assert "feature: test" in report.checks[1].detail and "feature+label: test" in report.checks[1].detail

    fit = dpgnn.fit

    def broken(graph, name, **kw):
        if kw["level"] == "feature+label":
            raise RuntimeError("indices should be either on cpu or on the same device\nmore")
        return fit(graph, name, **kw)

    monkeypatch.setattr(dpgnn, "fit", broken)
    report = check_mod.Report("unused", argparse.Namespace())
    check_mod.phase_front_door(report, "cpu", ["mbm", "mlp"])
    assert [(c.name, c.verdict) for c in report.checks] == [("mbm", "fail"), ("mlp", "pass")]
    assert report.checks[0].detail.endswith(
        "feature+label: RuntimeError: indices should be either on cpu or on the same device"
    )
