"""``dpgnn train`` on each file format, ``dpgnn methods``, and refusals that write nothing."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.own_graph import EPS, FAST, random_graph
from typer.testing import CliRunner

import dpgnn
from dpgnn.api import METHODS
from dpgnn.api.io import load_graph
from dpgnn.cli import app

runner = CliRunner()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own_graph"


def _write(fmt: str, folder: Path) -> Path:
    g = random_graph(n=40)
    if fmt == "pt":
        torch.save(g, folder / "g.pt")
        return folder / "g.pt"
    if fmt == "npz":
        np.savez(folder / "g.npz", edge_index=g.edge_index.numpy(), x=g.x.numpy(), y=g.y.numpy())
        return folder / "g.npz"
    d = folder / "csv"
    d.mkdir()
    (d / "edges.csv").write_text("source,target\n" + "".join(f"{a},{b}\n" for a, b in g.edge_index.t().tolist()))
    (d / "features.csv").write_text(
        "node,"
        + ",".join(f"f{k}" for k in range(g.x.size(1)))
        + "\n"
        + "".join(
            f"{i}," + ",".join(f"{v:.5f}" for v in row) + "\n" for i, row in reversed(list(enumerate(g.x.tolist())))
        )
    )
    (d / "labels.csv").write_text("node,label\n" + "".join(f"{i},{c}\n" for i, c in enumerate(g.y.tolist())))
    return d


def _train(method, level, data, out, *extra):
    settings = [f"{k}={v}" for k, v in FAST.get(method, {}).items()]
    args = [
        "train",
        method,
        "--level",
        level,
        "--data",
        str(data),
        "--out",
        str(out),
        "--device",
        "cpu",
        *sum((["--set", s] for s in settings), []),
        *extra,
    ]
    if EPS[level] is not None:
        args += ["--epsilon", str(EPS[level])]
    return runner.invoke(app, args)


@pytest.mark.parametrize("fmt", ["pt", "npz", "csv"])
@pytest.mark.parametrize("method", list(METHODS))
def test_train_every_method_on_every_format(tmp_path, fmt, method):
    level = list(METHODS[method].levels)[-1]
    data = _write(fmt, tmp_path)
    res = _train(method, level, data, tmp_path / "out")
    assert res.exit_code == 0, res.output
    summary = res.stdout.strip().splitlines()[-1]
    assert summary.startswith(f"{method} [{level}]: test accuracy") and "guarantee" in summary
    if level != "none" and not METHODS[method].pure:
        assert "digits of N=40" in summary  # how δ was chosen
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert all(result["config"][k] == v for k, v in FAST[method].items())
    assert result["ledger"]["delta_rule"] and result["input"]["split"] == "seeded"
    model = dpgnn.load(tmp_path / "out" / "model.pt")
    assert model.predict(load_graph(data)).shape == (40, 3)


def test_csv_rows_in_any_node_order_match_the_pt_graph(tmp_path):
    """features.csv is written in reverse node order: the loader sorts by the node column."""
    g = load_graph(_write("csv", tmp_path))
    ref = random_graph(n=40)
    assert torch.allclose(g.x, ref.x, atol=1e-5) and torch.equal(g.y, ref.y)
    assert torch.equal(g.edge_index, ref.edge_index)


def test_shipped_example_trains(tmp_path):
    res = _train("mlp", "none", EXAMPLE, tmp_path / "out")
    assert res.exit_code == 0, res.output
    g = load_graph(EXAMPLE)
    assert g.num_nodes == 120 and g.x.shape == (120, 6) and 0 <= float(g.x.min()) <= float(g.x.max()) <= 1


@pytest.mark.parametrize(
    "broken,match",
    [
        ("labels.csv", "lacks column(s) ['label']"),
        ("features.csv", "the node column must hold each id 0..N-1 exactly once"),
        ("nan", "data.x holds NaN or infinite values"),
        ("missing", "lacks ['edges.csv']"),
    ],
)
def test_refused_input_writes_nothing(tmp_path, broken, match):
    d = _write("csv", tmp_path)
    if broken == "labels.csv":
        (d / "labels.csv").write_text("node,class\n0,1\n")
    elif broken == "features.csv":
        (d / "features.csv").write_text("node,f0\n0,1.0\n0,2.0\n")
    elif broken == "nan":
        text = (d / "features.csv").read_text().splitlines()
        text[3] = text[3].split(",")[0] + ",nan" + "".join("," + v for v in text[3].split(",")[2:])
        (d / "features.csv").write_text("\n".join(text) + "\n")
    else:
        (d / "edges.csv").unlink()
    res = _train("progap", "edge", d, tmp_path / "out")
    assert res.exit_code == 2 and match in res.output
    assert len([line for line in res.output.splitlines() if line.startswith("Error")]) == 1
    assert not (tmp_path / "out").exists()


def test_unknown_setting_is_refused(tmp_path):
    res = _train("progap", "edge", _write("npz", tmp_path), tmp_path / "out", "--set", "epoch=3")
    assert res.exit_code == 2 and "unknown setting(s) ['epoch']" in res.output and not (tmp_path / "out").exists()


def test_methods_lists_and_describes():
    res = runner.invoke(app, ["methods"])
    assert res.exit_code == 0 and all(m in res.stdout for m in METHODS)
    res = runner.invoke(app, ["methods", "dp-gnn"])
    assert res.exit_code == 0 and "max_degree = 10" in res.stdout
    res = runner.invoke(app, ["methods", "nope"])
    assert res.exit_code == 2 and "unknown method 'nope'" in res.output


def test_train_shows_progress(tmp_path):
    """Every training loop of the run shows a progress bar on stderr (dpgnn.train.progress_bars)."""
    res = _train("mlp", "none", _write("npz", tmp_path), tmp_path / "out")
    assert res.exit_code == 0 and "train:   0%|" in res.output and "0/2 [" in res.output


def test_progress_bars_reach_every_fit(capsys):
    from dpgnn.train import fit, progress_bars

    with progress_bars():
        fit(None, lambda epoch: None, epochs=3, monitor=None, desc="stage-x")
    assert "stage-x" in capsys.readouterr().err
    fit(None, lambda epoch: None, epochs=3, monitor=None, desc="stage-y")
    assert "stage-y" not in capsys.readouterr().err
