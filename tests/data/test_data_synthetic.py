"""CSBM: homophily, sparsity and degree within tolerance; deterministic by seed."""

from __future__ import annotations

import pytest
import torch
from dpgnn_data_testutils import undirected_ok

from dpgnn.data import csbm


def edge_homophily(d) -> float:
    r, c = d.edge_index
    return float((d.y[r] == d.y[c]).float().mean())


@pytest.mark.parametrize("h", [0.1, 0.5, 0.9])
def test_homophily(h):
    d = csbm(num_nodes=1000, num_classes=4, avg_degree=10, homophily=h, seed=1)
    assert abs(edge_homophily(d) - h) < 0.03


@pytest.mark.parametrize("s", [0.5, 0.9, 0.99])
def test_sparsity_and_range(s):
    d = csbm(num_nodes=500, num_features=64, feature_sparsity=s, seed=2)
    zeros = float((d.x == 0).float().mean())
    assert abs(zeros - s) < 0.02
    assert float(d.x.min()) >= 0.0 and float(d.x.max()) <= 1.0 and d.x.dtype == torch.float32


@pytest.mark.parametrize("deg", [3.0, 8.0])
def test_degree(deg):
    d = csbm(num_nodes=2000, avg_degree=deg, seed=3)
    realised = d.edge_index.size(1) / d.num_nodes
    assert deg * 0.95 <= realised <= deg * 1.001
    assert undirected_ok(d)


def test_signal_makes_features_informative():
    d = csbm(num_nodes=600, num_classes=3, num_features=40, feature_sparsity=0.7, feature_signal=1.0, seed=4)
    means = torch.stack([(d.x[d.y == c] > 0).float().mean(0) for c in range(3)])
    assert float((means.max(0).values - means.min(0).values).mean()) > 0.2
    flat = csbm(num_nodes=600, num_classes=3, num_features=40, feature_sparsity=0.7, feature_signal=0.0, seed=4)
    m2 = torch.stack([(flat.x[flat.y == c] > 0).float().mean(0) for c in range(3)])
    assert float((m2.max(0).values - m2.min(0).values).mean()) < 0.1


def test_deterministic_and_masks():
    a, b, c = csbm(seed=5), csbm(seed=5), csbm(seed=6)
    for k in ("x", "y", "edge_index", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(a[k], b[k]), k
    assert not torch.equal(a.edge_index, c.edge_index) if a.edge_index.shape == c.edge_index.shape else True
    assert not torch.equal(a.x, c.x)
    assert [int(a[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [100, 50, 50]
    assert torch.bincount(a.y).tolist() == [67, 67, 66]
    assert a.y.dtype == torch.long


def test_invalid_arguments():
    with pytest.raises(ValueError):
        csbm(homophily=1.5)
    with pytest.raises(ValueError):
        csbm(num_nodes=3, num_classes=3)
