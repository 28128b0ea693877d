"""PrivGNN on the method contract: the registry keys, RunResult and ledgers of every method, teacher/vote reuse, and
the plain loops on dpgnn.train.fit equal to the fast teacher loop."""

from __future__ import annotations

import math

import pytest
import torch
from helpers.privgnn_toy import toy_privgnn

from dpgnn import methods
from dpgnn.methods import privgnn as P
from dpgnn.methods.privgnn import student as privgnn_student
from dpgnn.nn.privgnn import BatchedSAGETeachers, train_batched_teachers
from dpgnn.utils import make_generator

NODE = ("privgnn", "privgnn_code", "knnrem", "singlegnn", "pate_g", "pate_m")
NONE = ("b1", "b2", "b3", "mlp", "b4")
CONFIG = {
    "k": 8,
    "gamma": 0.5,
    "queries": 6,
    "lam": 0.4,
    "teacher_epochs": 3,
    "student_epochs": 3,
    "epochs": 3,
    "num_teachers": 3,
}


def _toy(n_priv=60, n_pub=50, d=6, c=3, seed=0) -> P.PrivGNNData:
    return toy_privgnn(n_priv, n_pub, d, c, seed, name="toy")


def test_every_method_is_registered_at_its_ledger_level(monkeypatch):
    keys = methods.available("privgnn")
    assert keys == sorted([("privgnn", m, "node") for m in NODE] + [("privgnn", m, "none") for m in NONE])
    specs = [methods.get("privgnn", m, level) for _, m, level in keys]
    assert all(spec.description for spec in specs) and len({spec.prepare for spec in specs}) == 1
    # the registered prepare is the data pipeline, P.prepare (imported when first called)
    monkeypatch.setattr(P.data, "prepare", lambda name, **kw: (name, kw))
    assert specs[0].prepare("amazon", order_seed=3) == ("amazon", {"order_seed": 3, "root": None})
    with pytest.raises(ValueError, match="valid:.*privgnn/node"):
        methods.get("privgnn", "privgnn", "edge")


@pytest.mark.parametrize("method", NODE + NONE)
def test_run_returns_accuracy_and_the_ledger(method):
    level = "node" if method in NODE else "none"
    data = _toy()
    res = methods.run("privgnn", method, level, data, {**CONFIG, "delta": 1e-3}, seed=0, device="cpu")
    assert isinstance(res, methods.RunResult) and 0.0 <= res.test <= 1.0 and math.isnan(res.val)
    assert res.ledger["level"] == level and res.seconds > 0
    # the per-epoch training loss of the released model (the student; the baseline's network)
    assert [h["epoch"] for h in res.history] == [1, 2, 3] and all(h["loss"] > 0 for h in res.history)
    eps = res.ledger["epsilon"]
    if method in ("privgnn", "knnrem", "singlegnn", "pate_g", "pate_m"):
        assert math.isfinite(eps) and eps > 0 and res.ledger["noise_scale"] == pytest.approx(1 / 0.4)
    else:  # log-softmax noise (unbounded sensitivity) and the non-private baselines
        assert math.isinf(eps)


def test_a_config_without_a_needed_key_says_which():
    with pytest.raises(ValueError, match="needs 'lam'"):
        P.run_privgnn(_toy(), {k: v for k, v in CONFIG.items() if k != "lam"}, seed=0, device="cpu")
    with pytest.raises(ValueError, match="needs 'delta'"):  # a dataset outside DATASETS has no default delta
        P.run_privgnn(_toy(), CONFIG, seed=0, device="cpu")


def test_shared_teachers_and_votes_give_the_runs_own_numbers():
    """One set of teachers (votes) for the largest |Q| serves a smaller |Q| and any lambda: the same student as a
    run that trains its own (dropout masks from the same global generator state). The teachers are compared
    without dropout: their masks come from torch's global generator over a whole batch of teachers, so with
    dropout a teacher also depends on how many teachers share its batch."""
    data, cfg = _toy(), {**CONFIG, "delta": 1e-3}
    no_drop = {**cfg, "dropout": 0.0}
    torch.manual_seed(0)
    own = P.run_privgnn(data, no_drop, seed=5, device="cpu")
    torch.manual_seed(0)
    post = P.teachers_for(data, {**no_drop, "teacher_queries": 10}, seed=5, device="cpu")
    shared = P.run_privgnn(data, no_drop, seed=5, device="cpu", teachers=post)
    assert shared.test == own.test and shared.ledger == own.ledger
    assert shared.extra["teacher_accuracy"] == own.extra["teacher_accuracy"]
    with pytest.raises(ValueError, match="fewer than queries=6"):
        P.run_privgnn(
            data, cfg, seed=5, device="cpu", teachers=P.teachers_for(data, {**cfg, "queries": 4}, seed=5, device="cpu")
        )
    torch.manual_seed(0)
    own = P.run_pate_m(data, cfg, seed=5, device="cpu")
    torch.manual_seed(0)
    votes = P.votes_for(data, cfg, seed=5, kind="mlp", device="cpu")
    shared = P.run_pate_m(data, cfg, seed=5, device="cpu", votes=votes)
    assert shared.test == own.test and shared.ledger["epsilon"] == own.ledger["epsilon"]


def test_single_model_loop_on_fit_equals_the_fast_teacher_loop():
    """``_fit_sage`` runs the teacher step on dpgnn.train.fit; the fast loop of train_batched_teachers with the same
    model, inputs and dropout draws gives bit-identical weights."""
    data = _toy()
    dev = torch.device("cpu")
    idx = torch.arange(data.num_private)
    torch.manual_seed(3)
    on_fit = privgnn_student._fit_sage(
        data.x_priv,
        data.edge_priv,
        idx,
        data.y_priv,
        seed=11,
        epochs=4,
        hidden=16,
        dropout=0.5,
        lr=0.01,
        num_classes=data.num_classes,
        device=dev,
    )
    xx, src, dst, inv = privgnn_student._graph_inputs(data.x_priv, data.edge_priv, dev)
    n = data.num_private
    fast = BatchedSAGETeachers(1, data.num_features, 16, data.num_classes, dropout=0.5, generators=[make_generator(11)])
    torch.manual_seed(3)
    train_batched_teachers(
        fast,
        xx.unsqueeze(0),
        torch.ones(1, n),
        data.y_priv.view(1, -1),
        src,
        dst,
        inv,
        epochs=4,
        lr=0.01,
        loss_mask=torch.ones(1, n),
    )
    for (name, a), b in zip(on_fit.state_dict().items(), fast.state_dict().values()):
        assert torch.equal(a, b), name
    assert not on_fit.training and not fast.training
