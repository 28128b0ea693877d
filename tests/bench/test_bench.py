"""The bench protocol: units cover the registry, one protocol per unit, the private search's ledger includes the
search (recomputed here from the stored events), and the test profile end to end (resumable, CLI errors)."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from dpgnn.api.configs import make_config
from dpgnn.api.methods import METHODS, front_door
from dpgnn.bench import SPACES, UNITS, cells, get_profile, run, shared_split
from dpgnn.bench.accounting import event_from_dict, split_budget
from dpgnn.cli import app
from dpgnn.privacy.accountant import event_rdp
from dpgnn.privacy.rdp import DEFAULT_ORDERS
from dpgnn.privacy.selection import TruncatedNegativeBinomial, selection_epsilon

PRIVATE_LEVELS = ("edge", "node", "feature", "label", "feature+label")


def test_units_cover_every_registered_method():
    listed = {(u.level, m) for u in UNITS.values() for m in u.methods + tuple(x for x, _ in u.excluded)}
    registered = {(lv, m.name) for m in METHODS.values() for lv in m.levels if lv in PRIVATE_LEVELS}
    assert listed == registered


def test_every_method_has_a_search_space_of_its_config_fields():
    for unit in UNITS.values():
        for method in unit.methods + unit.references + unit.trivial:
            space = SPACES[method]
            space.check(front_door(method).config)
            for point in space.configs():
                make_config(front_door(method).config, point)  # every grid point is a valid config


@pytest.mark.parametrize("profile", ["test", "smoke", "bench"])
def test_every_method_of_a_unit_gets_the_same_protocol(profile):
    prof = get_profile(profile)
    for unit, cs in cells(prof).items():
        df = pd.DataFrame(cs)
        private = df[df["method"].isin(UNITS[unit].methods)]
        protocols = {
            m: sorted(map(tuple, g[["dataset", "epsilon", "seed", "tuning"]].to_numpy().tolist()))
            for m, g in private.groupby("method")
        }
        assert len({json.dumps(p) for p in protocols.values()}) <= 1, unit
    bench = get_profile("bench")
    assert len(bench.seeds) >= 5 and len(bench.datasets) == 6
    assert bench.epsilons_of("edge") == bench.epsilons_of("node") == (0.5, 1.0, 2.0, 4.0, 8.0)


def test_the_split_depends_on_dataset_and_seed_only():
    a, b, c = shared_split("toy", 0), shared_split("toy", 0), shared_split("toy", 1)
    for m in ("train_mask", "val_mask", "test_mask"):
        assert torch.equal(a[m], b[m])
    assert not torch.equal(a.val_mask, c.val_mask)


def test_pure_trials_cost_two_plus_eta_times_the_trial():
    trials = TruncatedNegativeBinomial.with_mean(4.0)
    split = split_budget(None, 3.0, 0.0, trials, score_share=0.0, pure=True)
    assert split.epsilon_trial == pytest.approx(1.0) and split.epsilon == pytest.approx(3.0)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    import os

    old = os.environ.get("DPGNN_OUTPUT_ROOT")
    os.environ["DPGNN_OUTPUT_ROOT"] = str(tmp_path_factory.mktemp("bench"))
    try:
        first = run(get_profile("test"))
        again = run(get_profile("test"))  # resumable: nothing is run or stored twice
        yield first, again
    finally:
        if old is None:
            os.environ.pop("DPGNN_OUTPUT_ROOT")
        else:
            os.environ["DPGNN_OUTPUT_ROOT"] = old


def test_the_test_profile_end_to_end(rows):
    first, again = rows
    n_cells = sum(len(c) for c in cells(get_profile("test")).values())
    assert len(first) == n_cells and len(again) == n_cells
    assert set(first["config_hash"]) == set(again["config_hash"])
    for col in ("unit", "method", "dataset", "epsilon", "seed", "tuning", "selected", "value", "epsilon_accounted"):
        assert first[col].notna().all(), col
    assert first["value"].between(0, 1).all()
    assert set(first["tuning"]) == {"as_published", "private"}
    published = first[(first["tuning"] == "as_published") & first["method"].isin(["gap", "dp-mlp", "rr"])]
    assert published["guarantee"].eq("as_published").all()
    assert published["not_covered"].str.contains("hyper-parameter search").all()


def test_each_row_ledger_states_its_guarantee_and_a_backfill_derives_the_same(rows):
    import json

    from dpgnn.privacy.guarantee import LEDGER_FIELDS, check_ledger
    from dpgnn.series.ledgers import guarantee_fields_for

    first, _ = rows
    for r in first.to_dict("records"):
        led = check_ledger(r["ledger"] if isinstance(r["ledger"], (str, dict)) else json.dumps(r["ledger"]))
        assert led["guarantee"] == ("sound" if r["guarantee"] == "non-private" else r["guarantee"])
        bare = {k: v for k, v in led.items() if k not in (*LEDGER_FIELDS, "issues")}
        text = {k: json.dumps(v) if k == "not_covered" and not isinstance(v, str) else v for k, v in r.items()}
        derived = guarantee_fields_for("bench", text, bare)
        assert {k: led[k] for k in derived} == derived


def test_train_false_reads_the_stored_rows_and_computes_nothing(rows, tmp_path, monkeypatch):
    first, _ = rows
    shown = run(get_profile("test"), train=False)
    assert sorted(shown["config_hash"]) == sorted(first["config_hash"])
    with pytest.raises(ValueError, match="train=False"):
        run(get_profile("test"), force=True, train=False)
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    assert run(get_profile("test"), train=False).empty
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("unit,method", [("edge", "gap"), ("node", "dp-mlp")])
def test_the_selected_trials_ledger_includes_the_search(rows, unit, method):
    first, _ = rows
    row = first[(first["unit"] == unit) & (first["method"] == method) & (first["tuning"] == "private")].iloc[0]
    search = json.loads(row["ledger"])["search"]
    orders = np.asarray(DEFAULT_ORDERS, dtype=float)
    curve = np.max([event_rdp(event_from_dict(e), orders) for e in search["trial_events"]], axis=0)
    if search["score"] == "noisy-count":  # the Gaussian count of correct validation predictions, in the trial
        assert search["epsilon_score"] > 0
        curve = curve + orders / (2 * search["score_noise_multiplier"] ** 2)
    trials = TruncatedNegativeBinomial(search["eta"], search["gamma"])
    eps, _ = selection_epsilon(curve, trials, row["delta"], orders)
    assert row["epsilon_accounted"] == pytest.approx(eps, rel=1e-12)
    assert eps <= row["epsilon"] and eps > 0.9 * row["epsilon"]  # the split uses the budget, within it
    assert eps > search["epsilon_trial"] * 1.2  # the search costs more than one trial
    # sound: no selection on private data outside ε (node: every trial kept its last epoch), the ε is the search's
    assert row["guarantee"] == "sound" and row["epsilon_sound"] == row["epsilon_accounted"]
    assert json.loads(row["not_covered"]) == []
    if unit == "node":
        assert "last epoch" in search["epoch"] and "last epoch" in json.loads(row["ledger"])["run"]["epoch_selection"]
    run_ledger = json.loads(row["ledger"])["run"]  # the selected run is one of the accounted trials
    noise = {z for e in search["trial_events"] for z in _noise(e)}
    assert any(math.isclose(run_ledger["noise_multiplier"], z, rel_tol=1e-9) for z in noise)


def _noise(event: dict) -> list[float]:
    """Every noise multiplier inside a stored event."""
    out = [event["noise_multiplier"]] if "noise_multiplier" in event else []
    for inner in [event.get("inner")] + list(event.get("events", [])):
        out += _noise(inner) if inner else []
    return out


def test_cli_errors_are_one_line_and_dry_run_lists_cells(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    runner = CliRunner()
    for args in (["--profile", "nope"], ["--profile", "test", "--unit", "ldp-both"], ["--tuning", "x"]):
        res = runner.invoke(app, ["bench", *args, "--dry-run"])
        assert res.exit_code == 2 and res.output.count("\n") == 1 and res.output.startswith("Error: "), res.output
    res = runner.invoke(app, ["bench", "--profile", "test", "--dry-run"])
    assert res.exit_code == 0 and "edge" in res.output and "cells to run" in res.output
    assert not (tmp_path / "results").exists()


def test_ldp_trials_share_one_release_and_central_trials_are_independent(monkeypatch):
    import dpgnn
    from dpgnn.bench import run_cell
    from dpgnn.bench.profiles import _SHORT

    real, seeds = dpgnn.fit, []

    def spy(*args, **kwargs):
        seeds.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(dpgnn, "fit", spy)
    base = {"dataset": "toy", "seed": 1, "tuning": "private"}  # seed 1 draws K = 3 trials for edge/gap
    for unit, method, eps in (("ldp-labels", "rr", 2.0), ("edge", "gap", 2.0)):
        seeds.clear()
        row = run_cell({**base, "unit": unit, "method": method, "epsilon": eps}, fixed=_SHORT[method], grid_limit=2)
        assert len(seeds) == row["runs"]
        if unit == "ldp-labels":  # every trial perturbs with the repeat's seed: the same release
            assert set(seeds) == {1}
        else:  # fresh randomness per trial (Papernot & Steinke's independent runs)
            assert len(seeds) == 3 and len(set(seeds)) == 3


@pytest.mark.parametrize("tuning", ["private", "as_published"])
@pytest.mark.parametrize("untrained", [{1}, {1, 2}])
def test_trials_that_train_no_step_are_never_selected_over_trained_ones(monkeypatch, tuning, untrained):
    """A DRW/FDP trial whose ε fits no step reports NaN scores (no trained model): the search ranks it last and
    draws no noise for it; when no trial trained, the row says so with NaN accuracy."""
    import dpgnn
    from dpgnn.bench import run_cell
    from dpgnn.bench.profiles import _SHORT

    real = dpgnn.fit

    def fit(*args, **kwargs):
        model = real(*args, **kwargs)
        if kwargs["num_layers"] in untrained:
            model.metrics = {k: math.nan for k in model.metrics}
        return model

    monkeypatch.setattr(dpgnn, "fit", fit)
    cell = {"unit": "node-data", "method": "fdp", "dataset": "toy", "epsilon": 2.0, "tuning": tuning}
    selected = set()
    for seed in (1, 2, 3):
        row = run_cell({**cell, "seed": seed}, fixed=_SHORT["fdp"])
        layers = json.loads(row["selected"])["num_layers"]
        selected.add(layers)
        if untrained == {1, 2}:
            assert math.isnan(row["value"]) and math.isnan(row["val_score"])
        else:  # a 1-layer trial is released only by a search that drew no 2-layer one
            assert (layers == 2) == math.isfinite(row["val_score"]) == math.isfinite(row["value"])
    if untrained == {1}:
        assert selected == {2} if tuning == "as_published" else 2 in selected


@pytest.mark.parametrize("method", ["fdp", "drw"])
def test_a_private_search_no_trial_budget_fits_is_a_row_without_accuracy(monkeypatch, method):
    """DRW and FDP fit a budget by their steps at a fixed noise: where one step per trial already makes the search
    cost more than ε, the search is refused before any calibration, no trial trains, and the row is 0-DP, with no
    accuracy and the reason in its ledger."""
    import dpgnn
    from dpgnn.bench import run_cell
    from dpgnn.bench.profiles import _SHORT
    from dpgnn.privacy.guarantee import check_ledger

    monkeypatch.setattr(dpgnn, "fit", lambda *a, **k: pytest.fail("a trial trained"))
    cell = {"unit": "node-data", "method": method, "dataset": "toy", "epsilon": 0.01, "seed": 0, "tuning": "private"}
    row = run_cell(cell, fixed=_SHORT[method])
    assert math.isnan(row["value"]) and math.isnan(row["val_score"]) and row["runs"] == 0
    assert row["guarantee"] == "sound" and row["epsilon_accounted"] == row["epsilon_sound"] == 0.0
    led = check_ledger(json.dumps(row["ledger"]))
    assert "one step per trial" in led["search"]["infeasible"] and led["search"]["runs"] == 0


def test_the_budget_split_refuses_a_target_below_the_trials_least_cost():
    from dpgnn.bench.accounting import InfeasibleSearch, TrialCost, search_epsilon
    from dpgnn.privacy.events import GaussianEvent

    trials = TruncatedNegativeBinomial(1.0, 0.25)
    step = GaussianEvent(2.0)
    least = search_epsilon([TrialCost(step, ())], None, trials, 1e-5)[0]
    calls = []

    def costs_at(e):
        calls.append(e)
        return [TrialCost(step, ())]

    with pytest.raises(InfeasibleSearch, match=f"already makes it ε = {least:.3g}"):
        split_budget(costs_at, 0.95 * least, 1e-5, trials, score_share=0.1, floor=[step])
    assert not calls
    fits = split_budget(costs_at, 1.05 * least, 1e-5, trials, score_share=0.1, floor=[step])
    assert least < fits.epsilon <= 1.05 * least  # the score's share fits in what the floor leaves


def test_private_ldp_rows_are_sound_when_nothing_was_scaled(rows):
    first, _ = rows
    ldp = first[first["unit"] == "ldp-labels"].set_index("tuning")
    assert ldp.loc["private", "guarantee"] == "sound"  # the features are public here: their range costs nothing
    assert ldp.loc["private", "epsilon_sound"] == ldp.loc["private", "epsilon"]
    assert ldp.loc["as_published", "guarantee"] == "as_published"


def test_a_cells_issues_are_its_selected_runs_when_the_search_is_covered():
    from dpgnn.bench.protocol import cell_statement
    from dpgnn.privacy.guarantee import MODEL_SELECTION

    flaw = "the removed node's own row is not covered by the sensitivity"
    unsound = {"guarantee": "as_published", "issues": [flaw], "not_covered": [], "accounted": "1 query"}
    sound = {"guarantee": "sound", "not_covered": [], "accounted": "1 query", "neighbouring": "one node"}
    private, grid = {"tuning": "random search, K ~ geometric"}, {"tuning": "grid search on validation accuracy"}
    searched = ["hyper-parameter search on validation data (4 configurations, not in ε)"]

    led = cell_statement("as_published", [], {**unsound, "neighbouring": "one node"}, private)
    assert led["issues"] == [flaw] and led["not_covered"] == []  # the search is private: only the run is not sound
    led = cell_statement("as_published", searched, {**unsound, "neighbouring": "one node"}, grid)
    assert led["issues"] == [flaw] and led["not_covered"] == [MODEL_SELECTION]
    led = cell_statement("as_published", searched, sound, grid)
    assert "issues" not in led and led["not_covered"] == [MODEL_SELECTION]
    assert "issues" not in cell_statement("sound", [], sound, private)


def test_a_scaled_datasets_row_names_the_scaling_not_a_selection():
    from dpgnn.bench.protocol import SCALED, cell_statement
    from dpgnn.privacy.guarantee import MODEL_SELECTION, PREPROCESSING

    run = {"guarantee": "sound", "not_covered": [], "accounted": "1 query", "neighbouring": "one node"}
    private, grid = {"tuning": "random search, K ~ geometric"}, {"tuning": "grid search on validation accuracy"}
    searched = "hyper-parameter search on validation data (4 configurations, not in ε)"

    assert cell_statement("as_published", [SCALED], run, private)["not_covered"] == [PREPROCESSING]
    led = cell_statement("as_published", [searched, SCALED, MODEL_SELECTION], run, grid)
    assert led["not_covered"] == [MODEL_SELECTION, PREPROCESSING]


def test_last_epoch_turns_off_every_selection():
    from dpgnn.train import fit, last_epoch

    values = iter([0.9, 0.1, 0.5])

    def run(**kw):
        return fit(None, lambda e: None, lambda e: {"val": next(values)}, epochs=3, **kw)

    assert run().best_epoch == 1
    values = iter([0.9, 0.1, 0.5])
    with last_epoch() as overridden:
        res = run(patience=1)
    assert res.best_epoch == 3 and res.epochs == 3 and overridden == ["val"]


def _synthetic() -> pd.DataFrame:
    """Rows of two seeds: edge-unit progap at two ε under both tunings, and the 0-edge-DP MLP."""
    out = []
    for seed, (a, b, m) in enumerate([(60.0, 70.0, 65.0), (62.0, 74.0, 67.0)]):
        for tuning, shift in (("as_published", 5.0), ("private", 0.0)):
            out += [
                {"epsilon": 1.0, "method": "progap", "accuracy": a + shift, "seed": seed, "tuning": tuning},
                {"epsilon": 8.0, "method": "progap", "accuracy": b + shift, "seed": seed, "tuning": tuning},
                {"epsilon": 0.0, "method": "mlp", "accuracy": m, "seed": seed, "tuning": tuning},
            ]
    df = pd.DataFrame(out).assign(unit="edge", dataset="toy", guarantee="sound", epsilon_accounted=1.0)
    return df


def test_the_report_summary_which_method_and_cost():
    from scipy.stats import t

    from dpgnn.bench import report

    df = _synthetic()
    s = report.summary(df).set_index(["method", "tuning", "epsilon"])
    row = s.loc[("progap", "private", 1.0)]
    assert row["accuracy"] == pytest.approx(61.0) and row["seeds"] == 2
    assert row["ci95"] == pytest.approx(t.ppf(0.975, 1) * np.std([60.0, 62.0], ddof=1) / np.sqrt(2))
    best = report.which_method(df).set_index("budget")
    assert best.loc[1.0, "method"] == "mlp" and best.loc[1.0, "runner_up"] == pytest.approx(61.0)  # ε = 0 fits ε = 1
    assert best.loc[8.0, "method"] == "progap" and best.loc[8.0, "score"] == pytest.approx(72.0)
    cost = report.private_cost(df)
    assert set(cost["method"]) == {"progap"}  # the trivial MLP tunes the same way in both
    assert cost["cost"].tolist() == pytest.approx([-5.0, -5.0]) and cost["pairs"].tolist() == [2, 2]
    fig = report.plot_accuracy(df)
    assert len(fig.axes) == 1 and fig.axes[0].get_title() == "edge · toy"
    with pytest.raises(ValueError, match="no stored bench rows"):
        report.plot_accuracy(df.iloc[:0])


def test_the_report_lists_what_is_missing_and_why(rows, tmp_path, monkeypatch):
    from dpgnn.bench import report

    prof = get_profile("test")
    done = report.missing(prof)
    assert not done["why"].eq("not computed yet").any()  # the fixture ran every cell
    assert set(done.loc[done["method"] == "(all)", "unit"]) == set(UNITS) - set(prof.units)
    assert done["why"].str.startswith("excluded").sum() == 2  # PrivGNN, PATE at node level
    assert len(report.rows(prof)) == len(rows[0])
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))  # an empty store: every cell is missing
    todo = report.missing(prof)
    n_cells = sum(len(c) for c in cells(prof).values())
    assert todo.loc[todo["why"] == "not computed yet", "cells"].sum() == n_cells
    assert todo["cpu_hours"].isna().all()  # no stored cell times to estimate from
    assert report.rows(prof).empty


def test_a_row_without_accuracy_is_listed_not_ranked(rows, tmp_path, monkeypatch):
    from dpgnn.bench import report
    from dpgnn.results import ResultStore

    df = _synthetic()
    nan = df.iloc[[0]].assign(method="gap", accuracy=math.nan)
    best = report.which_method(pd.concat([df, nan])).set_index("budget")
    assert best.loc[1.0, "method"] == "mlp" and best.loc[1.0, "runner_up"] == pytest.approx(61.0)
    prof = get_profile("test")
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    first = rows[0]
    row = first[(first["unit"] == "edge") & (first["method"] == "gap")].iloc[0].to_dict()
    ResultStore("bench", prof.folder).append("edge", [{**row, "value": math.nan}])
    todo = report.missing(prof).set_index(["unit", "method", "why"])
    assert todo.loc[("edge", "gap", report.NO_TRIAL), "cells"] == 1
    gap_cells = sum(c["method"] == "gap" for c in cells(prof)["edge"])
    assert todo.loc[("edge", "gap", "not computed yet"), "cells"] == gap_cells - 1


def test_the_missing_cells_compute_is_estimated_from_the_stored_cells_times(rows):
    """A second seed's cells are missing: each method's estimate is their number times the mean stored wall time
    of that unit and method's cells."""
    import dataclasses

    from dpgnn.bench import report

    prof = dataclasses.replace(get_profile("test"), seeds=(0, 1))
    stored = report.rows(get_profile("test")).drop_duplicates("config_hash")
    todo = report.missing(prof).set_index(["unit", "method"])
    for (unit, method), g in stored.groupby(["unit", "method"]):
        row = todo.loc[(unit, method)]
        assert row["why"] == "not computed yet" and row["cells"] == len(g)  # one seed more: as many cells again
        assert row["cpu_hours"] == pytest.approx(len(g) * g["cell_seconds"].mean() / 3600) and row["cpu_hours"] > 0


