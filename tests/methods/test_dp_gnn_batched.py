"""DP-GNN's and DP-MLP's repeats trained together (dpgnn.methods.dp_gnn_repeats, dpgnn.methods.repeats) against their
one-at-a-time runs: every seed's accuracies, history, ledger and trained weights equal its own sequential run up to
float rounding, on both first-layer paths (dense features; sparse ones, real-valued or binary), and the comparison
tells a seed's run from another seed's; the ProGAP series trains a configuration's runs in one call."""

from __future__ import annotations

import pytest
import torch

from dpgnn import methods
from dpgnn.data import csbm, random_node_split
from dpgnn.methods import dp_gnn as D
from dpgnn.methods import dp_gnn_repeats as DR
from dpgnn.methods import repeats as rp
from dpgnn.methods.progap_baselines import train_mlp

torch.set_num_threads(1)

SEEDS = [0, 1, 2]
ACC_TOL = 1e-6  # accuracies are fractions of the same rows: equal, not merely close
WEIGHT_TOL = 1e-5


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=300, num_classes=3, num_features=24, avg_degree=8.0, homophily=0.9, seed=3)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=1)


@pytest.fixture(scope="module")
def binary_graph(graph):
    """The same graph with 0/1 features, about a tenth of them ones (one-hot-like attributes)."""
    data = graph.clone()
    data.x = (graph.x > 1.3).float()
    return data


def _differences(seq, bat) -> list[str]:
    """What differs between a sequential run and a batched one beyond float rounding (empty: they agree)."""
    diffs = [k for k in ("train_acc", "val_acc", "test_acc") if abs(getattr(seq, k) - getattr(bat, k)) > ACC_TOL]
    if len(seq.history) != len(bat.history) or any(
        (a["stage"], a["epoch"], a.get("sample_sizes")) != (b["stage"], b["epoch"], b.get("sample_sizes"))
        or abs(a["train_acc"] - b["train_acc"]) > ACC_TOL
        or abs(a["val_acc"] - b["val_acc"]) > ACC_TOL
        for a, b in zip(seq.history, bat.history)
    ):
        diffs.append("history")
    if seq.ledger != bat.ledger:
        diffs.append("ledger")
    a, b = dict(seq.model.named_parameters()), dict(bat.model.named_parameters())
    if list(a) != list(b) or any(not torch.allclose(a[k], b[k], atol=WEIGHT_TOL, rtol=0) for k in a):
        diffs.append("weights")
    return diffs


@pytest.mark.parametrize("gram", [True, False], ids=["gram", "no-gram"])
@pytest.mark.parametrize("path", ["dense", "sparse", "sparse-binary"])
def test_dp_gnn_repeats_equal_each_seeds_sequential_run(graph, binary_graph, path, gram, monkeypatch):
    data = binary_graph if path == "sparse-binary" else graph
    monkeypatch.setattr(DR, "SPARSE_FEATURES", 0.0 if path == "dense" else 1.0)
    monkeypatch.setattr(DR, "GRAM_ROWS", DR.GRAM_ROWS if gram else 0)
    assert (DR._Features(data.x).sparse is None) == (path == "dense")
    table = torch.randint(0, data.num_nodes + 1, (len(SEEDS), data.num_nodes, 6))
    assert DR._Features(data.x).use_gram(table) == gram
    cfg = D.DPGNNConfig(epsilon=16.0, epochs=3, batch_size=64, max_degree=6, hidden=8)
    seq = [D.train_dp_gnn(data, cfg, seed=s, device="cpu") for s in SEEDS]
    bat = DR.train_dp_gnn_repeats(data, cfg, SEEDS, device="cpu")
    assert [_differences(a, b) for a, b in zip(seq, bat)] == [[], [], []]
    # the comparison tells one seed's run from another's
    assert all(_differences(a, bat[(i + 1) % len(SEEDS)]) for i, a in enumerate(seq))


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
def test_the_gram_norms_and_sums_equal_the_materialised_per_root_gradients(binary_graph, sparse, monkeypatch):
    """Each root's first-layer gradient ``Σ_j δ_j x_j^T``, built one root at a time: its squared norm and the
    clipped-factor sum equal what the Gram path returns, padding rows and repeated neighbours included."""
    monkeypatch.setattr(DR, "SPARSE_FEATURES", 1.0 if sparse else 0.0)
    x = binary_graph.x
    n, r, b, d, o = x.size(0), 2, 16, 5, 3
    gen = torch.Generator().manual_seed(0)
    table = torch.randint(0, n + 1, (r, n, d), generator=gen)  # padding index n, repeats allowed
    feats = DR._Features(x)
    assert feats.use_gram(table)
    roots = torch.stack([torch.randperm(n, generator=gen)[:b] for _ in range(r)])
    idx = torch.cat([roots.unsqueeze(-1), table[torch.arange(r).view(r, 1), roots]], dim=-1)
    delta = torch.randn(r, b, d + 1, o, generator=gen, dtype=torch.float64).float()
    c = torch.rand(r, b, generator=gen)
    sq, weighted_sum = feats.root_gradients(delta, idx)
    rows = torch.cat([x, x.new_zeros(1, x.size(1))])
    per_root = torch.stack([torch.stack([delta[s, i].t() @ rows[idx[s, i]] for i in range(b)]) for s in range(r)])
    assert torch.allclose(sq, per_root.pow(2).sum((-2, -1)), rtol=1e-5)
    assert torch.allclose(weighted_sum(c), (c.view(r, b, 1, 1) * per_root).sum(1), atol=1e-5)
    assert not DR._Features(x).use_gram(torch.zeros(r, n, DR.GRAM_ROWS, dtype=torch.long))  # too many rows


