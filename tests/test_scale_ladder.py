"""benchmarks/scale_ladder.py: the per-run caps, resumability keys and the generated README block."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ladder():
    spec = importlib.util.spec_from_file_location("scale_ladder", ROOT / "benchmarks" / "scale_ladder.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["scale_ladder"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_run_child_reads_the_result_line():
    ladder = _ladder()
    code = "import json; print('noise'); print('LADDER-RESULT ' + json.dumps({'status': 'ok', 'fit_s': 1.5}))"
    res, wall, cpu, peak = ladder.run_child([sys.executable, "-c", code], mem_gib=4, time_s=60)
    assert res == {"status": "ok", "fit_s": 1.5}
    assert wall > 0 and cpu >= 0 and 0 < peak < 4


def test_run_child_kills_past_the_memory_cap():
    ladder = _ladder()
    code = "import time; b = bytearray(600 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(30)"
    res, wall, _, peak = ladder.run_child([sys.executable, "-c", code], mem_gib=0.25, time_s=60)
    assert res["status"] == "out of memory" and "0.25 GiB cap" in res["reason"]
    assert peak > 0.25 and wall < 30


def test_run_child_kills_past_the_time_cap():
    ladder = _ladder()
    res, wall, _, _ = ladder.run_child([sys.executable, "-c", "import time; time.sleep(30)"], mem_gib=4, time_s=1)
    assert res["status"] == "over time limit" and wall < 30


def test_run_child_reports_a_crash():
    ladder = _ladder()
    res, _, _, _ = ladder.run_child([sys.executable, "-c", "raise SystemExit('broken')"], mem_gib=4, time_s=60)
    assert res["status"] == "error" and "broken" in res["reason"]


def _write(path: Path, rows: list[dict]) -> None:
    ladder = sys.modules["scale_ladder"]
    for r in rows:
        ladder.append_row(path, r)


def test_readme_block_and_resume_keys(tmp_path):
    ladder = _ladder()
    out = tmp_path / "ladder.csv"
    common = {"threads": 1, "load": 1.0, "date": "2026-01-01"}
    rows = [
        {"method": "csbm-generate", "nodes": 1000, "edges": 25000, "status": "ok", "cpu_s": 2.0, "peak_rss_gib": 0.3},
        {"method": "progap-edge", "nodes": 1000, "edges": 25000, "epochs_per_stage": 5, "epochs": 20, "status": "ok",
         "s_per_epoch": 0.02, "cpu_s_per_epoch": 0.01, "cpu_s": 5.0, "peak_rss_gib": 0.4,
         "epoch_timing": "training loop"},
        {"method": "progap-edge", "nodes": 1000, "edges": 25000, "epochs_per_stage": 100, "epochs": 400,
         "status": "ok", "s_per_epoch": 0.02, "cpu_s_per_epoch": 0.01, "cpu_s": 8.0, "peak_rss_gib": 0.41,
         "epoch_timing": "training loop"},
        {"method": "drw", "nodes": 1000, "edges": 25000, "epochs_per_stage": 5, "epochs": 5, "status": "ok",
         "s_per_epoch": 3.0, "cpu_s_per_epoch": 2.5, "cpu_s": 14.0, "peak_rss_gib": 0.5,
         "epoch_timing": "whole fit call over its steps"},
        {"method": "gap-edge", "nodes": 1000, "edges": 25000, "epochs_per_stage": 5, "status": "out of memory",
         "reason": "cap", "wall_s": 12.0, "peak_rss_gib": 16.1},
    ]  # fmt: skip
    _write(out, [{**common, **r} for r in rows])
    assert ladder.done_rows(out) == {
        ("csbm-generate", 1000, ""),
        ("progap-edge", 1000, "5"),
        ("progap-edge", 1000, "100"),
        ("gap-edge", 1000, "5"),
        ("drw", 1000, "5"),
    }
    block = ladder.readme_block(out)
    assert "| csbm-generate | 2.0 s, 0.30 GiB |" in block
    assert "| progap-edge | 0.01 s, 0.40 GiB |" in block  # the ladder's row: the fewest epochs
    assert "| drw | 2.5 s (whole call), 0.50 GiB |" in block
    assert "| gap-edge | **out of memory** after 12 s at 16.1 GiB |" in block
    # 5 CPU s + (100 epochs x 4 stages - 20 run) x 0.01 s = 8.8 CPU s
    assert "so about 9 CPU s for 100 epochs per stage" in block
    assert "progap-edge at 1,000 nodes: 8 CPU s and 0.41 GiB (projected from its 5-epoch run: 9 CPU s" in block
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{ladder.BEGIN}\nold\n{ladder.END}\nafter\n")
    ladder.write_readme(out, readme)
    text = readme.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    assert text.count(ladder.BEGIN) == 1 and block in text
    with open(out, newline="") as fh:
        assert next(csv.reader(fh)) == ladder.COLUMNS


def test_record_stopped_rows_are_rerun(tmp_path):
    ladder = _ladder()
    out, cache = tmp_path / "ladder.csv", tmp_path / "cache"
    key = ("progap-edge", 5000, "5")
    progress = ladder.progress_path(cache, key)
    progress.parent.mkdir(parents=True)
    progress.write_text("0.5 0.2 1.0\n0.7 0.4 1.5\n")
    (cache / "claims").mkdir()
    (cache / "claims" / (progress.stem + ".pid")).write_text("999999999")  # no such process
    args = ladder.argparse.Namespace(out=out, cache=cache, threads=1)
    ladder.record_stopped(args)
    (row,) = ladder.read_rows(out)
    assert row["status"] == "stopped" and row["epochs"] == "2" and row["peak_rss_gib"] == "1.5"
    assert float(row["s_per_epoch"]) == 0.6 and abs(float(row["cpu_s_per_epoch"]) - 0.3) < 1e-9
    assert ladder.done_rows(out) == set()  # a resumed ladder runs it again
    assert "**stopped** after 2 epochs: 0.3 s, ≥ 1.50 GiB" in ladder.readme_block(out)
    ladder.record_stopped(args)  # the same progress again: no second row
    assert len(ladder.read_rows(out)) == 1
