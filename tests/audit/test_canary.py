"""Canary insertion, the central-DP canary audits and the MI attacks' building blocks."""

import math

import numpy as np
import pytest
import torch

from dpgnn.audit.canary import audit_dpsgd_one_run, audit_edge_aggregation, insert_canaries
from dpgnn.audit.mia import attack_features, auroc
from dpgnn.data.synthetic import csbm


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=120, num_features=8, seed=0)


def test_insert_canaries(graph):
    x0 = graph.x.clone()
    aug, idx, inc = insert_canaries(graph, 400, seed=3)
    n = graph.num_nodes
    assert aug.num_nodes == n + 400 and idx.tolist() == list(range(n, n + 400))
    assert torch.equal(aug.x[:n], graph.x.float()) and torch.equal(graph.x, x0)  # input untouched
    assert torch.equal(aug.train_mask[:n], graph.train_mask)
    assert torch.equal(aug.train_mask[n:], inc) and not aug.val_mask[n:].any() and not aug.test_mask[n:].any()
    assert 150 < int(inc.sum()) < 250  # each canary in with probability 1/2
    assert torch.equal(aug.edge_index, graph.edge_index)  # canaries are isolated
    assert aug.x[n:].std() == pytest.approx(4.0, rel=0.05)  # dense out-of-distribution features
    assert int(aug.y[n:].max()) < int(graph.y.max()) + 1
    again = insert_canaries(graph, 400, seed=3)
    assert torch.equal(again[2], inc) and torch.equal(again[0].x, aug.x)  # seeded (0 is a seed too)
    assert not torch.equal(insert_canaries(graph, 400, seed=0)[2], inc)
    with pytest.raises(ValueError):
        insert_canaries(graph, 1, seed=0)


def test_dpsgd_audit_has_power_without_noise(graph):
    """The positive control: the same training without DP lets the canaries be found (ε lower bound > 0)."""
    r = audit_dpsgd_one_run(
        csbm(num_nodes=300, num_features=16, seed=1), epsilon=math.inf, num_canaries=200, seed=1, epochs=20
    )
    assert r["epsilon_accounted"] == math.inf and r["noise_multiplier"] == 0.0
    assert r["epsilon_lb"] > 0.3


def test_dpsgd_audit_stays_below_accounted(graph):
    r = audit_dpsgd_one_run(graph, epsilon=2.0, num_canaries=40, seed=0, epochs=2)
    assert r["noise_multiplier"] > 0 and r["epsilon_accounted"] <= 2.0
    assert r["epsilon_lb"] <= r["epsilon_accounted"]
    assert r["ledger"]["level"] == "node" and r["ledger"]["epsilon"] == r["epsilon_accounted"]


def test_edge_audit_stays_below_accounted_and_has_power():
    r = audit_edge_aggregation(1.0, hops=1, trials=1500, seed=0)
    assert 0.0 < r["epsilon_lb"] <= r["epsilon_accounted"] <= 1.0
    assert r["sigma"] > 0


def test_auroc_and_attack_features():
    assert auroc(np.array([2.0, 3.0]), np.array([0.0, 1.0])) == 1.0
    assert auroc(np.array([1.0]), np.array([1.0])) == 0.5
    assert auroc(np.array([0.0, 0.0]), np.array([1.0, 2.0])) == 0.0
    f = attack_features(torch.log(torch.tensor([[0.1, 0.7, 0.2]])))
    assert torch.allclose(f, torch.tensor([[0.7, 0.2, 0.1]]))
    with pytest.raises(ValueError):
        auroc(np.array([]), np.array([1.0]))