def test_dp_gnn_repeats_draw_each_seeds_own_stream(graph, monkeypatch):
    """A batched run whose seeds share one noise stream fails the comparison for every seed but the first."""
    cfg = D.DPGNNConfig(epsilon=16.0, epochs=2, batch_size=64, max_degree=6, hidden=8)
    seq = [D.train_dp_gnn(graph, cfg, seed=s, device="cpu") for s in SEEDS]
    monkeypatch.setattr(DR, "noise_generator", lambda seed, dev: D.noise_generator(SEEDS[0], dev))
    bat = DR.train_dp_gnn_repeats(graph, cfg, SEEDS, device="cpu")
    assert [bool(_differences(a, b)) for a, b in zip(seq, bat)] == [False, True, True]


def test_dp_mlp_repeats_equal_each_seeds_sequential_run(graph):
    kw = {"level": "node", "epsilon": 16.0, "epochs": 3, "batch_size": 64}
    seq = [train_mlp(graph, seed=s, device="cpu", **kw) for s in SEEDS]
    bat = rp.train_mlp_repeats(graph, SEEDS, device="cpu", **kw)
    assert [_differences(a, b) for a, b in zip(seq, bat)] == [[], [], []]
    assert [b.history[-1]["sample_sizes"] for b in bat] == [a.history[-1]["sample_sizes"] for a in seq]
    assert all(_differences(a, bat[(i + 1) % len(SEEDS)]) for i, a in enumerate(seq))


@pytest.mark.parametrize(
    ("method", "config"),
    [
        ("dp-gnn", {"epsilon": 16.0, "depth": 1, "epochs": 2, "batch_size": 64, "max_degree": 6, "hidden": 8}),
        ("dp-mlp", {"epsilon": 16.0, "depth": 0, "epochs": 2, "batch_size": 64, "max_degree": 6}),
    ],
)
def test_registry_repeats_match_run(graph, method, config):
    spec = methods.get("progap", method, "node")
    got = spec.run.repeats(graph, config, seeds=[3, 4], device="cpu")
    for s, r in zip([3, 4], got):
        one = spec.run(graph, config, seed=s, device="cpu")
        assert r.metrics == pytest.approx(one.metrics, abs=ACC_TOL) and r.ledger == one.ledger
    assert not hasattr(methods.get("progap", "mlp", "edge").run, "repeats")  # non-private MLP: one at a time


@pytest.mark.parametrize("method", ["dp-gnn", "dp-mlp"])
def test_series_trains_a_configurations_runs_in_one_call(graph, method, monkeypatch):
    from dpgnn.profiles import settings
    from dpgnn.series import progap as series

    cfg = settings("progap", "test", datasets=[], standins={"toy": 1}, node_settings={"toy": [64, 6]}, runs=3)
    monkeypatch.setattr(series.cells, "_load", lambda cfg, name: graph)
    cells = series.cells._method_cells(cfg, "toy", method, "node", 16.0)
    assert [c["run"] for c in cells] == [0, 1, 2]
    spec = methods.get("progap", method, "node")
    calls = []
    batched = spec.run.repeats

    def counting(*args, seeds, **kw):
        calls.append(list(seeds))
        return batched(*args, seeds=seeds, **kw)

    monkeypatch.setattr(spec.run, "repeats", counting)
    runner = series.repeats_runner(cfg, cells, device="cpu")
    got = [runner(c) for c in cells]
    assert calls == [[series.cells._seed(c) for c in cells]]
    for c, rows in zip(cells, got):
        one = series.run_cell(graph, c, device="cpu")
        assert [r["metric"] for r in rows] == [r["metric"] for r in one]
        assert [r["value"] for r in rows] == pytest.approx([r["value"] for r in one], abs=100 * ACC_TOL)
        assert [r["ledger"] for r in rows] == [r["ledger"] for r in one]


@pytest.mark.parametrize("data_name", ["graph", "binary_graph"])
def test_the_registered_run_is_a_batch_of_one_equal_to_the_sequential_run(data_name, request):
    """``dpgnn.fit`` and the bench train DP-GNN through the registered run, a batch of one seed."""
    data = request.getfixturevalue(data_name)
    cfg = D.DPGNNConfig(epsilon=16.0, epochs=3, batch_size=64, max_degree=6, hidden=8)
    config = {k: getattr(cfg, k) for k in ("epsilon", "epochs", "batch_size", "max_degree", "hidden")}
    for s in SEEDS:
        seq = D.train_dp_gnn(data, cfg, seed=s, device="cpu")
        run = D.run_dp_gnn(data, {**config, "depth": 1}, seed=s, device="cpu")
        assert run.metrics == pytest.approx({"train": seq.train_acc, "val": seq.val_acc, "test": seq.test_acc})
        assert run.ledger == seq.ledger
        a, b = dict(seq.model.named_parameters()), dict(run.extra["model"].named_parameters())
        assert all(torch.allclose(a[k], b[k], atol=WEIGHT_TOL, rtol=0) for k in a)
