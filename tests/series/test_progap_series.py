"""The ProGAP series API (run / side_by_side / plot / select_best), its registry dispatch and the fidelity option."""

import math

import pandas as pd
import pytest

from dpgnn import methods
from dpgnn.data import csbm, random_node_split
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import progap as series
from dpgnn.utils import config_hash


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=200, num_classes=3, num_features=16, avg_degree=6.0, homophily=0.9, seed=5)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=2)


def _cell(**kw):
    base = dict(
        dataset="toy",
        method="progap",
        level="edge",
        epsilon=1.0,
        depth=1,
        base_layers=1,
        lr=0.01,
        epochs=2,
        run=0,
        seed=0,
    )
    return {**base, **kw}


# ---------------------------------------------------------------------------------------------------------------
# registry: every method of Table 2 / Fig. 2-4 resolves, configs are checked
# ---------------------------------------------------------------------------------------------------------------
def test_every_series_method_is_registered():
    keys = set(methods.available("progap"))
    for level, names in series.TABLE2_METHODS.items():
        for name in names + ["progap-layerwise"]:
            assert ("progap", name, level) in keys, (name, level)
    assert ("progap", "dp-gnn", "edge") not in keys  # a node-level method only
    with pytest.raises(ValueError, match="valid"):
        methods.get("progap", "dp-gnn", "edge")


def test_run_cell_dispatches_through_the_registry(graph, monkeypatch):
    calls = []
    real = methods.get

    def spy(paper, method, level):
        calls.append((paper, method, level))
        return real(paper, method, level)

    monkeypatch.setattr(series.methods, "get", spy)
    rows = series.run_cell(
        graph, _cell(method="graphsage", level="none", epsilon=math.inf, base_layers=2), device="cpu"
    )
    assert calls == [("progap", "graphsage", "none")]
    assert [r["metric"] for r in rows] == ["val_acc", "accuracy"] and 0 <= rows[1]["value"] <= 100
    assert rows[0]["setting"] == "none eps=inf"


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(hops=2), "unknown config key"),  # GAP's own name: the vocabulary says depth
        (dict(method="dp-gnn", level="node", depth=2), "fixed"),  # one message-passing layer by construction
        (dict(method="mlp", depth=1), "fixed"),
    ],
)
def test_bad_configs_are_rejected(graph, bad, match):
    cell = _cell(**{"method": "gap", **bad})
    with pytest.raises(ValueError, match=match):
        series.run_cell(graph, cell, device="cpu")


def test_config_level_must_match_the_registered_level(graph):
    spec = methods.get("progap", "progap", "edge")
    with pytest.raises(ValueError, match="level"):
        spec.run(graph, {"level": "node", "epsilon": 1.0, "depth": 1, "epochs": 1}, seed=0, device="cpu")
    res = spec.run(graph, {"epsilon": 1.0, "depth": 1, "epochs": 1}, seed=0, device="cpu")
    assert isinstance(res, methods.RunResult) and set(res.metrics) == {"train", "val", "test"}
    assert res.extra["queries"] == 1 and res.ledger["level"] == "edge"


# ---------------------------------------------------------------------------------------------------------------
# fidelity: a grid/notebook parameter of Table 2's ProGAP edge cells
# ---------------------------------------------------------------------------------------------------------------
def test_fidelity_reaches_only_progap_edge_cells_and_keeps_paper_hashes():
    kw = dict(datasets=[], standins={"toy": 1}, node_settings={"toy": [8, 2]})
    paper = series.cells._table2_cells(settings("progap", "test", **kw))
    authors = series.cells._table2_cells(settings("progap", "test", fidelity="authors_code", **kw))
    assert len(paper) == len(authors)
    changed = [(a["method"], a["level"]) for p, a in zip(paper, authors) if config_hash(p) != config_hash(a)]
    assert changed == [("progap", "edge")]
    assert all("fidelity" not in c for c in paper)
    with pytest.raises(ValueError, match="fidelity"):
        series.cells._table2_cells(settings("progap", "test", fidelity="official", **kw))


def test_authors_code_cell_is_its_own_setting_with_the_official_sigma(graph):
    row = series.run_cell(graph, _cell(fidelity="authors_code"), device="cpu")[1]
    assert row["setting"] == "edge eps=1 [authors_code]"
    assert row["ledger"]["fidelity"] == "authors_code" and row["ledger"]["epsilon"] <= 1.0
    paper = series.run_cell(graph, _cell(), device="cpu")[1]
    assert paper["setting"] == "edge eps=1" and paper["ledger"]["fidelity"] == "paper"
    assert row["ledger"]["sigma_nap"] > paper["ledger"]["sigma_nap"]  # autodp RDP composition: more noise


