"""One-hot-like features held sparse (dpgnn.nn.progap.sparse_rows) in ProGAP, GAP and the MLP baselines, full-batch and
node-level DP stages alike: the same runs as on the dense matrix, up to float rounding."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from dpgnn.data import csbm, random_node_split
from dpgnn.methods.gap import GAPConfig, train_gap
from dpgnn.methods.progap import ProGAPConfig, train_progap
from dpgnn.methods.progap_baselines import train_mlp, train_sage
from dpgnn.nn import progap as P

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def graph():
    """A graph with 0/1 features, about a tenth of them ones."""
    data = csbm(num_nodes=300, num_classes=3, num_features=24, avg_degree=8.0, homophily=0.9, seed=3)
    data.x = (data.x > data.x.quantile(0.9)).float()
    return random_node_split(data, 0.5, 0.25, 0.25, seed=1)


def test_sparse_rows_only_converts_sparse_enough_features(monkeypatch):
    x = (torch.rand(50, 40, generator=torch.Generator().manual_seed(0)) < 0.04).float()
    s = P.sparse_rows(x)
    assert s.layout == torch.sparse_csr and torch.equal(s.to_dense(), x)
    assert P.sparse_rows(s) is s
    idx = torch.tensor([4, 0, 4, 49])
    picked = P.gather_rows(s, idx)
    assert picked.layout == torch.sparse_csr and torch.equal(picked.to_dense(), x[idx])
    assert torch.equal(P.gather_rows(x, idx), x[idx])
    torch.testing.assert_close(P.row_norms(picked), x[idx].norm(dim=1))
    torch.testing.assert_close(P.row_norms(x[idx]), x[idx].norm(dim=1))
    monkeypatch.setattr(P, "SPARSE_FEATURES", 0.01)
    assert P.sparse_rows(x) is x  # too dense
    assert P.sparse_rows(torch.rand(50, 40)).layout == torch.strided  # dense features stay dense


def test_features_are_checked_entry_by_entry_when_their_sum_overflows():
    """A finite sum clears every entry at once; a sum that overflows on finite entries is not an error, and one
    NaN or infinity among large values is still found with its row."""
    from dpgnn.api.inputs import check_graph
    from dpgnn.utils import all_finite, check_features

    big = torch.full((4, 3), 3e38)
    assert not torch.isfinite(big.sum()) and all_finite(big)
    assert check_features(big) is big
    for bad in (float("nan"), float("inf"), -float("inf")):
        x = big.clone()
        x[2, 1] = bad
        assert not all_finite(x)
        with pytest.raises(ValueError, match=r"1 of 4 rows \(first: row 2\)"):
            check_features(x)
        with pytest.raises(ValueError, match=r"data.x holds NaN or infinite values in 1 of 4 rows \(first: row 2\)"):
            check_graph(Data(x=x, y=torch.tensor([0, 1, 0, 1]), edge_index=torch.tensor([[0, 1], [1, 0]])), 0)
    assert all_finite(torch.zeros(0, 3)) and all_finite(torch.ones(5, dtype=torch.complex64))


def test_transpose_csr_and_density_equal_the_dense_computations():
    from dpgnn.utils import density, to_csr, transpose_csr

    gen = torch.Generator().manual_seed(0)
    for x in ((torch.rand(60, 45, generator=gen) < 0.05).float(), torch.zeros(7, 3), torch.randn(5, 4, generator=gen)):
        t = transpose_csr(to_csr(x))
        want = to_csr(x.t())
        assert t.layout == torch.sparse_csr and t.shape == (x.size(1), x.size(0))
        for a, b in zip(
            (t.crow_indices(), t.col_indices(), t.values()), (want.crow_indices(), want.col_indices(), want.values())
        ):
            assert torch.equal(a, b)
        assert density(x) == int((x != 0).sum()) / x.numel()
    assert density(torch.zeros(0, 4)) == 0.0


def test_segments_gives_each_elements_segment_and_offset():
    from dpgnn.utils import segments

    seg, offset = segments(torch.tensor([2, 0, 3, 1]))
    assert seg.tolist() == [0, 0, 2, 2, 2, 3] and offset.tolist() == [0, 1, 0, 1, 2, 0]
    assert [t.numel() for t in segments(torch.zeros(3, dtype=torch.long))] == [0, 0]


RUNS = {
    "progap-edge": lambda d, s: train_progap(d, ProGAPConfig(level="edge", epsilon=4.0, depth=2, epochs=8), seed=s),
    "progap-none": lambda d, s: train_progap(d, ProGAPConfig(level="none", depth=1, epochs=8), seed=s),
    "progap-node": lambda d, s: train_progap(
        d, ProGAPConfig(level="node", epsilon=8.0, depth=1, epochs=3, batch_size=32, max_degree=8), seed=s
    ),
    "progap-node-opacus": lambda d, s: train_progap(
        d,
        ProGAPConfig(level="node", epsilon=8.0, depth=1, epochs=2, batch_size=32, max_degree=8),
        seed=s,
        per_sample="opacus",
    ),
    "gap-node": lambda d, s: train_gap(
        d, GAPConfig(level="node", epsilon=8.0, epochs=3, batch_size=32, max_degree=8), seed=s
    ),
    "dp-mlp": lambda d, s: train_mlp(d, level="node", epsilon=8.0, epochs=3, batch_size=32, seed=s),
    "gap-edge": lambda d, s: train_gap(d, GAPConfig(level="edge", epsilon=4.0, epochs=8), seed=s),
    "mlp": lambda d, s: train_mlp(d, level="edge", epochs=8, seed=s),
    "sage": lambda d, s: train_sage(d, epochs=8, seed=s),
}


@pytest.mark.parametrize("name", list(RUNS))
def test_a_run_on_sparse_features_equals_the_dense_run(graph, name, monkeypatch):
    calls = []
    sparse_rows = P.sparse_rows

    def counting(x):
        out = sparse_rows(x)
        calls.append(out.layout == torch.sparse_csr)
        return out

    for mod in ("dpgnn.methods.progap.train", "dpgnn.methods.gap", "dpgnn.methods.progap_baselines"):
        monkeypatch.setattr(f"{mod}.sparse_rows", counting, raising=False)
    monkeypatch.setattr(P, "SPARSE_FEATURES", 1.0)
    sparse = [RUNS[name](graph, s) for s in (0, 1)]
    assert calls and all(calls)  # the runs took the sparse path
    monkeypatch.setattr(P, "SPARSE_FEATURES", 0.0)
    calls.clear()
    dense = [RUNS[name](graph, s) for s in (0, 1)]
    assert calls and not any(calls)
    # a prediction at a near-tie may flip with the rounding (and Adam moves a bias that feeds a BatchNorm, whose
    # gradient is zero but for rounding, by whole steps): accuracies agree to one node of their split
    one = {k: 1.0 / int(graph[f"{k}_mask"].sum()) + 1e-6 for k in ("train", "val", "test")}
    for a, b in zip(sparse, dense):
        for k in one:
            assert getattr(a, f"{k}_acc") == pytest.approx(getattr(b, f"{k}_acc"), abs=one[k])
        assert [h["val_acc"] for h in a.history] == pytest.approx([h["val_acc"] for h in b.history], abs=one["val"])
    assert [h["val_acc"] for h in sparse[0].history] != [h["val_acc"] for h in sparse[1].history]  # seeds differ
