"""LPGCN's node-classification runs of one configuration trained together (dpgnn.methods.lpgcn.repeats) against
their one-at-a-time runs: every run's row (metric, F1s, epochs, early stop, history, ledger, config hash) equals its
own sequential run's bit for bit, runs that stop at different epochs included, and the comparison tells one run's
row from another's; the registry's ``run.repeats`` goes through it."""

from __future__ import annotations

import math

import pytest
import torch

from dpgnn import methods
from dpgnn.data import csbm, minmax_normalize
from dpgnn.methods import lpgcn as L
from dpgnn.methods.lpgcn import repeats as rp
from dpgnn.train import last_epoch

torch.set_num_threads(1)

RUNS = [0, 3, 1]  # out of order: each row must be its own run's
HP = {"lr": 0.01, "weight_decay": 5e-4, "dropout": 0.5}
KW = dict(seed=7, device="cpu", max_epochs=60, min_epochs=5, patience=5)


@pytest.fixture(scope="module")
def graph():
    data = csbm(
        num_nodes=300, num_classes=3, num_features=24, avg_degree=6, homophily=0.9, feature_sparsity=0.6, seed=0
    )
    return minmax_normalize(data)


def _differences(a: dict, b: dict) -> list[str]:
    """The columns of two rows that differ, bit for bit (NaN equal to NaN), wall times and versions aside."""
    out = []
    for k in sorted(set(a) | set(b)):
        if k.endswith("_s") or k == "versions":
            continue
        x, y = a.get(k), b.get(k)
        if not (x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))):
            out.append(k)
    return out


@pytest.mark.parametrize(
    "method,eps,extra",
    [
        ("pgc", 1.0, {"hparams": HP}),
        ("lm", 2.0, {"hparams": HP, "restore_best": True}),
        ("pm", 5.0, {"hparams": {**HP, "dropout": 0.0}}),
        ("raw", None, {"hparams": HP, "hidden": 8}),
    ],
)
def test_repeats_equal_each_runs_sequential_row(graph, method, eps, extra):
    seq = [L.run_node_classification(graph, "synthetic", method, eps, run=r, **KW, **extra) for r in RUNS]
    bat = rp.run_node_classification_repeats(graph, "synthetic", method, eps, runs=RUNS, **KW, **extra)
    assert [b["run"] for b in bat] == RUNS
    for s, b in zip(seq, bat):
        assert _differences(s, b) == []
        assert b["history"]["val_loss"] and b["config_hash"] == s["config_hash"]
    # the check tells runs apart: a row compared with another run's differs (in its seed and its numbers)
    assert "run_seed" in _differences(seq[0], bat[1]) and "history" in _differences(seq[0], bat[1])


def test_runs_stop_early_at_their_own_epochs(graph):
    kw = {**KW, "max_epochs": 200, "min_epochs": 1, "patience": 3}
    runs = list(range(6))
    seq = [L.run_node_classification(graph, "synthetic", "lm", 1.0, run=r, hparams=HP, **kw) for r in runs]
    bat = rp.run_node_classification_repeats(graph, "synthetic", "lm", 1.0, runs=runs, hparams=HP, **kw)
    assert len({s["epochs"] for s in seq}) > 1 and all(s["stop_epoch"] for s in seq)
    for s, b in zip(seq, bat):
        assert _differences(s, b) == []
    # the global stream is left where the last sequential run leaves it
    L.run_node_classification(graph, "synthetic", "lm", 1.0, run=runs[-1], hparams=HP, **kw)
    after_seq = torch.rand(3)
    rp.run_node_classification_repeats(graph, "synthetic", "lm", 1.0, runs=runs, hparams=HP, **kw)
    assert torch.equal(torch.rand(3), after_seq)


def test_what_cannot_batch_runs_one_after_the_other(graph):
    assert rp.batchable("cpu", 0.5) is None
    with last_epoch():
        assert "last_epoch" in rp.batchable("cpu", 0.5)
        seq = [L.run_node_classification(graph, "synthetic", "pgc", 1.0, run=r, hparams=HP, **KW) for r in RUNS]
        bat = rp.run_node_classification_repeats(graph, "synthetic", "pgc", 1.0, runs=RUNS, hparams=HP, **KW)
    assert all(_differences(s, b) == [] for s, b in zip(seq, bat))
    assert all(b["epochs"] == KW["max_epochs"] for b in bat)
    for bad in ([], [0, True], [0.5]):
        with pytest.raises(ValueError, match="runs"):
            rp.run_node_classification_repeats(graph, "synthetic", "pgc", 1.0, runs=bad, hparams=HP, **KW)
    with pytest.raises(ValueError, match="epsilon"):
        rp.run_node_classification_repeats(graph, "synthetic", "pgc", None, runs=RUNS, hparams=HP, **KW)


def test_registry_repeats_match_run(graph):
    config = {"dataset": "synthetic", "epsilon": 1.0, "hparams": HP, "max_epochs": 30, "min_epochs": 5}
    spec = methods.get(*L.method_key("pgc", "node_classification"))
    got = spec.run.repeats(graph, {**config, "run": 9}, seed=7, runs=RUNS, device="cpu")
    for r, res in zip(RUNS, got):
        one = spec.run(graph, {**config, "run": r}, seed=7, device="cpu")
        assert res.metrics == one.metrics and res.ledger == one.ledger and res.history == one.history
        assert res.extra["val_loss"] == one.extra["val_loss"]
        assert _differences(res.extra["row"], one.extra["row"]) == []
    assert not hasattr(methods.get(*L.method_key("pgc", "link_prediction")).run, "repeats")
    raw = methods.get(*L.method_key("raw", "node_classification")).run.repeats
    rows = raw(graph, {**config, "epsilon": math.inf}, seed=7, runs=[0, 1], device="cpu")
    assert [r.extra["row"]["run"] for r in rows] == [0, 1] and rows[0].ledger["level"] == "none"
