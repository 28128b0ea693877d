"""PrivGNN's students of one cell trained in one batch (dpgnn.methods.privgnn.train_students) against the same
students trained one after another from one seeded global generator: every student's accuracy, per-epoch loss and
weights equal its sequential run bit for bit, and the global generator ends in the same state."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from helpers.privgnn_toy import toy_privgnn

from dpgnn.methods import privgnn as P
from dpgnn.nn.privgnn import row_dropout
from dpgnn.series.privgnn import common
from dpgnn.utils import make_generator

torch.set_num_threads(1)

EPOCHS = 12
PARAMS = ("w1", "b1", "gamma", "beta", "w2", "b2", "running_mean", "running_var")


@pytest.fixture(scope="module")
def graphs() -> P.PrivGNNData:
    return toy_privgnn(n_priv=60, n_pub=80, d=6, c=3)


def _jobs(graphs: P.PrivGNNData) -> list[P.students.StudentJob]:
    """Hard-label students at two |Q| and three λ, and a soft-label student among them."""
    post = P.teacher_posteriors(graphs, 30, k=10, gamma=0.5, seed=0, epochs=3, device="cpu")
    jobs = []
    for i, lam in enumerate([0.2, 1.0, 5.0]):
        labels = P.noisy_argmax(post.posteriors, lam, make_generator(i))
        jobs += [(P.query_nodes(graphs, q), labels[:q], 100 + 10 * i + q) for q in (10, 30)]
    soft = torch.softmax(torch.randn(20, graphs.num_classes, generator=make_generator(5)), 1)
    jobs.insert(2, (P.query_nodes(graphs, 20), soft, 7))
    return jobs


def _run(fn, seed: int = 123):
    torch.manual_seed(seed)
    out = fn()
    return out, torch.default_generator.get_state()


def test_batched_students_equal_the_sequential_ones_bit_for_bit(graphs):
    jobs = _jobs(graphs)
    seq, state_seq = _run(
        lambda: [P.train_student(graphs, n, y, seed=s, epochs=EPOCHS, device="cpu") for n, y, s in jobs]
    )
    bat, state_bat = _run(lambda: P.train_students(graphs, jobs, epochs=EPOCHS, device="cpu"))
    assert torch.equal(state_seq, state_bat)
    assert len({id(r["model"]) for r in bat}) == 2  # the hard-label batch and the soft-label batch
    for one, many in zip(seq, bat):
        assert one["accuracy"] == many["accuracy"]
        assert one["history"] == many["history"]
        for name in PARAMS:
            assert torch.equal(getattr(one["model"], name)[0], getattr(many["model"], name)[many["row"]]), name
    # the comparison tells students apart: another student's weights and losses differ
    assert not torch.equal(seq[0]["model"].w1[0], bat[1]["model"].w1[bat[1]["row"]])
    assert seq[0]["history"] != bat[1]["history"]


def test_a_later_student_sees_the_stream_the_earlier_ones_left(graphs):
    """Changing the first student's epochs moves every later student's masks, in both loops alike."""
    jobs = _jobs(graphs)[:3]
    base = P.train_students(graphs, jobs, epochs=EPOCHS, device="cpu")
    torch.manual_seed(123)
    first = P.train_students(graphs, jobs[:1], epochs=EPOCHS + 1, device="cpu")
    rest = P.train_students(graphs, jobs[1:], epochs=EPOCHS, device="cpu")
    torch.manual_seed(123)
    seq = [P.train_student(graphs, *jobs[0][:2], seed=jobs[0][2], epochs=EPOCHS + 1, device="cpu")]
    seq += [P.train_student(graphs, n, y, seed=s, epochs=EPOCHS, device="cpu") for n, y, s in jobs[1:]]
    assert [r["history"] for r in first + rest] == [r["history"] for r in seq]
    assert rest[0]["history"] != base[1]["history"]


def test_dropout_starts_follow_the_global_generator():
    torch.manual_seed(4)
    states = P.students.dropout_starts(3, 5, (1, 20, 8), 0.5)
    assert len(states) == 4 and torch.equal(states[0], torch.default_generator.get_state())
    x = torch.ones(1, 20, 8)
    for s in range(3):
        assert torch.equal(torch.default_generator.get_state(), states[s])
        for _ in range(5):
            F.dropout(x, 0.5, True)
    assert torch.equal(torch.default_generator.get_state(), states[3])
    no_dropout = P.students.dropout_starts(2, 5, (1, 20, 8), 0.0)  # draws nothing: every state is the current one
    assert all(torch.equal(s, states[3]) for s in no_dropout)


def test_row_dropout_is_f_dropout_of_each_row():
    h = torch.randn(3, 40, 16, generator=make_generator(0))
    gens = [make_generator(s) for s in (1, 2, 3)]
    out = row_dropout(h, 0.3, True, gens)
    for b, seed in enumerate((1, 2, 3)):
        torch.manual_seed(seed)
        assert torch.equal(out[b], F.dropout(h[b : b + 1], 0.3, True)[0])
        assert torch.equal(gens[b].get_state(), torch.default_generator.get_state())
    assert row_dropout(h, 0.3, False, gens) is h
    with pytest.raises(ValueError, match="one dropout generator per row"):
        row_dropout(h, 0.3, True, gens[:2])


def test_the_series_students_equal_the_sequential_loop(graphs, monkeypatch):
    post = P.teacher_posteriors(graphs, 30, k=10, gamma=0.5, seed=0, epochs=3, device="cpu")
    points = [
        ("fig3", noise, lam, q, f"lam={lam:g}", 0)
        for noise in ("posterior", "log_softmax")
        for lam in (0.4, 1.0)
        for q in (10, 30)
    ]
    points.append(("appd6", "posterior", 0.4, 10, "lam=0.4", 0))  # shared with a fig3 point: trained once
    kw = dict(seed=9, k=10, gamma=0.5, teacher="paper", student_epochs=EPOCHS, device="cpu")
    batched, state_b = _run(lambda: common._privgnn_students(graphs, "credit", post, points, **kw))

    def sequential(graphs, jobs, **kw):
        return [P.train_student(graphs, n, y, seed=s, **kw) for n, y, s in jobs]

    monkeypatch.setattr(P, "train_students", sequential)
    seq, state_s = _run(lambda: common._privgnn_students(graphs, "credit", post, points, **kw))
    assert batched == seq and torch.equal(state_b, state_s)
    assert len({r["value"] for r in batched}) > 1


def test_the_method_runs_take_their_batched_students(graphs):
    """The accuracy grid's path: ``privgnn_students`` then each run with ``student=``, against the runs alone."""
    post = P.teacher_posteriors(graphs, 30, k=10, gamma=0.5, seed=0, epochs=3, device="cpu")
    base = {"k": 10, "gamma": 0.5, "student_epochs": EPOCHS, "delta": 1e-4}
    runs = [
        (m, {**base, "queries": q, "lam": lam})
        for m in ("privgnn", "privgnn_code")
        for lam in (0.4, 2.0)
        for q in (10, 30)
    ]
    run = {"privgnn": P.run_privgnn, "privgnn_code": P.run_privgnn_code}

    def one_by_one():
        return [run[m](graphs, c, seed=3, device="cpu", teachers=post) for m, c in runs]

    def batched():
        students = P.privgnn_students(graphs, runs, seed=3, teachers=post, device="cpu")
        return [run[m](graphs, c, seed=3, device="cpu", teachers=post, student=s) for (m, c), s in zip(runs, students)]

    (seq, state_s), (bat, state_b) = _run(one_by_one), _run(batched)
    assert torch.equal(state_s, state_b)
    for a, b in zip(seq, bat):
        assert a.metrics == b.metrics and a.history == b.history and a.ledger == b.ledger
    with pytest.raises(ValueError, match="same epochs"):
        P.privgnn_students(graphs, [runs[0], ("privgnn", {**runs[1][1], "student_epochs": 3})], seed=3, teachers=post)


def test_several_threads_fall_back_to_the_sequential_loop(graphs):
    jobs = _jobs(graphs)[:2]
    torch.set_num_threads(2)
    try:
        out, state = _run(lambda: P.train_students(graphs, jobs, epochs=3, device="cpu"))
    finally:
        torch.set_num_threads(1)
    seq, state_seq = _run(lambda: [P.train_student(graphs, n, y, seed=s, epochs=3, device="cpu") for n, y, s in jobs])
    assert len({id(r["model"]) for r in out}) == 2 and {r["row"] for r in out} == {0}
    assert [r["history"] for r in out] == [r["history"] for r in seq] and torch.equal(state, state_seq)
