"""What the code guarantees -- DRW/FDP sound mode, ProGAP's undirected edge level and node-level own
row, NaN features refused, and the guarantee fields on every method's ledger."""

from __future__ import annotations

import math

import pytest
import torch

from dpgnn.data import csbm, random_node_split
from dpgnn.data.random_walks import disjoint_random_walks
from dpgnn.methods import dp_gnn, gap, lpgcn, lpgnn
from dpgnn.methods import drw as D
from dpgnn.methods import privgnn as P
from dpgnn.methods import progap as pg
from dpgnn.methods import progap_baselines as bl
from dpgnn.nn.drw import build_model
from dpgnn.privacy.guarantee import CLIPPING, MODEL_SELECTION, PREPROCESSING, check_ledger

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def raw():
    g = csbm(num_nodes=160, num_classes=3, num_features=10, avg_degree=4, homophily=0.9, feature_sparsity=0.3, seed=5)
    g.x = g.x * 3.0 + 1.0  # raw scale far from z-scores
    return g


def _changed(raw, node):
    g = raw.clone()
    g.x = raw.x.clone()
    g.x[node] = g.x[node] + 50.0 * torch.randn(g.x.shape[1], generator=torch.Generator().manual_seed(node))
    return g


def _clipped_total(model, x, subs, y, thr):
    idx = torch.arange(subs.num_subgraphs)
    xb, ab = D.dense_subgraph_inputs(x, subs, idx)
    g = D.per_subgraph_grads(model, xb, ab, y[subs.roots[idx]])
    s = D.clip_and_noise(g, thr, 0.0)
    return torch.cat([v.flatten() for v in s.values()]), xb


# ---------------------------------------------------------------------------------------------------------------
# DRW / FDP sound mode
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("node", [0, 37, 101])
def test_drw_sound_mode_one_node_moves_one_subgraph_and_the_sum_by_at_most_2c(raw, node):
    a, b = D.prepare("toy", raw, scaling="none"), D.prepare("toy", _changed(raw, node), scaling="none")
    assert torch.equal(torch.nonzero((a.x != b.x).any(1)).view(-1), torch.tensor([node]))  # only its own row
    subs = disjoint_random_walks(a.train_edge_index, a.num_nodes, a.train, 2, 1, seed=3)
    torch.manual_seed(0)
    model = build_model("gcn", a.x.shape[1], a.num_classes, 2, hidden=8).double()
    thr = D.clip_thresholds(None, clip_norm=1.0, names=[k for k, _ in model.named_parameters()])
    c = math.sqrt(sum(v * v for v in thr.values()))
    sa, xa = _clipped_total(model, a.x.double(), subs, a.y, thr)
    sb, xb = _clipped_total(model, b.x.double(), subs, b.y, thr)
    moved = torch.nonzero((xa != xb).flatten(1).any(1)).view(-1)
    contains = torch.nonzero((subs.nodes == node).any(1)).view(-1)
    assert set(moved.tolist()) <= set(contains.tolist()) and len(contains) <= 1
    assert float((sa - sb).norm()) <= 2 * c + 1e-9
    # the paper's preprocessing: z-scoring with training statistics moves every node's input
    za, zb = D.prepare("toy", raw), D.prepare("toy", _changed(raw, node))
    assert int((za.x != zb.x).any(1).sum()) > a.num_nodes // 2


def test_drw_ledgers_name_what_is_not_covered(raw):
    kw = dict(lr=0.1, noise_multiplier=1.0, target_epsilon=1.0, max_steps=2, batch=8, device="cpu")
    pub = D.train_dp(D.prepare("toy", raw), "drw", clip_fraction=0.1, **kw)["ledger"]
    assert pub["guarantee"] == "as_published"
    assert pub["not_covered"] == [PREPROCESSING, CLIPPING, MODEL_SELECTION]
    snd = D.train_dp(
        D.prepare("toy", raw, scaling="none"), "drw", clip_fraction=None, clip_norm=1.0, select="last", **kw
    )["ledger"]
    assert snd["guarantee"] == "sound" and snd["not_covered"] == [] and snd["clip_total"] == pytest.approx(1.0)
    fdp = D.train_dp(
        D.prepare("toy", raw, scaling="none"), "fdp", clip_fraction=None, clip_norm=1.0, select="best_val", **kw
    )["ledger"]
    assert fdp["guarantee"] == "as_published" and fdp["not_covered"] == [MODEL_SELECTION]
    for led in (pub, snd, fdp):
        check_ledger(led)
    with pytest.raises(ValueError, match="select"):
        D.train_dp(D.prepare("toy", raw), "drw", select="best", **kw)
    with pytest.raises(ValueError, match="scaling"):
        D.prepare("toy", raw, scaling="minmax")


