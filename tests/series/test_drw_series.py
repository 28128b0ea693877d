"""DRW series: the sound-mode Table 1 is a grid of cells like the paper's (engine-visible, resumable, and
train=False trains nothing)."""

import json

import pytest

from dpgnn import engine
from dpgnn.privacy.guarantee import check_ledger
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import drw as series


def test_sound_cells_fix_everything_in_advance():
    cfg = settings("drw", "test")
    cells = series.table1_sound_cells(cfg)
    assert cells and all(c["scaling"] == "none" and c["select"] == "last" for c in cells)
    assert {c["clip_norm"] for c in cells} == {cfg.sound_clip_norm}  # fixed, never a quantile of gradients
    assert [s.name for s in engine.select(["drw"])] == ["table1", "table1_sound"]


@pytest.mark.mirror
def test_sound_table1_runs_resumes_and_reads_without_training(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from dpgnn.data import dataset_available

    if not dataset_available("cora"):
        pytest.skip("cora is not in the mirror")
    cfg = settings("drw", "test")
    store = ResultStore("drw", "test", root=tmp_path)
    rows = series.run_table1_sound(cfg, store, device="cpu")
    assert len(rows) == len(series.table1_sound_cells(cfg))
    for led in rows["ledger"]:
        assert check_ledger(json.loads(led))["guarantee"] == "sound"
    calls = []
    monkeypatch.setattr(series, "run_sound_cell", lambda *a, **k: calls.append(a) or [])
    again = series.run_table1_sound(cfg, store, device="cpu")  # every cell stored: nothing runs
    assert calls == [] and len(again) == len(rows)
    assert len(series.run_table1_sound(cfg, store, train=False)) == len(rows)
    with pytest.raises(ValueError, match="train=False"):
        series.run_table1_sound(cfg, store, force=True, train=False)
