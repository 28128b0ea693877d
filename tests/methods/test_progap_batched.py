"""ProGAP's and GAP's repeats trained together (dpgnn.methods.repeats) against their one-at-a-time runs: every
seed's accuracies, histories (Poisson batch sizes included), ledger and model outputs equal its own sequential run
up to float rounding, and the comparison tells a seed's run from another seed's."""

from __future__ import annotations

import pytest
import torch

from dpgnn import methods
from dpgnn.data import csbm, random_node_split
from dpgnn.methods import gap
from dpgnn.methods import progap as pg
from dpgnn.methods import repeats as rp
from dpgnn.utils import make_generator, stable_seed

torch.set_num_threads(1)

SEEDS = [0, 1, 2]
ACC_TOL = 1e-6  # accuracies are fractions of the same rows: equal, not merely close
LOGIT_TOL = 1e-4


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=300, num_classes=3, num_features=24, avg_degree=8.0, homophily=0.9, seed=3)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=1)


def _cfg(level: str, **kw) -> pg.ProGAPConfig:
    """Node level: 4 epochs per stage (the DP noise dwarfs float rounding, so every epoch's accuracies and the
    best-epoch choice agree). Edge level: 1 epoch per stage, since without DP noise a one-row tie in validation
    accuracy can flip the best epoch on float rounding alone (a sequential run with its features scaled by
    1 + 1e-7 flips as often), which would compare two different epochs' models."""
    return pg.ProGAPConfig(
        level=level,
        depth=2,
        epsilon=4.0 if level == "edge" else 16.0,
        epochs=1 if level == "edge" else 4,
        batch_size=64,
        max_degree=10,
        **kw,
    )


def _sequential(graph, cfg, seeds):
    """Each seed's own run and the cached inputs of its last stage (what its models are scored on)."""
    out = []
    for s in seeds:
        seen = {}
        res = pg.train_progap(
            graph, cfg, seed=s, device="cpu", on_stage=lambda st, m, xs, seen=seen: seen.update(xs=list(xs))
        )
        out.append((res, seen["xs"]))
    return out


def _history_differs(a: list[dict], b: list[dict]) -> bool:
    if len(a) != len(b):
        return True
    for x, y in zip(a, b):
        if (x["stage"], x["epoch"], x.get("sample_sizes")) != (y["stage"], y["epoch"], y.get("sample_sizes")):
            return True
        if abs(x["train_acc"] - y["train_acc"]) > ACC_TOL or abs(x["val_acc"] - y["val_acc"]) > ACC_TOL:
            return True
    return False


def _differences(seq: pg.ProGAPResult, xs: list[torch.Tensor], bat: pg.ProGAPResult) -> list[str]:
    """What differs between a sequential ProGAP run and a batched one beyond float rounding (empty: they agree)."""
    diffs = [k for k in ("train_acc", "val_acc", "test_acc") if abs(getattr(seq, k) - getattr(bat, k)) > ACC_TOL]
    for k in ("stage_val_acc", "stage_test_acc"):
        if len(getattr(seq, k)) != len(getattr(bat, k)) or any(
            abs(u - v) > ACC_TOL for u, v in zip(getattr(seq, k), getattr(bat, k))
        ):
            diffs.append(k)
    if _history_differs(seq.history, bat.history):
        diffs.append("history")
    if seq.ledger != bat.ledger or seq.queries != bat.queries:
        diffs.append("ledger")
    if not torch.allclose(
        pg.predict(seq.model["stages"], *xs), pg.predict(bat.model["stages"], *xs), atol=LOGIT_TOL, rtol=0
    ):
        diffs.append("logits")
    for s, (ea, eb) in enumerate(zip(seq.model["encoders"], bat.model["encoders"])):
        if not torch.allclose(pg.predict(ea, xs[s]), pg.predict(eb, xs[s]), atol=LOGIT_TOL, rtol=0):
            diffs.append(f"encoder {s}")
    return diffs


@pytest.mark.parametrize("level", ["edge", "node"])
def test_progap_repeats_equal_each_seeds_sequential_run(graph, level):
    cfg = _cfg(level)
    seq = _sequential(graph, cfg, SEEDS)
    bat = rp.train_progap_repeats(graph, cfg, SEEDS, device="cpu")
    assert len(bat) == len(SEEDS)
    for (a, xs), b in zip(seq, bat):
        assert _differences(a, xs, b) == []
        assert b.queries == cfg.depth and len(b.stage_test_acc) == cfg.depth + 1
    if level == "node":  # each seed's Poisson stream, step by step
        assert [b.history[-1]["sample_sizes"] for b in bat] == [a.history[-1]["sample_sizes"] for a, _ in seq]
    # the comparison tells one seed's run from another's: a batched run matched with a shifted seed differs
    for i, (a, xs) in enumerate(seq):
        assert _differences(a, xs, bat[(i + 1) % len(SEEDS)]) != []