def test_a_cells_time_is_scaled_to_a_dataset_its_method_has_not_run_on():
    """Stored pair means are kept; a method timed on one dataset alone takes the other methods' time ratio to a
    second dataset (exact here: every time is a product of a method factor and a dataset factor); a dataset never
    timed falls back to the method's mean, a method never timed to its unit's, nothing stored to NaN."""
    from dpgnn.bench.report import cell_seconds

    method = {("edge", "a"): 10.0, ("edge", "b"): 3.0, ("node", "c"): 50.0}
    dataset = {"small": 1.0, "big": 8.0}
    stored = pd.DataFrame(
        [
            dict(unit=u, method=m, dataset=d, cell_seconds=t * dataset[d] * k)
            for (u, m), t in method.items()
            for d in dataset
            if (m, d) != ("c", "big")
            for k in (0.5, 1.5)  # two cells each: the pair's mean is t · f
        ]
    )
    seconds = cell_seconds(stored)
    assert seconds("edge", "a", "big") == pytest.approx(80.0)  # stored pair
    assert seconds("node", "c", "big") == pytest.approx(400.0)  # scaled from "small" by the others' ratio 8
    assert seconds("node", "c", "unseen") == pytest.approx(50.0)  # method mean over its stored cells
    assert seconds("node", "new", "small") == pytest.approx(50.0)  # the unit's mean
    assert math.isnan(seconds("ldp-labels", "rr", "small"))  # no stored time in the unit
    assert math.isnan(cell_seconds(stored.drop(columns="cell_seconds"))("edge", "a", "big"))
    assert math.isnan(cell_seconds(stored.iloc[:0])("edge", "a", "big"))


