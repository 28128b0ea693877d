import math

import pytest

from dpgnn.data import DatasetUnavailable
from dpgnn.profiles import settings
from dpgnn.report import paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.series import lpgcn as series


def test_table2_cells_cover_the_grid_once():
    cfg = settings("lpgcn", "paper")
    cells = series.table2_cells(cfg, ["cora", "twitch"])
    # 2 tasks x 2 datasets x (3 mechanisms x 3 eps + RAW once) x 10 runs
    assert len(cells) == 2 * 2 * 10 * 10
    raw = [c for c in cells if c["method"] == "raw"]
    assert {c["epsilon"] for c in raw} == {math.inf} and len(raw) == 2 * 2 * 10
    nc = [c for c in cells if c["task"] == "node_classification"][0]
    lp = [c for c in cells if c["task"] == "link_prediction"][0]
    assert nc["max_epochs"] == 500 and nc["patience"] == 20 and lp["min_epochs"] == 100 and lp["check_every"] == 10


def test_unavailable_dataset_is_skipped_visibly_and_reported(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    store = ResultStore("lpgcn", "test")

    def loader(name):
        raise DatasetUnavailable(f"{name}: raw file elliptic_txs_features.csv not found\nmore detail")

    assert load_or_skip(store, "elliptic", loader, artifact="table2") is None
    assert "not_run: elliptic" in capsys.readouterr().out
    rep = paper_vs_ours("lpgcn", "table2", "test")
    ell = rep[rep["dataset"] == "elliptic"]
    assert len(ell) == 20 and (ell["status"] == "not_run").all()
    assert ell["note"].str.contains("elliptic_txs_features.csv").all()
    # a later successful load clears the record
    assert load_or_skip(store, "elliptic", lambda n: "data", artifact="table2") == "data"
    assert store.skipped().empty


def test_tidy_packs_the_ledger():
    row = {"paper": "lpgcn", "artifact": "table2", "dataset": "cora", "method": "pgc", "level": "feature-ldp",
           "neighbouring": "one node", "mechanism": "pgc", "epsilon": 1.0, "epsilon_node_total": 1433.0,
           "delta": 0.0, "sensitivity": 1.0, "accountant": "basic", "value": 0.5, "history": [1, 2]}
    out = series._tidy(row)
    assert out["ledger"]["epsilon_node_total"] == 1433.0 and out["ledger"]["mechanism"] == "pgc"
    assert "history" not in out and "neighbouring" not in out and out["epsilon"] == 1.0


@pytest.mark.parametrize("eps,expected", [(1.0, "eps=1"), (5.0, "eps=5"), (math.inf, "eps=inf")])
def test_setting_labels_match_reference(eps, expected):
    assert series._setting(eps) == expected