@pytest.mark.parametrize("level", ["edge", "node"])
@pytest.mark.parametrize("mutation", ["shared", "shifted"])
def test_shared_or_shifted_noise_streams_are_caught(graph, level, mutation, monkeypatch):
    """A batched run whose seeds share one noise stream (or take the next seed's) fails the comparison."""
    streams = {stable_seed("progap-noise", s): i for i, s in enumerate(SEEDS)}

    def wrong_stream(seed, device="cpu"):
        i = streams[seed]
        j = 0 if mutation == "shared" else (i + 1) % len(SEEDS)
        return make_generator(stable_seed("progap-noise", SEEDS[j]), device)

    cfg = _cfg(level)
    seq = _sequential(graph, cfg, SEEDS)
    monkeypatch.setattr(rp, "make_generator", wrong_stream)
    bat = rp.train_progap_repeats(graph, cfg, SEEDS, device="cpu")
    caught = [_differences(a, xs, b) != [] for (a, xs), b in zip(seq, bat)]
    assert caught == ([False, True, True] if mutation == "shared" else [True, True, True])


def test_layerwise_repeats_freeze_earlier_bases_as_the_sequential_runs(graph):
    cfg = _cfg("edge", layerwise=True)
    seq = _sequential(graph, cfg, SEEDS)
    bat = rp.train_progap_repeats(graph, cfg, SEEDS, device="cpu")
    for (a, xs), b in zip(seq, bat):
        assert _differences(a, xs, b) == []
        assert [p.requires_grad for p in b.model["stages"].parameters()] == [
            p.requires_grad for p in a.model["stages"].parameters()
        ]


def test_gap_repeats_equal_each_seeds_sequential_run_at_node_level(graph):
    cfg = gap.GAPConfig(level="node", hops=2, epsilon=16.0, epochs=3, batch_size=64, max_degree=10)
    seq = [gap.train_gap(graph, cfg, seed=s, device="cpu") for s in SEEDS]
    bat = rp.train_gap_repeats(graph, cfg, SEEDS, device="cpu")
    xs = [
        torch.nn.functional.normalize(
            torch.randn(graph.num_nodes, 16, generator=torch.Generator().manual_seed(i)), dim=-1
        )
        for i in range(3)
    ]
    for a, b in zip(seq, bat):
        assert (b.train_acc, b.val_acc, b.test_acc) == pytest.approx((a.train_acc, a.val_acc, a.test_acc), abs=ACC_TOL)
        assert not _history_differs(a.history, b.history)  # both DP-SGD runs' Poisson batch sizes included
        assert b.ledger == a.ledger and b.queries == a.queries == 2
        for part, inputs in (("encoder", [graph.x]), ("classifier", xs)):
            assert torch.allclose(
                pg.predict(a.model[part], *inputs), pg.predict(b.model[part], *inputs), atol=LOGIT_TOL, rtol=0
            )


def test_gap_repeats_at_edge_level(graph):
    """Without DP noise GAP is sensitive to float rounding (a pre-BatchNorm bias whose gradient is rounding noise
    takes Adam steps of ±lr): the ledger and the per-seed NAP streams (:func:`test_stacked_nap_draws_each_seeds_noise`)
    are compared exactly; the encoder within ten times what rounding alone moves a sequential run (the same seed on
    features scaled by 1 + 1e-7; at least ``LOGIT_TOL``), how far apart that leaves them depending on the CPU's
    kernels; the accuracies within a few rows. Another seed's run lies far outside that bound."""
    cfg = gap.GAPConfig(level="edge", hops=2, epsilon=4.0, epochs=3)
    seq = [gap.train_gap(graph, cfg, seed=s, device="cpu") for s in SEEDS]
    bat = rp.train_gap_repeats(graph, cfg, SEEDS, device="cpu")
    scaled = graph.clone()
    scaled.x = graph.x * (1 + 1e-7)
    rounded = [gap.train_gap(scaled, cfg, seed=s, device="cpu") for s in SEEDS]

    def encoder_gap(a, b) -> float:
        return float((pg.predict(a.model["encoder"], graph.x) - pg.predict(b.model["encoder"], graph.x)).abs().max())

    for i, (a, b, c) in enumerate(zip(seq, bat, rounded)):
        bound = max(LOGIT_TOL, 10 * encoder_gap(a, c))
        assert encoder_gap(a, b) <= bound
        assert encoder_gap(a, bat[(i + 1) % len(SEEDS)]) > bound
        assert b.ledger == a.ledger and b.queries == a.queries == 2
        assert b.test_acc == pytest.approx(a.test_acc, abs=0.1)