def test_a_cells_time_is_read_from_the_latest_stored_cells():
    """Older cells (slower code) are outweighed: a pair's estimate is the mean of its latest RECENT cells by
    timestamp, whatever order the rows are stored in."""
    from dpgnn.bench.report import RECENT, cell_seconds

    old = [dict(timestamp=f"2026-01-01T00:00:{i:02d}", cell_seconds=500.0) for i in range(RECENT)]
    new = [dict(timestamp=f"2026-02-01T00:00:{i:02d}", cell_seconds=10.0 + i) for i in range(RECENT)]
    stored = pd.DataFrame(new[::-1] + old).assign(unit="node", method="progap", dataset="cora")
    assert cell_seconds(stored)("node", "progap", "cora") == pytest.approx(10.0 + (RECENT - 1) / 2)
    older = pd.concat([stored.iloc[:3], stored.iloc[RECENT:]])  # 3 new cells and the old ones
    expected = (sum(c["cell_seconds"] for c in new[-3:]) + 500.0 * (RECENT - 3)) / RECENT
    assert cell_seconds(older)("node", "progap", "cora") == pytest.approx(expected)
    assert cell_seconds(stored.drop(columns="timestamp"))("node", "progap", "cora") == pytest.approx(
        stored["cell_seconds"].mean()
    )


