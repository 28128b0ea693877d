"""Many PrivGNN students of one cell trained at once, each bit for bit the student :func:`train_student` trains.

A cell trains one student per distinct (noise, λ, |Q|) point, one after another; each has its own initialisation
generator, but its dropout masks come from torch's global generator, which the cell seeds once, so student ``s``
draws its masks where student ``s - 1`` stopped. :func:`train_students` trains the ``S`` students as the ``S``
rows of one :class:`~dpgnn.nn.privgnn.BatchedSAGETeachers` on the public graph and keeps those numbers:

* the global generator's state at the start of each student is found without training: from the current state,
  the dropout masks of the students before it (one [1, N, hidden] mask per epoch) are drawn in a scratch generator;
* row ``s`` draws its masks from its own generator started in that state
  (:func:`~dpgnn.nn.privgnn.row_dropout`, the same numbers as ``F.dropout`` on the CPU), and at the end the global
  generator is left where the last student left it, so whatever the cell does next draws what it always drew;
* everything else is per row already (initialisation, BatchNorm statistics, per-row loss, element-wise Adam,
  updating each row's slices as tensors of their own: :func:`~dpgnn.nn.privgnn.teacher_step` with ``per_row``).
  The students share their input, so the first layer, most of the work, is one wide product
  ``[N, 2d] x [2d, S·h]`` (its weight gradient one ``[2d, N] x [N, S·h]``); each student's columns of it, like the
  second layer's batched products, are the numbers of its own B = 1 product (tested bit for bit against the
  sequential students). That product still does each student's multiply-adds (the CPU's matrix kernel on wider
  panels, not fewer operations), so the batch saves the per-student overheads, not the arithmetic
  (benchmarks/README.md#privgnn-students).

Students with hard labels [q] and students with soft labels [q, c] train in two batches (each kind keeps its own
loss). Pre-training (``pretrain_epochs > 0``), the official student (:func:`authors_code_student`), CUDA devices
(whose fused dropout draws differently) and more than one CPU thread stay with the sequential
:func:`train_student`: with several threads some kernels split their work by the tensors' sizes (on Cora the first
layer's gradients of a batch differ from the B = 1 model's in the last bits), while with one thread, each engine
worker's default, the batch is the sequential loop bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from dpgnn.methods.privgnn.data import PrivGNNData, query_nodes
from dpgnn.methods.privgnn.mechanism import noisy_argmax
from dpgnn.methods.privgnn.student import _graph_inputs, train_student
from dpgnn.metrics import accuracy
from dpgnn.nn.privgnn import BatchedSAGETeachers, teacher_step
from dpgnn.utils import make_generator, resolve_device, stable_seed

__all__ = ["StudentJob", "dropout_starts", "train_students"]

#: one student: its ``train_nodes`` (public-graph indices), their ``labels`` (hard [q] or soft [q, c]) and its seed
StudentJob = tuple[Tensor, Tensor, int]


def student_job(
    data: PrivGNNData, posteriors: Tensor, *, seed: int, noise_on: str, lam: float, q: int, tag: Any
) -> tuple[Tensor, Tensor, int]:
    """The student of one (noise, λ, |Q|) point: its ``q`` query nodes, their noisy labels (the first ``q`` of
    every query's, drawn from the stream of ``(seed, λ, tag)``) and its seed. ``tag`` names the teachers (the
    series' ``k``, a run's variant stream), so a cell, a series and :func:`dpgnn.fit` draw the same students."""
    labels = noisy_argmax(posteriors, lam, make_generator(stable_seed(seed, "noise", lam, tag)), noise_on=noise_on)
    return query_nodes(data, q), labels[:q], stable_seed(seed, ("student", noise_on, lam, q, tag))


def dropout_starts(count: int, epochs: int, shape: Sequence[int], p: float) -> list[torch.Tensor]:
    """The global generator's states at the start of ``count`` models trained one after another from its current
    state, each drawing ``epochs`` dropout masks of ``shape`` with rate ``p``, and the state after the last one
    (``count + 1`` states). Nothing is trained and the global generator is not advanced."""
    scratch = torch.Generator()
    scratch.set_state(torch.default_generator.get_state())
    states = [scratch.get_state()]
    mask = torch.empty(*shape)
    for _ in range(count):
        if p > 0.0:
            for _ in range(epochs):
                mask.bernoulli_(1 - p, generator=scratch)
        states.append(scratch.get_state())
    return states


def _batch_inputs(graphs: PrivGNNData, jobs: Sequence[StudentJob], soft: bool) -> tuple[Tensor, Tensor]:
    """Per-row targets [S, N] (or [S, N, c]) and loss masks [S, N] of the students ``jobs`` on the public graph."""
    n, s = graphs.x_pub.size(0), len(jobs)
    loss_mask = torch.zeros(s, n)
    y = torch.zeros(s, n, graphs.num_classes) if soft else torch.zeros(s, n, dtype=torch.long)
    for b, (nodes, labels, _) in enumerate(jobs):
        loss_mask[b, nodes] = 1.0
        y[b, nodes] = labels
    return y, loss_mask


def _fit_rows(
    graphs: PrivGNNData,
    jobs: Sequence[StudentJob],
    starts: Sequence[torch.Tensor],
    *,
    epochs: int,
    hidden: int,
    dropout: float,
    lr: float,
) -> tuple[BatchedSAGETeachers, Tensor]:
    """The students ``jobs`` (all hard or all soft labels) trained as one batch, row ``b``'s dropout masks from a
    generator in state ``starts[b]``; the trained model and the per-row training losses [epochs, S]."""
    xx, src, dst, inv = _graph_inputs(graphs.x_pub, graphs.edge_pub, torch.device("cpu"))
    n, s = xx.size(0), len(jobs)
    model = BatchedSAGETeachers(
        s,
        graphs.num_features,
        hidden,
        graphs.num_classes,
        dropout=dropout,
        generators=[make_generator(stable_seed(seed, "student")) for _, _, seed in jobs],
    )
    gens = []
    for state in starts:
        gens.append(torch.Generator())
        gens[-1].set_state(state)
    y, loss_mask = _batch_inputs(graphs, jobs, soft=jobs[0][1].dim() == 2)
    offsets = torch.arange(s).repeat_interleave(src.numel()) * n
    step = teacher_step(
        model,
        xx,
        torch.ones(s, n),
        y,
        src.repeat(s) + offsets,
        dst.repeat(s) + offsets,
        inv.repeat(s, 1),
        lr=lr,
        loss_mask=loss_mask,
        dropout_generators=gens,
        per_row=True,
    )
    model.train()
    losses = torch.stack([step(epoch) for epoch in range(1, epochs + 1)])
    model.eval()
    return model, losses


def train_students(
    graphs: PrivGNNData,
    jobs: Sequence[StudentJob],
    *,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    pretrain_epochs: int = 0,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """``[train_student(graphs, nodes, labels, seed=seed, ...) for nodes, labels, seed in jobs]`` run one after
    another, in one batched training on the CPU: each student's ``accuracy`` and per-epoch ``history`` are the
    sequential ones bit for bit, and torch's global generator ends in the same state. Each result also has the
    batch's ``model`` and the student's ``row`` in it, and ``train_time_s``, the whole batch's time (in the
    sequential fallback: the student's own model, row 0 and time).
    ``pretrain_epochs > 0``, a CUDA device or more than one thread: the sequential loop itself (module docstring)."""
    dev = resolve_device(device)
    if not jobs:
        return []
    if pretrain_epochs or dev.type != "cpu" or torch.get_num_threads() > 1:
        kw = dict(epochs=epochs, hidden=hidden, dropout=dropout, lr=lr, pretrain_epochs=pretrain_epochs, device=device)
        return [{**train_student(graphs, nodes, labels, seed=seed, **kw), "row": 0} for nodes, labels, seed in jobs]
    t0 = time.perf_counter()
    states = dropout_starts(len(jobs), epochs, (1, graphs.x_pub.size(0), hidden), dropout)
    out: list[dict[str, Any]] = [{} for _ in jobs]
    xx, src, dst, inv = _graph_inputs(graphs.x_pub, graphs.edge_pub, torch.device("cpu"))
    for soft in (False, True):
        rows = [i for i, (_, labels, _) in enumerate(jobs) if (labels.dim() == 2) == soft]
        if not rows:
            continue
        model, losses = _fit_rows(
            graphs,
            [jobs[i] for i in rows],
            [states[i] for i in rows],
            epochs=epochs,
            hidden=hidden,
            dropout=dropout,
            lr=lr,
        )
        logp = model.predict_graph(xx, src, dst, inv)
        for b, i in enumerate(rows):
            out[i] = {
                "accuracy": accuracy(logp[b][graphs.pub_test], graphs.y_pub[graphs.pub_test]),
                "model": model,
                "row": b,
                "history": [{"epoch": e + 1, "loss": float(v)} for e, v in enumerate(losses[:, b])],
            }
    torch.default_generator.set_state(states[-1])
    seconds = time.perf_counter() - t0
    for res in out:
        res["train_time_s"] = seconds
    return out
