"""Audit series: family-wise confidence of the LDP grid, the accounted-vs-audited table and its flags."""

import math

import matplotlib.container
import pytest

from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import audit as S


@pytest.fixture()
def store(tmp_path):
    return ResultStore("audit", "test", root=tmp_path)


def test_profiles_cover_the_issue_grid():
    for profile in ("smoke", "paper"):
        cfg = settings("audit", profile)
        assert cfg.ldp.epsilons == [0.5, 1.0, 2.0, 4.0, 8.0]
        assert "broken_laplace" in cfg.ldp.mechanisms and math.inf in cfg.node.epsilons
    paper = settings("audit", "paper")
    assert paper.mia.datasets == ["amazon", "arxiv", "reddit", "credit"]  # Fig. 4's three, and Credit
    assert paper.mia.shadows.epochs == [50, 200, 500] and paper.mia.student_epochs in paper.mia.shadows.epochs


def test_ldp_rows_and_flags(store):
    cfg = settings("audit", "test")
    rows = S.run_ldp(cfg, store)
    assert set(rows["method"]) == {"pgc", "broken_laplace"}
    assert list(rows["alpha"]) == pytest.approx([cfg.alpha / 2] * 2)  # Bonferroni over the grid's 2 cells
    table = S.audit_table(store, ("ldp",))
    flagged = dict(zip(table["method"], table["flagged"]))
    assert flagged == {"broken_laplace": True, "pgc": False}
    assert table.loc[table["method"] == "pgc", "tight"].all()
    summary = S.audit_side_by_side(store, ("ldp",))
    assert sorted(summary["flagged_cells"]) == [0, 1]


def test_empty_store_gives_empty_table(store):
    assert S.audit_table(store).empty


def _stored(store, artifact):
    import csv

    with open(store.path(artifact), newline="") as f:
        return list(csv.DictReader(f))


def test_every_audit_row_states_the_guarantee_of_what_it_audits(store):
    """At the test profile (plus the no-noise control), every row of every audit artifact passes check_ledger,
    with the statement of the mechanism under audit; the backfill derives the same fields from the stored row."""
    import json

    from dpgnn.privacy.guarantee import LEDGER_FIELDS, check_ledger
    from dpgnn.series.ledgers import guarantee_fields_for

    cfg = settings("audit", "test", **{"node.epsilons": [8.0, math.inf]})
    S.run_ldp(cfg, store)
    S.run_edge(cfg, store)
    S.run_node(cfg, store)
    S.run_query(cfg, store)
    S.run_mia(cfg, store)
    arts = ["ldp", "edge", "node", "query"] + (["fig4"] if store.path("fig4").exists() else [])
    led = {}
    for art in arts:
        rows = _stored(store, art)
        assert rows, art
        for row in rows:
            got = check_ledger(row["ledger"])
            led[art, row["method"]] = got
            old = {k: v for k, v in got.items() if k not in (*LEDGER_FIELDS, "issues")}
            fields = guarantee_fields_for("audit", row, old)
            assert fields == {k: got[k] for k in fields}, (art, row["method"])
    assert led["ldp", "pgc"]["guarantee"] == "sound"
    assert led["ldp", "pgc"]["neighbouring"] == "any two inputs of one user (local DP)"
    broken = led["ldp", "broken_laplace"]
    assert broken["guarantee"] == "as_published" and "deliberately broken" in broken["issues"][0]
    edge = led["edge", "progap/gap NAP, K=1"]
    assert edge["guarantee"] == "as_published" and edge["neighbouring"] == "add/remove one directed edge"
    node = led["node", "dp-mlp (DP-Adam stage)"]
    assert node["guarantee"] == "as_published" and node["not_covered"] == ["model selection on private validation data"]
    assert led["node", "mlp (non-private control)"]["guarantee"] == "sound"
    assert json.loads(_stored(store, "node")[1]["ledger"])["neighbouring"] == "none (non-private)"
    post, code = led["query", "privgnn noisy argmax"], led["query", "privgnn noisy argmax (log-softmax, authors' code)"]
    assert post["guarantee"] == code["guarantee"] == "as_published"
    assert post["epsilon_per_query_sound"] > post["epsilon"] and math.isinf(code["epsilon_per_query_sound"])
    assert len(code["issues"]) == len(post["issues"]) + 1 and "log-softmax" in code["issues"][-1]
    if "fig4" in arts:
        assert led["fig4", "b1"]["guarantee"] == "sound"
        # Credit is standardised over all nodes: PrivGNN's builder names it
        assert led["fig4", "privgnn"]["not_covered"] == ["preprocessing statistics"]
        # the authors'-code student (noise on log-softmax): no finite epsilon is claimed for it
        assert math.isinf(led["fig4", "privgnn_code"]["epsilon"]) and led["fig4", "privgnn_code"]["issues"] == []
        # the published-protocol cell: its own metric, every target, both protocols side by side
        rows = _stored(store, "fig4")
        published = [r for r in rows if r["metric"] == "auroc_published"]
        assert {(r["method"], r["setting"]) for r in published} == {
            (m, a) for m in ("b1", "privgnn", "privgnn_code") for a in ("attack1", "attack2")
        }
        assert all(r["protocol"] == "rebmigraph" and 0 <= float(r["score_auroc"]) <= 1 for r in published)
        tab = S.mia_protocols(store)
        assert tab[["score AUROC", "published protocol"]].notna().all().all()
        assert tab.loc[tab["method"] == "privgnn_code", "runs"].eq(1).all()
        fig = S.plot_mia_protocols(store, "credit")
        assert [len(ax.patches) for ax in fig.axes] == [6, 6]  # 3 targets x 2 protocols per attack


