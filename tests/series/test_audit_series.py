"""Audit series: family-wise confidence of the LDP grid, the accounted-vs-audited table and its flags."""

import math

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
        assert cfg.ldp_epsilons == [0.5, 1.0, 2.0, 4.0, 8.0]
        assert "broken_laplace" in cfg.ldp_mechanisms and math.inf in cfg.node_epsilons
    assert settings("audit", "paper").mia_datasets == ["amazon", "credit"]


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
