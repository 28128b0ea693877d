"""DRW and FDP repeats: R seeds trained together equal their R sequential runs bit for bit (selected F1, histories,
ledgers, checkpoint rows), seeds that stop early at different steps included; the registry and the series' batch
go through them."""

import dataclasses
import math

import pytest
import torch

from dpgnn import methods
from dpgnn.data import csbm
from dpgnn.methods import drw as D
from dpgnn.methods.drw import repeats as rp
from dpgnn.nn.drw import SplitFeatures

SEEDS = [0, 11, 23]


@pytest.fixture(scope="module")
def words():
    """A toy graph with standardised sparse word features (the first layer goes through SplitFeatures)."""
    g = csbm(num_nodes=240, num_classes=3, num_features=12, avg_degree=4, homophily=0.9, feature_sparsity=0.3, seed=1)
    data = D.prepare("toy", g)
    w = (torch.rand(data.num_nodes, 40, generator=torch.Generator().manual_seed(0)) < 0.05).float()
    data = dataclasses.replace(data, x=(w - w.mean(0)) / w.std(0).clamp(min=1e-3))
    assert isinstance(D.eval_features(data.x), SplitFeatures)
    return data


def _same(a, b, path=""):
    """Equal bit for bit (NaN equal to NaN), wall times aside."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            if k not in ("seconds", "versions"):
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, torch.Tensor):
        assert torch.equal(a, b), path
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize(
    "method,layers,extra",
    [
        ("drw", 1, {}),
        ("drw", 2, {"eval_every": 3}),
        ("drw-d", 2, {"resample_every": 4}),
        ("drw-r", 2, {}),
        ("fdp", 2, {}),
    ],
)
def test_repeats_equal_each_seeds_sequential_run(words, method, layers, extra):
    cfg = D.DPTrainConfig(
        method=method, num_layers=layers, hidden=16, batch=10, noise_multiplier=2.0, max_steps=12, **extra
    )
    assert rp.batchable(words, cfg) is None
    batched = rp.run_dp_repeats(words, cfg, SEEDS, device="cpu")
    for seed, got in zip(SEEDS, batched):
        _same(got, D.run_dp(words, cfg, seed=seed, device="cpu"))
    assert len({r["test_f1"] for r in batched}) > 1  # the seeds differ: not one run copied


def test_seeds_stop_early_at_their_own_steps_and_keep_their_state(words):
    cfg = D.DPTrainConfig(
        method="drw",
        num_layers=1,
        hidden=8,
        batch=10,
        noise_multiplier=8.0,
        lr=0.2,
        clip_fraction=0.001,
        fidelity="authors_code",
        patience=3,
    )
    seeds = [0, 1, 2, 3, 4, 5]
    batched = rp.run_dp_repeats(words, cfg, seeds, device="cpu")
    sequential = [D.run_dp(words, cfg, seed=s, device="cpu") for s in seeds]
    stops = [r["ledger"]["early_stopped_at"] for r in sequential]
    assert len(set(stops)) > 1 and all(s is not None for s in stops)  # the seeds stop at different steps
    for got, want in zip(batched, sequential):
        _same(got, want)


def test_what_cannot_batch_runs_one_seed_after_the_other(words):
    cfg = D.DPTrainConfig(method="drw", hidden=8, batch=10, max_steps=3, per_sample="vmap")
    assert "vmap" in rp.batchable(words, cfg)
    for seed, got in zip(SEEDS[:2], rp.run_dp_repeats(words, cfg, SEEDS[:2], device="cpu")):
        _same(got, D.run_dp(words, cfg, seed=seed, device="cpu"))
    with pytest.raises(ValueError, match="seed"):
        rp.run_dp_repeats(words, cfg, [], device="cpu")


def test_registry_repeats_match_run(words):
    config = {"num_layers": 1, "hidden": 8, "batch": 10, "max_steps": 5, "dataset": "toy", "seed": 99}
    for name in D.DP_METHODS:
        spec = methods.get("drw", name, "feature")
        for seed, got in zip(SEEDS, spec.run.repeats(words, config, seeds=SEEDS, device="cpu")):
            one = spec.run(words, config, seed=seed, device="cpu")
            assert got.metrics == one.metrics and got.ledger == one.ledger and got.history == one.history
    assert not hasattr(methods.get("drw", "mlp", "none").run, "repeats")
    with pytest.raises(ValueError, match="unknown option"):
        methods.get("drw", "drw", "feature").run.repeats(words, {"bogus": 1}, seeds=SEEDS, device="cpu")
