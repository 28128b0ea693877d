"""DP-GNN (Daigavane et al.) as ProGAP's node-level baseline: subgraph model, per-root gradients, node-level
sensitivity (at most D + 1 per-root terms change), accounting and calibration, bad inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import hypergeom
from torch_geometric.utils import to_torch_csr_tensor

from dpgnn.data import csbm, random_node_split
from dpgnn.methods import dp_gnn as D
from dpgnn.methods.progap import bound_degree

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=200, num_classes=3, num_features=12, avg_degree=10.0, homophily=0.9, seed=5)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=1)


def _setup(graph, max_degree=4, seed=0):
    n = graph.num_nodes
    ei = bound_degree(graph.edge_index, n, max_degree, seed)
    table, mask = D.neighbour_table(ei, n, max_degree)
    x = graph.x.float()
    x_pad = torch.cat([x, x.new_zeros(1, x.size(1))])
    torch.manual_seed(seed)
    model = D.DPGNNModel(x.size(1), 8, int(graph.y.max()) + 1)
    return ei, table, mask, x, x_pad, model


def test_neighbour_table_lists_in_neighbours_and_refuses_unbounded_graphs(graph):
    ei, table, mask, *_ = _setup(graph)
    n = graph.num_nodes
    for v in range(0, n, 17):
        expected = sorted(ei[0, ei[1] == v].tolist())
        assert sorted(table[v, mask[v]].tolist()) == expected and (table[v, ~mask[v]] == n).all()
    with pytest.raises(ValueError, match="bound the degrees"):
        D.neighbour_table(graph.edge_index, n, 2)


def test_subgraph_forward_equals_full_graph_forward(graph):
    ei, table, mask, x, x_pad, model = _setup(graph)
    n = graph.num_nodes
    with torch.no_grad():
        full = model.full(x, to_torch_csr_tensor(ei.flip(0), size=(n, n)))
        roots = torch.arange(n)
        sub = model(x[roots], x_pad[table[roots]], mask[roots])
    torch.testing.assert_close(sub, full, rtol=1e-5, atol=1e-5)


def test_per_root_gradients_equal_autograd_on_each_subgraph_alone(graph):
    _, table, mask, x, x_pad, model = _setup(graph)
    roots = torch.tensor([0, 5, 9, 33])
    g = D.per_root_gradients(model, x[roots], x_pad[table[roots]], mask[roots], graph.y[roots])
    for i, r in enumerate(roots.tolist()):
        model.zero_grad()
        nb = table[r][mask[r]]
        out = model(x[r : r + 1], x[nb].unsqueeze(0), torch.ones(1, nb.numel(), dtype=torch.bool))
        torch.nn.functional.cross_entropy(out, graph.y[r : r + 1]).backward()
        for k, p in model.named_parameters():
            torch.testing.assert_close(g[k][i], p.grad, rtol=1e-4, atol=1e-6)


def test_removing_one_node_changes_at_most_d_plus_one_per_root_terms(graph):
    dmax = 4
    ei, table, mask, x, x_pad, model = _setup(graph, dmax)
    n = graph.num_nodes
    roots = torch.arange(n)
    base = D.per_root_gradients(model, x, x_pad[table], mask, graph.y)
    worst = 0
    for v in range(0, n, 7):
        keep = (ei[0] != v) & (ei[1] != v)  # the neighbouring graph: v and its edges removed
        t2, m2 = D.neighbour_table(ei[:, keep], n, dmax)
        g2 = D.per_root_gradients(model, x, x_pad[t2], m2, graph.y)
        changed = torch.zeros(n, dtype=torch.bool)
        for k in base:
            changed |= (base[k] - g2[k]).flatten(1).abs().amax(1) > 1e-7
        changed[v] = True  # v's own term disappears with v
        worst = max(worst, int(changed[roots].sum()))
    assert 1 < worst <= dmax + 1


def test_ledger_calibrates_below_target_with_d_plus_one_affected_terms():
    led = D.dp_gnn_ledger(train_nodes=1000, batch_size=64, epochs=5, max_degree=10, delta=1e-4, target_epsilon=4.0)
    assert led["steps"] == (5 * 1000) // 64 >= led["steps_trained"] == 5 * (1000 // 64)
    assert led["sensitivity"] == 2 * 11 and led["event"]["max_affected"] == 11
    assert 4.0 * 0.99 <= led["epsilon"] <= 4.0
    # independent computation of the multi-term bound at the calibrated z (direct sum over the hypergeometric)
    z, t = led["noise_multiplier"], led["steps"]
    i = np.arange(0, 12)
    p = hypergeom.pmf(i, 1000, 11, 64)
    best = math.inf
    for a in np.round(np.arange(1.1, 10.0, 0.1), 2).tolist() + list(range(10, 64)):
        with np.errstate(over="ignore"):
            rdp = t * math.log(np.sum(p * np.exp(a * (a - 1) * i**2 / (2 * z * z * 121)))) / (a - 1)
        best = min(best, rdp + math.log1p(-1 / a) - (math.log(1e-4) + math.log(a)) / (a - 1))
    assert led["epsilon"] <= best + 1e-9 and best <= 4.0 + 1e-9
    less = D.dp_gnn_ledger(train_nodes=1000, batch_size=64, epochs=5, max_degree=10, delta=1e-4, noise=0.99 * z)
    assert less["epsilon"] > 4.0


def test_train_dp_gnn_runs_and_noise_matters(graph):
    quiet = D.train_dp_gnn(
        graph, D.DPGNNConfig(noise=1e-4, max_degree=6, batch_size=32, epochs=15, lr=0.05), seed=1, device="cpu"
    )
    loud = D.train_dp_gnn(
        graph, D.DPGNNConfig(noise=50.0, max_degree=6, batch_size=32, epochs=15, lr=0.05), seed=1, device="cpu"
    )
    assert quiet.test_acc > loud.test_acc and quiet.test_acc > 0.6
    again = D.train_dp_gnn(
        graph, D.DPGNNConfig(noise=50.0, max_degree=6, batch_size=32, epochs=15, lr=0.05), seed=1, device="cpu"
    )
    assert again.test_acc == loud.test_acc
    priv = D.train_dp_gnn(
        graph, D.DPGNNConfig(epsilon=8.0, max_degree=6, batch_size=32, epochs=3), seed=0, device="cpu"
    )
    assert priv.ledger["epsilon"] <= 8.0 and priv.ledger["delta"] == 1e-3  # 150 training nodes: δ = 10^-3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"noise": -1.0}, "noise"),
        ({"max_degree": 0}, "max_degree"),
        ({"delta": 1.0}, "delta"),
        ({"lr": 0.0}, "lr"),
        ({"activation": "gelu"}, "activation"),
    ],
)
def test_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        D.DPGNNConfig(**kwargs)


def test_ledger_needs_exactly_one_of_target_and_noise():
    with pytest.raises(ValueError, match="exactly one"):
        D.dp_gnn_ledger(train_nodes=10, batch_size=2, epochs=1, max_degree=2, delta=1e-3)
    with pytest.raises(ValueError, match="exactly one"):
        D.dp_gnn_ledger(train_nodes=10, batch_size=2, epochs=1, max_degree=2, delta=1e-3, target_epsilon=1.0, noise=1.0)
