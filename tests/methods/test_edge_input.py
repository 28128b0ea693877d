"""A user's edge_index with repeated entries gives every method the run of the deduplicated graph; the edge-level
methods that protect one undirected edge refuse a one-direction edge_index; NAP's sensitivity to one undirected
edge stays √2 when the edge is listed twice."""

from __future__ import annotations

import math

import pytest
import torch
from torch_geometric.data import Data

from dpgnn.data import csbm, private_public_split, random_node_split
from dpgnn.methods import dp_gnn, drw, gap, lpgcn, lpgnn, privgnn
from dpgnn.methods import progap as pg
from dpgnn.methods import progap_baselines as bl

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=90, num_classes=3, num_features=10, avg_degree=6.0, homophily=0.9, seed=11)
    return random_node_split(data, 0.6, 0.2, 0.2, seed=2)


def repeated(data: Data, seed: int = 0) -> Data:
    """``data`` with a third of its entries listed again and the columns shuffled (the same simple graph)."""
    g = torch.Generator().manual_seed(seed)
    ei = data.edge_index
    extra = ei[:, torch.randperm(ei.size(1), generator=g)[: ei.size(1) // 3]]
    both = torch.cat([ei, extra, extra[:, :5]], dim=1)
    out = data.clone()
    out.edge_index = both[:, torch.randperm(both.size(1), generator=g)]
    return out


def one_way(data: Data) -> Data:
    out = data.clone()
    out.edge_index = data.edge_index[:, data.edge_index[0] < data.edge_index[1]]
    return out


def same_run(a, b) -> None:
    """Two ProGAPResults of one configuration: identical accuracies and ledgers, the second noting the merge."""
    assert (a.train_acc, a.val_acc, a.test_acc) == (b.train_acc, b.val_acc, b.test_acc)
    assert "edge_input" not in a.ledger and "repeated entries merged" in b.ledger["edge_input"]
    assert {k: v for k, v in b.ledger.items() if k != "edge_input"} == a.ledger


# ---------------------------------------------------------------------------------------------------------------
# NAP: the sensitivity the edge-level ledger assumes
# ---------------------------------------------------------------------------------------------------------------
def test_nap_sensitivity_to_one_undirected_edge_listed_twice_is_sqrt2():
    n, u, v = 6, 0, 1
    base = torch.tensor([[0, 2, 2, 3, 1, 4], [2, 0, 3, 2, 4, 1]])  # undirected, without the pair {u, v}
    edge = torch.tensor([[u, v], [v, u]])
    with_edge = torch.cat([base, edge, edge], dim=1)  # the undirected edge {u, v} listed twice
    h = torch.randn(n, 5, generator=torch.Generator().manual_seed(0)) * 3.0  # NAP normalises rows: clip = 1
    agg = [pg.NAP(ei, n, 0.0, generator=torch.Generator())(h) for ei in (with_edge, base)]
    diff = float((agg[0] - agg[1]).norm())
    assert diff <= math.sqrt(2.0) + 1e-6  # 2√2 if the repeated entries were summed
    assert diff == pytest.approx(math.sqrt(2.0), abs=1e-6)
    nap = pg.NAP(with_edge, n, 0.0, generator=torch.Generator())
    assert nap.cleaning.duplicates == 2


# ---------------------------------------------------------------------------------------------------------------
# ProGAP's family: ProGAP, GAP, DP-GNN, GraphSAGE, EdgeRand, DP-MLP
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("level", ["edge", "node"])
def test_progap_repeated_entries_give_the_deduplicated_run(graph, level):
    cfg = pg.ProGAPConfig(level=level, depth=1, epochs=2, epsilon=4.0, batch_size=16, max_degree=5)
    same_run(
        pg.train_progap(graph, cfg, seed=1, device="cpu"), pg.train_progap(repeated(graph), cfg, seed=1, device="cpu")
    )


@pytest.mark.parametrize("level", ["edge", "node"])
def test_gap_repeated_entries_give_the_deduplicated_run(graph, level):
    cfg = gap.GAPConfig(level=level, hops=1, epochs=2, epsilon=4.0, batch_size=16, max_degree=5)
    same_run(gap.train_gap(graph, cfg, seed=1, device="cpu"), gap.train_gap(repeated(graph), cfg, seed=1, device="cpu"))


def test_dp_gnn_sage_edgerand_repeated_entries_give_the_deduplicated_run(graph):
    cfg = dp_gnn.DPGNNConfig(epochs=2, batch_size=16, max_degree=4)
    same_run(
        dp_gnn.train_dp_gnn(graph, cfg, seed=2, device="cpu"),
        dp_gnn.train_dp_gnn(repeated(graph), cfg, seed=2, device="cpu"),
    )
    same_run(
        bl.train_sage(graph, epochs=3, seed=2, device="cpu"),
        bl.train_sage(repeated(graph), epochs=3, seed=2, device="cpu"),
    )
    same_run(
        bl.train_edgerand(graph, 2.0, epochs=3, seed=2, device="cpu"),
        bl.train_edgerand(repeated(graph), 2.0, epochs=3, seed=2, device="cpu"),
    )
    assert torch.equal(
        bl.edgerand_perturb(graph.edge_index, graph.num_nodes, 2.0, seed=3),
        bl.edgerand_perturb(repeated(graph).edge_index, graph.num_nodes, 2.0, seed=3),
    )
    # DP-MLP never reads the graph
    a = bl.train_mlp(graph, level="node", epsilon=4.0, epochs=2, batch_size=16, device="cpu")
    b = bl.train_mlp(repeated(graph), level="node", epsilon=4.0, epochs=2, batch_size=16, device="cpu")
    assert (a.test_acc, a.ledger) == (b.test_acc, b.ledger)


def test_edge_level_methods_refuse_a_one_direction_edge_index(graph):
    half = one_way(graph)
    runs = {
        "ProGAP": lambda: pg.train_progap(half, pg.ProGAPConfig(level="edge", depth=1, epochs=1), device="cpu"),
        "GAP": lambda: gap.train_gap(half, gap.GAPConfig(level="edge", hops=1, epochs=1), device="cpu"),
        "EdgeRand": lambda: bl.train_edgerand(half, 1.0, epochs=1, device="cpu"),
    }
    for owner, run in runs.items():
        with pytest.raises(ValueError, match=rf"^{owner}: edge_index is not undirected .*undirected_edges") as err:
            run()
        assert "\n" not in str(err.value)
    # node level bounds in- and out-degrees (sound for a directed graph) and non-private runs take it as given
    node = pg.train_progap(
        half, pg.ProGAPConfig(level="node", depth=1, epochs=1, epsilon=8.0, batch_size=16, max_degree=5), device="cpu"
    )
    assert node.ledger["epsilon"] <= 8.0
    dp_gnn.train_dp_gnn(half, dp_gnn.DPGNNConfig(epochs=1, batch_size=16, max_degree=4), device="cpu")
    bl.train_sage(half, epochs=1, device="cpu")


# ---------------------------------------------------------------------------------------------------------------
# LPGNN (KProp), LPGCN, DRW/FDP, PrivGNN: the graph is public or node-level; repeated pairs merged, direction kept
# ---------------------------------------------------------------------------------------------------------------
def test_lpgnn_repeated_entries_give_the_deduplicated_run(graph):
    g = graph.clone()
    g.num_classes = 3
    kw = dict(method="mbm", eps_x=2.0, eps_y=2.0, k_x=2, k_y=1, repeats=1, epochs=4, device="cpu")
    a, b = lpgnn.run_cell(g, "cora", **kw), lpgnn.run_cell(repeated(g), "cora", **kw)
    assert [r["value"] for r in a] == [r["value"] for r in b]
    assert "edge_input" not in a[0] and "repeated entries merged" in b[0]["edge_input"]


def test_lpgcn_repeated_entries_give_the_deduplicated_run(graph):
    kw = dict(run=0, max_epochs=3, min_epochs=1, device="cpu")
    a = lpgcn.run_node_classification(graph, "cora", "pgc", 1.0, **kw)
    b = lpgcn.run_node_classification(repeated(graph), "cora", "pgc", 1.0, **kw)
    assert (a["value"], a["val_micro_f1"]) == (b["value"], b["val_micro_f1"]) and "edge_input" in b
    assert torch.equal(lpgcn.gc_mae(graph, "pgc", 1.0, 0), lpgcn.gc_mae(repeated(graph), "pgc", 1.0, 0))


def test_drw_repeated_entries_and_self_loops_give_the_deduplicated_graph(graph):
    g = repeated(graph)
    loops = torch.arange(4).repeat(2, 1)
    g.edge_index = torch.cat([g.edge_index, loops], dim=1)
    a, b = drw.prepare("toy", graph), drw.prepare("toy", g)
    assert torch.equal(a.edge_index, b.edge_index) and torch.equal(a.train_edge_index, b.train_edge_index)
    assert a.edge_input == "edge_index as given" and "4 self-loops removed" in b.edge_input
    kw = dict(
        num_layers=1,
        hidden=8,
        batch=6,
        noise_multiplier=2.0,
        delta=1e-5,
        max_steps=3,
        seed=0,
        device="cpu",
        fdp_degree=2,
    )
    for method in ("drw", "fdp"):
        ra, rb = drw.train_dp(a, method, **kw), drw.train_dp(b, method, **kw)
        assert (ra["test_f1"], ra["val_f1"]) == (rb["test_f1"], rb["val_f1"]), method


def test_privgnn_repeated_entries_give_the_deduplicated_graphs(graph):
    split = private_public_split(graph, seed=0, num_private=40, num_public_train=25, num_public_test=25)
    a = privgnn.prepare_from_data(split, "toy")
    b = privgnn.prepare_from_data(repeated(split), "toy")
    for key in ("edge_priv", "edge_pub", "agg_pub", "csr_ptr", "csr_idx"):
        assert torch.equal(getattr(a, key), getattr(b, key)), key
    assert a.edge_input == "edge_index as given" and "repeated entries merged" in b.edge_input
    accs = []
    for graphs in (a, b):
        torch.manual_seed(0)  # BatchedSAGETeachers' dropout draws from torch's global generator
        accs.append(privgnn.baseline_b1(graphs, seed=0, epochs=3, device="cpu")["accuracy"])
    assert accs[0] == accs[1]


def test_edgerand_density_counts_both_directions_so_one_undirected_edge_costs_1_1_eps(graph):
    """Brute force over the density step: neighbouring graphs (one undirected edge removed) move the Laplace
    centre by 2/n²; the noise scale measured from draws gives a privacy loss of 0.2 ε there, not 0.1 ε."""
    eps, n = 2.0, graph.num_nodes
    u, v = graph.edge_index[:, 0].tolist()
    keep = ~(
        ((graph.edge_index[0] == u) & (graph.edge_index[1] == v))
        | ((graph.edge_index[0] == v) & (graph.edge_index[1] == u))
    )
    m, m_minus = graph.edge_index.size(1), int(keep.sum())
    assert m - m_minus == 2
    gen = torch.Generator().manual_seed(0)
    draws = torch.tensor([bl.edgerand_density(m, n, eps, gen) for _ in range(20000)], dtype=torch.float64)
    scale = float((draws - m / n**2).abs().mean())  # a Laplace's mean absolute deviation is its scale
    loss = abs(m - m_minus) / n**2 / scale  # worst-case log-likelihood ratio of the two Laplace densities
    assert loss == pytest.approx(0.2 * eps, rel=0.03)
    led = bl.train_edgerand(graph, eps, epochs=1, device="cpu").ledger
    assert led["epsilon_sound"] >= 0.9 * eps + loss * 0.97 and led["epsilon_sound"] == pytest.approx(1.1 * eps)
    assert led["guarantee"] == "as_published" and "1.1 eps" in led["issues"][0]