def test_shadow_designs_series_extends_fig4(store):
    """fig4_shadows at the test profile: its default design (quarter-size shadow, as many epochs as the targets)
    stores fig4's values for every target (the published protocol's equality: tests/audit/test_mia.py); every row's
    ledger passes; the range table and figure."""
    from dpgnn.privacy.guarantee import check_ledger

    cfg = settings("audit", "test")
    S.run_mia(cfg, store)
    if not store.path("fig4").exists():
        pytest.skip("Credit's raw files are not available here")
    rows = S.run_mia_shadows(cfg, store)
    assert set(rows["design"]) == {"shadow", "oracle", "confidence"}
    for row in _stored(store, "fig4_shadows"):
        check_ledger(row["ledger"])
    fig4 = store.load("fig4").groupby(["method", "setting", "metric"])["value"].mean()
    default = rows[
        (rows["design"] == "shadow") & (rows["shadow"] == "quarter") & (rows["shadow_epochs"] == cfg.mia.student_epochs)
    ]
    got = default.groupby(["method", "setting", "metric"])["value"].mean()
    assert len(got) == 6 and got.to_dict() == pytest.approx(fig4.loc[got.index].to_dict())  # 3 targets x 2 attacks
    tab = S.mia_shadow_range(store)
    assert len(tab) == 6 and (tab["shadow min"] <= tab["default"]).all() and (tab["default"] <= tab["shadow max"]).all()
    assert tab["paper"].isna().all() and not tab["paper reached"].any()  # Fig. 4 has no Credit value
    assert tab.loc[tab["metric"] == "auroc", "confidence"].notna().all()
    fig = S.plot_mia_shadows(store, "credit")
    assert len(fig.axes) == 2


