import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import VGAE

from dpgnn.data import csbm, split_edges
from dpgnn.nn import GCN, VGAEEncoder
from dpgnn.train import EarlyStopping, NegativeSampler, train_link_predictor, train_node_classifier
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
    return Data(x=x, y=y, edge_index=torch.empty(2, 0, dtype=torch.long), train_mask=train, val_mask=val,
                test_mask=val.clone())


def test_early_stopping_counter_semantics():
    es = EarlyStopping(patience=2)
    assert es.step(1.0) and es.wait == 0
    assert not es.step(1.0) and es.wait == 1  # equal is not an improvement (min_delta 0, strict)
    assert es.step(0.5) and es.wait == 0 and es.best_step == 3
    assert not es.step(float("nan")) and not es.should_stop
    assert not es.step(0.7) and es.should_stop
    es = EarlyStopping(patience=1, min_delta=0.1)
    es.step(1.0)
    assert not es.step(0.95)  # improvement smaller than min_delta
    with pytest.raises(ValueError):
        EarlyStopping(patience=0)


def test_stops_when_val_loss_stops_improving_but_not_before_min_epochs():
    torch.manual_seed(0)
    # val loss rises from epoch 1 on: best epoch 1, stopping fires once wait == patience (epoch patience + 1)
    res = train_node_classifier(Logits(3, 2), _conflict_data(), lr=0.05, weight_decay=0.0, min_epochs=0,
                                patience=3, max_epochs=100, device="cpu")
    hist = res["history"]["val_loss"]
    assert all(b > a for a, b in zip(hist, hist[1:]))
    assert res["best_epoch"] == 1 and res["stop_epoch"] == 4 == res["epochs"] == len(hist)
    # same run with min_epochs: stopping is deferred to min_epochs
    torch.manual_seed(0)
    res = train_node_classifier(Logits(3, 2), _conflict_data(), lr=0.05, weight_decay=0.0, min_epochs=15,
                                patience=3, max_epochs=100, device="cpu")
    assert res["stop_epoch"] == 15 == res["epochs"]


def test_runs_to_max_epochs_while_val_loss_improves():
    torch.manual_seed(0)
    res = train_node_classifier(Logits(3, 2), _conflict_data(agree=True), lr=0.01, weight_decay=0.0,
                                min_epochs=0, patience=2, max_epochs=30, device="cpu")
    assert res["epochs"] == 30 and res["stop_epoch"] is None and res["best_epoch"] == 30
    assert res["test_f1"] == 1.0


def test_restore_best_reloads_best_weights_and_default_does_not():
    data = _conflict_data()
    for restore in (False, True):
        torch.manual_seed(0)
        model = Logits(3, 2)
        res = train_node_classifier(model, data, lr=0.05, weight_decay=0.0, min_epochs=0, patience=3,
                                    max_epochs=100, device="cpu", restore_best=restore)
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
    data = csbm(num_nodes=300, num_classes=3, num_features=20, avg_degree=6, homophily=0.9,
                feature_sparsity=0.5, seed=0)
    a, b, c = _gcn_run(0, data), _gcn_run(0, data), _gcn_run(1, data)
    assert a["history"] == b["history"] and a["test_f1"] == b["test_f1"]  # seed 0 is a seed
    assert a["history"] != c["history"]
    assert a["test_f1"] > 0.6  # chance is 1/3
    assert a["device"] == "cpu" and set(a) >= {"val_f1", "train_f1", "epochs", "stop_epoch"}


def test_device_auto_resolves_and_data_is_not_mutated():
    data = csbm(num_nodes=60, num_classes=2, num_features=5, seed=3)
    x_before = data.x.clone()
    res = train_node_classifier(GCN(5, 4, 2), data, lr=0.01, weight_decay=0.0, max_epochs=3, min_epochs=0,
                                device="auto")
    assert res["device"].startswith("cuda" if torch.cuda.is_available() else "cpu")
    assert torch.equal(data.x, x_before) and data.x.device.type == "cpu"


def test_bad_arguments_raise():
    data = _conflict_data()
    with pytest.raises(ValueError, match="lr"):
        train_node_classifier(Logits(3, 2), data, lr=0.0, weight_decay=0.0)
    with pytest.raises(ValueError, match="min_epochs"):
        train_node_classifier(Logits(3, 2), data, lr=0.1, weight_decay=0.0, min_epochs=10, max_epochs=5)
    with pytest.raises(ValueError, match="train_mask"):
        train_node_classifier(Logits(3, 2), Data(x=data.x, y=data.y, edge_index=data.edge_index),
                              lr=0.1, weight_decay=0.0)
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
    data = csbm(num_nodes=200, num_classes=2, num_features=16, avg_degree=8, homophily=0.95,
                feature_sparsity=0.3, seed=seed)
    return split_edges(data, seed=seed)