# ---------------------------------------------------------------------------------------------------------------
# ProGAP / GAP
# ---------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=200, num_classes=3, num_features=16, avg_degree=6.0, homophily=0.9, seed=3)
    return random_node_split(data, 0.75, 0.10, 0.15, seed=1)


def test_undirected_edge_sensitivity_is_sqrt2(graph):
    n, ei = graph.num_nodes, graph.edge_index
    h = torch.randn(n, 8, generator=torch.Generator().manual_seed(0))
    base = pg.NAP(ei, n, 0.0, generator=torch.Generator())(h)
    worst = 0.0
    for e in range(0, ei.size(1), 11):  # remove one undirected edge: both of its directions
        u, v = int(ei[0, e]), int(ei[1, e])
        keep = ~(((ei[0] == u) & (ei[1] == v)) | ((ei[0] == v) & (ei[1] == u)))
        diff = (pg.NAP(ei[:, keep], n, 0.0, generator=torch.Generator())(h) - base).norm()
        worst = max(worst, float(diff))
    assert worst == pytest.approx(math.sqrt(2.0), abs=1e-5) == pg.edge_sensitivity("undirected")
    assert pg.edge_sensitivity("directed") == 1.0
    d = pg.privacy_ledger("edge", depth=3, delta=1e-5, target_epsilon=2.0)
    u = pg.privacy_ledger("edge", depth=3, delta=1e-5, target_epsilon=2.0, edge_relation="undirected")
    assert u["epsilon"] == d["epsilon"] and u["noise_multiplier"] == d["noise_multiplier"]
    assert u["sigma_nap"] == pytest.approx(math.sqrt(2.0) * d["sigma_nap"])
    assert (d["guarantee"], u["guarantee"]) == ("as_published", "sound")
    assert "directed" in d["neighbouring"] and "undirected" in u["neighbouring"]
    with pytest.raises(ValueError, match="edge_relation"):
        pg.ProGAPConfig(edge_relation="both")
    res = pg.train_progap(
        graph,
        pg.ProGAPConfig(level="edge", depth=1, epsilon=4.0, epochs=2, edge_relation="undirected"),
        seed=0,
        device="cpu",
    )
    assert res.ledger["guarantee"] == "sound" and res.ledger["sensitivity_nap"] == pytest.approx(math.sqrt(2))
    g = gap.train_gap(
        graph, gap.GAPConfig(level="edge", hops=1, epsilon=4.0, epochs=2, edge_relation="undirected"), device="cpu"
    )
    assert g.ledger["guarantee"] == "sound"
    from dpgnn.series import progap as series  # the series' cells pass the option through

    row = series.run_cell(
        graph,
        dict(
            method="progap",
            level="edge",
            epsilon=4.0,
            depth=1,
            lr=0.01,
            base_layers=1,
            epochs=1,
            seed=0,
            run=0,
            edge_relation="undirected",
        ),
        device="cpu",
    )[0]
    assert row["ledger"]["guarantee"] == "sound" and row["ledger"]["edge_relation"] == "undirected"


def test_node_level_own_row_is_not_within_sqrt_d():
    """The statement in the ledger: the removed node's own aggregate row can have norm D > √D."""
    n, d = 12, 4
    src = torch.arange(1, d + 1)
    ei = torch.stack([src, torch.zeros(d, dtype=torch.long)])  # node 0 has D in-neighbours
    h = torch.ones(n, 3)  # aligned unit rows after normalisation
    own = pg.NAP(ei, n, 0.0, generator=torch.Generator())(h)[0]
    assert float(own.norm()) == pytest.approx(d) and d > math.sqrt(d)
    led = pg.privacy_ledger("node", depth=2, delta=1e-4, noise=1.0, max_degree=d, train_nodes=100, batch_size=10)
    assert led["guarantee"] == "as_published" and MODEL_SELECTION in led["not_covered"]
    assert any("own aggregate row" in s for s in led["issues"])


