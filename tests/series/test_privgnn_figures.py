"""PrivGNN Fig. 3 / App. D.6, Fig. 5, Fig. 6 and the authors'-code teacher cells: engine-visible grids,
prefix reuse, the flipped split, and authors'-code rows flagged unsound."""

import json
import math

import pandas as pd
import pytest
import torch

from dpgnn import engine
from dpgnn.methods import privgnn as P
from dpgnn.privacy.guarantee import check_ledger
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import privgnn as series


def test_new_grids_are_registered_and_default_to_the_paper_teacher():
    names = [s.name for s in engine.select(["privgnn"])]
    assert {"fig3", "fig5", "fig6", "authors_code", "authors_baselines"} <= set(names)
    for profile in ("smoke", "test", "paper"):
        cfg = settings("privgnn", profile)
        assert cfg.teacher == "paper"  # the sound paper version stays the default
        assert all(c["teacher"] == "authors_code" for c in series.authors_code_cells(cfg))
    paper = settings("privgnn", "paper")
    assert paper.figures.d6_queries == (10, 100, 200, 300, 500, 1000) and paper.figures.fig3_queries == (500, 1000)
    with pytest.raises(ValueError, match="teacher must be one of"):
        series.fig3_cells(settings("privgnn", "test", teacher="official"))


def test_flip_exchanges_the_portions():
    from tests.methods.test_privgnn import _toy

    graphs = _toy()
    f = P.flip(graphs)
    assert torch.equal(f.x_priv, graphs.x_pub) and torch.equal(f.edge_pub, graphs.edge_priv)
    assert f.num_private == 50 and f.x_pub.size(0) == 60
    # the original public train fraction (25 of 50) is kept; train and test partition the new public nodes
    assert f.pub_train.numel() == 30 and f.pub_test.numel() == 30
    assert sorted(torch.cat([f.pub_train, f.pub_test]).tolist()) == list(range(60))
    assert torch.equal(P.flip(graphs).pub_train, f.pub_train)  # deterministic


@pytest.mark.mirror
def test_figure_and_authors_cells_run_and_match_the_accuracy_grid(tmp_path):
    from dpgnn.data import dataset_available

    if not dataset_available("credit"):
        pytest.skip("credit is not in the mirror")
    cfg = settings("privgnn", "test")
    store = ResultStore("privgnn", "test", root=tmp_path)
    out = series.run_figures(cfg, store, ("fig3", "fig5", "authors_code"), device="cpu")
    f3 = out["fig3"]
    assert set(f3["artifact"]) == {"fig3", "fig7"}
    assert set(f3.loc[f3["artifact"] == "fig7", "queries"]) == set(cfg.figures.d6_queries)
    # the authors'-code rows carry fidelity and an unsound guarantee
    rows = out["authors_code"]
    assert set(rows["artifact"]) == {"fidelity"} and set(rows["mirrors"]) == {"fidelity:K=20,Q=10,lam=1"}
    # the cell pairs both teacher modes (test profile): the authors' rows are flagged, the paper's are not
    assert set(rows["method"]) == {"privgnn_authors_teacher", "privgnn"}
    assert set(rows.loc[rows["method"] == "privgnn", "fidelity"]) == {"paper"}
    a = rows[rows["method"] == "privgnn_authors_teacher"]
    assert set(a["fidelity"]) == {"authors_code"}
    for led in a["ledger"]:
        led = check_ledger(json.loads(led))
        assert led["guarantee"] == "as_published" and any("NOT sound" in s for s in led["issues"])
    assert (a["optimizer_steps"] == cfg.fidelity.queries[0] * cfg.teacher_epochs).all()
    # a cell is reproducible on its own (its dropout masks come from a generator seeded by the cell)
    cell = series.authors_code_cells(cfg)[0]
    torch.manual_seed(123)
    again = series.run_authors_code_cell(cfg, cell, device="cpu")
    assert [r["value"] for r in again] == pytest.approx(rows.sort_index()["value"].tolist(), abs=0)
    side = series.authors_code_side_by_side(store)
    assert list(side["mirrors"]) == ["fidelity:K=20,Q=10,lam=1"] and int(side["n_runs"].iloc[0]) == 1
    assert {"privgnn", "privgnn_authors_teacher"} <= set(side.columns)
    f5 = out["fig5"]
    assert {"privgnn", "pate_m", "pate_g", "b1", "b2"} == set(f5["method"])
    assert all(math.isfinite(v) for v in f5["value"])
    assert len(series.figure_side_by_side(store, "fig5"))


