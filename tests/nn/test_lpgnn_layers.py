"""LPGNN layers: KProp against a dense reference, batched backbones against the PyG per-run models."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dpgnn.data import csbm
from dpgnn.nn.lpgnn import (
    BACKBONES,
    Backbone,
    BatchedBackbone,
    BatchedFeatures,
    KProp,
    kprop,
    mean_adjacency,
    normalized_adjacency,
)


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=60, num_classes=3, num_features=10, avg_degree=4, seed=3)
    # an isolated node (no edges) must get a zero row
    keep = (data.edge_index != 59).all(dim=0)
    data.edge_index = data.edge_index[:, keep]
    return data


def _dense_reference(edge_index, n):
    a = np.zeros((n, n))
    for s, t in edge_index.t().tolist():
        a[t, s] = 1.0
    deg = a.sum(axis=1)
    inv = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1)), 0.0)
    return inv[:, None] * a * inv[None, :], a


@pytest.mark.parametrize("steps", [0, 1, 2, 4, 8])
def test_kprop_matches_dense_matrix_power(graph, steps):
    n = graph.num_nodes
    ahat, _ = _dense_reference(graph.edge_index, n)
    assert np.allclose(np.diag(ahat), 0.0)  # no self-loops
    adj = normalized_adjacency(graph.edge_index, n)
    assert np.allclose(adj.to_dense().numpy(), ahat, atol=1e-7)
    x = graph.x.double()
    ref = np.linalg.matrix_power(ahat, steps) @ x.numpy()
    assert np.allclose(kprop(graph.x, adj, steps).numpy(), ref, atol=1e-5)
    module = KProp(steps)
    out = module(graph.x, graph.edge_index)
    assert np.allclose(out.numpy(), ref, atol=1e-5)
    assert torch.equal(module(torch.zeros_like(graph.x), graph.edge_index), out)  # cached: propagated once
    assert torch.equal(kprop(graph.x, adj, steps)[59], torch.zeros(10)) or steps == 0


def test_mean_adjacency_and_gcn_self_loops(graph):
    n = graph.num_nodes
    _, a = _dense_reference(graph.edge_index, n)
    deg = a.sum(axis=1, keepdims=True)
    ref = np.where(deg > 0, a / np.where(deg > 0, deg, 1), 0.0)
    assert np.allclose(mean_adjacency(graph.edge_index, n).to_dense().numpy(), ref, atol=1e-7)
    with_loops = normalized_adjacency(graph.edge_index, n, self_loops=True).to_dense().numpy()
    a1 = a + np.eye(n)
    inv = 1 / np.sqrt(a1.sum(axis=1))
    assert np.allclose(with_loops, inv[:, None] * a1 * inv[None, :], atol=1e-6)


def test_bad_arguments(graph):
    with pytest.raises(ValueError, match="steps"):
        KProp(-1)
    with pytest.raises(ValueError, match="steps"):
        kprop(graph.x, normalized_adjacency(graph.edge_index, graph.num_nodes), 1.5)
    with pytest.raises(ValueError, match="backbone"):
        Backbone("mlp", 10, 3)
    with pytest.raises(ValueError, match="dropout"):
        Backbone("sage", 10, 3, dropout=1.0)


def _features(graph, mode, repeats, steps):
    n, d = graph.x.shape
    adj = normalized_adjacency(graph.edge_index, n)
    gen = torch.Generator().manual_seed(0)
    xs = [((torch.rand(n, d, generator=gen) < 0.2).float() * torch.rand(n, d, generator=gen)) for _ in range(repeats)]
    if mode == "dense":
        return BatchedFeatures(
            num_nodes=n, num_features=d, repeats=repeats, adj=adj, steps=steps, dense=torch.stack(xs)
        ), xs
    if mode == "shared":
        nz = graph.x.nonzero(as_tuple=True)
        f = BatchedFeatures.shared(
            nz[0], nz[1], graph.x[nz] - 0.25, 0.25, repeats=repeats, num_nodes=n, num_features=d, adj=adj, steps=steps
        )
        x = graph.x.clone()
        x[x == 0] = 0.25
        return f, [x] * repeats
    parts = [x.nonzero(as_tuple=True) for x in xs]
    f = BatchedFeatures.from_sparse_parts(
        [p[0] for p in parts],
        [p[1] for p in parts],
        [x[p] - 0.5 for x, p in zip(xs, parts)],
        [0.5] * repeats,
        num_nodes=n,
        num_features=d,
        adj=adj,
        steps=steps,
    )
    dense = []
    for x in xs:
        y = x.clone()
        y[y == 0] = 0.5
        dense.append(y)
    return f, dense


@pytest.mark.parametrize("kind", BACKBONES)
@pytest.mark.parametrize("mode", ["dense", "sparse", "shared"])
def test_batched_backbone_equals_pyg_models(graph, kind, mode):
    """R batched repeats give the outputs and gradients of R separate PyG models on KProp'd features."""
    seeds, steps = [1, 2, 3], 2
    feats, xs = _features(graph, mode, len(seeds), steps)
    batched = BatchedBackbone.initialised(kind, 10, 3, seeds)
    ops = BatchedBackbone.graph_ops(kind, graph.edge_index, graph.num_nodes)
    out = batched(feats, ops)
    out.square().sum().backward()
    adj = normalized_adjacency(graph.edge_index, graph.num_nodes)
    for i, s in enumerate(seeds):
        torch.manual_seed(s)
        ref_model = Backbone(kind, 10, 3)
        ref = ref_model(kprop(xs[i], adj, steps), graph.edge_index)
        assert torch.allclose(out[:, i], ref, atol=1e-5), (kind, mode, i)
        ref.square().sum().backward()
        g_ref = (ref_model.conv1.lin_l.weight if kind == "sage" else ref_model.conv1.lin.weight).grad.T
        g = batched.w1.grad[i][:, : g_ref.shape[1]]
        assert torch.allclose(g, g_ref, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kind", BACKBONES)
def test_a_given_neighbour_mean_gives_the_same_logits_and_gradients(graph, kind):
    torch.manual_seed(0)
    model = Backbone(kind, graph.num_features, 3, dropout=0.0)
    x = graph.x.float()
    mean = model.neighbour_mean(x, graph.edge_index)
    assert (mean is None) == (kind != "sage")
    if mean is None:
        return
    assert not torch.equal(mean, torch.zeros_like(mean)) and torch.equal(mean[59], torch.zeros_like(mean[59]))
    for training in (True, False):
        model.train(training)
        grads = []
        for given in (None, mean):
            model.zero_grad()
            out = model(x, graph.edge_index, neighbour_mean=given)
            out.square().sum().backward()
            grads.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
        (a, ga), (b, gb) = grads
        assert torch.equal(a, b)
        assert all(torch.equal(p, q) for p, q in zip(ga, gb))
