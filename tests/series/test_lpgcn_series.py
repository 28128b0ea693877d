import math

import pytest

from dpgnn.data import DatasetUnavailable
from dpgnn.methods import lpgcn
from dpgnn.methods.lpgcn import registration
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


def test_a_dataset_whose_cells_are_all_stored_is_not_loaded(tmp_path, capsys, monkeypatch):
    """datasets_to_run keeps a dataset whose grid is stored without loading it (reading rows needs no files),
    loads one with missing cells, and records an unavailable one as not_run; an empty ``stored`` loads them all."""
    from dpgnn.series import datasets_to_run
    from dpgnn.utils import config_hash

    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    store = ResultStore("lpgcn", "test")

    def cells(names):
        return [{"dataset": n, "run": r} for n in names for r in range(2)]

    loaded = []

    def loader(name):
        loaded.append(name)
        if name == "elliptic":
            raise DatasetUnavailable(f"{name}: raw file not found")
        return "data"

    stored = {config_hash(c) for c in cells(["cora"])} | {config_hash(cells(["citeseer"])[0])}
    names = datasets_to_run(
        store, ["cora", "citeseer", "elliptic"], loader, artifact="table2", cells=cells, stored=stored
    )
    assert names == ["cora", "citeseer"] and loaded == ["citeseer", "elliptic"]
    assert "not_run: elliptic" in capsys.readouterr().out
    assert store.skipped()["dataset"].tolist() == ["elliptic"]
    loaded.clear()
    assert datasets_to_run(store, ["cora"], loader, artifact="table2", cells=cells, stored=set()) == ["cora"]
    assert loaded == ["cora"]


def test_tidy_packs_the_ledger():
    row = {
        "paper": "lpgcn",
        "artifact": "table2",
        "dataset": "cora",
        "method": "pgc",
        "level": "feature-ldp",
        "neighbouring": "one node",
        "mechanism": "pgc",
        "epsilon": 1.0,
        "epsilon_node_total": 1433.0,
        "delta": 0.0,
        "sensitivity": 1.0,
        "accountant": "basic",
        "value": 0.5,
        "history": [1, 2],
    }
    out = series._tidy(row)
    assert out["ledger"]["epsilon_node_total"] == 1433.0 and out["ledger"]["mechanism"] == "pgc"
    assert "history" not in out and "neighbouring" not in out and out["epsilon"] == 1.0


@pytest.mark.parametrize("eps,expected", [(1.0, "eps=1"), (5.0, "eps=5"), (math.inf, "eps=inf")])
def test_setting_labels_match_reference(eps, expected):
    assert series._setting(eps) == expected


# ---------------------------------------------------------------------------------------------------------------
# the series API on the test profile, on a small synthetic graph standing in for every dataset name
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture()
def synthetic(tmp_path, monkeypatch):
    """Results in ``tmp_path``; ``lpgcn.prepare`` returns a small [0, 1]-featured graph; calls of the Table-2 runs
    are counted (they are what the registered methods call)."""
    from dpgnn.data import csbm, minmax_normalize

    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    data = minmax_normalize(csbm(num_nodes=120, num_classes=3, num_features=12, avg_degree=6, homophily=0.9, seed=2))
    monkeypatch.setattr(lpgcn, "prepare", lambda name, **kw: data)
    series._data.cache_clear()
    series._lp_split.cache_clear()
    calls = []
    for name in ("run_node_classification", "run_link_prediction"):
        real = getattr(registration, name)  # the registered methods call them from there

        def counted(*args, _real=real, **kwargs):
            calls.append(_real.__name__)
            return _real(*args, **kwargs)

        monkeypatch.setattr(registration, name, counted)
    yield data, calls
    series._data.cache_clear()
    series._lp_split.cache_clear()


def test_run_table2_goes_through_the_registry_resumes_and_matches_a_direct_run(synthetic):
    data, calls = synthetic
    cfg = settings("lpgcn", "test")
    store = ResultStore("lpgcn", "test")
    rows = series.run(cfg, store, "table2", device="cpu")
    # 2 tasks x (PGC at ε = 1, RAW) x 1 run, each through the registered method
    assert len(rows) == 4 and sorted(calls) == ["run_link_prediction"] * 2 + ["run_node_classification"] * 2
    assert set(rows["metric"]) == {"micro_f1", "auc"} and rows["value"].between(0, 100).all()
    series.run(cfg, store, "table2", device="cpu")
    assert len(calls) == 4  # resumed: nothing retrained
    direct = lpgcn.run_node_classification(
        data,
        "cora",
        "pgc",
        1.0,
        run=0,
        seed=cfg.seed,
        device="cpu",
        max_epochs=cfg.nc.max_epochs,
        min_epochs=cfg.nc.min_epochs,
        patience=cfg.nc.patience,
    )
    stored = rows.query("metric == 'micro_f1' and method == 'pgc'")["value"].item()
    assert stored == 100.0 * direct["value"]
    table = series.side_by_side(store, "table2")
    assert list(table.columns[:9]) == [
        "dataset",
        "method",
        "metric",
        "setting",
        "paper",
        "ours",
        "diff",
        "n_runs",
        "status",
    ]
    mine = table[(table["dataset"] == "cora") & (table["method"] == "pgc") & (table["setting"] == "eps=1")]
    assert (mine["status"] != "not_run").all() and mine["ours"].str.match(r"^\d+\.\d( ± \d+\.\d)?$").all()
    assert type(series.plot(store, "table2")).__name__ == "Figure"


