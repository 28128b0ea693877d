"""DRW series: the sound-mode Table 1 is a grid of cells like the paper's (engine-visible, resumable, and
train=False trains nothing)."""

import json

import pandas as pd
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
    assert {c["clip_norm"] for c in cells} == {cfg.sound.clip_norm}  # fixed, never a quantile of gradients
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
    monkeypatch.setattr(series.sound, "run_sound_cell", lambda *a, **k: calls.append(a) or [])
    again = series.run_table1_sound(cfg, store, device="cpu")  # every cell stored: nothing runs
    assert calls == [] and len(again) == len(rows)
    assert len(series.run_table1_sound(cfg, store, train=False)) == len(rows)
    with pytest.raises(ValueError, match="train=False"):
        series.run_table1_sound(cfg, store, force=True, train=False)


# ---------------------------------------------------------------------------------------------------------------
# The series API and the method contract
# ---------------------------------------------------------------------------------------------------------------
def _runs(rows):
    import pandas as pd

    return pd.DataFrame(rows)


def test_select_best_picks_the_best_mean_validation_and_breaks_ties_in_config_order():
    base = {"dataset": "cora", "setting": "1-layer"}
    rows = []
    # drw: config (0.1, 0.01, 1.0) has the best mean val (60 over two seeds) though (0.2, ...) has the best single
    for lr, vals in ((0.1, (50.0, 70.0)), (0.2, (80.0, 30.0)), (0.01, (55.0, 55.0))):
        for seed, v in zip((1, 2), vals):
            hp = {"lr": lr, "clip_fraction": 0.01, "noise_multiplier": 1.0, "seed": seed}
            rows += [
                {**base, **hp, "method": "drw", "metric": "val_f1", "value": v},
                {**base, **hp, "method": "drw", "metric": "test_f1", "value": v + 1},
            ]
    # fdp: two configs tie at 40 -> the first in (lr, clip, noise) order, z = 2 before z = 4
    for z in (4.0, 2.0):
        hp = {"lr": 0.1, "clip_fraction": 0.1, "noise_multiplier": z, "seed": 1}
        rows += [
            {**base, **hp, "method": "fdp", "metric": "val_f1", "value": 40.0},
            {**base, **hp, "method": "fdp", "metric": "test_f1", "value": z},
        ]
    # gcn has no DP hyper-parameters (NaN): kept, filled with -1
    rows += [{**base, "method": "gcn", "seed": 1, "metric": m, "value": 70.0} for m in ("val_f1", "test_f1")]
    chosen = series.select_best(_runs(rows))
    test = chosen[chosen["metric"] == "test_f1"].set_index("method")
    assert (test.loc["drw", "lr"] == 0.1).all() and sorted(test.loc["drw", "value"]) == [51.0, 71.0]
    assert test.loc["fdp", "noise_multiplier"] == 2.0 and test.loc["fdp", "value"] == 2.0
    assert test.loc["gcn", "lr"] == -1.0 and test.loc["gcn", "value"] == 70.0
    assert set(chosen["metric"]) == {"val_f1", "test_f1"}


def test_registry_holds_every_table1_method_at_its_level():
    from dpgnn import methods
    from dpgnn.methods import drw

    assert methods.available("drw") == sorted(("drw", m, drw.LEVELS[m]) for m in drw.METHODS)
    assert {drw.LEVELS[m] for m in drw.DP_METHODS} == {"feature"} and drw.LEVELS["gcn"] == "none"
    with pytest.raises(ValueError, match="unknown DRW artifact"):
        series.side_by_side(ResultStore("drw", "test"), "table9")


@pytest.mark.mirror
def test_contract_runs_equal_the_trainers_and_reject_unknown_options():
    pytest.importorskip("torch")
    from dpgnn import methods
    from dpgnn.data import dataset_available
    from dpgnn.methods import drw

    if not dataset_available("cora"):
        pytest.skip("cora is not in the mirror")
    spec = methods.get("drw", "drw", "feature")
    d = spec.prepare("cora")
    cfg = {"num_layers": 1, "hidden": 16, "max_steps": 4, "noise_multiplier": 2.0}
    res = spec.run(d, cfg, seed=0, device="cpu")
    ref = drw.train_dp(d, "drw", seed=0, device="cpu", **cfg)
    assert res.metrics == {"train": ref["train_f1"], "val": ref["val_f1"], "test": ref["test_f1"]}
    assert res.extra["best_step"] == ref["best_step"] >= 1 and res.ledger["steps"] == 4
    assert [h["step"] for h in res.history if h["step"] > 0] == [1, 2, 3, 4]  # step 0: only for a checkpoint
    assert 0 <= res.extra["class_entropy"] <= 1 and res.extra["top_class_share"] >= 1 / d.num_classes
    assert res.extra["noise_to_signal"] > 1  # z = 2 on ~23k parameters: the noise dominates every step
    nondp = drw.run(d, "mlp", seed=0, device="cpu", hidden=16, max_steps=6, patience=2)
    assert nondp.extra["steps"] == len(nondp.history) and nondp.val == max(h["val"] for h in nondp.history)
    with pytest.raises(ValueError, match="unknown option"):
        spec.run(d, {"nosuch": 1}, seed=0)


