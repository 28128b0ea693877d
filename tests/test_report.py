"""Report statuses: within / explained / outside / not_run / stand_in (dpgnn/report.py)."""

import numpy as np
import pandas as pd
import pytest

from dpgnn.reference import COLUMNS, load_explanations, stand_in_for
from dpgnn.report import KEY, REPORTED, STATUSES, compare, counts, format_value, paper_decimals, summarize, to_markdown


def _ref(rows):
    return pd.DataFrame([dict(zip(COLUMNS, r)) for r in rows], columns=COLUMNS)


def _ours(rows):
    return pd.DataFrame([dict(zip(KEY + ["value"], r)) for r in rows])


REF = _ref(
    [
        ("p", "t1", "d1", "m", "a", "acc", 50.0, None, "none", 2.0, False, "T1 a"),
        ("p", "t1", "d1", "m", "b", "acc", 50.0, None, "none", 2.0, False, "T1 b"),
        ("p", "t1", "d1", "m", "c", "acc", 50.0, None, "none", 2.0, False, "T1 c"),
        ("p", "t1", "d2", "m", "a", "acc", 50.0, None, "none", 2.0, False, "T1 d2"),
        ("p", "f3", "d1", "m", "a", "acc", np.nan, None, "none", 2.0, True, "Fig. 3, curve only"),
    ]
)


def test_statuses_within_explained_outside_not_run():
    ours = _ours(
        [
            ("p", "t1", "d1", "m", "a", "acc", 51.0),
            ("p", "t1", "d1", "m", "b", "acc", 40.0),
            ("p", "t1", "d1", "m", "c", "acc", 40.0),
        ]
    )
    expl = pd.DataFrame(
        [
            dict(
                paper="p",
                artifact="t1",
                dataset="d1",
                method="*",
                setting="b",
                metric="acc",
                cause="measured: the authors' code gives 40",
            )
        ]
    )
    skipped = pd.DataFrame([dict(artifact="t1", dataset="d2", reason="d2 raw files missing")])
    rep = compare(REF, ours, profile="x", skipped=skipped, explanations=expl)
    st = dict(zip(rep["setting"] + "/" + rep["dataset"] + "/" + rep["artifact"], rep["status"]))
    assert st == {
        "a/d1/t1": "within",
        "b/d1/t1": "explained",
        "c/d1/t1": "outside",
        "a/d2/t1": "not_run",
        "a/d1/f3": "not_run",
    }
    assert "authors' code gives 40" in rep.loc[rep["setting"] == "b", "note"].iloc[0]
    assert rep.loc[rep["setting"] == "c", "note"].iloc[0] == ""
    notes = dict(zip(rep["artifact"] + rep["dataset"], rep["note"]))
    assert notes["t1d2"].startswith("dataset not available here") and "d2 raw files missing" in notes["t1d2"]
    other = compare(
        REF, ours, profile="x", skipped=skipped.assign(reason="needs a GPU (1,900 CPU-s per run)"), explanations=expl
    )
    assert (
        dict(zip(other["artifact"] + other["dataset"], other["note"]))["t1d2"]
        == "not run here: needs a GPU (1,900 CPU-s per run)"
    )  # a skip that is no missing dataset says so
    assert "prints no value" in notes["f3d1"]
    c = counts(rep)
    assert int(c["total"].sum()) == len(REF)  # every reference cell counted once
    assert list(c.columns[2:-1]) == list(STATUSES)


def test_not_run_asks_for_the_papers_own_graph_of_an_ambiguous_name(monkeypatch):
    """'facebook' is LPGNN's page-page graph (mirrored) but PrivGNN's Facebook100 UIUC (not): PrivGNN's cells
    without a result must say the dataset is missing, not that it was left out of the profile."""
    import dpgnn.data.registry

    here = {("facebook", None): True, ("facebook", "lpgnn"): True, ("facebook", "privgnn"): False}
    monkeypatch.setattr(dpgnn.data.registry, "dataset_available", lambda name, variant=None, **_: here[(name, variant)])
    ref = _ref(
        [(p, "t1", "facebook", "m", "a", "acc", 50.0, None, "none", 2.0, False, "T1") for p in ("privgnn", "lpgnn")]
    )
    rep = compare(ref, _ours([]), profile="x", explanations=load_explanations().iloc[:0])
    notes = dict(zip(rep["paper"], rep["note"]))
    assert notes["privgnn"].startswith("dataset not available here ('facebook'")
    assert notes["lpgnn"].startswith("not in this profile")


def test_stand_in_rows_are_never_compared():
    ref = _ref(
        [
            (
                "progap",
                "table2",
                "fb-100",
                "progap",
                "edge eps=1",
                "accuracy",
                57.0,
                0.3,
                "ci95_bootstrap",
                1.0,
                False,
                "Table 2",
            )
        ]
    )
    ours = _ours(
        [("progap", "table2", "fb100-wisconsin87", "progap", "edge eps=1", "accuracy", v) for v in (73.0, 74.0)]
    )
    rep = compare(ref, ours, profile="x", explanations=load_explanations().iloc[:0])
    assert list(rep["status"]) == ["not_run", "stand_in"]
    s = rep.iloc[1]
    assert s["dataset"] == "fb100-wisconsin87" and s["ours_value"] == pytest.approx(73.5) and np.isnan(s["diff"])
    assert "never compared" in s["note"]
    c = counts(rep)
    assert int(c["total"].iloc[0]) == 1 and int(c["stand_in"].iloc[0]) == 1
    assert "1 stand-in rows" in summarize(rep)
    assert stand_in_for("progap", "fb100-present") == "fb-100" and stand_in_for("progap", "reddit") is None
    assert set(REPORTED) < set(STATUSES)


def test_explanations_file_is_well_formed():
    e = load_explanations()
    assert len(e) and (e["cause"].str.contains("measured")).all()


def test_numbers_are_rounded_to_the_papers_precision():
    """One rule: the decimals the paper prints for the metric in the artifact, else 3 significant figures."""
    rep = pd.DataFrame(
        {
            "paper": ["p"] * 5,
            "artifact": ["t1", "t1", "t1", "t2", "t3"],
            "metric": ["acc", "acc", "eps", "acc", "acc"],
            "paper_value": [62.4, 69.0, 13.15, 0.875, np.nan],
        }
    )
    d = paper_decimals(rep)
    assert d.iloc[:4].tolist() == [1, 1, 2, 3] and np.isnan(d.iloc[4])  # 69.0 takes 62.4's; t3 prints no value
    assert format_value(75.7812, 1, spread=1.0213) == "75.8 ± 1.0"
    assert format_value(-1.25, 2, signed=True) == "-1.25" and format_value(3.0, 1, signed=True) == "+3.0"
    assert format_value(0.07578, None, spread=0.0102) == "0.0758 ± 0.0102"  # 3 significant figures
    assert format_value(63.456, np.nan) == "63.5" and format_value(1234.5, None) == "1234"
    assert format_value(np.nan, 1) == "" and format_value(0.0, None) == "0"
    ours = _ours([("p", "t1", "d1", "m", "a", "acc", v) for v in (50.0 + 1 / 3, 51.0, 52.123)])
    md = to_markdown(compare(REF, ours, profile="x", explanations=load_explanations().iloc[:0]), "x")
    assert "| 51 ± 1 |" in md and "51.15" not in md  # every value of the paper's t1 is whole: no decimal