def test_table2_runs_of_a_configuration_train_together_with_the_sequential_rows(synthetic, tmp_path):
    """The notebooks' loop (repeats_runner) and the engine's task (batch_run) train a node-classification
    configuration's runs together and store the rows the one-at-a-time loop stores: every row, configuration hash
    and ledger equal, wall times aside."""
    import functools

    import pandas as pd

    from dpgnn import engine
    from dpgnn.sweep import run_grid

    data, calls = synthetic
    cfg = settings("lpgcn", "test", runs=3)
    cells = series.table2_cells(cfg)
    spec = series.CELLS["table2"]
    groups = {}
    for c in cells:
        groups.setdefault(spec.batch_key(c), []).append(c["run"])
    # node classification: one group per setting (PGC at ε = 1, RAW), its three runs; link prediction: one per cell
    assert sorted(groups.values()) == [[0], [0], [0, 1, 2], [0, 1, 2], [1], [1], [2], [2]]
    one = ResultStore("lpgcn", "test", root=tmp_path / "one")
    run_grid(one, "table2", cells, functools.partial(series.table2_cell, cfg, device="cpu"))
    assert sorted(calls) == ["run_link_prediction"] * 6 + ["run_node_classification"] * 6
    calls.clear()
    store = ResultStore("lpgcn", "test")
    series.run(cfg, store, "table2", device="cpu")
    assert sorted(calls) == ["run_link_prediction"] * 6  # node classification: its runs trained together
    a, b = one.load("table2"), store.load("table2")
    assert len(a) == len(b) == len(cells)
    pd.testing.assert_frame_equal(engine.comparable(a), engine.comparable(b))
    pgc = [c for c in cells if c["task"] == "node_classification" and c["method"] == "pgc"]
    out = engine.execute_job(spec, cfg, pgc, device="cpu")
    want = a[(a["task"] == "node_classification") & (a["method"] == "pgc")].sort_values("run")
    assert [o["rows"][0]["value"] for o in out] == list(want["value"])
    assert [o["rows"][0]["run_seed"] for o in out] == list(want["run_seed"])
    assert len({o["seconds"] for o in out}) == 1  # one task: its wall time shared among its cells


def test_run_lists_of_artifacts_plot_and_bad_names(synthetic):
    cfg = settings("lpgcn", "test")
    store = ResultStore("lpgcn", "test")
    out = series.run(cfg, store, ["table3", "fig1", "fig4", "fig5", "fig2", "fig3"], device="cpu")
    assert list(out) == ["table3", "fig1", "fig4", "fig5", "fig2", "fig3"] and all(len(v) for v in out.values())
    for name in ("fig1", "fig4", "fig5", "fig2", "fig3"):
        assert type(series.plot(store, name)).__name__ == "Figure", name
    assert type(series.plot(store, "fig2", datasets=["cora"])).__name__ == "Figure"
    assert series.side_by_side(store, "table3")["ours"].str.match(r"^\d\.\d{4}$|^—$").all()
    with pytest.raises(ValueError, match="no figure"):
        series.plot(store, "table3")
    with pytest.raises(ValueError, match="unknown LPGCN artifact"):
        series.run(cfg, store, "table9")
    with pytest.raises(ValueError, match="train=False"):
        series.run(cfg, store, "table2", force=True, train=False)


def test_registered_methods_and_their_keys():
    from dpgnn import methods
    from dpgnn.methods import lpgcn

    keys = methods.available("lpgcn")
    assert len(keys) == 8 and ("lpgcn", "pgc-gcn", "feature") in keys and ("lpgcn", "raw-vgae", "none") in keys
    assert lpgcn.method_key("PGC", "link_prediction") == ("lpgcn", "pgc-vgae", "feature")
    assert methods.get("lpgcn", "pgc-vgae", "feature").prepare is lpgcn.prepare_link_prediction
    with pytest.raises(ValueError, match="unknown LPGCN task"):
        lpgcn.method_key("pgc", "graph_classification")
    spec = methods.get("lpgcn", "raw-gcn", "none")
    with pytest.raises(ValueError, match="false privacy claim"):  # RAW adds no noise: a finite ε is refused
        spec.run(None, {"dataset": "cora", "epsilon": 1.0}, seed=0)
    with pytest.raises(ValueError, match="needs 'dataset'"):
        spec.run(None, {}, seed=0)