def test_the_official_student_option_adds_keys_only_when_set():
    """Cells stored before ``fidelity_student`` / ``fidelity_epochs`` existed keep their config hashes."""
    plain = series.authors_code_cells(settings("privgnn", "test"))[0]
    assert "student" not in plain and "authors_epochs" not in plain
    cell = series.authors_code_cells(settings("privgnn", "test", fidelity_student="authors_code", fidelity_epochs=500))[
        0
    ]
    assert cell["student"] == "authors_code" and cell["authors_epochs"] == 500
    with pytest.raises(ValueError, match="teacher must be one of"):
        series.authors_code_cells(settings("privgnn", "test", fidelity_student="official"))


@pytest.mark.mirror
def test_the_official_code_end_to_end_cell(tmp_path):
    """``fidelity_student="authors_code"``: the authors'-code teachers' rows come from the official student
    (``privgnn_official``), trained for ``fidelity_epochs`` with the teachers' Adam; the paired paper-mode rows
    keep the profile's epochs and student; the side-by-side shows both and the teachers' accuracy."""
    from dpgnn.data import dataset_available

    if not dataset_available("credit"):
        pytest.skip("credit is not in the mirror")
    cfg = settings(
        "privgnn", "test", fidelity_student="authors_code", fidelity_epochs=4, fidelity_noise=["log_softmax"]
    )
    store = ResultStore("privgnn", "test", root=tmp_path)
    rows = series.run(cfg, store, "authors_code", device="cpu")
    assert set(rows["method"]) == {"privgnn_official", "privgnn_code"}
    off = rows[rows["method"] == "privgnn_official"]
    assert (off["teacher_epochs"] == 4).all() and (off["student_epochs"] == 4).all()
    assert (off["optimizer_steps"] == cfg.fidelity.queries[0] * 4).all()
    for led in off["ledger"]:
        led = check_ledger(json.loads(led))
        assert math.isinf(led["epsilon_sound"]) and any("teachers' Adam" in s for s in led["issues"])
    paired = rows[rows["method"] == "privgnn_code"]
    assert (paired["student_epochs"] == cfg.student_epochs).all()
    side = series.authors_code_side_by_side(store)
    assert {"privgnn_official", "privgnn_code", "teachers paper", "teachers authors_code"} <= set(side.columns)
    with pytest.raises(ValueError, match="official student"):
        series._privgnn_students(
            None,
            "credit",
            P.TeacherOutput(torch.ones(2, 2) / 2, torch.tensor([1]), 0.0, 0),
            [],
            seed=0,
            k=1,
            gamma=0.3,
            teacher="paper",
            student_epochs=1,
            device="cpu",
            student="authors_code",
        )


def test_mirrored_cell_names_only_cells_the_paper_has():
    m = series.mirrored_cell
    assert m("amazon", 750, 1000, 0.4, 1000) == "table5:lam=0.4"
    assert m("amazon", 750, 500, 1.0, 1000) == "table6:Q=500,lam=1"
    assert m("amazon", 300, 1000, 0.2, 1000) == "table1:K=300,lam=0.2"
    assert m("amazon", 750, 50, 0.4, 1000) == "fidelity:K=750,Q=50,lam=0.4"
    assert m("amazon", 300, 500, 0.4, 1000) == "fidelity:K=300,Q=500,lam=0.4"


