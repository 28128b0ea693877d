"""ProGAP, GAP and the Table 2 baselines: NAP sensitivity, caching, degree bounding, accounting, DP stages."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpgnn.data import csbm, random_node_split
from dpgnn.methods import gap
from dpgnn.methods import progap as pg
from dpgnn.methods import progap_baselines as bl
from dpgnn.nn.progap import MLP, StageModel, batchnorm_to_groupnorm
from dpgnn.privacy import epsilon as event_epsilon
from dpgnn.utils import make_generator

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=300, num_classes=3, num_features=24, avg_degree=8.0, homophily=0.9, seed=3)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=1)


def _random_undirected(n, m, seed):
    g = torch.Generator().manual_seed(seed)
    src, dst = torch.randint(0, n, (2, m), generator=g)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    ei = torch.unique(torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]), dim=1)
    return ei


# ---------------------------------------------------------------------------------------------------------------
# NAP sensitivity (empirical) and caching
# ---------------------------------------------------------------------------------------------------------------
def test_nap_edge_sensitivity_is_one():
    n = 60
    ei = _random_undirected(n, 300, 0)
    h = torch.randn(n, 8)
    base = pg.NAP(ei, n, 0.0, generator=torch.Generator())(h)
    worst = 0.0
    for e in range(0, ei.size(1), 7):  # remove one directed edge (one message) at a time
        keep = torch.ones(ei.size(1), dtype=torch.bool)
        keep[e] = False
        diff = (pg.NAP(ei[:, keep], n, 0.0, generator=torch.Generator())(h) - base).norm()
        worst = max(worst, float(diff))
    assert worst == pytest.approx(1.0, abs=1e-5)  # one unit-norm row enters exactly one aggregate


def test_nap_node_sensitivity_at_most_sqrt_d():
    n, d = 80, 5
    ei = pg.bound_degree(_random_undirected(n, 800, 1), n, d, seed=0)
    h = torch.randn(n, 8)
    base = pg.NAP(ei, n, 0.0, generator=torch.Generator())(h)
    worst = 0.0
    for v in range(n):  # remove node v with all its edges; compare the other nodes' aggregates
        keep = (ei[0] != v) & (ei[1] != v)
        out = pg.NAP(ei[:, keep], n, 0.0, generator=torch.Generator())(h)
        others = torch.arange(n) != v
        worst = max(worst, float((out[others] - base[others]).norm()))
    assert worst <= math.sqrt(d) + 1e-5
    assert worst >= math.sqrt(d) - 1e-5  # the bound is attained by a node with D out-edges


def test_nap_noise_has_requested_std():
    n = 400
    nap = pg.NAP(torch.empty(2, 0, dtype=torch.long), n, 3.0, generator=torch.Generator().manual_seed(0))
    out = nap(torch.randn(n, 50))
    assert float(out.std()) == pytest.approx(3.0, rel=0.03)
    assert nap.queries == 1


@pytest.mark.parametrize("level", ["none", "edge", "node"])
def test_graph_is_queried_exactly_k_times(graph, level, monkeypatch):
    calls = []
    orig = pg.NAP.__call__

    def counting(self, h):
        calls.append(h.shape)
        return orig(self, h)

    monkeypatch.setattr(pg.NAP, "__call__", counting)
    cfg = pg.ProGAPConfig(
        level=level, depth=3, epsilon=4.0 if level == "edge" else 16.0, epochs=4, batch_size=64, max_degree=10
    )
    res = pg.train_progap(graph, cfg, seed=0, device="cpu")
    assert len(calls) == 3 == res.queries == res.ledger.get("queries", 3)
    assert len(res.stage_val_acc) == 4
    assert len(res.history) == 4 * 4  # K+1 stages x epochs


def test_progressive_stage_inputs_are_cached_and_layerwise_freezes(graph):
    seen = []

    def on_stage(s, model, xs):
        seen.append((s, [x.data_ptr() for x in xs], [p.requires_grad for p in model.bases.parameters()]))

    pg.train_progap(
        graph,
        pg.ProGAPConfig(level="edge", depth=2, epsilon=2.0, epochs=3, layerwise=True),
        seed=1,
        device="cpu",
        on_stage=on_stage,
    )
    # stage s reuses the very same cached tensors X~(0..s-1) of earlier stages (no recomputation)
    assert seen[1][1][:1] == seen[0][1] and seen[2][1][:2] == seen[1][1]
    # layer-wise: only the newest base is trainable at the last stage
    n_last = sum(1 for _ in seen[2][2])
    assert not all(seen[2][2]) and any(seen[2][2]) and n_last > 0


def test_progap_beats_mlp_without_noise_and_seed_is_deterministic(graph):
    cfg = pg.ProGAPConfig(level="none", depth=2, epochs=60, lr=0.05)
    a = pg.train_progap(graph, cfg, seed=0, device="cpu")
    b = pg.train_progap(graph, cfg, seed=0, device="cpu")
    assert a.test_acc == b.test_acc
    mlp = bl.train_mlp(graph, level="none", epochs=60, lr=0.05, device="cpu")
    assert a.test_acc > mlp.test_acc + 0.05  # homophilous CSBM: aggregation helps
    assert a.stage_test_acc[-1] == a.test_acc


# ---------------------------------------------------------------------------------------------------------------
# degree bounding
# ---------------------------------------------------------------------------------------------------------------
def test_bound_degree_caps_in_and_out_degrees():
    n, d = 100, 4
    ei = _random_undirected(n, 1500, 2)
    out = pg.bound_degree(ei, n, d, seed=5)
    assert int(torch.bincount(out[1], minlength=n).max()) <= d
    assert int(torch.bincount(out[0], minlength=n).max()) <= d
    # kept edges are edges of the input graph
    orig = set(map(tuple, ei.t().tolist()))
    assert set(map(tuple, out.t().tolist())) <= orig
    # in-degree only (the authors' behaviour): every node keeps exactly min(in-degree, D) in-edges
    only_in = pg.bound_degree(ei, n, d, seed=5, cap_out_degree=False)
    assert torch.equal(torch.bincount(only_in[1], minlength=n), torch.bincount(ei[1], minlength=n).clamp(max=d))
    # a graph already within the bound is untouched
    small = pg.bound_degree(ei, n, 10_000, seed=0)
    assert torch.equal(small, ei)


def test_bound_degree_keeps_each_nodes_smallest_keys():
    # independent computation: the same generator's key per edge; each node keeps its D in-edges of smallest key
    n, d = 60, 5
    ei = _random_undirected(n, 900, 3)
    kept = pg.bound_degree(ei, n, d, seed=11, cap_out_degree=False)
    key = torch.rand(ei.size(1), generator=make_generator(11), dtype=torch.float64).tolist()
    expected = []
    for node in range(n):
        ids = (ei[1] == node).nonzero().view(-1).tolist()
        expected += sorted(ids, key=lambda i: key[i])[:d]
    assert torch.equal(kept, ei[:, sorted(expected)])


def test_bound_degree_ties_across_the_cap_follow_the_sort_of_the_keys(monkeypatch):
    # keys drawn equal across node 0's cap: which entry stays is the float sort's choice, as the sort of the doubles
    from dpgnn.methods.progap import graph

    ei = torch.stack([torch.arange(1, 9), torch.tensor([0, 0, 0, 0, 0, 1, 1, 1])])
    drawn = {"tie": [0.5, 0.1, 0.3, 0.3, 0.9, 0.2, 0.7, 0.4], "none": [0.5, 0.1, 0.3, 0.35, 0.9, 0.2, 0.7, 0.4]}
    sorted_dtypes = []
    argsort = torch.argsort
    monkeypatch.setattr(graph.torch, "argsort", lambda t: sorted_dtypes.append(t.dtype) or argsort(t))
    for case, values in drawn.items():
        key = torch.tensor(values, dtype=torch.float64)
        monkeypatch.setattr(graph.torch, "rand", lambda *a, drawn=key, **k: drawn.clone())
        sorted_dtypes.clear()
        kept = pg.bound_degree(ei, 9, 2, seed=0, cap_out_degree=False)
        per_node: dict[int, list[int]] = {}
        for i in argsort(ei[1].double() * 2.0 + key).tolist():
            per_node.setdefault(int(ei[1, i]), []).append(i)
        assert torch.equal(kept, ei[:, sorted(i for ids in per_node.values() for i in ids[:2])])
        assert (torch.float64 in sorted_dtypes) == (case == "tie")


def test_bound_degree_is_uniform_over_neighbours():
    ei = torch.stack([torch.arange(1, 11), torch.zeros(10, dtype=torch.long)])  # node 0 has 10 in-neighbours
    counts = np.zeros(11)
    for s in range(400):
        kept = pg.bound_degree(ei, 11, 3, seed=s, cap_out_degree=False)
        counts[kept[0].numpy()] += 1
    assert counts[1:].sum() == 1200
    assert counts[1:].min() > 80 and counts[1:].max() < 160  # ~120 each


# ---------------------------------------------------------------------------------------------------------------
# accounting and calibration
# ---------------------------------------------------------------------------------------------------------------
def test_theorem41_matches_spec_value():
    assert pg.theorem41_epsilon(6.617, 2, 1e-7) == pytest.approx(1.236, abs=1e-3)


@pytest.mark.parametrize("k,target", [(1, 0.5), (3, 1.0), (5, 4.0)])
def test_edge_calibration_conservative_and_tighter_than_paper(k, target):
    led = pg.privacy_ledger("edge", depth=k, delta=1e-7, target_epsilon=target)
    assert led["epsilon"] <= target and led["epsilon"] >= 0.999 * target
    event = pg.privacy_event("edge", led["noise_multiplier"], aggregations=k)
    # independent computations at the same sigma: autodp agrees, RDP and the paper's bound are looser (never lower)
    assert event_epsilon(event, 1e-7, "autodp") == pytest.approx(led["epsilon"], rel=1e-6)
    assert event_epsilon(event, 1e-7, "rdp") >= led["epsilon"] - 1e-9
    assert led["epsilon_paper_bound"] > led["epsilon"]


def test_node_calibration_spec_reference_z_and_theorem42():
    led = pg.privacy_ledger(
        "node", depth=2, delta=1e-5, target_epsilon=8.0, train_nodes=19_804, batch_size=256, epochs=5, max_degree=100
    )
    assert led["epsilon"] <= 8.0
    # docs/papers/progap.md#node-level-privacy reference z (K=2, E=5, eps=8)
    assert led["noise_multiplier"] == pytest.approx(0.982, abs=2e-3)
    assert led["sigma_nap"] == pytest.approx(10 * led["noise_multiplier"])
    z = led["noise_multiplier"]
    event = pg.privacy_event("node", z, aggregations=2, dpsgd_runs=3, train_nodes=19_804, batch_size=256, epochs=5)
    rdp = event_epsilon(event, 1e-5, "rdp")  # our own accountant, independent of autodp
    assert rdp == pytest.approx(led["epsilon"], rel=0.05)
    assert led["epsilon_paper_bound"] >= max(rdp, led["epsilon"]) - 1e-9


def test_theorem42_reduces_to_gaussian_composition_without_sampling():
    # q = 1: DP-SGD steps are plain Gaussians; the bound is the classic RDP conversion of (K + (K+1)T) Gaussians
    z, k, t, d = 2.0, 2, 3, 1e-5
    n = k + (k + 1) * t
    expected = min(n * a / (2 * z * z) + math.log(1 / d) / (a - 1) for a in range(2, 257))
    assert pg.theorem42_epsilon(z, k, 1.0, t, d) == pytest.approx(expected)


def test_default_delta_rule():
    assert pg.default_delta(2_117_924) == 1e-7  # facebook edges (docs/papers/progap.md#edge-level-privacy)
    assert pg.default_delta(19_804) == 1e-5  # facebook training nodes (docs/papers/progap.md#node-level-privacy)


# ---------------------------------------------------------------------------------------------------------------
# DP-Adam stages through opacus
# ---------------------------------------------------------------------------------------------------------------
def test_dp_stage_poisson_sample_rate(graph):
    torch.manual_seed(0)
    x, y = graph.x, graph.y
    masks = {"train": graph.train_mask, "val": graph.val_mask}
    n_train = int(graph.train_mask.sum())
    model = batchnorm_to_groupnorm(StageModel([MLP(x.size(1), 8, 2)], MLP(8, 8, 1, out_dim=3, plain_last=True)))
    assert not any(isinstance(m, torch.nn.BatchNorm1d) for m in model.modules())
    assert sum(isinstance(m, torch.nn.GroupNorm) and m.num_groups == 1 for m in model.modules()) == 2
    before = [p.detach().clone() for p in model.parameters()]
    b = 32
    _, hist = pg.train_stage(
        model, [x], y, masks, epochs=20, lr=0.01, dp=pg.DPSettings(1.0, b), generator=torch.Generator().manual_seed(0)
    )
    sizes = np.array(hist[-1]["sample_sizes"])
    q, steps = pg.stage_steps(n_train, b, 20)
    assert sizes.size == steps == 20 * (n_train // b)
    mean, sd = q * n_train, math.sqrt(n_train * q * (1 - q) / sizes.size)
    assert abs(sizes.mean() - mean) < 4 * sd
    assert sizes.std() > 0  # Poisson, not fixed-size batches
    assert any(not torch.equal(a, p) for a, p in zip(before, model.parameters()))


def test_dp_stage_refuses_batchnorm(graph):
    model = StageModel([MLP(graph.x.size(1), 8, 1)], MLP(8, 8, 1, out_dim=3, plain_last=True))
    with pytest.raises(ValueError, match="BatchNorm"):
        pg.train_stage(
            model,
            [graph.x],
            graph.y,
            {"train": graph.train_mask, "val": graph.val_mask},
            epochs=1,
            lr=0.01,
            dp=pg.DPSettings(1.0, 16),
            generator=torch.Generator(),
        )


def test_node_level_run_ledger(graph):
    res = pg.train_progap(
        graph,
        pg.ProGAPConfig(level="node", depth=1, epsilon=8.0, epochs=2, batch_size=32, max_degree=6),
        seed=0,
        device="cpu",
    )
    led = res.ledger
    assert led["epsilon"] <= 8.0 and led["noise_multiplier"] > 0
    assert led["sigma_nap"] == pytest.approx(led["noise_multiplier"] * math.sqrt(6))
    assert led["dpsgd_runs"] == 2 and led["accountant"] == "autodp"
    assert 0.0 <= res.test_acc <= 1.0


def test_calibration_fidelities_table():
    from dpgnn.series import progap as series

    t = series.calibration_fidelities()
    assert list(t["K"]) == [1, 2, 3]
    assert list(t["sigma_paper (exact)"]) == pytest.approx([4.679, 6.617, 8.104], abs=1e-3)
    assert list(t["sigma_authors_code (autodp RDP)"]) == pytest.approx([4.977, 7.038, 8.620], abs=1e-3)
    assert (t["eps_paper"] <= 1.0).all() and (t["eps_authors_code"] <= 1.0).all()


def test_edge_level_authors_code_fidelity_in_the_ledger(graph):
    kw = dict(level="edge", depth=2, epsilon=1.0, epochs=2, delta=1e-7)
    ours = pg.train_progap(graph, pg.ProGAPConfig(**kw), seed=0, device="cpu").ledger
    auth = pg.train_progap(graph, pg.ProGAPConfig(**kw, fidelity="authors_code"), seed=0, device="cpu").ledger
    assert (ours["fidelity"], ours["accountant"]) == ("paper", "exact_gaussian")
    assert (auth["fidelity"], auth["accountant"]) == ("authors_code", "autodp_composition")
    assert ours["sigma_nap"] == pytest.approx(6.617, abs=1e-3) and auth["sigma_nap"] == pytest.approx(7.038, abs=1e-3)
    assert auth["epsilon"] <= 1.0


# ---------------------------------------------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------------------------------------------
def test_gap_levels_and_accounting(graph):
    edge = gap.train_gap(graph, gap.GAPConfig(level="edge", hops=2, epsilon=1.0, epochs=5), device="cpu")
    assert edge.queries == 2 and edge.ledger["epsilon"] <= 1.0
    # GAP's edge-level cost equals ProGAP's with K = H (same H Gaussians)
    assert edge.ledger["noise_multiplier"] == pytest.approx(
        pg.privacy_ledger("edge", depth=2, delta=edge.ledger["delta"], target_epsilon=1.0)["noise_multiplier"]
    )
    node = gap.train_gap(
        graph, gap.GAPConfig(level="node", hops=1, epsilon=8.0, epochs=2, batch_size=32, max_degree=6), device="cpu"
    )
    assert node.ledger["dpsgd_runs"] == 2 and node.ledger["epsilon"] <= 8.0


def test_mlp_costs_nothing_at_edge_level_and_dp_mlp_is_accounted(graph):
    mlp = bl.train_mlp(graph, level="edge", epochs=3, device="cpu")
    assert mlp.ledger["epsilon"] == 0.0
    dp = bl.train_mlp(graph, level="node", epsilon=4.0, epochs=2, batch_size=32, device="cpu")
    assert 0 < dp.ledger["epsilon"] <= 4.0 and dp.ledger["dpsgd_runs"] == 1


def test_edgerand_flip_rates():
    n = 400
    ei = _random_undirected(n, 4000, 4)
    m_pairs = ei.size(1) // 2
    eps = 2.0
    out = bl.edgerand_perturb(ei, n, eps, seed=0)
    assert out.size(1) % 2 == 0 and not bool((out[0] == out[1]).any())
    # with an accurate density estimate the expected number of kept + added pairs stays near the true count
    p = 1 / (1 + math.exp(-0.9 * eps))
    dens = ei.size(1) / n**2
    q = min(1.0, dens / (2 * p * dens - p - dens + 1))
    expected = m_pairs * p * q + (n * (n - 1) / 2 - m_pairs) * (1 - p) * q
    assert out.size(1) // 2 == pytest.approx(expected, rel=0.25)
    small = random_node_split(csbm(num_nodes=120, seed=1), 0.75, 0.1, 0.15, seed=0)
    sage = bl.train_edgerand(small, 1.0, epochs=3, device="cpu")
    assert sage.ledger["level"] == "edge" and sage.ledger["epsilon"] == 1.0


# ---------------------------------------------------------------------------------------------------------------
# bad inputs
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"depth": -1}, "depth"),
        ({"level": "graph"}, "level"),
        ({"epsilon": math.inf}, "epsilon"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"lr": 0}, "lr"),
        ({"batch_size": 0}, "batch_size"),
        ({"max_degree": 0}, "max_degree"),
        ({"delta": 1.5}, "delta"),
        ({"epochs": 0}, "epochs"),
        ({"fidelity": "official"}, "fidelity"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pg.ProGAPConfig(**kwargs)


def test_bad_privacy_inputs():
    with pytest.raises(ValueError, match="delta"):
        pg.privacy_ledger("edge", depth=2, target_epsilon=1.0)
    with pytest.raises(ValueError, match="exactly one"):
        pg.privacy_ledger("edge", depth=2, delta=1e-5)
    with pytest.raises(ValueError, match="max_degree"):
        pg.privacy_ledger("node", depth=2, delta=1e-5, noise=1.0)
    with pytest.raises(ValueError, match="sigma"):
        pg.theorem41_epsilon(0.0, 2, 1e-5)
    with pytest.raises(ValueError, match="max_degree"):
        pg.bound_degree(torch.zeros(2, 1, dtype=torch.long), 3, 0)
    with pytest.raises(ValueError, match="num_nodes"):
        pg.bound_degree(torch.tensor([[0], [5]]), 3, 2)


# ---------------------------------------------------------------------------------------------------------------
# series: hyper-parameter selection by mean validation accuracy
# (docs/papers/progap.md#hyper-parameter-search-and-reporting)
# ---------------------------------------------------------------------------------------------------------------
def test_select_best_uses_mean_validation_accuracy():
    import pandas as pd

    from dpgnn.series.progap import select_best

    rows = []
    # config lr=0.01: val 70, 70 / test 50, 52; config lr=0.05: val 90, 40 (mean 65) / test 99, 99
    for lr, vals, tests in ((0.01, (70, 70), (50, 52)), (0.05, (90, 40), (99, 99))):
        for run, (v, t) in enumerate(zip(vals, tests)):
            base = {
                "dataset": "d",
                "method": "progap",
                "level": "edge",
                "setting": "edge eps=1",
                "depth": 2,
                "base_layers": 1,
                "lr": lr,
                "epochs": 10,
                "run": run,
                "config_hash": f"{lr}{run}",
            }
            rows += [{**base, "metric": "val_acc", "value": v}, {**base, "metric": "accuracy", "value": t}]
    sel = select_best(pd.DataFrame(rows))
    assert sorted(sel["value"]) == [50, 52] and set(sel["lr"]) == {0.01}
    assert sel["config_hash"].nunique() == 2


def test_table2_fig2_fig4_share_runs_and_coverage_counts_them(tmp_path, monkeypatch):
    from dpgnn.profiles import settings
    from dpgnn.results import ResultStore
    from dpgnn.series import progap as series

    trained = []

    def fake_run_cell(data, cell, *, device="auto"):
        trained.append((cell["method"], cell["level"], cell["epsilon"], cell["depth"]))
        acc = 50.0 + cell["depth"] + (cell["method"] == "progap")
        return [
            {"metric": "val_acc", "value": acc, "setting": series.setting(cell["level"], cell["epsilon"])},
            {"metric": "accuracy", "value": acc, "setting": series.setting(cell["level"], cell["epsilon"])},
        ]

    monkeypatch.setattr(series.cells, "available", lambda cfg, store, artifact, cache=None: ["toy"])
    monkeypatch.setattr(series.cells, "run_cell", fake_run_cell)
    monkeypatch.setattr(series.cells, "_load", lambda cfg, name: None)  # the per-process dataset cache
    cfg = settings("progap", "test", datasets=[], standins={"toy": 1}, node_settings={"toy": [8, 2]})
    store = ResultStore("progap", "test", root=tmp_path)
    series.run_table2(cfg, store, device="cpu")
    n_table2 = len(trained)
    assert n_table2 == 14  # 3 + 4 + 4 methods, plus layer-wise at each level, one config and run each
    series.run_fig2(cfg, store, device="cpu")
    assert len(trained) == n_table2  # ProGAP/GAP at edge eps=1, node eps=8 and non-private: all copied
    assert set(store.load("fig2_runs")["artifact"]) == {"fig2_runs"}
    series.run_fig4(cfg, store, device="cpu")
    assert trained[n_table2:] == [("progap", "edge", 1.0, 2), ("progap", "node", 8.0, 2)]  # K=1 copied
    cov = series.coverage(cfg, store, "fig4_runs")
    assert cov["runs_stored"].tolist() == cov["runs_in_grid"].tolist() == [2, 2]
    wider = settings(
        "progap", "test", datasets=[], standins={"toy": 1}, node_settings={"toy": [8, 2]}, lrs=[0.01, 0.05], runs=2
    )
    cov = series.coverage(wider, store, "table2_runs").set_index(["method", "level"])
    assert cov.loc[
        ("progap", "edge"), ["configs_stored", "configs_in_grid", "runs_stored", "runs_in_grid"]
    ].tolist() == [1, 2, 1, 4]
    with pytest.raises(ValueError, match="artifact"):
        series.coverage(cfg, store, "fig3")
