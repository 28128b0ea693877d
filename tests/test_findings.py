"""Findings (:mod:`dpgnn.findings`): the numbers of the notebooks' and docs' prose, computed from the committed
paper profile; each function is checked against the stored rows it reads, and says so when they are missing."""

from __future__ import annotations

import pandas as pd
import pytest

from dpgnn import findings
from dpgnn.findings import lpgnn
from dpgnn.utils import ROOT

REPORT = pd.read_csv(ROOT / "results" / "paper" / "report.csv", dtype={"setting": str})


def test_helpers_format_numbers():
    assert findings.span([0.161, 0.114, None]) == "0.11–0.16"
    assert findings.span([0.5, 0.501]) == "0.50"
    assert findings.slash([0.4, 0.534]) == "0.40 / 0.53"
    assert findings.pct(0.212) == "21 %" and findings.num(float("inf")) == "∞" and findings.num(None) == "—"
    table = findings.md_table(pd.DataFrame({"a": [1, None], "|b|": ["x|y", "z"]}))
    assert table.splitlines() == ["| a | \\|b\\| |", "|---|---|", "| 1.0 | x\\|y |", "| — | z |"]
    assert findings.Finding("**x**")._repr_markdown_() == "**x**"


def test_explained_lists_every_explained_cell_with_its_cause():
    text = findings.explained("lpgnn")
    rows = REPORT[(REPORT["paper"] == "lpgnn") & (REPORT["status"] == "explained")]
    assert len(rows) and all(
        f"`{r.method}` {r.setting}: ours {r.ours_value:.4g}" in text for r in rows.itertuples(index=False)
    )
    assert all(note in text for note in rows["note"].unique())


def test_nothing_stored_says_so(tmp_path):
    assert findings.report("lpgnn", tmp_path).empty
    assert "Not stored yet" in lpgnn.beyond_band("table_f", tmp_path)
    assert "Not stored yet" in lpgnn.low_budget(tmp_path) and "Not stored yet" in lpgnn.status(tmp_path)


@pytest.mark.parametrize("artifact", ["table_c", "table_f", "fig_d"])
def test_lpgnn_beyond_band_lists_the_reports_misses(artifact):
    text = lpgnn.beyond_band(artifact)
    rep = REPORT[(REPORT["paper"] == "lpgnn") & (REPORT["artifact"] == artifact)]
    misses = rep[rep["status"].isin(["outside", "explained"])]
    assert len(misses)
    for r in misses.itertuples(index=False):
        point = f"| {artifact}/{r.dataset}/{r.method}/{r.setting} |"
        line = next(ln for ln in text.splitlines() if ln.startswith(point))
        assert f"| {r.ours_value:.1f} ± " in line and f"| {r.status} |" in line


def test_lpgnn_low_budget_matches_the_seed_spread():
    spread = lpgnn.seed_spread()
    low = spread[spread["point"].str.contains(r"eps_x=0\.(?:01|1),")]
    gap = low["pooled"] - low["paper"]
    text = lpgnn.low_budget()
    assert f"The {len(low)} seed-spread points" in text
    side = "above" if (gap > 0).all() else ("below" if (gap < 0).all() else "on both sides of")
    assert f"{gap.abs().min():.1f}–{gap.abs().max():.1f} points {side} the paper" in text


def test_nothing_stored_says_so_for_every_series(tmp_path):
    from dpgnn.findings import audit, drw, progap

    for finding in (
        drw.noise_dominated,
        drw.seed_table,
        drw.sound_mode,
        drw.summary,
        audit.mia,
        audit.mia_published,
        audit.audits,
        progap.summary,
    ):
        assert "Not stored yet" in finding(tmp_path), finding.__name__


def test_drw_seed_table_matches_the_seed_spread():
    from dpgnn.findings import drw
    from dpgnn.series import drw as series

    spread = series.seed_spread(findings.store("drw"))
    text = drw.seed_table()
    assert len(spread)
    for _, r in spread.iterrows():
        assert f"| {r['ours']:.1f} | {r['paper']:.1f} | {r['seed F1 min']:.1f}–{r['seed F1 max']:.1f}, " in text
    met = int((spread["3-seed means within tolerance"] >= 0.05).sum())
    assert f"meet the 5 % criterion: {met} of {len(spread)}" in text


