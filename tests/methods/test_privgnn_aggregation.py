"""PrivGNN's neighbour means: the sparse product taken for sorted edge lists equals the per-edge sum to the bit."""

import pytest
import torch

from dpgnn.nn.privgnn import mean_neighbours


def _per_edge(x: torch.Tensor, edge_index: torch.Tensor, n: int) -> torch.Tensor:
    src, dst = edge_index
    out = torch.zeros(n, x.size(1), dtype=x.dtype).index_add_(0, dst, x[src])
    return out / torch.bincount(dst, minlength=n).clamp(min=1).to(x.dtype).unsqueeze(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sorted_edge_lists_give_the_per_edge_sum_exactly(dtype):
    g = torch.Generator().manual_seed(7)
    for _ in range(40):
        n = int(torch.randint(2, 200, (1,), generator=g))
        d = int(torch.randint(1, 40, (1,), generator=g))
        e = int(torch.randint(2, 4000, (1,), generator=g))  # up to ~20 in-neighbours per node on small graphs
        x = torch.randn(n, d, generator=g, dtype=dtype) * torch.rand(n, 1, generator=g, dtype=dtype) * 1e3
        key = torch.unique(torch.randint(0, n * n, (e,), generator=g))
        sorted_edges = torch.stack([key // n, key % n])
        assert torch.equal(mean_neighbours(x, sorted_edges), _per_edge(x, sorted_edges, n))
        shuffled = sorted_edges[:, torch.randperm(key.numel(), generator=g)]  # the per-edge path itself
        assert torch.equal(mean_neighbours(x, shuffled), _per_edge(x, shuffled, n))


def test_repeated_edges_isolated_nodes_and_more_outputs_than_inputs():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    repeated = torch.tensor([[0, 0, 1], [1, 1, 2]])  # a repeated edge counts twice, as it does per edge
    assert torch.equal(mean_neighbours(x, repeated), _per_edge(x, repeated, 3))
    edges = torch.tensor([[0, 1, 2], [1, 2, 4]])
    out = mean_neighbours(x, edges, num_nodes=5)
    assert torch.equal(out, _per_edge(x, edges, 5)) and torch.equal(out[0], torch.zeros(2))
