"""Canary audits of central DP training through the methods' entry points (ProGAP node level, DP-GNN, DRW, FDP)."""

import math

import pytest
import torch

from dpgnn.audit.central import CENTRAL_METHODS, UNIT_OF, audit_central, canary_graph
from dpgnn.data.synthetic import csbm
from dpgnn.series.audit import CENTRAL_KW, drw_noise_multiplier


@pytest.fixture(scope="module")
def small():
    return csbm(num_nodes=80, num_features=8, seed=0)


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=300, num_features=16, seed=1)


def _kw(method, epochs):
    kw = dict(CENTRAL_KW[method])
    if method in ("drw", "fdp"):
        kw["steps_nondp"] = 10 * epochs
        kw["noise_multiplier"] = drw_noise_multiplier(1.0)
    else:
        kw["epochs"] = epochs
    return kw


def test_canary_graph_follows_the_neighbouring_relation(small):
    x0, e0 = small.x.clone(), small.edge_index.clone()
    cg = canary_graph(small, 40, seed=0, degree=3)
    n, m = small.num_nodes, 40
    inc = cg.included
    assert 5 < int(inc.sum()) < 35 and cg.edges.shape == (2, 3 * m)
    assert int(cg.edges[1].max()) < n and cg.x.std() == pytest.approx(4.0, rel=0.2)
    # node level: only the included canaries, each with its 3 edges in both directions, all of them training nodes
    node = cg.node_level()
    k = int(inc.sum())
    assert node.num_nodes == n + k and node.edge_index.size(1) == e0.size(1) + 2 * 3 * k
    assert torch.equal(node.x[n:], cg.x[inc]) and torch.equal(node.y[n:], cg.y[inc])
    assert node.train_mask[n:].all() and not node.val_mask[n:].any() and not node.test_mask[n:].any()
    assert torch.equal(node.train_mask[:n], small.train_mask) and torch.equal(node.edge_index[:, : e0.size(1)], e0)
    # feature level: every canary, its edges and label; the excluded ones carry the all-zero row
    feat = cg.feature_level()
    assert feat.num_nodes == n + m and feat.edge_index.size(1) == e0.size(1) + 2 * 3 * m
    assert torch.equal(feat.x[n:][inc], cg.x[inc]) and (feat.x[n:][~inc] == 0).all()
    assert feat.train_mask[n:].all() and torch.equal(feat.y[n:], cg.y)
    # scoring: every canary with its features, independent of the inclusion bits
    g, ids = cg.scoring()
    assert ids.tolist() == list(range(n, n + m)) and torch.equal(g.x[ids], cg.x)
    assert torch.equal(g.edge_index, feat.edge_index)
    assert torch.equal(small.x, x0) and torch.equal(small.edge_index, e0)  # input untouched
    again = canary_graph(small, 40, seed=0, degree=3)  # a seed of 0 is a seed
    assert torch.equal(again.included, inc) and torch.equal(again.edges, cg.edges)
    assert not torch.equal(canary_graph(small, 40, seed=1, degree=3).included, inc)


@pytest.mark.parametrize("bad", [{"num_canaries": 1}, {"degree": -1}, {"degree": 1000}, {"feature_scale": 0.0}])
def test_canary_graph_refuses_bad_input(small, bad):
    kw = {"num_canaries": 10, "seed": 0, **bad}
    with pytest.raises(ValueError):
        canary_graph(small, **kw)


@pytest.mark.parametrize("method", CENTRAL_METHODS)
def test_correct_methods_audit_below_their_accounted_epsilon(graph, method):
    """Every correctly implemented method, trained through its entry point at ε = 1: audited ≤ accounted."""
    r = audit_central(method, graph, epsilon=1.0, num_canaries=100, seed=0, **_kw(method, 10))
    assert r["unit"] == UNIT_OF[method] and r["guesses"] > 0
    assert r["epsilon_claimed"] == pytest.approx(r["epsilon_accounted"]) and r["epsilon_claimed"] <= 1.0 + 1e-9
    assert r["noise_multiplier"] > 0 and 0.0 < r["delta"] < 1e-2
    assert 0.0 <= r["epsilon_lb"] <= r["epsilon_accounted"]


def test_broken_noise_is_caught_and_the_control_has_power(graph):
    """DP-GNN with its noise × 1e-6 under the claim ε = 0.1 is flagged (audited above the claim); the non-private
    ProGAP control is found too (the audit has power), the same training with the calibrated noise is not."""
    broken = audit_central(
        "dp-gnn", graph, epsilon=0.1, num_canaries=200, seed=12345, noise_factor=1e-6, **_kw("dp-gnn", 30)
    )
    assert broken["epsilon_claimed"] == pytest.approx(0.1, abs=1e-3)
    assert broken["epsilon_accounted"] > 1e6  # the ledger of the run says what the noise really gives
    assert broken["epsilon_lb"] > broken["epsilon_claimed"]
    ctrl = audit_central("progap-node", graph, epsilon=math.inf, num_canaries=200, seed=12345, **_kw("progap-node", 30))
    assert math.isinf(ctrl["epsilon_accounted"]) and ctrl["epsilon_lb"] > 0.3
    fixed = audit_central("dp-gnn", graph, epsilon=0.1, num_canaries=200, seed=12345, **_kw("dp-gnn", 30))
    assert fixed["epsilon_lb"] <= fixed["epsilon_accounted"]


@pytest.mark.parametrize(
    "method, kw",
    [
        ("nope", {"epsilon": 1.0}),
        ("dp-gnn", {"epsilon": 0.0}),
        ("dp-gnn", {"epsilon": True}),
        ("dp-gnn", {"epsilon": 1.0, "noise_factor": 0.0}),
        ("dp-gnn", {"epsilon": math.inf}),
        ("progap-node", {"epsilon": math.inf, "noise_factor": 0.5}),
        ("drw", {"epsilon": 1.0, "noise_factor": 0.5}),
    ],
)
def test_audit_central_refuses_bad_input(small, method, kw):
    with pytest.raises(ValueError):
        audit_central(
            method, small, num_canaries=10, seed=0, **{**_kw(method, 2), **kw} if method in CENTRAL_KW else kw
        )