@pytest.mark.mirror
def test_authors_baselines_cell_uses_the_official_split_and_untrained_pate_teachers(tmp_path):
    from dpgnn.data import dataset_available

    if not dataset_available("amazon", variant="privgnn"):
        pytest.skip("amazon is not in the mirror")
    cfg = settings("privgnn", "test")
    assert settings("privgnn", "smoke").official_split.datasets == ()  # kept out of the smoke budget
    assert settings("privgnn", "paper").official_split.runs == 3
    # the baseline cell keeps its keys (stored hashes unchanged); the students have a cell of their own per K
    assert [c.get("part") for c in series.authors_baselines_cells(cfg)] == [None, "split_students"]
    store = ResultStore("privgnn", "test", root=tmp_path)
    rows = series.run(cfg, store, "authors_baselines", device="cpu")
    assert set(rows["artifact"]) == {"fidelity"}
    split = rows[rows["method"].str.endswith("_authors_split") & rows["method"].str.startswith("b")]
    assert set(split["mirrors"]) == {"table5:non-private", "table8:non-private"}
    assert set(split["method"]) == {"b1_authors_split", "b2_authors_split", "b3_authors_split"}
    # the official split's public test overlaps the private and public-train nodes (~18 % and ~22 % on Amazon)
    assert (split["test_in_private"] > 0.1).all() and (split["test_in_train"] > 0.1).all()
    pate = rows[rows["method"] == "pate_g_authors_code"]
    assert list(pate["mirrors"]) == [f"table5:lam={lam:g}" for lam in cfg.figures.lambdas]
    assert set(pate["fidelity"]) == {"authors_code"}
    for led in pate["ledger"]:  # the ledger says which mode it is and why the accounted epsilon still holds
        led = check_ledger(json.loads(led))
        assert led["fidelity"] == "authors_code" and "untrained" in led["note"]
    for led in split["ledger"]:
        assert math.isinf(check_ledger(json.loads(led))["epsilon"])  # non-private baselines
    # PrivGNN's students on the same split: the profile's K and |Q|, noise on log-softmax (the test profile's)
    students = rows[rows["method"].str.startswith("privgnn")]
    assert set(students["method"]) == {"privgnn_code_authors_split"}
    assert list(students["setting"]) == [f"K={cfg.k},Q={cfg.main_queries},lam={lam:g}" for lam in cfg.figures.lambdas]
    assert (students["test_in_private"] == split["test_in_private"].iloc[0]).all()
    for led in students["ledger"]:  # noise on log-softmax: epsilon = inf, a sound statement on any split
        led = check_ledger(json.loads(led))
        assert led["split"] == "authors_code" and math.isinf(led["epsilon"]) and led["guarantee"] == "sound"
    side = series.side_by_side(store, "authors_baselines")
    assert set(side["what differs"]) == {"split", "untrained teachers"}
    assert "privgnn_code" in set(side["method"])
    assert side.loc[side["method"] == "b1", "paper"].iloc[0] == pytest.approx(0.88)
    assert "authors_baselines" in series.plot_authors_baselines(store)


def test_the_authors_code_plot_draws_the_paper_values(monkeypatch):
    """The printed PrivGNN value of a mirrored cell is drawn as open markers beside the measured lines."""
    side = pd.DataFrame(
        {
            "dataset": ["amazon"] * 2,
            "mirrors": ["table6:Q=500,lam=0.4", "table6:Q=500,lam=1"],
            "paper": [0.76, 0.77],
            "privgnn": [0.16, 0.26],
            "privgnn_official": [0.68, 0.75],
        }
    )

    class Store:
        def load(self, artifact):
            return side

    monkeypatch.setattr(series.authors_code, "authors_code_side_by_side", lambda store: side)
    fig = series.plot_authors_code(Store())["authors_code"]
    paper = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_label().endswith("(paper)")]
    assert len(paper) == 1 and list(paper[0].get_ydata()) == [0.76, 0.77]
