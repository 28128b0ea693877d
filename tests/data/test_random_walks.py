"""DRW samplers: disjoint subgraphs covering the roots, walk structure, q bounds, bad inputs."""

import numpy as np
import pytest
import torch

from dpgnn.data import csbm
from dpgnn.data.random_walks import (
    csr,
    disjoint_random_walks,
    min_num_subgraphs,
    random_walk_batch,
    sampler_bound,
    sampling_probability_bound,
    uniform_batch,
)


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=300, num_classes=3, num_features=8, avg_degree=4, homophily=0.8, feature_sparsity=0.5, seed=3)


def _edges(g):
    return {(int(a), int(b)) for a, b in g.edge_index.t()}


@pytest.mark.parametrize("L,R", [(1, 1), (2, 1), (2, 2), (3, 2), (0, 1)])
def test_subgraphs_are_disjoint_and_cover_the_roots(graph, L, R):
    roots = torch.nonzero(graph.train_mask).view(-1)
    subs = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, L, R, seed=0)
    nodes = subs.nodes[subs.mask]
    assert nodes.unique().numel() == nodes.numel(), "a node lies in two subgraphs"
    assert set(roots.tolist()) <= set(nodes.tolist()), "a training node is in no subgraph"
    assert set(subs.roots.tolist()) <= set(roots.tolist()), "roots are training nodes"
    assert int(subs.sizes().max()) <= 1 + R * L and subs.max_size == 1 + R * L
    assert subs.num_subgraphs >= min_num_subgraphs(len(roots), L, R)
    edges = _edges(graph)
    for i in range(subs.num_subgraphs):
        ns = subs.nodes[i][subs.mask[i]].tolist()
        a = subs.adj[i][: len(ns), : len(ns)]
        assert torch.equal(a, a.t()) and not a.diagonal().any()
        assert int(a.sum()) // 2 == len(ns) - 1, "walk edges form a tree over the subgraph's nodes"
        for u, v in torch.nonzero(a).tolist():
            assert (ns[u], ns[v]) in edges, "subgraph edges are graph edges"
        assert not subs.adj[i][len(ns) :].any()


def test_walks_are_seeded_and_restarts_grow_subgraphs(graph):
    roots = torch.nonzero(graph.train_mask).view(-1)
    a = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, 2, seed=5)
    b = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, 2, seed=5)
    c = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, 2, seed=6)
    assert torch.equal(a.nodes, b.nodes) and not torch.equal(a.nodes, c.nodes)
    r = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, 2, 2, seed=5)
    assert r.sampler == "drw-r" and float(r.sizes().float().mean()) > float(a.sizes().float().mean())


def test_path_graph_walks_are_paths():
    # path 0-1-2-3-4-5, roots {0, 3}: whatever the order, subgraphs are contiguous and disjoint
    und = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]])
    ei = torch.cat([und, und.flip(0)], 1)
    for seed in range(10):
        s = disjoint_random_walks(ei, 6, [0, 3], 2, seed=seed)
        for i in range(s.num_subgraphs):
            ns = s.nodes[i][s.mask[i]].tolist()
            assert all(abs(x - y) == 1 for x, y in zip(ns, ns[1:]))


def test_q_bound_formula():
    assert sampling_probability_bound(70, 140, 1) == 1.0  # Cora DRW, 1 layer (Table 4)
    assert sampling_probability_bound(46, 140, 2) == pytest.approx(46 / 47)
    assert sampling_probability_bound(28, 140, 2, 2) == 1.0  # Cora DRW-R, 2 layers: m_min = 28
    assert sampler_bound("drw-r", 46, 140, 1) == pytest.approx(46 / 47)
    assert sampler_bound("drw-d", 30000, 153932, 1) == pytest.approx(30000 / 76966)  # Reddit
    assert sampling_probability_bound(2000, 9716, 2) == pytest.approx(2000 / 3239)  # PPI, L = 2
    for n in (1, 7, 140, 9716):
        for L in (0, 1, 2, 3):
            for R in (1, 2, 3):
                m = min_num_subgraphs(n, L, R)
                assert m == int(np.ceil(n / (1 + R * L))) and (m - 1) * (1 + R * L) < n <= m * (1 + R * L)


def test_q_bounds_the_empirical_inclusion_probability(graph):
    roots = torch.nonzero(graph.train_mask).view(-1)
    B, L = 10, 2
    subs = disjoint_random_walks(graph.edge_index, graph.num_nodes, roots, L, seed=1)
    q = sampling_probability_bound(B, len(roots), L)
    rng = np.random.default_rng(0)
    hits = sum(0 in rng.choice(subs.num_subgraphs, B, replace=False) for _ in range(4000))
    assert hits / 4000 <= q + 0.02
    assert abs(hits / 4000 - B / subs.num_subgraphs) < 0.03


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"walk_length": -1}, "walk_length"),
        ({"restarts": 0}, "restarts"),
        ({"walk_length": 1.5}, "walk_length"),
    ],
)
def test_bad_walk_inputs(graph, kwargs, match):
    args = {"walk_length": 1, "restarts": 1} | kwargs
    with pytest.raises(ValueError, match=match):
        disjoint_random_walks(graph.edge_index, graph.num_nodes, [0, 1], args["walk_length"], args["restarts"], seed=0)


def test_bad_roots_and_batches(graph):
    with pytest.raises(ValueError, match="roots"):
        disjoint_random_walks(graph.edge_index, graph.num_nodes, [1, 1], 1, seed=0)
    with pytest.raises(ValueError, match="roots"):
        disjoint_random_walks(graph.edge_index, graph.num_nodes, [], 1, seed=0)
    with pytest.raises(ValueError, match=r"batch_size must be in \[1, m_min=70\]"):
        sampling_probability_bound(71, 140, 1)
    with pytest.raises(ValueError, match="batch_size"):
        sampling_probability_bound(0, 140, 1)
    with pytest.raises(ValueError, match="sampler"):
        sampler_bound("rw", 10, 140, 1)
    with pytest.raises(ValueError, match="edge_index"):
        csr(torch.tensor([[0, 5]]), 3)


def test_nonprivate_batches(graph):
    ptr, col = csr(graph.edge_index, graph.num_nodes)
    train = np.flatnonzero(graph.train_mask.numpy())
    rng = np.random.default_rng(0)
    nodes, loss = random_walk_batch(ptr, col, train, 20, 2, rng)
    assert np.all(np.diff(nodes) > 0) and set(loss) <= set(train) and set(loss) <= set(nodes)
    u = uniform_batch(train, 20, rng)
    assert len(set(u)) == 20 and set(u) <= set(train)