@pytest.mark.parametrize("per_seed_graph", [False, True])
def test_stacked_nap_draws_each_seeds_noise(graph, per_seed_graph):
    from dpgnn.methods.batched import StackedNAP

    n, d = graph.num_nodes, 16
    graphs = [pg.bound_degree(graph.edge_index, n, 5, s) if per_seed_graph else graph.edge_index for s in SEEDS]
    seq = [pg.NAP(ei, n, 0.7, generator=torch.Generator().manual_seed(10 + s)) for s, ei in zip(SEEDS, graphs)]
    gens = [torch.Generator().manual_seed(10 + s) for s in SEEDS]
    if per_seed_graph:  # node level: each seed's own degree-bounded graph
        stacked = StackedNAP([pg.NAP(ei, n, 0.7, generator=g) for ei, g in zip(graphs, gens)])
    else:  # one adjacency for every seed
        stacked = rp.stacked_nap(graph.edge_index, n, 0.7, gens, torch.device("cpu"), None, 1)
        assert stacked.shared
    h = torch.randn(len(SEEDS), n, d, generator=torch.Generator().manual_seed(0))
    for _ in range(2):  # two queries: each seed's stream goes on where it stopped
        out = stacked(h)
        for r, nap in enumerate(seq):
            assert torch.allclose(out[r], nap(h[r]), atol=1e-5, rtol=0)
        h = out
    assert stacked.queries == 2 and all(nap.queries == 2 for nap in stacked.naps)


def test_registry_repeats_match_run_and_dropout_trains_one_seed_at_a_time(graph):
    spec = methods.get("progap", "progap", "node")
    config = {"epsilon": 16.0, "depth": 1, "epochs": 2, "batch_size": 64, "max_degree": 10}
    got = spec.run.repeats(graph, config, seeds=[3, 4], device="cpu")
    for s, r in zip([3, 4], got):
        one = spec.run(graph, config, seed=s, device="cpu")
        assert r.metrics == pytest.approx(one.metrics, abs=ACC_TOL) and r.ledger == one.ledger
    # dropout draws its masks from the global stream: the registry trains such seeds one after the other
    edge = methods.get("progap", "progap", "edge")
    config = {"epsilon": 4.0, "depth": 1, "epochs": 2, "dropout": 0.3}
    assert [r.metrics for r in edge.run.repeats(graph, config, seeds=[0, 1], device="cpu")] == [
        edge.run(graph, config, seed=s, device="cpu").metrics for s in (0, 1)
    ]
    with pytest.raises(ValueError, match="dropout"):
        rp.train_progap_repeats(graph, pg.ProGAPConfig(level="edge", epsilon=4.0, dropout=0.3), [0], device="cpu")
    assert hasattr(methods.get("progap", "gap", "edge").run, "repeats")
    assert hasattr(methods.get("progap", "progap-layerwise", "none").run, "repeats")


def test_series_trains_a_configurations_runs_in_one_call(graph, monkeypatch):
    from dpgnn.profiles import settings
    from dpgnn.series import progap as series

    cfg = settings("progap", "test", datasets=[], standins={"toy": 1}, node_settings={"toy": [64, 10]}, runs=3)
    monkeypatch.setattr(series.cells, "_load", lambda cfg, name: graph)
    cells = series.cells._method_cells(cfg, "toy", "progap", "node", 16.0)
    assert [c["run"] for c in cells] == [0, 1, 2]
    spec = methods.get("progap", "progap", "node")
    calls = []
    batched = spec.run.repeats

    def counting(*args, seeds, **kw):
        calls.append(list(seeds))
        return batched(*args, seeds=seeds, **kw)

    monkeypatch.setattr(spec.run, "repeats", counting)
    runner = series.repeats_runner(cfg, cells[1:], device="cpu")  # run 0 already stored
    got = [runner(c) for c in cells[1:]]
    assert calls == [[series.cells._seed(c) for c in cells[1:]]]
    for c, rows in zip(cells[1:], got):
        one = series.run_cell(graph, c, device="cpu")
        assert [r["metric"] for r in rows] == [r["metric"] for r in one]
        assert [r["value"] for r in rows] == pytest.approx([r["value"] for r in one], abs=100 * ACC_TOL)
        assert [r["ledger"] for r in rows] == [r["ledger"] for r in one]
