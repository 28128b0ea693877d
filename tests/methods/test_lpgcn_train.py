"""LPGCN's full-batch loops (:func:`dpgnn.methods.lpgcn.train_node_classifier`, ``train_link_predictor``) on the
plain engine :func:`dpgnn.train.fit`."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import VGAE

from dpgnn.data import csbm, split_edges
from dpgnn.methods.lpgcn import NegativeSampler, train_link_predictor, train_node_classifier
from dpgnn.nn import GCN, VGAEEncoder
from dpgnn.utils import seed_everything


class Logits(nn.Module):
    """Ignores the graph: log-softmax of a linear map of the features."""

    def __init__(self, d, c):
        super().__init__()
        self.lin = nn.Linear(d, c)

    def forward(self, x, edge_index):
        return F.log_softmax(self.lin(x), dim=-1)


def _conflict_data(n=20, agree=False):
    """Identical features everywhere; training nodes say class 0, validation nodes class 1 (unless agree)."""
    x = torch.ones(n, 3)
    y = torch.zeros(n, dtype=torch.long)
    train = torch.zeros(n, dtype=torch.bool)
    train[: n // 2] = True
    val = ~train
    if not agree:
        y[val] = 1
    return Data(
        x=x, y=y, edge_index=torch.empty(2, 0, dtype=torch.long), train_mask=train, val_mask=val, test_mask=val.clone()
    )


def test_stops_when_val_loss_stops_improving_but_not_before_min_epochs():
    torch.manual_seed(0)
    # val loss rises from epoch 1 on: best epoch 1, stopping fires once wait == patience (epoch patience + 1)
    res = train_node_classifier(
        Logits(3, 2),
        _conflict_data(),
        lr=0.05,
        weight_decay=0.0,
        min_epochs=0,
        patience=3,
        max_epochs=100,
        device="cpu",
    )
    hist = res["history"]["val_loss"]
    assert all(b > a for a, b in zip(hist, hist[1:]))
    assert res["best_epoch"] == 1 and res["stop_epoch"] == 4 == res["epochs"] == len(hist)
    # same run with min_epochs: stopping is deferred to min_epochs
    torch.manual_seed(0)
    res = train_node_classifier(
        Logits(3, 2),
        _conflict_data(),
        lr=0.05,
        weight_decay=0.0,
        min_epochs=15,
        patience=3,
        max_epochs=100,
        device="cpu",
    )
    assert res["stop_epoch"] == 15 == res["epochs"]


def test_runs_to_max_epochs_while_val_loss_improves():
    torch.manual_seed(0)
    res = train_node_classifier(
        Logits(3, 2),
        _conflict_data(agree=True),
        lr=0.01,
        weight_decay=0.0,
        min_epochs=0,
        patience=2,
        max_epochs=30,
        device="cpu",
    )
    assert res["epochs"] == 30 and res["stop_epoch"] is None and res["best_epoch"] == 30
    assert res["test_f1"] == 1.0


def test_restore_best_reloads_best_weights_and_default_does_not():
    data = _conflict_data()
    for restore in (False, True):
        torch.manual_seed(0)
        model = Logits(3, 2)
        res = train_node_classifier(
            model,
            data,
            lr=0.05,
            weight_decay=0.0,
            min_epochs=0,
            patience=3,
            max_epochs=100,
            device="cpu",
            restore_best=restore,
        )
        model.eval()
        with torch.no_grad():
            final = F.nll_loss(model(data.x, data.edge_index)[data.val_mask], data.y[data.val_mask]).item()
        target = res["history"]["val_loss"][0 if restore else -1]
        assert res["restored_best"] is restore
        assert math.isclose(final, target, rel_tol=1e-6)


def _gcn_run(seed, data):
    seed_everything(seed)
    model = GCN(data.num_features, 16, int(data.y.max()) + 1, dropout=0.5, cached=True)
    return train_node_classifier(model, data, lr=0.01, weight_decay=5e-4, max_epochs=40, device="cpu")


def test_gcn_on_csbm_is_reproducible_and_learns():
    data = csbm(
        num_nodes=300, num_classes=3, num_features=20, avg_degree=6, homophily=0.9, feature_sparsity=0.5, seed=0
    )
    a, b, c = _gcn_run(0, data), _gcn_run(0, data), _gcn_run(1, data)
    assert a["history"] == b["history"] and a["test_f1"] == b["test_f1"]  # seed 0 is a seed
    assert a["history"] != c["history"]
    assert a["test_f1"] > 0.6  # chance is 1/3
    assert a["device"] == "cpu" and set(a) >= {"val_f1", "train_f1", "epochs", "stop_epoch"}


def test_device_auto_resolves_and_data_is_not_mutated():
    data = csbm(num_nodes=60, num_classes=2, num_features=5, seed=3)
    x_before = data.x.clone()
    res = train_node_classifier(
        GCN(5, 4, 2), data, lr=0.01, weight_decay=0.0, max_epochs=3, min_epochs=0, device="auto"
    )
    assert res["device"].startswith("cuda" if torch.cuda.is_available() else "cpu")
    assert torch.equal(data.x, x_before) and data.x.device.type == "cpu"


def test_bad_arguments_raise():
    data = _conflict_data()
    with pytest.raises(ValueError, match="lr"):
        train_node_classifier(Logits(3, 2), data, lr=0.0, weight_decay=0.0)
    with pytest.raises(ValueError, match="min_epochs"):
        train_node_classifier(Logits(3, 2), data, lr=0.1, weight_decay=0.0, min_epochs=10, max_epochs=5)
    with pytest.raises(ValueError, match="train_mask"):
        train_node_classifier(
            Logits(3, 2), Data(x=data.x, y=data.y, edge_index=data.edge_index), lr=0.1, weight_decay=0.0
        )
    with pytest.raises(ValueError, match="split the edges"):
        train_link_predictor(VGAE(VGAEEncoder(3)), data, lr=0.01, weight_decay=0.0)


def test_negative_sampler_excludes_positives_and_self_loops():
    n = 30
    pos = torch.randint(n, (2, 200), generator=torch.Generator().manual_seed(0))
    s1 = NegativeSampler(pos, n, torch.Generator().manual_seed(5))
    neg = s1(500)
    assert neg.shape == (2, 500)
    assert bool((neg[0] != neg[1]).all())
    assert neg.min() >= 0 and neg.max() < n
    pos_set = {tuple(e) for e in pos.T.tolist()}
    assert not any(tuple(e) in pos_set for e in neg.T.tolist())
    # reproducible from the generator seed, and covers the negative pairs roughly uniformly
    assert torch.equal(neg, NegativeSampler(pos, n, torch.Generator().manual_seed(5))(500))
    many = s1(20000)
    counts = torch.bincount(many[0] * n + many[1], minlength=n * n).float()
    valid = counts > 0
    n_valid = n * (n - 1) - len({e for e in pos_set if e[0] != e[1]})
    assert int(valid.sum()) == n_valid
    assert counts[valid].std() / counts[valid].mean() < 0.25  # Poisson(~25) would give ~0.2


def _lp_data(seed=0):
    data = csbm(
        num_nodes=200, num_classes=2, num_features=16, avg_degree=8, homophily=0.95, feature_sparsity=0.3, seed=seed
    )
    return split_edges(data, seed=seed)


def test_link_predictor_checks_every_k_and_respects_min_epochs():
    data = _lp_data()
    seed_everything(0)
    model = VGAE(VGAEEncoder(data.num_features, 16, 8, cached=True))
    res = train_link_predictor(
        model,
        data,
        lr=0.01,
        weight_decay=0.0,
        max_epochs=200,
        min_epochs=40,
        check_every=5,
        patience=3,
        device="cpu",
        seed=0,
    )
    assert res["epochs"] >= 40
    assert res["epochs"] % 5 == 0
    assert len(res["history"]["val_loss"]) == res["epochs"] // 5
    assert len(res["history"]["train_loss"]) == res["epochs"]
    if res["stop_epoch"] is not None:
        vl = res["history"]["val_loss"]
        best = min(range(len(vl)), key=vl.__getitem__)
        assert len(vl) - 1 - best >= 3  # at least `patience` checks without improvement
    assert res["test_auc"] > 0.7 and 0 <= res["test_ap"] <= 1


def test_link_predictor_is_reproducible():
    data = _lp_data(1)
    out = []
    for _ in range(2):
        seed_everything(0)
        model = VGAE(VGAEEncoder(data.num_features, 16, 8))
        out.append(
            train_link_predictor(
                model, data, lr=0.01, weight_decay=0.0, max_epochs=30, min_epochs=10, device="cpu", seed=0
            )
        )
    assert out[0]["history"] == out[1]["history"] and out[0]["test_auc"] == out[1]["test_auc"]


class _NoSharing(GCN):
    train_mode_is_eval = False


@pytest.mark.parametrize(
    "case",
    [
        dict(max_epochs=200, patience=5),
        dict(max_epochs=15, patience=50),
        dict(max_epochs=200, patience=5, restore_best=True),
    ],
)
def test_shared_forward_path_gives_identical_results(case):
    """A dropout-free GCN reads its validation loss off the next training forward; nothing may change."""
    data = csbm(
        num_nodes=120, num_classes=3, num_features=10, avg_degree=4, homophily=0.7, feature_sparsity=0.5, seed=4
    )
    out = []
    for cls in (GCN, _NoSharing):
        seed_everything(3)
        model = cls(10, 8, 3, dropout=0.0)
        assert model.train_mode_is_eval is (cls is GCN)
        out.append(train_node_classifier(model, data, lr=0.05, weight_decay=0.0, min_epochs=5, device="cpu", **case))
    a, b = out
    for key in ("history", "epochs", "stop_epoch", "best_epoch", "best_val_loss", "test_f1", "val_f1"):
        assert a[key] == b[key], key
    assert len(a["history"]["val_loss"]) == len(a["history"]["train_loss"]) == a["epochs"]
    assert (a["stop_epoch"] is None) == ("patience" in case and case["patience"] == 50)
    assert not GCN(3, 4, 2, dropout=0.5).train_mode_is_eval


def test_link_predictor_trains_the_epochs_after_the_last_check_without_checking():
    data = _lp_data(2)
    seed_everything(0)
    res = train_link_predictor(
        VGAE(VGAEEncoder(data.num_features, 16, 8)),
        data,
        lr=0.01,
        weight_decay=0.0,
        max_epochs=23,
        min_epochs=0,
        check_every=5,
        patience=50,
        device="cpu",
        seed=0,
    )
    assert res["epochs"] == 23 and res["stop_epoch"] is None
    assert len(res["history"]["train_loss"]) == 23 and len(res["history"]["val_loss"]) == 4
    assert res["best_epoch"] in (5, 10, 15, 20)
    seed_everything(0)
    short = train_link_predictor(
        VGAE(VGAEEncoder(data.num_features, 16, 8)),
        data,
        lr=0.01,
        weight_decay=0.0,
        max_epochs=3,
        min_epochs=0,
        check_every=5,
        patience=1,
        device="cpu",
        seed=0,
    )
    assert short["epochs"] == 3 and short["history"]["val_loss"] == [] and short["best_epoch"] is None


def test_link_predictor_restore_best_survives_the_trailing_epochs():
    data = _lp_data(3)
    out = {}
    for max_epochs in (20, 23):  # the same checks; 23 trains 3 more epochs after the last one
        seed_everything(0)
        model = VGAE(VGAEEncoder(data.num_features, 16, 8))
        out[max_epochs] = train_link_predictor(
            model,
            data,
            lr=0.01,
            weight_decay=0.0,
            max_epochs=max_epochs,
            min_epochs=0,
            check_every=5,
            patience=50,
            device="cpu",
            seed=0,
            restore_best=True,
        )
    a, b = out[20], out[23]
    assert a["restored_best"] and b["restored_best"] and a["best_epoch"] == b["best_epoch"]
    assert a["history"]["val_loss"] == b["history"]["val_loss"]
    assert (a["test_auc"], a["test_ap"]) == (b["test_auc"], b["test_ap"])  # the restored best is what is tested
