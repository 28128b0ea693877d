"""Transforms never mutate their input and are deterministic given the seed; split sizes and disjointness."""

from __future__ import annotations

import pytest
import torch
from dpgnn_data_testutils import undirected_ok
from torch_geometric.data import Data

from dpgnn.data import (
    csbm,
    filter_classes,
    minmax_normalize,
    private_public_split,
    random_node_split,
    remove_isolated_nodes,
    seed_from_name,
    split_edges,
)
from dpgnn.data.transforms import undirected_edges


@pytest.fixture
def graph():
    return csbm(num_nodes=300, num_classes=3, num_features=16, avg_degree=6, seed=7)


def snapshot(d: Data) -> dict:
    return {k: v.clone() if torch.is_tensor(v) else v for k, v in d.items()}


def unchanged(d: Data, snap: dict) -> bool:
    return set(d.keys()) == set(snap) and all(
        torch.equal(d[k], v) if torch.is_tensor(v) else d[k] == v for k, v in snap.items()
    )


def test_seed_from_name():
    assert seed_from_name("musae") == 109 + 117 + 115 + 97 + 101 == 539
    assert seed_from_name("bitcoin") == sum(map(ord, "bitcoin"))
    assert seed_from_name("") == 0


def test_minmax_normalize():
    x = torch.tensor([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [2.0, 5.0, 0.0]])
    d = Data(x=x, num_nodes=3)
    snap = snapshot(d)
    out = minmax_normalize(d)
    assert unchanged(d, snap) and out is not d
    assert torch.allclose(out.x, torch.tensor([[0.0, 0.0, 0.5], [1.0, 0.0, 1.0], [0.5, 0.0, 0.0]]))
    dropped = minmax_normalize(d, drop_constant=True)
    assert dropped.x.shape == (3, 2) and torch.allclose(dropped.x, out.x[:, [0, 2]])
    assert unchanged(d, snap)


def test_random_node_split(graph):
    snap = snapshot(graph)
    a = random_node_split(graph, 0.5, 0.25, 0.25, seed=0)
    b = random_node_split(graph, 0.5, 0.25, 0.25, seed=0)
    c = random_node_split(graph, 0.5, 0.25, 0.25, seed=1)
    assert unchanged(graph, snap)
    assert torch.equal(a.train_mask, b.train_mask) and torch.equal(a.test_mask, b.test_mask)
    assert not torch.equal(a.train_mask, c.train_mask)
    sizes = [int(a[m].sum()) for m in ("train_mask", "val_mask", "test_mask")]
    assert sizes == [150, 75, 75]
    assert not bool(
        (a.train_mask & a.val_mask).any() | (a.train_mask & a.test_mask).any() | (a.val_mask & a.test_mask).any()
    )
    # a different global RNG state does not matter
    torch.manual_seed(999)
    assert torch.equal(random_node_split(graph, seed=0).train_mask, a.train_mask)


