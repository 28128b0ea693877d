"""PrivGNN's series API (run, side_by_side, plot) on the ``test`` profile, with a toy graph in place of Credit."""

from __future__ import annotations

import pytest
import torch
from helpers.privgnn_toy import toy_privgnn
from matplotlib.figure import Figure

from dpgnn.methods import privgnn as P
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import privgnn as series

SIDE_BY_SIDE = [
    "artifact",
    "dataset",
    "method",
    "setting",
    "paper_value",
    "ours_value",
    "ours_spread",
    "n_runs",
    "diff",
    "status",
]


def _toy(n_priv=60, n_pub=50, d=6, c=2, seed=0) -> P.PrivGNNData:
    return toy_privgnn(n_priv, n_pub, d, c, seed, name="credit")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    return ResultStore("privgnn", "test")


@pytest.fixture
def toy_credit(monkeypatch):
    """The test profile's Credit cell on a 110-node toy graph (K = 10 fits its γ|V†| = 18)."""
    toy = _toy()
    monkeypatch.setattr(series.common, "_data", lambda name: toy)
    return settings("privgnn", "test", k=10, queries=[10], main_queries=10)


def test_epsilon_run_side_by_side_and_plots(store):
    cfg = settings("privgnn", "test")
    out = series.run(cfg, store, "epsilon")
    assert set(out) == set(series.EPSILON_ARTIFACTS) and all(len(v) for v in out.values())
    t2 = series.run(cfg, store, "table2_eps")  # recomputed whole, the one table returned
    assert set(t2["artifact"]) == {"table2_eps"} and len(t2) == len(out["table2_eps"])
    side = series.side_by_side(store, "table2_eps")
    assert list(side.columns[:7]) == ["dataset", "method", "setting", "paper_value", "ours_value", "diff", "status"]
    # the accountant reproduces the printed epsilon at the reproducing delta (Table 2, |Q| = 1000, lambda = 1)
    row = side[(side["dataset"] == "amazon") & (side["method"] == "privgnn") & (side["setting"] == "Q=1000,lam=1")]
    assert len(row) == 1 and row["status"].iloc[0] == "within" and abs(row["diff"].iloc[0]) <= 0.01
    for name in ("fig2b", "fig7_eps"):
        assert isinstance(series.plot(store, name), Figure)


def test_accuracy_run_side_by_side_and_plot(store, toy_credit):
    cfg = toy_credit
    rows = series.run(cfg, store, "accuracy", device="cpu")
    assert {"privgnn", "b1"} <= set(rows["method"])
    assert set(rows["artifact"]) == {"table5", "table8", "table9"}
    assert rows["value"].between(0, 1).all()
    priv = rows[rows["method"] == "privgnn"]
    assert (priv["level"] == "node").all() and (priv["epsilon"] > 0).all() and (priv["delta"] == 1e-3).all()
    assert (rows.loc[rows["method"] == "b1", "level"] == "none").all()
    # resumable: the stored cell is not retrained, one table's rows come back
    t5 = series.run(cfg, store, "table5", device="cpu")
    assert set(t5["artifact"]) == {"table5"} and len(store.load("accuracy")) == len(rows)
    assert len(series.run(cfg, store, "accuracy", train=False)) == len(rows)
    with pytest.raises(ValueError, match="train=False forbids"):
        series.run(cfg, store, "accuracy", force=True, train=False)
    side = series.side_by_side(store, "table8")  # Credit's B1 (Table 8)
    assert list(side.columns) == SIDE_BY_SIDE and set(side["artifact"]) == {"table8"}
    ours = side[(side["dataset"] == "credit") & (side["method"] == "b1")]
    assert len(ours) == 1 and ours["n_runs"].iloc[0] == 1
    assert ours["ours_value"].iloc[0] == pytest.approx(rows.loc[rows["method"] == "b1", "value"].iloc[0], abs=1e-3)
    both = series.side_by_side(store, "accuracy")
    assert {"table5", "table8", "table9"} <= set(both["artifact"]) and (both["status"] != "not_run").any()
    assert isinstance(series.plot(store, "fig2a"), Figure)


def test_accuracy_cells_are_the_dataset_by_run_grid():
    cfg = settings("privgnn", "paper")
    cells = series.accuracy_cells(cfg)
    assert [(c["dataset"], c["run"]) for c in cells] == [(d, r) for d in cfg.datasets for r in range(cfg.runs)]
    assert all(c["full"] and c["seed"] == cfg.seed and c["lambdas"] == list(cfg.lambdas) for c in cells)
    assert series.accuracy_cells(cfg, []) == []


@pytest.mark.parametrize("call,args", [(series.side_by_side, ("table4",)), (series.plot, ("fig3b",))])
def test_unknown_artifacts_list_the_valid_ones(store, call, args):
    with pytest.raises(ValueError, match="valid:"):
        call(store, *args)
    with pytest.raises(ValueError, match="unknown PrivGNN artifact 'tab5'"):
        series.run(settings("privgnn", "test"), store, "tab5")


def test_figure_cells_through_the_api(store, toy_credit):
    """Fig. 5's grid (Credit: PrivGNN, B1/B2 vs lambda) by run/side_by_side/plot; a figure not yet stored is an
    error."""
    cfg = toy_credit
    with pytest.raises(ValueError, match="nothing stored"):
        series.plot(store, "fig5_accuracy")
    rows = series.run(cfg, store, "fig5", device="cpu")
    assert len(rows) and set(rows["artifact"]) == {"fig5"} and rows["value"].between(0, 1).all()
    side = series.side_by_side(store, "fig5")
    assert list(side.columns[:5]) == ["dataset", "method", "setting", "paper_value", "ours_value"]
    assert isinstance(series.plot(store, "fig5_accuracy"), Figure)