# ---------------------------------------------------------------------------------------------------------------
# NaN features
# ---------------------------------------------------------------------------------------------------------------
def test_nan_features_are_refused(graph, raw):
    bad = graph.clone()
    bad.x = torch.full_like(graph.x, float("nan"))
    calls = [
        lambda: pg.train_progap(bad, pg.ProGAPConfig(level="edge", depth=1, epochs=1), device="cpu"),
        lambda: gap.train_gap(bad, gap.GAPConfig(level="edge", hops=1, epochs=1), device="cpu"),
        lambda: bl.train_mlp(bad, level="none", epochs=1, device="cpu"),
        lambda: bl.train_sage(bad, epochs=1, device="cpu"),
        lambda: dp_gnn.train_dp_gnn(bad, dp_gnn.DPGNNConfig(epsilon=4.0, epochs=1), device="cpu"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="NaN"):
            call()
    one = raw.clone()
    one.x = raw.x.clone()
    one.x[7, 2] = float("inf")
    with pytest.raises(ValueError, match="row 7"):
        D.prepare("toy", one, scaling="none")
    priv = raw.clone()
    priv.x = one.x
    n = raw.num_nodes
    priv.private_mask = torch.arange(n) < n // 2
    priv.public_train_mask = (torch.arange(n) >= n // 2) & (torch.arange(n) < 3 * n // 4)
    priv.public_test_mask = torch.arange(n) >= 3 * n // 4
    with pytest.raises(ValueError, match="NaN or infinite"):
        P.prepare_from_data(priv, "toy")
    for method in ("raw", "lm"):  # LPGCN: the raw features too (the mechanisms refuse NaN on their own)
        with pytest.raises(ValueError, match="NaN"):
            lpgcn.perturb_features(bad.x, method, None if method == "raw" else 1.0, 0)
    with pytest.raises(ValueError, match="NaN"):
        lpgnn.draw_features(bad, "raw", math.inf)


# ---------------------------------------------------------------------------------------------------------------
# the guarantee fields on every method's ledger (the row builders the series store)
# ---------------------------------------------------------------------------------------------------------------
def test_every_method_ledger_carries_the_guarantee_fields():
    leds = [lpgcn.privacy_ledger(m, None if m == "raw" else 1.0, 10) for m in ("raw", "lm", "pgc")]
    leds += [lpgnn.privacy_ledger("mbm", 1.0, 1.0, 10), lpgnn.privacy_ledger("raw", math.inf, math.inf, 10)]
    leds += [
        P.privacy_ledger("privgnn", lam=0.4, queries=10, gamma=0.3, delta=1e-4, num_classes=3),
        P.privacy_ledger("pate_g", lam=0.4, queries=10, delta=1e-4),
        P.privacy_ledger("b1"),
    ]
    leds += [
        pg.privacy_ledger(
            lv,
            depth=2,
            delta=None if lv == "none" else 1e-4,
            noise=None if lv == "none" else 1.0,
            max_degree=5 if lv == "node" else None,
            train_nodes=100,
            batch_size=10,
        )
        for lv in ("none", "edge", "node")
    ]
    leds += [dp_gnn.dp_gnn_ledger(train_nodes=100, batch_size=10, epochs=2, max_degree=3, delta=1e-4, noise=2.0)]
    for led in leds:
        assert check_ledger(led)["guarantee"] in ("sound", "as_published")
    assert lpgcn.privacy_ledger("lm", 1.0, 10)["not_covered"] == [PREPROCESSING]
    assert P.privacy_ledger("privgnn", lam=0.4, queries=10, gamma=0.3, delta=1e-4, standardized=True)[
        "not_covered"
    ] == [PREPROCESSING]
