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
    table = findings.md_table(pd.DataFrame({"a": [1, None], "b": ["x|y", "z"]}))
    assert table.splitlines() == ["| a | b |", "|---|---|", "| 1.0 | x\\|y |", "| — | z |"]
    assert findings.Finding("**x**")._repr_markdown_() == "**x**"


def test_explained_lists_every_explained_cell_with_its_cause():
    text = findings.explained("lpgnn")
    rows = REPORT[(REPORT["paper"] == "lpgnn") & (REPORT["status"] == "explained")]
    assert len(rows) and all(f"`{r.method}` {r.setting}: ours {r.ours_value:.2f}" in text
                             for r in rows.itertuples(index=False))
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
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {artifact}/{r.dataset}/{r.method}/{r.setting} |"))
        assert f"| {r.ours_value:.1f} ± " in line and f"| {r.status} |" in line


def test_lpgnn_low_budget_matches_the_seed_spread():
    spread = lpgnn.seed_spread()
    low = spread[spread["point"].str.contains(r"eps_x=0\.(?:01|1),")]
    gap = low["pooled"] - low["paper"]
    text = lpgnn.low_budget()
    assert f"The {len(low)} seed-spread points" in text
    side = "above" if (gap > 0).all() else ("below" if (gap < 0).all() else "on both sides of")
    assert f"{gap.abs().min():.1f}–{gap.abs().max():.1f} points {side} the paper" in text