def test_accuracy_cell_gives_the_same_rows_whatever_ran_before(toy_credit):
    """Dropout masks come from the cell's own seed: the global RNG state before the cell does not matter."""
    cell = series.accuracy_cells(toy_credit, ["credit"])[0]

    def values(global_seed):
        torch.manual_seed(global_seed)
        return [(r["method"], r["setting"], r["value"]) for r in series.run_cell(toy_credit, cell, "cpu")]

    first = values(1)
    assert first == values(2)
    state = torch.random.get_rng_state()
    series.run_cell(toy_credit, cell, "cpu")
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is left as it was


def test_table5_configuration_is_listed_again_as_its_rows_of_tables_1_and_6():
    row = {
        "artifact": "table5",
        "dataset": "amazon",
        "method": "privgnn",
        "setting": "lam=0.4",
        "value": 0.5,
        "queries": 1000,
        "lam": 0.4,
    }
    rows = [
        row,
        {**row, "method": "privgnn_code"},
        {**row, "queries": 500, "artifact": "table6"},
        {**row, "method": "pate_m"},
    ]
    out = series.repeated_rows(rows, "amazon", 750, 1000)
    assert sorted((r["artifact"], r["method"], r["setting"]) for r in out) == [
        ("table1", "privgnn", "K=750,lam=0.4"),
        ("table1", "privgnn_code", "K=750,lam=0.4"),
        ("table6", "privgnn", "Q=1000,lam=0.4"),
        ("table6", "privgnn_code", "Q=1000,lam=0.4"),
    ]
    assert all(r["value"] == 0.5 and r["queries"] == 1000 for r in out)
    # Credit is in neither table; the Facebook stand-in is listed like Facebook
    assert series.repeated_rows(rows, "credit", 750, 1000) == []
    assert len(series.repeated_rows(rows, "fb100-cornell5 (stand-in for facebook)", 1000, 1000)) == 4


def test_the_repeated_reference_rows_carry_table5s_numbers_and_spread():
    from dpgnn.reference import load_reference

    ref = load_reference("privgnn")
    t5 = ref[(ref["artifact"] == "table5") & (ref["method"] == "privgnn")].set_index(["dataset", "setting"])
    for art, prefix in (("table1", "K=750,"), ("table6", "Q=1000,")):
        rep = ref[(ref["artifact"] == art) & (ref["dataset"] == "amazon") & ref["setting"].str.startswith(prefix)]
        assert set(rep["method"]) == {"privgnn", "privgnn_code"} and len(rep) == 10
        for r in rep.itertuples():
            src = t5.loc[("amazon", r.setting.split(",")[1])]
            assert (r.value, r.spread, r.spread_kind) == (src.value, src.spread, "std")


def test_b4_readings_cell_and_table(store, toy_credit):
    """B4's readings: hard labels at every λ, and λ fixed with the columns read as |Q|; the table puts them beside
    Table 9's B4 and the soft-label rows of the accuracy grid, one column per Table 9 column."""
    cfg = settings(
        "privgnn",
        "test",
        k=10,
        queries=[10],
        main_queries=10,
        baselines=["b4"],
        lambdas=[0.4, 1.0],
        b4_reading_queries=[5, 10],
        b4_reading_lambdas=[1.0],
    )
    cells = series.b4_readings_cells(cfg)
    assert [(c["dataset"], c["run"], c["seed"]) for c in cells] == [("credit", 0, cfg.seed)]
    series.run(cfg, store, "accuracy", device="cpu")
    rows = series.run(cfg, store, "b4_readings", device="cpu")
    assert list(rows["setting"]) == [
        "labels=hard,lam=0.4",
        "labels=hard,lam=1",
        "labels=soft,Q=5,lam=1",
        "labels=soft,Q=10,lam=1",
    ]
    assert list(rows["labels"]) == ["hard", "hard", "soft", "soft"] and list(rows["queries"]) == [10, 10, 5, 10]
    assert (rows["method"] == "b4").all() and rows["value"].between(0, 1).all()
    assert (rows["epsilon"] == float("inf")).all()  # B4 reads the public ground truth: not private
    # the same run seed as the accuracy grid's soft-label B4, so the hard labels are that noise's argmax
    soft = store.load("accuracy").query("artifact == 'table9' and method == 'b4'")
    assert set(rows["seed"]) == set(soft["seed"])
    table = series.side_by_side(store, "b4_readings")
    assert list(table["reading"]) == [
        "paper (Table 9)",
        "soft labels (the paper's words)",
        "hard labels (argmax)",
        "λ 1 fixed, columns |Q|",
    ]
    assert [c for c in table.columns if "=" in c] == [
        "lam=0.1",
        "lam=0.2",
        "lam=0.4",
        "lam=0.8",
        "lam=1",
        "Q=5",
        "Q=10",
    ]
    hard = table.set_index("reading").loc["hard labels (argmax)"]
    assert hard["lam=1"] == pytest.approx(rows.loc[rows["setting"] == "labels=hard,lam=1", "value"].iloc[0], abs=1e-3)
    assert table.set_index("reading").loc["paper (Table 9)", "lam=1"] == pytest.approx(0.80)  # Credit's printed B4
