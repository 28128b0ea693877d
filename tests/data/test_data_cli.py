"""``dpgnn data list | fetch | info`` via Typer's runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from dpgnn.cli.data import app

runner = CliRunner()


def test_list_json(tmp_data_dir, no_network):
    res = runner.invoke(app, ["list", "--json", "--all"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    names = {r["name"] for r in rows}
    assert {"cora", "twitch", "wenet", "fb100-uillinois20", "ogbn-products"} <= names
    cora = next(r for r in rows if r["name"] == "cora")
    assert cora["nodes"] == 2708 and "lpgcn" in cora["papers"]
    assert no_network.calls == []


def test_list_table(tmp_data_dir):
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0 and "citeseer" in res.output and "available" in res.output
    assert max(len(line) for line in res.output.splitlines()) <= 120  # fits a terminal, variants wrapped below
    assert any(line.startswith("facebook: lpgnn->") for line in res.output.splitlines())


def test_info_shows_urls_hashes_locations(tmp_data_dir):
    res = runner.invoke(app, ["info", "Cora"])
    assert res.exit_code == 0
    assert "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.graph" in res.output
    assert "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d" in res.output
    assert str(tmp_data_dir / "cora" / "raw") in res.output


def test_fetch_errors(tmp_data_dir, no_network, monkeypatch, tmp_path):
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path))
    res = runner.invoke(app, ["fetch", "nonexistent"])
    assert res.exit_code == 2 and "Unknown dataset" in res.output  # a usage error, as everywhere
    res = runner.invoke(app, ["fetch", "wenet"])
    assert res.exit_code == 2 and "not public" in res.output


def test_fetch_synthetic_free_dataset_reports_stats(tmp_data_dir, monkeypatch):
    """fetch prints statistics (uses the mirror when present, else is skipped by the unavailable path)."""
    import pytest

    from dpgnn.data import dataset_available

    if not dataset_available("cora"):
        pytest.skip("Cora is neither mirrored nor cached here")
    res = runner.invoke(app, ["fetch", "cora", "--variant", "lpgcn"])
    assert res.exit_code == 0 and "nodes: 2,708" in res.output and "train_mask: 140" in res.output
