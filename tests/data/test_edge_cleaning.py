"""clean_edges: repeated pairs merged, self-loops kept or removed, one-direction graphs refused where asked."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from dpgnn.data import csbm, split_edges
from dpgnn.data.transforms import EdgeCleaning, clean_edges, increasing, undirected_edges, with_clean_edges


def _pairs(ei: torch.Tensor) -> list[tuple[int, int]]:
    return sorted(set(map(tuple, ei.t().tolist())))


def test_repeated_pairs_are_merged_and_reported():
    ei = torch.tensor([[0, 1, 0, 2, 1, 0], [1, 0, 1, 0, 0, 2]])
    out, rep = clean_edges(ei, 3)
    assert out.tolist() == [[0, 0, 1, 2], [1, 2, 0, 0]]  # sorted by (source, target), each pair once
    assert rep == EdgeCleaning(entries=6, duplicates=2, self_loops=0) and rep.changed
    assert rep.describe() == "edge_index: 2 repeated entries merged (of 6 entries)"
    assert ei.tolist() == [[0, 1, 0, 2, 1, 0], [1, 0, 1, 0, 0, 2]]  # the input is never modified


def test_a_simple_graph_comes_back_as_the_same_tensor():
    g = csbm(num_nodes=80, num_features=4, seed=2)
    out, rep = clean_edges(g.edge_index, g.num_nodes, undirected=True)
    assert out is g.edge_index and not rep.changed and rep.describe() == "edge_index as given"
    same, rep2 = with_clean_edges(g)
    assert same is g and not rep2.changed


def test_self_loops_kept_or_removed():
    ei = torch.tensor([[0, 1, 1, 2, 2], [1, 0, 1, 2, 2]])
    kept, rep = clean_edges(ei, 3)
    assert _pairs(kept) == [(0, 1), (1, 0), (1, 1), (2, 2)] and rep.self_loops == 0 and rep.duplicates == 1
    removed, rep = clean_edges(ei, 3, self_loops="remove")
    assert _pairs(removed) == [(0, 1), (1, 0)] and rep.self_loops == 3 and rep.duplicates == 0
    assert "3 self-loops removed" in rep.describe()


def test_one_direction_graph_is_refused_with_the_fix_when_undirected_is_required():
    ei = torch.tensor([[0, 1, 1], [1, 0, 2]])  # 1 -> 2 lacks 2 -> 1
    clean_edges(ei, 3)  # accepted as a directed graph
    with pytest.raises(ValueError, match=r"EdgeRand: edge_index is not undirected \(1 of 3 pairs") as err:
        clean_edges(ei, 3, undirected=True, owner="EdgeRand")
    assert "\n" not in str(err.value) and "undirected_edges(edge_index, num_nodes)" in str(err.value)
    fixed, _ = clean_edges(undirected_edges(ei, 3), 3, undirected=True)
    assert _pairs(fixed) == [(0, 1), (1, 0), (1, 2), (2, 1)]


@pytest.mark.parametrize(
    "edge_index,num_nodes,match",
    [
        (torch.tensor([0, 1]), 3, r"shape \[2, E\]"),
        (torch.tensor([[0.0], [1.0]]), 3, "integer node ids"),
        (torch.tensor([[0], [3]]), 3, r"outside \[0, num_nodes=3\)"),
        (torch.tensor([[-1], [0]]), 3, r"outside \[0, num_nodes=3\)"),
        (torch.tensor([[0], [1]]), 0, "num_nodes must be an integer >= 1"),
    ],
)
def test_bad_edge_lists_are_refused_in_one_line(edge_index, num_nodes, match):
    with pytest.raises(ValueError, match=match) as err:
        clean_edges(edge_index, num_nodes, owner="GAP")
    assert str(err.value).startswith("GAP: ") and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="self_loops must be one of"):
        clean_edges(torch.tensor([[0], [1]]), 2, self_loops="drop")


def test_empty_edge_list():
    out, rep = clean_edges(torch.zeros((2, 0), dtype=torch.long), 4, undirected=True)
    assert out.shape == (2, 0) and not rep.changed


def test_split_edges_reads_each_undirected_pair_once_whatever_the_input_lists():
    g = csbm(num_nodes=120, num_features=4, avg_degree=6, seed=5)
    ref = split_edges(g, seed=3)
    row, col = g.edge_index
    one_way = g.edge_index[:, row < col]
    doubled = torch.cat([g.edge_index, one_way.flip(0), g.edge_index[:, :25]], dim=1)
    for ei in (one_way, one_way.flip(0), doubled):
        out = split_edges(Data(x=g.x, edge_index=ei, num_nodes=g.num_nodes), seed=3)
        for key in (
            "train_pos_edge_index",
            "val_pos_edge_index",
            "test_pos_edge_index",
            "val_neg_edge_index",
            "test_neg_edge_index",
        ):
            assert torch.equal(out[key], ref[key]), key


@pytest.mark.parametrize("seed", range(5))
def test_a_sorted_edge_list_skips_the_merge_with_the_same_result(seed):
    g = torch.Generator().manual_seed(seed)
    n = 30
    raw = torch.randint(0, n, (2, 200), generator=g)  # repeated pairs, unsorted
    coalesced = torch.unique(raw[0] * n + raw[1])
    simple = torch.stack([coalesced // n, coalesced % n])  # what a loader gives: sorted, each pair once
    for given in (raw, simple, simple.flip(1)):
        cleaned, report = clean_edges(given, n)
        k = given[0] * n + given[1]
        expected = torch.unique(k)
        assert increasing(k) == torch.equal(k, expected)
        assert torch.equal(cleaned[0] * n + cleaned[1], expected if report.changed else k)
        assert report.duplicates == k.numel() - expected.numel()
    assert increasing(torch.tensor([1, 2, 5])) and not increasing(torch.tensor([1, 1, 5]))
    assert not increasing(torch.tensor([2, 1])) and increasing(torch.tensor([], dtype=torch.long))
