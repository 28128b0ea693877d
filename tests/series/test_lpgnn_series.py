"""LPGNN series: cells shared by artifacts train once, resuming trains nothing, ``train=False`` only shows stored
cells."""

from __future__ import annotations

import numpy as np
import pytest

from dpgnn.data import csbm
from dpgnn.methods import lpgnn
from dpgnn.methods.lpgnn import cell
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import lpgnn as series
from dpgnn.series.lpgnn.seeds import _share_within


@pytest.fixture()
def counted(tmp_path, monkeypatch):
    """A results root in ``tmp_path``, a small synthetic graph for every dataset name, and a count of trainings."""
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    data = csbm(num_nodes=120, num_classes=3, num_features=12, avg_degree=6, homophily=0.85, seed=3)
    data.num_classes = 3
    monkeypatch.setattr(lpgnn, "prepare", lambda name, **kw: data)
    calls = []
    real = cell.run_cell  # what the registered methods call

    def run_cell(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(cell, "run_cell", run_cell)
    series._data.cache_clear()  # the prepared datasets are cached per process
    yield calls
    series._data.cache_clear()


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


def test_series_api_str_artifact_side_by_side_and_plots(counted):
    cfg = settings("lpgnn", "test")
    store = ResultStore("lpgnn", "test")
    rows = series.run(cfg, store, "table_f", device="cpu")  # one name: its rows
    assert sorted(rows["method"]) == ["ce", "drop", "fc"] and len(counted) == 3
    table = series.side_by_side(store, "table_f")
    assert list(table.columns) == [
        "dataset",
        "method",
        "setting",
        "paper",
        "ours",
        "diff",
        "n_runs",
        "approx",
        "status",
    ]
    ours = table[(table["dataset"] == "cora") & (table["setting"] == "eps_x=1,eps_y=1")]
    assert len(ours) == 3 and (ours["status"] != "not_run").all()
    assert type(series.plot(store, "table_f")).__name__ == "Figure"
    series.run(cfg, store, ["fig_a", "fig_d"], device="cpu")
    for name in ("fig_a", "fig_d"):
        assert type(series.plot(store, name)).__name__ == "Figure"
    with pytest.raises(ValueError, match="unknown LPGNN artifact"):
        series.plot(store, "fig_z")
    with pytest.raises(ValueError, match="unknown LPGNN artifact"):
        series.side_by_side(store, "fig_z")


def test_registered_methods_levels_and_the_run_result(counted):
    from dpgnn import methods

    L = lpgnn
    assert L.level_of("mbm", 1.0, 1.0) == "feature+label" and L.level_of("mbm", 1.0, float("inf")) == "feature"
    assert L.level_of("mbm", float("inf"), 1.0) == "label"  # ε_x = ∞: the raw features
    assert L.level_of("one", float("inf"), float("inf")) == "none"
    keys = methods.available("lpgnn")
    assert len(keys) == 16 and ("lpgnn", "agm", "feature") in keys and ("lpgnn", "rnd", "label") in keys
    spec = methods.get("lpgnn", "mbm", "feature+label")
    data = L.prepare("cora")
    config = {"dataset": "cora", "eps_x": 1.0, "eps_y": 1.0, "repeats": 2, "epochs": 4}
    res = spec.run(data, config, seed=0, device="cpu")
    rows = res.extra["rows"]
    assert len(rows) == 2 and res.test == sum(r["value"] for r in rows) / 2 / 100.0
    assert res.ledger["eps_x"] == 1.0 and res.ledger["eps_y"] == 1.0
    # the same cell straight through run_cell gives the same rows (seed 0 is a seed)
    direct = L.run_cell(data, "cora", method="mbm", eps_x=1.0, eps_y=1.0, repeats=2, epochs=4, seed=0, device="cpu")
    assert [r["value"] for r in direct] == [r["value"] for r in rows]
    with pytest.raises(ValueError, match=r"\('raw', 'label'\)"):  # ε_x = ∞ is not feature-private
        spec.run(data, {**config, "eps_x": float("inf")}, seed=0)
    with pytest.raises(ValueError, match="needs 'eps_y'"):
        spec.run(data, {"dataset": "cora", "eps_x": 1.0}, seed=0)
    # a replacement at level none: ε's default to ∞
    none = methods.get("lpgnn", "one", "none").run(
        data, {"dataset": "cora", "repeats": 1, "epochs": 3}, seed=1, device="cpu"
    )
    assert none.extra["rows"][0]["eps_x"] == float("inf") and none.ledger["epsilon"] == float("inf")


def test_seed_spread_retrains_points_with_extra_seeds_and_pools_them(counted):
    cfg = settings(
        "lpgnn",
        "test",
        repeats=3,
        seed_points=["fig_a/cora/sage/eps_x=1,eps_y=1", "table_f/cora/drop/eps_x=1,eps_y=1"],
        extra_seeds=[1, 2],
    )
    store = ResultStore("lpgnn", "test")
    series.run(cfg, store, ["fig_a", "table_f"], device="cpu")
    cells = series.seed_cells(cfg)
    # Fig. A's point and Table F's Drop are one training cell: 2 seeds, not 4
    assert [c["seed"] for c in cells] == [1, 2]
    assert cells[0] == {**series.point_cell(cfg, cfg.seed_points[0]), "seed": 1}
    for bad, match in [
        ({"extra_seeds": [0, 1]}, "exclude the profile's seed"),
        ({"extra_seeds": [1, 1]}, "distinct"),
        ({"seed_points": ["fig_a/cora/sage"]}, "artifact/dataset/method/setting"),
        ({"seed_points": ["fig_z/cora/sage/eps_x=1,eps_y=1"]}, "unknown artifact"),
        ({"seed_points": ["fig_a/cora/gcn/eps_x=1,eps_y=1"]}, "not a point of fig_a"),
    ]:
        with pytest.raises(ValueError, match=match):
            series.seed_cells(settings("lpgnn", "test", **bad))
    assert series.run_seeds(cfg, store, train=False)["seeds"].tolist() == [1, 1]  # nothing trained yet
    table = series.run_seeds(cfg, store, device="cpu")
    assert len(counted) == 3 + 2  # the two artifacts' three cells, then one cell per extra seed
    assert list(table["point"]) == cfg.seed_points and (table["seeds"] == 3).all()
    own = store.load("fig_a")["value"].to_numpy(float)
    extra = store.load("seeds")
    runs = [own] + [extra[extra["seed"] == s]["value"].to_numpy(float) for s in (1, 2)]
    pooled = np.concatenate(runs)
    row = table.iloc[0]
    assert row["ours"] == pytest.approx(own.mean(), abs=1e-3)
    assert row["pooled"] == pytest.approx(pooled.mean(), abs=1e-3)
    assert row["means"] == [round(float(r.mean()), 2) for r in runs]
    se = pooled.std(ddof=1) / np.sqrt(3)
    assert row["se"] == pytest.approx(se, abs=1e-3)
    assert row["z"] == pytest.approx((row["paper"] - pooled.mean()) / se, abs=2e-3)
    assert row["within tolerance"] == pytest.approx(
        np.mean([abs(r.mean() - row["paper"]) <= row["tolerance"] for r in runs])
    )
    assert _share_within(0.0, 1.0, 0.0, 1.96) == pytest.approx(0.95, abs=1e-3)  # ±1.96 se: 95 %
    assert _share_within(5.0, 1.0, 0.0, 3.0) == pytest.approx(0.02275, abs=1e-4)  # 2 se beyond the band
    draws = np.random.default_rng(0).normal(pooled.mean(), se, 400_000)  # Monte Carlo of N(pooled, se²)
    assert row["p within"] == pytest.approx(np.mean(np.abs(draws - row["paper"]) <= row["tolerance"]), abs=0.003)
    fig = series.plot_seed_spread(table)
    assert len(fig.axes[0].get_yticklabels()) == 2


def test_fig_a_points_printed_in_tables_b_and_c_carry_their_number_and_spread():
    """Fig. A's printed points are Table B's LPGNN row (ε_y = 1) and Table C's multi-bit row (ε_y = ∞): the same
    configuration and number, so the same ± (and the report's band, max(floor, 2 × ±))."""
    from dpgnn.reference import load_reference

    ref = load_reference("lpgnn")
    printed = ref[(ref["artifact"] == "fig_a") & ~ref["approx"].astype(bool)]
    tables = {
        "1": ref[(ref["artifact"] == "table_b") & (ref["method"] == "lpgnn")].set_index(["dataset", "setting"]),
        "inf": ref[(ref["artifact"] == "table_c") & (ref["method"] == "mbm")].set_index(["dataset", "setting"]),
    }
    assert len(printed) == 32
    for r in printed.itertuples():
        src = tables[r.setting.split("eps_y=")[1]].loc[(r.dataset, r.setting)]
        assert (r.value, r.spread, r.spread_kind) == (src.value, src.spread, "ci95_bootstrap")
    assert ref[(ref["artifact"] == "fig_a") & ref["approx"].astype(bool)]["spread"].isna().all()  # read off: none


def test_sampling_check_counts_points_beyond_the_band_and_the_expected_number(counted):
    from scipy.stats import norm

    from dpgnn.report import paper_vs_ours

    cfg = settings("lpgnn", "test", repeats=3)
    store = ResultStore("lpgnn", "test")
    series.run(cfg, store, ["fig_a", "table_f"], device="cpu")
    check = series.sampling_check(store).set_index("dataset")
    rows, expected = 0, 0.0
    for artifact in ("fig_a", "table_f"):
        rep = paper_vs_ours("lpgnn", artifact, "test").query("status != 'not_run'")
        runs = store.load(artifact)
        for r in rep.itertuples():
            v = runs[(runs["method"] == r.method) & (runs["setting"] == r.setting)]["value"].to_numpy(float)
            se = v.std(ddof=1) / np.sqrt(len(v))
            expected += 2 * norm.sf(r.tolerance / (np.sqrt(2) * se))  # |difference of two such means| > band
            rows += 1
    assert check.loc["cora", "points"] == rows == 4  # Fig. A's point and Table F's three methods
    assert check.loc["cora", "expected by sampling"] == pytest.approx(expected, abs=0.05)
    beyond = sum(
        (paper_vs_ours("lpgnn", a, "test")["status"].isin(["outside", "explained"])).sum() for a in ("fig_a", "table_f")
    )
    assert check.loc["cora", "beyond the band"] == beyond
