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


def test_fit_stop_ends_training_after_the_epoch_and_its_selection():
    from dpgnn.train import fit

    model, step, evaluate = _scripted([0.1, 0.2, 0.3, 0.4])
    asked = []
    res = fit(model, step, evaluate, epochs=4, stop=lambda e: asked.append(e) or e == 2)
    assert asked == [1, 2] and res.stopped_early and res.epochs == 2 and res.best_epoch == 2


# ---------------------------------------------------------------------------------------------------------------
# the updates a step makes
# ---------------------------------------------------------------------------------------------------------------
def test_gradient_step_equals_the_hand_written_update_and_clips():
    from dpgnn.train import GradientStep

    def run(use_step, clip):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        x, y = torch.randn(8, 3), torch.randn(8, 2)
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        step = GradientStep(opt, lambda: ((model(x) - y) ** 2).sum(), max_grad_norm=clip)
        for _ in range(3):
            if use_step:
                loss = step()
                assert not loss.requires_grad
            else:
                opt.zero_grad()
                ((model(x) - y) ** 2).sum().backward()
                if clip is not None:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
                opt.step()
        return [p.detach().clone() for p in model.parameters()]

    for clip in (None, 0.5):
        assert all(torch.equal(a, b) for a, b in zip(run(True, clip), run(False, clip)))
    assert not all(torch.equal(a, b) for a, b in zip(run(True, 0.5), run(True, None)))


def test_gradient_step_with_gradients_set_by_the_closure():
    from dpgnn.train import GradientStep

    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([p], lr=1.0)

    def loss():
        p.grad = torch.tensor([1.0, -2.0])
        return None

    assert GradientStep(opt, loss)() is None and torch.equal(p.detach(), torch.tensor([-1.0, 2.0]))


def test_noisy_step_hooks_noise_and_batch_division_in_order():
    from dpgnn.train import NoisyStep

    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([p], lr=1.0)
    seen = []

    class Hook:
        def before_noise(self, sums, info):
            seen.append(("before", sums["w"].clone(), info))
            sums["w"] += 1.0  # a canary's gradient, added in place

        def after_noise(self, noisy, info):
            seen.append(("after", noisy["w"].clone(), info))

    step = NoisyStep(opt, {"w": p}, lambda sums: {"w": sums["w"] + 10.0}, 4, canary=Hook(), info="default")
    step({"w": torch.tensor([2.0, 6.0])})
    assert torch.equal(seen[0][1], torch.tensor([2.0, 6.0])) and seen[0][2] == "default"
    assert torch.equal(seen[1][1], torch.tensor([13.0, 17.0]))
    assert torch.equal(p.detach(), -torch.tensor([13.0, 17.0]) / 4)
    step({"w": torch.zeros(2)}, info="own")
    assert seen[-1][2] == "own"