@pytest.mark.mirror
def test_series_api_on_the_test_profile(tmp_path):
    pytest.importorskip("torch")
    import matplotlib

    from dpgnn.data import dataset_available

    if not dataset_available("cora"):
        pytest.skip("cora is not in the mirror")
    matplotlib.use("Agg")
    cfg = settings("drw", "test")
    store = ResultStore("drw", "test", root=tmp_path)
    t1 = series.run(cfg, store, "table1", device="cpu")
    assert set(t1["method"]) == set(cfg.methods) and set(t1["metric"]) == {"f1_micro"}
    assert len(series.run(cfg, store, "fig2", train=False)) > 0  # selected from the stored grid, nothing trained
    table = series.side_by_side(store, "table1")
    assert {"dataset", "method", "setting", "paper", "ours", "diff", "status"} <= set(table.columns)
    row = table[(table["dataset"] == "cora") & (table["method"] == "drw") & (table["setting"] == "1-layer")]
    assert row["ours"].tolist() == [f"{t1.loc[t1['method'] == 'drw', 'value'].mean():.1f}"]  # one seed: no spread
    assert "ours ε≤8" in series.side_by_side(store, "fig2").columns
    for artifact in ("table1", "fig2"):
        assert series.plot(store, artifact) is not None
    series.run(cfg, store, "bound")
    assert "q drw" in series.side_by_side(store, "bound").columns
    with pytest.raises(ValueError, match="fidelity"):
        series.run(cfg, store, "table1_authors_code")
    # diagnostics: the selected DP runs retrained give the same test F1 as Table 1, plus what explains it
    summary = series.run_diagnostics(cfg, store, device="cpu")
    assert set(summary["method"]) == {"drw", "fdp"} and (summary["noise / signal"] > 1).all()
    diag = store.load("table1_diagnostics")
    again = diag[diag["metric"] == "test_f1"].set_index("method")["value"]
    assert again.to_dict() == t1[t1["method"].isin(["drw", "fdp"])].set_index("method")["value"].to_dict()
    assert {"best_step", "top_class_share", "class_entropy"} <= set(diag["metric"])
    # the seed spread: the selected configuration with extra seeds, every 3-subset of all its seeds
    with pytest.raises(ValueError, match="extra seeds only"):
        series.seed_cells(cfg, store, seeds=tuple(cfg.seeds))
    cells = series.seed_cells(cfg, store, [("cora", "drw", "1-layer")], seeds=(7, 8))
    assert [c["seed"] for c in cells] == [7, 8] and {c["method"] for c in cells} == {"drw"}
    mlp = series.seed_cells(cfg, store, [("cora", "mlp", "1-layer")], seeds=(7,))  # non-private: one configuration
    assert [(c["method"], c["seed"], c["logits"]) for c in mlp] == [("mlp", 7, "raw")]
    spread = series.run_seeds(cfg, store, [("cora", "drw", "1-layer")], seeds=(7, 8), device="cpu")
    assert len(spread) == 1 and spread["seeds"].iloc[0] == len(cfg.seeds) + 2
    values = pd.concat([t1[t1["method"] == "drw"], store.load("table1_seeds")])
    runs = values[values["metric"].isin(["f1_micro", "test_f1"])].drop_duplicates("seed")["value"]
    assert spread["seed F1 max"].iloc[0] == pytest.approx(runs.max(), abs=1e-3)
    from itertools import combinations

    paper, tol = spread["paper"].iloc[0], spread["tolerance"].iloc[0]
    means = [sum(c) / 3 for c in combinations(runs, 3)]
    assert spread["3-seed means within tolerance"].iloc[0] == pytest.approx(
        sum(abs(m - paper) <= tol for m in means) / len(means), abs=1e-3
    )