def test_the_readme_sentences_come_from_stored_rows(rows, tmp_path):
    from dpgnn.bench import report
    from dpgnn.readme import bench_block

    prof = get_profile("test")
    df = report.rows(prof)
    text = report.conclusion(df, prof, len(df), len(df))
    assert text.count(". ") == 1 and text.endswith(".\n")  # two sentences
    best = report.which_method(df)
    assert f"node `dp-mlp` ({(best['unit'] == 'node').sum()} of" in text
    sound = int((df[df["tuning"] == "private"]["guarantee"] == "sound").sum())
    assert f"{sound} of the {int((df['tuning'] == 'private').sum())} privately tuned rows" in text
    assert "`sound`." in text  # every private row of the test profile is sound: no other is named
    private = df.index[df["tuning"] == "private"]
    mixed = df.copy()
    mixed.loc[private[0], "guarantee"] = "non-private"  # a reference: not counted
    mixed.loc[private[1:3], "guarantee"] = "as_published"
    named = sorted({f"{u} `{m}`" for u, m in mixed.loc[private[1:3], ["unit", "method"]].itertuples(index=False)})
    text = report.conclusion(mixed, prof, len(df), len(df))
    assert f"{sound - 3} of the {len(private) - 1} privately tuned rows" in text
    assert f"(the others, `as_published`: {', '.join(named)})." in text and text.count(". ") == 1
    assert f"{report.private_cost(df)['cost'].mean():+.1f} points on average" in text
    assert "CPU hours" not in text  # every cell stored: nothing left to estimate
    partial = report.conclusion(df, prof, len(df) - 1, len(df), hours=12.34)
    assert f"{len(df) - 1} of {len(df)} cells stored, the rest not yet run, about 12 CPU hours" in partial
    assert partial.count(". ") == 1
    empty = bench_block(tmp_path)  # a repository without bench rows: said plainly
    assert "no stored rows yet" in empty and "concludes nothing" in empty
