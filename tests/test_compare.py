"""Cross-paper comparison (dpgnn/compare.py): units kept apart, budgets respected, figures drawn."""

import json

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from dpgnn import compare


def _rows(paper, artifact, metric, rows):
    return pd.DataFrame(
        [
            dict(
                paper=paper,
                artifact=artifact,
                metric=metric,
                setting="s",
                run=r,
                ledger=json.dumps(led),
                dataset=ds,
                method=m,
                level=lv,
                epsilon=e,
                value=v,
            )
            for ds, m, lv, e, v, r, led in rows
        ]
    )


@pytest.fixture
def root(tmp_path):
    d = tmp_path / "paper"
    (d / "progap").mkdir(parents=True)
    (d / "privgnn").mkdir(parents=True)
    _rows(
        "progap",
        "fig2",
        "accuracy",
        [
            ("fb100-wisconsin87", "gap", "edge", 1.0, 60.0, 0, {}),
            ("fb100-wisconsin87", "gap", "edge", 1.0, 62.0, 1, {}),
            ("fb100-wisconsin87", "progap", "edge", 1.0, 70.0, 0, {"guarantee": "sound"}),
            ("fb100-wisconsin87", "progap", "edge", 4.0, 80.0, 0, {"guarantee": "sound"}),
            ("fb100-wisconsin87", "progap", "node", 8.0, 65.0, 0, {}),
            ("fb100-wisconsin87", "progap", "none", float("inf"), 85.0, 0, {}),
        ],
    ).to_csv(d / "progap" / "fig2.csv", index=False)
    _rows(
        "privgnn",
        "accuracy",
        "accuracy",
        [
            ("amazon", "privgnn", "node", 3.0, 0.4, 0, {}),
            ("amazon", "privgnn_code", "node", float("inf"), 0.9, 0, {}),
        ],
    ).to_csv(d / "privgnn" / "accuracy.csv", index=False)
    return tmp_path


def test_load_comparison_keeps_units_apart(root):
    comp = compare.load_comparison("paper", root=root)
    assert set(comp["unit"]) == {"edge", "node"}
    edge = comp[(comp["unit"] == "edge") & comp["private"]]
    assert edge.loc[edge["method"] == "gap", "score"].item() == pytest.approx(61.0)
    assert set(edge["guarantee"]) == {"sound", "as accounted in the ledger"}
    # the non-private reference line is repeated in each unit of its source, never a private point
    assert len(comp[~comp["private"] & (comp["dataset"] == "fb100-wisconsin87")]) == 2
    node = comp[(comp["unit"] == "node") & (comp["dataset"] == "amazon")]
    assert list(node["method"]) == ["privgnn"] and node["score"].item() == pytest.approx(40.0)  # % and no code variant


def test_best_method_respects_the_budget(root):
    best = compare.best_method(compare.load_comparison("paper", root=root), budgets=(0.5, 1, 4))
    edge = best[best["unit"] == "edge"].set_index("budget")
    assert 0.5 not in edge.index
    assert edge.loc[1.0, "method"] == "progap" and edge.loc[1.0, "score"] == 70.0
    assert edge.loc[4.0, "score"] == 80.0
    assert (best["epsilon"] <= best["budget"]).all()


def test_figures(root):
    comp = compare.load_comparison("paper", root=root)
    fig = compare.plot_accuracy_vs_epsilon(comp)
    assert len([a for a in fig.axes if a.has_data()]) == 3  # edge: 1 dataset; node: 2 datasets
    assert compare.plot_best_method(compare.best_method(comp)).axes
    with pytest.raises(ValueError, match="no private"):
        compare.plot_accuracy_vs_epsilon(comp[~comp["private"]])


def test_extra_rows_are_labelled_as_ours(root):
    extra = pd.DataFrame(
        [
            dict(
                paper="compare",
                artifact="edge_level",
                profile="smoke",
                dataset="cora",
                method="gap",
                level="edge",
                epsilon=1.0,
                metric="accuracy",
                value=41.0,
                setting="edge eps=1",
                ledger="{}",
            ),
            dict(
                paper="compare",
                artifact="edge_level",
                profile="smoke",
                dataset="cora",
                method="gap",
                level="edge",
                epsilon=1.0,
                metric="val_acc",
                value=40.0,
                setting="edge eps=1",
                ledger="{}",
            ),
        ]
    )
    comp = compare.load_comparison("paper", root=root, extra=extra)
    ours = comp[comp["paper"] == "compare"]
    assert list(ours["method"]) == ["gap (this project, smoke)"] and ours["unit"].item() == "edge"
    assert ours["score"].item() == 41.0  # test accuracy only


def test_run_edge_level_unknown_profile():
    with pytest.raises(ValueError, match="profile"):
        compare.run_edge_level("nope")
