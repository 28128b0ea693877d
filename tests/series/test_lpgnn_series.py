"""LPGNN series: cells shared by artifacts train once, resuming trains nothing, ``train=False`` only shows stored cells."""

from __future__ import annotations

import pytest

from dpgnn.data import csbm
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import lpgnn as series


@pytest.fixture()
def counted(tmp_path, monkeypatch):
    """A results root in ``tmp_path``, a small synthetic graph for every dataset name, and a count of trainings."""
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    data = csbm(num_nodes=120, num_classes=3, num_features=12, avg_degree=6, homophily=0.85, seed=3)
    data.num_classes = 3
    monkeypatch.setattr(series.lpgnn, "prepare", lambda name, **kw: data)
    calls = []
    real = series.lpgnn.run_cell

    def run_cell(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(series.lpgnn, "run_cell", run_cell)
    return calls


def test_shared_cells_train_once_and_resume(counted):
    cfg = settings("lpgnn", "test")
    store = ResultStore("lpgnn", "test")
    out = series.run(cfg, store, ["fig_a", "table_f"], device="cpu")
    # fig A's one cell (mbm, ε_x = ε_y = 1, Drop) is also table F's Drop row; table F adds CE and FC
    assert len(counted) == 3
    assert sorted(out["table_f"]["method"]) == ["ce", "drop", "fc"]
    assert out["fig_a"]["value"].tolist() == out["table_f"].query("method == 'drop'")["value"].tolist()
    series.run(cfg, store, ["fig_a", "table_f"], device="cpu")
    assert len(counted) == 3


def test_train_false_shows_only_stored_cells(counted):
    cfg = settings("lpgnn", "test")
    store = ResultStore("lpgnn", "test")
    series.run(cfg, store, ["fig_a"], device="cpu")
    assert len(counted) == 1
    out = series.run(cfg, store, ["table_b"], device="cpu", train=False)
    assert len(counted) == 1  # the "one" replacement cell is missing and stays missing
    assert out["table_b"]["method"].unique().tolist() == ["lpgnn"]
    series.run(cfg, store, ["table_b"], device="cpu")
    assert len(counted) == 2
    with pytest.raises(ValueError, match="train=False"):
        series.run(cfg, store, ["table_b"], force=True, train=False)
