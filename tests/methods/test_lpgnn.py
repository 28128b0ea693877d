"""LPGNN method: RR labels, Drop targets, model selection, features, batched vs straightforward training, ledger."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpgnn.data import csbm
from dpgnn.methods import lpgnn as L
from dpgnn.nn.lpgnn import BatchedFeatures, normalized_adjacency

INF = math.inf


@pytest.fixture(scope="module")
def data():
    d = csbm(num_nodes=150, num_classes=3, num_features=20, avg_degree=6, homophily=0.85, seed=1)
    d.num_classes = 3
    return d


# -- labels ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "c, eps, keep", [(7, 1.0, 0.312), (7, 0.5, 0.216), (3, 2.0, 0.787), (4, 3.0, 0.870), (10, 1.0, 0.232)]
)
def test_transition_matrix_matches_spec_keep_probabilities(c, eps, keep):
    T = L.transition_matrix(eps, c)
    p = math.exp(eps) / (math.exp(eps) + c - 1)
    assert T[0, 0].item() == pytest.approx(keep, abs=5e-4)
    assert torch.allclose(T.diagonal(), torch.full((c,), p))
    off = T[~torch.eye(c, dtype=torch.bool)]
    assert torch.allclose(off, torch.full_like(off, 1 / (math.exp(eps) + c - 1)))
    assert torch.allclose(T.sum(1), torch.ones(c))
    assert torch.equal(L.transition_matrix(INF, c), torch.eye(c))


def test_perturb_labels_rate_mask_and_errors():
    n, c = 60_000, 4
    y = torch.arange(n) % c
    mask = torch.arange(n) < n - 100
    noisy = L.perturb_labels(y, 1.0, c, mask, 3)
    assert (noisy[~mask] == -1).all()  # test labels never leave the node
    keep = (noisy[mask] == y[mask]).float().mean().item()
    assert keep == pytest.approx(math.e / (math.e + 3), abs=0.01)
    assert torch.equal(noisy, L.perturb_labels(y, 1.0, c, mask, 3))
    assert torch.equal(L.perturb_labels(y, INF, c, mask, 3)[mask], y[mask])
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        L.perturb_labels(torch.tensor([0, 4]), 1.0, 4, torch.ones(2, dtype=torch.bool))
    with pytest.raises(ValueError, match="eps_y"):
        L.perturb_labels(y, 0.0, c, mask)


# -- Drop -----------------------------------------------------------------------------------------------------------
def test_drop_targets_on_a_path():
    # path 0-1-2-3-4, node 5 isolated; labels: 0->1, 1->0, 2->unlabelled, 3->2, 4->2; train = {0,1,2,5}
    edges = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4], [1, 0, 2, 1, 3, 2, 4, 3]])
    adj = normalized_adjacency(edges, 6)
    noisy = torch.tensor([1, 0, -1, 2, 2, 0])
    train = torch.tensor([0, 1, 2, 5])
    assert torch.equal(L.drop_targets(noisy, train, adj, 0, 3), noisy[train])
    # K=1: node 0 sees node 1 (label 0); node 1 sees 0 (1) and 2 (none) -> 1; node 2 sees 1 (0) and 3 (2):
    # weights 1/sqrt(2*2)=.5 each -> tie -> argmax takes class 0; isolated node 5: uniform -> class 0
    a = adj.to_dense()
    y1 = torch.nn.functional.one_hot(noisy.clamp(min=0), 3).float() * (noisy >= 0).unsqueeze(1)
    for k in (1, 2, 4):
        ref = torch.softmax(torch.linalg.matrix_power(a, k) @ y1, 1)[train].argmax(1)
        assert torch.equal(L.drop_targets(noisy, train, adj, k, 3), ref)
    assert L.drop_targets(noisy, train, adj, 1, 3).tolist() == [0, 1, 0, 0]
    # batched (N, R) labels give per-repeat targets
    both = L.drop_targets(torch.stack([noisy, noisy], 1), train, adj, 2, 3)
    assert both.shape == (4, 2) and torch.equal(both[:, 0], both[:, 1])


def test_label_probabilities_forward_correction_and_propagation():
    logits = torch.randn(5, 3)
    T = L.transition_matrix(1.0, 3)
    p, q = L.label_probabilities(logits, T, None, 0)
    assert torch.allclose(p, torch.softmax(logits, 1)) and torch.allclose(q, p @ T)
    edges = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    adj = normalized_adjacency(edges, 5)
    _, q2 = L.label_probabilities(logits, T, adj, 2)
    assert torch.allclose(q2, torch.softmax(torch.linalg.matrix_power(adj.to_dense(), 2) @ (p @ T), 1), atol=1e-6)


def test_selection_rule():
    t = lambda *v: torch.tensor(v)  # noqa: E731
    best = L.selection_step(None, t(1.0, 1.0), t(0.2, 0.2), t(0.2, 0.2), t(0.5, 0.5), 0.5, 1)
    assert best["epoch"].tolist() == [1, 1]  # first epoch initialises
    # repeat 0 improves everything within the ceiling; repeat 1 has a val acc above the RR ceiling (0.5)
    best = L.selection_step(best, t(0.9, 0.9), t(0.3, 0.6), t(0.3, 0.3), t(0.7, 0.9), 0.5, 2)
    assert best["epoch"].tolist() == [2, 1] and best["test_acc"].tolist() == pytest.approx([0.7, 0.5])
    # lower val loss but no better val acc -> not selected; train acc above 1.05 x ceiling -> not selected
    best = L.selection_step(best, t(0.5, 0.5), t(0.3, 0.4), t(0.4, 0.6), t(0.1, 0.1), 0.5, 3)
    assert best["epoch"].tolist() == [2, 1]
    best = L.selection_step(best, t(0.5, 0.5), t(0.35, 0.4), t(0.5, 0.4), t(0.8, 0.2), 0.5, 4)
    assert best["epoch"].tolist() == [4, 4]


# -- features -------------------------------------------------------------------------------------------------------
def test_draw_features_methods(data):
    n, d = data.x.shape
    mbm = L.draw_features(data, "mbm", 1.0, generator=0)
    assert mbm["kind"] == "sparse" and mbm["offset"] == 0.5 and mbm["rows"].numel() == n
    x = L.dense_features(mbm, n, d)
    scale = d / 2 * (math.e + 1) / (math.e - 1)
    allowed = torch.tensor([0.5, 0.5 + scale, 0.5 - scale])
    assert ((x.unsqueeze(-1) - allowed).abs().min(-1).values < 1e-4).all()
    one_bit = L.draw_features(data, "1bm", 1.0, generator=0)
    assert one_bit["kind"] == "dense" and (one_bit["x"] != 0.5).all()
    lpm = L.draw_features(data, "lpm", 2.0, generator=0)["x"]
    assert (lpm - data.x).abs().mean().item() == pytest.approx(d / 2.0, rel=0.1)  # E|Lap(b)| = b = d/eps
    agm = L.draw_features(data, "agm", 1.0, generator=0)["x"]
    assert (agm - data.x).std().item() > 1.0
    assert L.dense_features(L.draw_features(data, "one", INF), n, d).eq(1).all()
    ohd = L.dense_features(L.draw_features(data, "ohd", INF), n, d)
    deg = torch.bincount(data.edge_index[1], minlength=n).clamp(max=d - 1)
    assert torch.equal(ohd.argmax(1), deg) and torch.equal(ohd.sum(1), torch.ones(n))
    assert torch.equal(L.dense_features(L.draw_features(data, "mbm", INF), n, d), data.x)  # eps_x = inf -> raw


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"method": "mbm", "eps_x": 0.0}, "eps_x"),
        ({"method": "mbm", "eps_x": -1}, "eps_x"),
        ({"method": "mbm", "eps_x": 1.0, "m": 0}, r"m must be"),
        ({"method": "mbm", "eps_x": 1.0, "m": 21}, r"\[1, 20\]"),
        ({"method": "raw", "eps_x": 1.0}, "false privacy claim"),
        ({"method": "rnd", "eps_x": 1.0}, "eps_x=inf"),
        ({"method": "xyz", "eps_x": 1.0}, "feature method"),
        ({"method": "lpm", "eps_x": 1.0, "m": 2}, "m applies"),
    ],
)
def test_draw_features_errors(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        L.draw_features(data, **kwargs)


def test_ledger_and_published_values():
    led = L.privacy_ledger("mbm", 1.0, 2.0, 1432)
    assert led["epsilon"] == 3.0 and led["delta"] == 0.0 and led["m"] == 1 and led["level"] == "node-ldp"
    assert L.privacy_ledger("agm", 1.0, INF, 10)["delta"] == 1e-10
    assert L.privacy_ledger("ohd", INF, 1.0, 10)["epsilon"] == 1.0  # replacements use no private feature
    assert L.privacy_ledger("raw", INF, INF, 10)["level"] == "none"
    assert L.steps_for("cora", 1.0, 1.0) == (2, 8) and L.steps_for("facebook", 0.01, INF) == (8, 0)
    assert L.steps_for("lastfm", INF, 0.5) == (0, 4)
    assert L.hparams_for("cora", "mbm", 3.0, 1.0) == {"lr": 0.01, "weight_decay": 0.001, "dropout": 0.5}
    assert L.hparams_for("lastfm", "ohd", INF, 2.0) == {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.5}
    assert L.hparams_for("pubmed", "raw", INF, INF)["dropout"] == 0.25
    with pytest.raises(ValueError, match="eps_x in"):
        L.steps_for("cora", 5.0, 1.0)


# -- training -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("backbone", ["sage", "gcn"])
def test_batched_training_equals_straightforward_loop(data, backbone):
    n, d = data.x.shape
    adj = normalized_adjacency(data.edge_index, n)
    draw = L.draw_features(data, "mbm", 2.0, generator=4)
    noisy = L.perturb_labels(data.y, 2.0, 3, data.train_mask | data.val_mask, 5)
    feats = BatchedFeatures.from_sparse_parts(
        [draw["rows"]], [draw["cols"]], [draw["vals"]], [draw["offset"]], num_nodes=n, num_features=d, adj=adj, steps=2
    )
    kw = dict(
        backbone=backbone,
        lr=0.01,
        weight_decay=1e-3,
        dropout=0.0,
        k_y=2,
        label_method="drop",
        eps_y=2.0,
        epochs=30,
        device="cpu",
    )
    b = L.train_batched(data, feats, noisy[:, None], seeds=[9], **kw)
    r = L.train_reference(data, L.dense_features(draw, n, d), noisy, seed=9, k_x=2, **kw)
    assert b["epoch"][0] == r["epoch"] and b["test_acc"][0] == pytest.approx(r["test_acc"])
    assert b["val_loss"][0] == pytest.approx(r["val_loss"], rel=1e-5)


def test_a_release_is_propagated_once_where_that_is_cheaper(data, monkeypatch):
    from dpgnn.methods.lpgnn.cell import batched_features
    from dpgnn.nn import lpgnn as nn_lpgnn

    n, d = data.x.shape
    adj = normalized_adjacency(data.edge_index, n)
    nnz = adj.csr.values().numel()
    assert nn_lpgnn.propagate_once(n, d, adj, 2) == (n * d <= nn_lpgnn.PROPAGATE_ONCE * 2 * nnz)
    assert not nn_lpgnn.propagate_once(n, d, adj, 0) and not nn_lpgnn.propagate_once(n, d, None, 2)
    assert not nn_lpgnn.propagate_once(n, 10**6, adj, 16)  # wide features: propagate each projection
    monkeypatch.setattr(nn_lpgnn, "PROPAGATE_ONCE_LIMIT", n * d - 1)
    assert not nn_lpgnn.propagate_once(n, d, adj, 16)  # too large to hold dense
    monkeypatch.undo()
    draw = L.draw_features(data, "mbm", 2.0, generator=4)
    weight = torch.randn(1, d, 8, generator=torch.Generator().manual_seed(0))
    modes = {}
    for factor in (1e9, 0.0):  # always once, never
        monkeypatch.setattr(nn_lpgnn, "PROPAGATE_ONCE", factor)
        feats = batched_features([draw], "mbm", n, d, adj, 2, torch.device("cpu"))
        modes[factor] = (feats.dense is not None, feats.project(weight))
    assert modes[1e9][0] and not modes[0.0][0]
    torch.testing.assert_close(modes[1e9][1], modes[0.0][1], rtol=1e-5, atol=1e-5)


def test_selection_never_reads_clean_labels(data):
    n, d = data.x.shape
    adj = normalized_adjacency(data.edge_index, n)
    draw = L.draw_features(data, "mbm", 1.0, generator=1)
    noisy = L.perturb_labels(data.y, 1.0, 3, data.train_mask | data.val_mask, 2)
    feats = BatchedFeatures.from_sparse_parts(
        [draw["rows"]], [draw["cols"]], [draw["vals"]], [draw["offset"]], num_nodes=n, num_features=d, adj=adj, steps=2
    )
    kw = dict(
        backbone="sage",
        seeds=[3],
        lr=0.01,
        weight_decay=0.0,
        dropout=0.0,
        k_y=2,
        label_method="drop",
        eps_y=1.0,
        epochs=25,
        device="cpu",
    )
    a = L.train_batched(data, feats, noisy[:, None], **kw)
    scrambled = data.clone()
    labelled = data.train_mask | data.val_mask
    scrambled.y = data.y.clone()
    scrambled.y[labelled] = (data.y[labelled] + 1) % 3  # clean train/val labels changed, noisy ones kept
    b = L.train_batched(scrambled, feats, noisy[:, None], **kw)
    assert a["epoch"] == b["epoch"] and a["test_acc"] == b["test_acc"]


def test_run_cell_rows_reproducible_and_learns(data):
    rows = L.run_cell(
        data,
        "cora",
        method="mbm",
        eps_x=3.0,
        eps_y=INF,
        k_x=2,
        k_y=0,
        repeats=3,
        epochs=60,
        hparams={"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0},
        device="cpu",
    )
    assert len(rows) == 3 and {r["run"] for r in rows} == {0, 1, 2}
    for r in rows:
        assert 0 <= r["value"] <= 100 and r["epsilon"] == INF and r["eps_x"] == 3.0 and r["metric"] == "accuracy"
        assert r["mechanism"].startswith("features=mbm")
    again = L.run_cell(
        data,
        "cora",
        method="mbm",
        eps_x=3.0,
        eps_y=INF,
        k_x=2,
        k_y=0,
        repeats=3,
        epochs=60,
        hparams={"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0},
        device="cpu",
    )
    assert [r["value"] for r in rows] == [r["value"] for r in again]
    raw = L.run_cell(
        data,
        "cora",
        method="raw",
        eps_x=INF,
        eps_y=INF,
        k_x=0,
        repeats=2,
        epochs=60,
        hparams={"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0},
        device="cpu",
    )
    assert np.mean([r["value"] for r in raw]) > 60  # the CSBM classes are learnable from clean data
    with pytest.raises(ValueError, match="backbone"):
        L.run_cell(data, "cora", backbone="mlp")
    with pytest.raises(ValueError, match="dataset"):
        L.run_cell(data, "citeseer")
    with pytest.raises(ValueError, match="label_method"):
        L.run_cell(data, "cora", label_method="xx")


def test_tune_uses_noisy_validation(data):
    best, summary = L.tune(
        data,
        "cora",
        method="mbm",
        eps_x=1.0,
        eps_y=2.0,
        grid={"lr": [0.01, 1e-4]},
        repeats=2,
        epochs=20,
        device="cpu",
        k_x=2,
        k_y=2,
    )
    assert len(summary) == 2 and best["lr"] in (0.01, 1e-4)
    top = max(summary, key=lambda s: (s["val_acc_noisy"], -s["val_loss_noisy"]))
    assert best["lr"] == top["lr"]
    with pytest.raises(ValueError, match="grid keys"):
        L.tune(data, "cora", grid={"momentum": [0.9]})
