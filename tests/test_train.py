"""The plain training engine :func:`dpgnn.train.fit` (LPGCN's loops on it: tests/methods/test_lpgcn_train.py)."""

import pytest
import torch


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