def test_drw_sound_mode_reads_both_pipelines():
    from dpgnn.findings import drw
    from dpgnn.series import drw as series

    both = series.table1_both_ways(findings.store("drw")).dropna(subset=["sound"])
    cora = both[both["dataset"] == "cora"]["sound - as_published"]
    assert f"Cora {cora.min():.1f} to {cora.max():.1f} points" in drw.sound_mode()


def test_audit_mia_quotes_the_stored_attacks():
    from dpgnn.findings import audit

    rows = findings.store("audit").load("fig4")
    b1 = rows[
        (rows["dataset"] == "amazon")
        & (rows["method"] == "b1")
        & (rows["setting"] == "attack1")
        & (rows["metric"] == "auroc")
    ]["value"]
    right = rows[
        (rows["dataset"] == "amazon")
        & (rows["method"] == "privgnn")
        & (rows["setting"] == "attack2")
        & (rows["metric"] == "auroc")
    ]["label_accuracy"].mean()
    text = audit.mia()
    assert f"B1 {b1.mean():.3f} ± {b1.std(ddof=0):.3f}" in text and f"{100 * right:.1f} % are right" in text


def test_audit_argmax_epsilon_is_the_exact_value():
    from dpgnn.audit.argmax import exact_epsilon
    from dpgnn.findings import audit

    assert f"{exact_epsilon(1.0, 10):.3f} at λ = 1" in audit.argmax_epsilon()


def test_progap_fidelity_shift_reads_the_measured_and_stored_runs():
    from dpgnn.findings import progap
    from dpgnn.series.progap import AUTHORS_CODE_MEASURED

    table = progap.fidelity_comparison()
    official, paper = AUTHORS_CODE_MEASURED["official"][3][0], AUTHORS_CODE_MEASURED["ours_paper"][3][0]
    stored = float(table.loc[3, "ours, fidelity=authors_code (stored)"].split("±")[0])
    text = progap.fidelity_shift()
    assert (
        f"{paper - official:.1f} points above the official code with the paper's σ and {stored - official:.1f}" in text
    )


def test_privgnn_official_end_to_end_quotes_the_stored_runs():
    from dpgnn.findings import privgnn

    rows = findings.store("privgnn").load("authors_code")
    off = rows[(rows["method"] == "privgnn_official") & (rows["setting"] == "K=750,Q=500,lam=0.4")]["value"]
    acc = findings.store("privgnn").load("accuracy")
    ours = acc[
        (acc["artifact"] == "table6")
        & (acc["method"] == "privgnn_code")
        & (acc["dataset"] == "amazon")
        & (acc["setting"] == "Q=500,lam=0.4")
        & acc["run"].isin([0, 1])
    ]["value"]
    text = privgnn.official_end_to_end(750, 500)
    assert f"/ {off.mean():.3f} /" in text and f"/ {ours.mean():.3f} /" in text


def test_privgnn_explained_groups_cover_every_explained_cell():
    from dpgnn.findings import privgnn

    n = int(((REPORT["paper"] == "privgnn") & (REPORT["status"] == "explained")).sum())
    counts = [int(x) for x in __import__("re").findall(r": (\d+) cells", privgnn.explained_groups())]
    assert sum(counts) == n and "other" not in privgnn.explained_groups()


def test_privgnn_epsilon_cells_count_the_report():
    from dpgnn.findings import privgnn

    eps = REPORT[(REPORT["paper"] == "privgnn") & REPORT["artifact"].str.endswith("_eps")]
    assert f"{int((eps['status'] == 'within').sum())} of the {len(eps)} printed ε cells" in privgnn.epsilon_cells()


def test_white_box_counts_the_flagged_runs():
    from dpgnn.findings import audit
    from dpgnn.series import audit_white_box

    t = audit_white_box.white_box_table(findings.store("audit"))
    ok = t[t["noise_factor"] == 1.0]
    assert f"Correct runs flagged: {int(ok['flagged'].sum())} of {len(ok)}" in audit.white_box()


def test_every_series_says_so_when_nothing_is_stored(tmp_path):
    from dpgnn.findings import lpgcn, privgnn

    for finding in (
        privgnn.summary,
        privgnn.figures,
        privgnn.official_code,
        privgnn.split_students,
        privgnn.stand_in,
        privgnn.b4,
        privgnn.epsilon_cells,
        privgnn.reproducing_delta,
        lpgcn.summary,
    ):
        assert "Not stored yet" in finding(root=tmp_path), finding.__name__