# ---------------------------------------------------------------------------------------------------------------
# select_best: mean validation accuracy, ties broken by the config string's order
# ---------------------------------------------------------------------------------------------------------------
def _runs(configs):
    rows = []
    for depth, lr, vals, tests in configs:
        for run, (v, t) in enumerate(zip(vals, tests)):
            base = {
                "dataset": "d",
                "method": "progap",
                "level": "edge",
                "setting": "edge eps=1",
                "depth": depth,
                "base_layers": 1,
                "lr": lr,
                "epochs": 10,
                "run": run,
                "config_hash": f"{depth}{lr}{run}",
            }
            rows += [{**base, "metric": "val_acc", "value": v}, {**base, "metric": "accuracy", "value": t}]
    return pd.DataFrame(rows)


def test_select_best_picks_the_best_mean_validation():
    sel = series.select_best(_runs([(2, 0.01, (70, 70), (50, 52)), (2, 0.05, (90, 40), (99, 99))]))
    assert sorted(sel["value"]) == [50, 52] and set(sel["lr"]) == {0.01}
    assert set(sel["metric"]) == {"accuracy"} and sel["config_hash"].nunique() == 2


def test_select_best_ties_go_to_the_first_config_string():
    # equal mean validation: "10|1|0.01|10" sorts before "2|1|0.01|10" as a string (not as a number), as the
    # stored paper selections were made
    sel = series.select_best(_runs([(2, 0.01, (60, 80), (11, 11)), (10, 0.01, (70, 70), (22, 22))]))
    assert set(sel["depth"]) == {10} and list(sel["value"]) == [22, 22]
    sel = series.select_best(_runs([(3, 0.01, (70, 70), (33, 33)), (4, 0.01, (70, 70), (44, 44))]))
    assert set(sel["depth"]) == {3}


# ---------------------------------------------------------------------------------------------------------------
# the API on the test profile (one tiny Table 2 on toy data), side_by_side columns, plots
# ---------------------------------------------------------------------------------------------------------------
def test_api_on_the_test_profile(graph, tmp_path, monkeypatch):
    monkeypatch.setattr(series.cells, "available", lambda cfg, store, artifact, cache=None: ["toy"])
    monkeypatch.setattr(series.cells, "_load", lambda cfg, name: graph)
    cfg = settings(
        "progap",
        "test",
        datasets=[],
        standins={"toy": 1},
        node_settings={"toy": [32, 4]},
        epochs_edge=2,
        epochs_node=[1],
    )
    store = ResultStore("progap", "test", root=tmp_path)
    rows = series.run(cfg, store, "table2", device="cpu")
    assert set(rows["metric"]) == {"accuracy"}
    assert set(rows["method"]) == {m for ms in series.TABLE2_METHODS.values() for m in ms}
    assert set(series.run(cfg, store, "layerwise", device="cpu", train=False)["method"]) == {"progressive", "layerwise"}
    sbs = series.side_by_side(store, "table2")
    assert "ours: toy (stand-in)" in sbs.columns and "paper: facebook" in sbs.columns
    assert sbs.loc[("edge eps=1", "progap"), "paper: facebook"] == "77.2 ± 0.3"
    assert sbs.loc[("edge eps=1", "progap"), "ours: toy (stand-in)"] != ""
    cal = series.run(cfg, store, "calibration")
    assert len(cal) and set(series.side_by_side(store, "calibration").index.get_level_values("level")) == {"edge"}
    for artifact in ("table2", "layerwise", "calibration"):
        assert series.plot(store, artifact) is not None
    with pytest.raises(ValueError, match="valid"):
        series.run(cfg, store, "table9")
    # the authors' calibration on the same store: only the ProGAP edge cell trains, reported apart
    authors = settings(
        "progap",
        "test",
        datasets=[],
        standins={"toy": 1},
        node_settings={"toy": [32, 4]},
        epochs_edge=2,
        epochs_node=[1],
        fidelity="authors_code",
    )
    n = len(store.load("table2_runs"))
    out = series.run(authors, store, "table2", device="cpu")
    assert len(store.load("table2_runs")) == n + 2  # one cell: val + test rows
    assert set(out[out["setting"].str.contains("authors_code")]["method"]) == {"progap"}
    assert ("edge eps=1 [authors_code]", "progap") in series.side_by_side(store, "table2").index


def test_fidelity_comparison_shows_the_measured_numbers_without_runs(tmp_path):
    t = series.fidelity_comparison(ResultStore("progap", "test", root=tmp_path))
    assert list(t.index) == [2, 3]
    assert (
        t.loc[2, "official code (measured)"] == "73.3 ± 0.4" and t.loc[3, "ours, official σ (measured)"] == "74.7 ± 0.7"
    )
    assert t.loc[3, "σ authors_code"] == pytest.approx(8.620) and t.loc[3, "σ paper"] == pytest.approx(8.104)
    assert (t["ours, fidelity=authors_code (stored)"] == "—").all()
