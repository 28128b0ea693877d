"""Privacy series: σ at equal ε is stored with a ledger, never above the target, and PLD needs less."""

from __future__ import annotations

import pytest

from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import privacy as series


def test_profiles_and_cells():
    for profile in ("smoke", "test", "paper"):
        cfg = settings("privacy", profile)
        cells = series._cells(cfg)
        assert len(cells) == len(cfg.node_epsilons) * len(cfg.train_accountants) * len(cfg.methods) * cfg.runs
        assert {c["accountant"] for c in cells} == set(cfg.train_accountants)


def test_run_sigma_rows_respect_the_target(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    cfg = settings("privacy", "test", accountants=["rdp"], dpsgd=[[0.01, 100]], dpsgd_uniform=[[0.01, 100]])
    store = ResultStore("privacy", "test")
    df = series.run_sigma(cfg, store, train_nodes=400)
    assert len(df) == 3  # DP-SGD poisson, DP-SGD uniform, ProGAP node
    assert (df["epsilon"] <= df["target"] + 1e-12).all()
    from dpgnn.privacy.guarantee import check_ledger

    leds = [check_ledger(x) for x in df["ledger"]]  # every row says what is accounted and what is guaranteed
    assert {led["guarantee"] for led in leds} == {"sound", "as_published"}  # ProGAP node level is as_published
    wide = series.sigma_table(store)
    assert "rdp" in wide.columns and len(wide) == 3
    ex = series.stated_example()
    assert ex.set_index("accountant").loc["pld", "ours"] == pytest.approx(0.333, abs=2e-3)