def test_link_predictor_checks_every_k_and_respects_min_epochs():
    data = _lp_data()
    seed_everything(0)
    model = VGAE(VGAEEncoder(data.num_features, 16, 8, cached=True))
    res = train_link_predictor(model, data, lr=0.01, weight_decay=0.0, max_epochs=200, min_epochs=40,
                               check_every=5, patience=3, device="cpu", seed=0)
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
        out.append(train_link_predictor(model, data, lr=0.01, weight_decay=0.0, max_epochs=30, min_epochs=10,
                                        device="cpu", seed=0))
    assert out[0]["history"] == out[1]["history"] and out[0]["test_auc"] == out[1]["test_auc"]


class _NoSharing(GCN):
    train_mode_is_eval = False


@pytest.mark.parametrize("case", [dict(max_epochs=200, patience=5), dict(max_epochs=15, patience=50),
                                  dict(max_epochs=200, patience=5, restore_best=True)])
def test_shared_forward_path_gives_identical_results(case):
    """A dropout-free GCN reads its validation loss off the next training forward; nothing may change."""
    data = csbm(num_nodes=120, num_classes=3, num_features=10, avg_degree=4, homophily=0.7,
                feature_sparsity=0.5, seed=4)
    out = []
    for cls in (GCN, _NoSharing):
        seed_everything(3)
        model = cls(10, 8, 3, dropout=0.0)
        assert model.train_mode_is_eval is (cls is GCN)
        out.append(train_node_classifier(model, data, lr=0.05, weight_decay=0.0, min_epochs=5, device="cpu",
                                         **case))
    a, b = out
    for key in ("history", "epochs", "stop_epoch", "best_epoch", "best_val_loss", "test_f1", "val_f1"):
        assert a[key] == b[key], key
    assert len(a["history"]["val_loss"]) == len(a["history"]["train_loss"]) == a["epochs"]
    assert (a["stop_epoch"] is None) == ("patience" in case and case["patience"] == 50)
    assert not GCN(3, 4, 2, dropout=0.5).train_mode_is_eval


# ---------------------------------------------------------------------------------------------------------------
# fit: the plain training engine
# ---------------------------------------------------------------------------------------------------------------
def _scripted(vals):
    """A model whose weight records the epoch, and an evaluate that reads a scripted validation curve."""
    from torch import nn as _nn

    model = _nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.zero_()

    def step(epoch):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        return torch.tensor(1.0 / epoch)

    def evaluate(epoch):
        return {"val": vals[epoch - 1], "test": 10.0 * epoch}

    return model, step, evaluate


def test_fit_restores_the_first_best_epoch_and_reports_its_metrics():
    from dpgnn.train import fit

    model, step, evaluate = _scripted([0.2, 0.5, 0.5, 0.1])
    res = fit(model, step, evaluate, epochs=4)
    assert res.best_epoch == 2 and res.best["test"] == 20.0  # tie at epoch 3 keeps epoch 2
    assert float(model.weight.detach()) == 2.0 and res.epochs == 4 and not res.stopped_early
    assert [h["epoch"] for h in res.history] == [1, 2, 3, 4] and res.history[1]["loss"] == 0.5


def test_fit_early_stopping_min_mode_min_epochs_and_no_restore():
    from dpgnn.train import fit

    model, step, evaluate = _scripted([0.9, 0.5, 0.6, 0.7, 0.8, 0.1])
    res = fit(model, step, evaluate, epochs=6, mode="min", patience=2, restore_best=False)
    assert res.stopped_early and res.epochs == 4 and res.best_epoch == 2 and float(model.weight.detach()) == 4.0
    model, step, evaluate = _scripted([0.9, 0.5, 0.6, 0.7, 0.8, 0.1])
    res = fit(model, step, evaluate, epochs=6, mode="min", patience=2, min_epochs=6)
    assert not res.stopped_early and res.best_epoch == 6 and float(model.weight.detach()) == 6.0


def test_fit_nan_never_improves_and_keep_initial_restores_the_start():
    from dpgnn.train import fit

    nan = float("nan")
    model, step, evaluate = _scripted([nan, nan])
    res = fit(model, step, evaluate, epochs=2, keep_initial=True)
    assert res.best_epoch == 0 and res.best == {} and float(model.weight.detach()) == 0.0
    model, step, evaluate = _scripted([nan, nan])
    fit(model, step, evaluate, epochs=2)
    assert float(model.weight.detach()) == 2.0  # no copy asked for: the final weights stay


def test_fit_without_monitor_and_bad_arguments():
    from dpgnn.train import fit

    model, step, evaluate = _scripted([0.3, 0.1])
    res = fit(model, step, evaluate, epochs=2, monitor=None)
    assert res.best_epoch == 2 and res.best["val"] == 0.1
    with pytest.raises(ValueError, match="epochs"):
        fit(model, step, evaluate, epochs=0)
    with pytest.raises(ValueError, match="needs an evaluate"):
        fit(model, step, None, epochs=1)
    with pytest.raises(ValueError, match="patience"):
        fit(model, step, evaluate, epochs=1, monitor=None, patience=3)
    with pytest.raises(KeyError, match="'acc'"):
        fit(model, step, evaluate, epochs=1, monitor="acc")