def test_select_ignores_mlp_runs_stored_before_the_raw_logits_fix(tmp_path):
    store = ResultStore("drw", "x", root=tmp_path)
    base = {"dataset": "cora", "method": "mlp", "setting": "1-layer", "lr": 0.01, "seed": 1, "config_hash": "a"}
    store.append("grid", [{**base, "metric": m, "value": 10.0} for m in ("val_f1", "test_f1")])  # normalised logits
    t1 = series.select(store, ["cora"])
    assert t1.empty  # an old run alone is not reported
    store.append(
        "grid",
        [{**base, "config_hash": "b", "logits": "raw", "metric": m, "value": 40.0} for m in ("val_f1", "test_f1")],
    )
    t1 = series.select(store, ["cora"])
    assert list(t1["value"]) == [40.0]  # not the mean with the stale run (25.0)


_SEQUENTIAL = """
import functools, sys
import torch
torch.set_num_threads(1)
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import drw
from dpgnn.sweep import run_grid
cfg = settings("drw", "test", seeds=[1234, 2345, 3456], methods=["mlp", "drw", "fdp"])
one = functools.partial(drw.run_cell, cfg, device="cpu")
run_grid(ResultStore("drw", "test"), "grid", drw.table1_cells(cfg), one)  # one cell after the other
drw.run_table1(cfg, ResultStore("drw", "test", root=sys.argv[1]), device="cpu")  # the notebooks' loop
"""


@pytest.mark.mirror
def test_engine_trains_a_configurations_seeds_as_one_task_with_the_sequential_rows(tmp_path, monkeypatch):
    """The engine computes the seeds of a DP configuration as one task (batch_run: trained together) and stores
    the rows the sequential loop stores: every row, configuration and ledger equal, wall times aside."""
    pytest.importorskip("torch")
    import os
    import subprocess
    import sys

    from dpgnn import methods
    from dpgnn.data import dataset_available

    if not dataset_available("cora"):
        pytest.skip("cora is not in the mirror")
    cfg = settings("drw", "test", seeds=[1234, 2345, 3456], methods=["mlp", "drw", "fdp"])
    cells = series.table1_cells(cfg)
    spec = series.CELLS["table1"]
    groups = {}
    for c in cells:
        groups.setdefault(spec.batch_key(c), []).append(c["seed"])
    assert sorted(groups.values()) == [[1234, 2345, 3456]] * 3  # one group per configuration, its three seeds
    # one cell after the other, and the notebooks' loop (seeds together), in a fresh process with the workers'
    # environment
    env = {**os.environ, **engine.worker_env(1), "DPGNN_OUTPUT_ROOT": str(tmp_path / "seq")}
    nb = tmp_path / "notebook"
    subprocess.run([sys.executable, "-c", _SEQUENTIAL, str(nb)], env=env, check=True, capture_output=True)
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path / "dask"))
    out = engine.run_specs([(spec, cfg)], "test", workers=1, device="cpu", progress=False)
    assert out["computed"].sum() == len(cells) and out["missing"].sum() == 0
    a = ResultStore("drw", "test", root=tmp_path / "seq" / "results").load("grid")
    b = ResultStore("drw", "test").load("grid")
    assert len(a) == len(b) > len(cells)
    pd.testing.assert_frame_equal(engine.comparable(a), engine.comparable(b))
    pd.testing.assert_frame_equal(
        engine.comparable(a), engine.comparable(ResultStore("drw", "test", root=nb).load("grid"))
    )
    # a batch shares its wall time equally among its cells: the DP seeds ran as one task
    per_cell = b.groupby("config_hash")["cell_seconds"].first()
    dp = b[b["method"].isin(["drw", "fdp"])].groupby("method")["config_hash"].unique()
    assert len(dp) == 2 and all(per_cell[list(h)].nunique() == 1 for h in dp)
    # in this process too, the configuration's seeds go through the method's repeats in one call
    calls = []
    run = methods.get("drw", "drw", "feature").run
    batched = run.repeats
    monkeypatch.setattr(
        run, "repeats", lambda *a, seeds, **k: calls.append(list(seeds)) or batched(*a, seeds=seeds, **k)
    )
    drw_cells = [c for c in cells if c["method"] == "drw"]
    rows = [r for rs in series.batch_run(cfg, drw_cells, device="cpu") for r in rs]
    assert calls == [[1234, 2345, 3456]]
    want = b[b["method"] == "drw"]
    assert [r["metric"] for r in rows] == list(want["metric"]) and [r["steps"] for r in rows] == list(want["steps"])
    assert [r["value"] for r in rows] == pytest.approx(list(want["value"]), abs=0.2, nan_ok=True)