def test_central_rows_state_their_ledger_and_the_broken_control(store):
    """The central-DP canary audits at the test profile: one row per cell, every ledger passes the contract, the
    broken control is marked (its ledger names the issue and its true ε) and the figure has the node panel."""
    from dpgnn.privacy.guarantee import check_ledger

    cfg = settings("audit", "test")
    rows = S.run_central(cfg, store)
    assert len(rows) == len(cfg.central.methods) * len(cfg.central.epsilons) + len(cfg.central.broken)
    for _, row in rows.iterrows():
        led = check_ledger(row["ledger"])
        assert row["privacy_unit"] == "node" and led["noise_multiplier"] > 0
    broken = rows[rows["broken"].astype(str) == "True"].iloc[0]
    led = check_ledger(broken["ledger"])
    assert "deliberately broken" in led["issues"][-1] and led["epsilon"] > 1e6
    assert float(broken["epsilon"]) == pytest.approx(cfg.central.broken_epsilon, abs=1e-3)
    table = S.audit_table(store)
    assert set(table["unit"]) == {"node"} and table["broken"].sum() == 1
    assert (table.loc[~table["broken"], "audited_lb"] <= table.loc[~table["broken"], "accounted"]).all()
    fig = S.plot_accounted_vs_audited(store)
    assert [ax.get_title() for ax in fig.axes] == [S.UNITS["node"]]


def test_committed_paper_audits_flag_exactly_the_broken_variants():
    """The committed paper-profile audits: no correct mechanism or training run audits above its accounted ε, and
    every deliberately broken variant does (PrivGNN's single query is the documented accounting finding)."""
    store = ResultStore("audit", "paper")
    table = S.audit_table(store)
    if table.empty:
        pytest.skip("no paper-profile audit results in this checkout")
    table = table[table["unit"] != "query"]
    assert not table.loc[~table["broken"], "flagged"].any()
    assert table["broken"].sum() >= 3 and table.loc[table["broken"], "flagged"].all()
    central = table[table["unit"].isin(["node", "feature"]) & ~table["broken"] & table["accounted"].lt(math.inf)]
    assert set(central["method"]) >= {"ProGAP node level", "DP-GNN", "DRW (sound mode)", "FDP (sound mode)"}


def test_fig4_figure_puts_the_paper_values_on_their_bars(store):
    """plot_mia: a bar per target and dataset (the authors'-code student included), the paper's value as ◇ at the
    centre of the bar it belongs to (Amazon has reference rows, Credit none)."""
    from dpgnn.reference import load_reference

    rows = [
        {"dataset": d, "method": m, "setting": a, "metric": "auroc", "value": 0.6, "run": 0, "config_hash": d}
        for d in ("amazon", "credit")
        for m in ("b1", "privgnn", "privgnn_code")
        for a in ("attack1", "attack2")
    ]
    store.append("fig4", rows)
    ref = load_reference("audit", "fig4").set_index(["dataset", "method", "setting"])["value"]
    fig = S.plot_mia(store)
    for ax, attack in zip(fig.axes, ("attack1", "attack2")):
        bars = [b for c in ax.containers if isinstance(c, matplotlib.container.BarContainer) for b in c]
        assert len(bars) == 6  # 3 targets x 2 datasets
        markers = [c for c in ax.containers if isinstance(c, matplotlib.container.ErrorbarContainer)]
        assert len(markers) == 3  # Amazon's three targets; Credit has no paper value
        amazon = [b for c in ax.containers if isinstance(c, matplotlib.container.BarContainer) for b in c[:1]]
        for bar, mark, method in zip(amazon, markers, ("b1", "privgnn", "privgnn_code")):
            x, y = mark.lines[0].get_data()
            assert x[0] == pytest.approx(bar.get_x() + bar.get_width() / 2)
            assert y[0] == pytest.approx(ref[("amazon", method, attack)])


def test_profile_parts_take_nested_overrides_and_list_the_valid_names():
    """The profile's groups are nested parts: ``part.field`` overrides one field of one part; a flat or unknown
    name is a one-line error that lists the valid names."""
    cfg = settings("audit", "test", **{"mia.shadows.runs": 2, "ldp.trials": 10, "mia.noise": None})
    assert cfg.mia.shadows.runs == 2 and cfg.ldp.trials == 10
    assert cfg.mia.runs == 1 and cfg.mia.noise == settings("audit", "test").mia.noise
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['mia_shadow_runs'\].*'mia\.shadows\.runs'"):
        settings("audit", "test", mia_shadow_runs=2)