def test_random_node_split_among(graph):
    among = torch.zeros(graph.num_nodes, dtype=torch.bool)
    among[:100] = True
    s = random_node_split(graph, 0.5, 0.25, 0.25, seed=3, among=among)
    union = s.train_mask | s.val_mask | s.test_mask
    assert torch.equal(union, among)
    assert [int(s[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [50, 25, 25]


def test_random_node_split_rejects_bad_fractions(graph):
    with pytest.raises(ValueError):
        random_node_split(graph, 0.8, 0.3, 0.1, seed=0)


def _pairs(ei: torch.Tensor, n: int) -> set:
    return set((ei[0] * n + ei[1]).tolist())


def test_split_edges(graph):
    snap = snapshot(graph)
    n = graph.num_nodes
    s = split_edges(graph, val=0.05, test=0.10, seed=seed_from_name("cora"))
    assert unchanged(graph, snap)
    m = graph.edge_index.size(1) // 2
    n_val, n_test = int(0.05 * m), int(0.10 * m)
    assert s.val_pos_edge_index.size(1) == n_val and s.test_pos_edge_index.size(1) == n_test
    assert s.val_neg_edge_index.size(1) == n_val and s.test_neg_edge_index.size(1) == n_test
    assert s.train_pos_edge_index.size(1) == 2 * (m - n_val - n_test)
    tr = _pairs(s.train_pos_edge_index, n)
    # training edges symmetric; val/test edges are upper triangle and absent from training in both directions
    assert tr == _pairs(s.train_pos_edge_index.flip(0), n)
    for ei in (s.val_pos_edge_index, s.test_pos_edge_index):
        assert bool((ei[0] < ei[1]).all())
        assert not (_pairs(ei, n) & tr) and not (_pairs(ei.flip(0), n) & tr)
    assert not (_pairs(s.val_pos_edge_index, n) & _pairs(s.test_pos_edge_index, n))
    # all positives together = the graph
    allpos = (
        tr
        | _pairs(s.val_pos_edge_index, n)
        | _pairs(s.val_pos_edge_index.flip(0), n)
        | _pairs(s.test_pos_edge_index, n)
        | _pairs(s.test_pos_edge_index.flip(0), n)
    )
    assert allpos == _pairs(graph.edge_index, n)
    # negatives are non-edges
    full = _pairs(graph.edge_index, n)
    for ei in (s.val_neg_edge_index, s.test_neg_edge_index):
        assert not (_pairs(ei, n) & full)
    # deterministic given the seed, independent of the global RNG
    torch.manual_seed(123)
    t = split_edges(graph, val=0.05, test=0.10, seed=seed_from_name("cora"))
    for k in (
        "train_pos_edge_index",
        "val_pos_edge_index",
        "test_pos_edge_index",
        "val_neg_edge_index",
        "test_neg_edge_index",
    ):
        assert torch.equal(s[k], t[k]), k
    u = split_edges(graph, val=0.05, test=0.10, seed=1)
    assert not torch.equal(s.test_pos_edge_index, u.test_pos_edge_index)


def test_split_edges_never_touches_the_global_random(graph, monkeypatch):
    """A Dask worker's event loop draws from Python's global `random` while a cell runs, so a split must neither
    use nor reseed it: its negatives come from a private generator giving the same sequence (same split)."""
    import random

    ref = split_edges(graph, val=0.05, test=0.10, seed=seed_from_name("cora"))

    def used(*args, **kwargs):
        raise AssertionError("split_edges used the process-wide random generator")

    for name in ("seed", "sample", "random", "getstate", "setstate", "randrange", "randint", "shuffle"):
        monkeypatch.setattr(random, name, used)
    again = split_edges(graph, val=0.05, test=0.10, seed=seed_from_name("cora"))
    for k in (
        "train_pos_edge_index",
        "val_pos_edge_index",
        "test_pos_edge_index",
        "val_neg_edge_index",
        "test_neg_edge_index",
    ):
        assert torch.equal(ref[k], again[k]), k


def test_filter_classes_and_isolated():
    y = torch.tensor([0, 0, 0, 1, 2, 2, -1, 2])
    ei = undirected_edges(torch.tensor([[0, 1, 3, 4, 6], [1, 2, 4, 5, 7]]), 8)
    d = Data(x=torch.arange(8.0).view(8, 1), y=y, edge_index=ei, num_nodes=8)
    snap = snapshot(d)
    f = filter_classes(d, min_count=2)
    assert unchanged(d, snap)
    assert f.num_nodes == 6 and f.y.tolist() == [0, 0, 0, 1, 1, 1]
    assert f.x.view(-1).tolist() == [0, 1, 2, 4, 5, 7]
    assert undirected_ok(f) and f.edge_index.size(1) == 6  # 0-1, 1-2, 4-5 kept; 3-4 and 6-7 dropped
    g = remove_isolated_nodes(f)
    assert g.num_nodes == 5 and g.x.view(-1).tolist() == [0, 1, 2, 4, 5]
    top = filter_classes(d, top_k=1)
    assert top.num_nodes == 3 and set(top.y.tolist()) == {0}


def test_private_public_split(graph):
    s = private_public_split(graph, seed=0, private_per_class=10, num_public_train=50, num_public_test=40)
    assert torch.bincount(s.y[s.private_mask]).tolist() == [10, 10, 10]
    assert int(s.public_train_mask.sum()) == 50 and int(s.public_test_mask.sum()) == 40
    assert not bool((s.private_mask & (s.public_train_mask | s.public_test_mask)).any())
    assert not bool((s.public_train_mask & s.public_test_mask).any())
    t = private_public_split(graph, seed=0, private_per_class=10, num_public_train=50, num_public_test=40)
    assert torch.equal(s.private_mask, t.private_mask) and not hasattr(graph, "private_mask")
    h = private_public_split(graph, seed=0, num_private=150, public_test_share=0.2)
    assert int(h.private_mask.sum()) == 150 and int(h.public_test_mask.sum()) == 30
