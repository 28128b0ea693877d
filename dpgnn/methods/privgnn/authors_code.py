"""``fidelity="authors_code"``: the official code's teachers, student and baselines, an explicitly UNSOUND
replication (docs/papers/privgnn.md#algorithm): one Adam optimizer shared by every teacher and never reset, a
fixed-size subsample, the d→64→64→c network of :class:`dpgnn.nn.privgnn_authors.AuthorsCodeSAGE`."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods.privgnn.data import PrivGNNData, query_nodes
from dpgnn.methods.privgnn.mechanism import induced_subgraph, teacher_subgraphs
from dpgnn.methods.privgnn.student import _baseline_graphs, _fit, _fit_final_epoch
from dpgnn.methods.privgnn.teachers import TeacherOutput
from dpgnn.metrics import accuracy
from dpgnn.privacy.guarantee import AS_PUBLISHED
from dpgnn.train import GradientStep
from dpgnn.utils import resolve_device, stable_seed

#: why the authors'-code teachers are not covered by the paper's (or any subsampling-amplified) accounting
AUTHORS_CODE_ISSUES = (
    "fidelity=authors_code is NOT sound: the official code trains every teacher with ONE Adam optimizer that is "
    "never reset (the model is re-initialised per query, the optimizer state is not), so teacher i starts from "
    "moment estimates computed on teachers 1..i-1's private subsets; a private node then influences every later "
    "answer whether or not it is in that answer's subsample, and the paper's analysis (independent teachers, "
    "privacy amplification by Poisson subsampling per query, Sec. 5.5 / Theorem 7) does not apply",
    "fixed-size subsample of floor(gamma*|V_private|) nodes without replacement instead of Poisson(gamma) sampling "
    "(Algorithm 1 line 3)",
)


@dataclass
class AuthorsTeacherOutput(TeacherOutput):
    """:class:`TeacherOutput` of :func:`authors_code_teacher_posteriors`, with the shared optimizer's step count."""

    #: Adam's step counter after the last teacher: ``|Q| * epochs`` when the optimizer is shared (never reset)
    optimizer_steps: int = 0
    share_optimizer: bool = True
    #: the shared Adam's ``state_dict()`` after the last teacher (``None`` with ``share_optimizer=False``): the
    #: official student continues from it (:func:`authors_code_student`)
    optimizer_state: dict[str, Any] | None = None


def _adam_steps(opt: torch.optim.Adam) -> int:
    """Adam's step counter (the largest over its parameters; 0 before the first step)."""
    return max((int(st["step"]) for st in opt.state.values() if "step" in st), default=0)


def _official_fit(
    model: torch.nn.Module,
    opt: torch.optim.Adam,
    x: Tensor,
    edge_index: Tensor,
    y: Tensor,
    epochs: int,
    nodes: Tensor | None = None,
) -> None:
    """The official code's full-batch loop (teachers and student alike) on :func:`dpgnn.train.fit`: ``epochs``
    Adam steps on the NLL of ``y`` at ``nodes`` (all nodes when ``None``), final epoch (no selection), then eval
    mode."""

    def loss(epoch: int) -> Tensor:
        out = model(x, edge_index)
        return F.nll_loss(out if nodes is None else out[nodes], y)

    _fit_final_epoch(model, GradientStep(opt, loss), epochs)


def authors_code_teacher_posteriors(
    graphs: PrivGNNData,
    num_queries: int,
    *,
    k: int | None,
    gamma: float,
    seed: int,
    knn: bool = True,
    hidden: int = 64,
    dropout: float = 0.5,
    epochs: int = 200,
    lr: float = 0.01,
    share_optimizer: bool = True,
    device: str = "auto",
) -> AuthorsTeacherOutput:
    """Teachers' posteriors at the query nodes as the official PrivGNN code computes them (``fidelity =
    "authors_code"``; NOT a sound mechanism, see :data:`AUTHORS_CODE_ISSUES`).

    Differences from :func:`teacher_posteriors` (the paper's Algorithm 1), each as in the official code:

    * the teacher is :class:`dpgnn.nn.privgnn_authors.AuthorsCodeSAGE` (d→64→64→c plus an unused 64→d head)
      instead of the paper's 2-layer d→64→c GraphSAGE;
    * ONE model object and ONE ``torch.optim.Adam`` serve all teachers, trained one after the other: the model is
      re-initialised (``reset_parameters``) per query, the optimizer never is, so its moment estimates and step
      count carry over from teacher to teacher (``share_optimizer=False`` creates a fresh Adam per teacher: an
      ablation of this one difference, used by the tests);
    * the subsample has the fixed size ⌊γ·|V†|⌋ (:func:`poisson_subsample` ``sampling="fixed"``);
    * every answer is a forward pass (eval mode) over the whole public graph, read at the query node.

    Initialisation and dropout draw from torch's global generator as the official code does, seeded once by
    ``seed`` inside :func:`torch.random.fork_rng` (the caller's global RNG state is left untouched). Subsamples
    come from the same per-query generators as :func:`teacher_subgraphs`, so both modes see the same
    ``(seed, query)`` randomness. Teachers are sequential by construction (each needs the optimizer state of the
    previous one), so this is much slower than the batched paper-mode teachers.
    """
    from dpgnn.nn.privgnn_authors import AuthorsCodeSAGE

    queries = query_nodes(graphs, num_queries)
    dev = resolve_device(device)
    sets = teacher_subgraphs(graphs, queries, k=k, gamma=gamma, seed=seed, sampling="fixed", knn=knn)
    x_pub, e_pub = graphs.x_pub.to(dev), graphs.edge_pub.to(dev)
    t0 = time.perf_counter()
    post = []
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(stable_seed(seed, "authors-code-teachers"))
        model = AuthorsCodeSAGE(graphs.num_features, hidden, graphs.num_classes, dropout=dropout).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        for nodes, v in zip(sets, queries.tolist()):
            model.reset_parameters()
            if not share_optimizer:
                opt = torch.optim.Adam(model.parameters(), lr=lr)
            x = graphs.x_priv[nodes].to(dev)
            ei = induced_subgraph(graphs.edge_priv, nodes, graphs.num_private).to(dev)
            _official_fit(model, opt, x, ei, graphs.y_priv[nodes].to(dev), epochs)
            with torch.no_grad():
                post.append(model(x_pub, e_pub)[v].exp().cpu())
    seconds = time.perf_counter() - t0
    sizes = torch.tensor([int(s.numel()) for s in sets])
    state = copy.deepcopy(opt.state_dict()) if share_optimizer else None
    return AuthorsTeacherOutput(
        torch.stack(post),
        sizes,
        seconds,
        epochs * len(sets),
        optimizer_steps=_adam_steps(opt),
        share_optimizer=share_optimizer,
        optimizer_state=state,
    )


#: the official code's epoch count for the teachers and the student (``student_epoch = 500`` in its config; the
#: paper, App. G.1, says 200)
AUTHORS_CODE_EPOCHS = 500


def authors_code_student(
    graphs: PrivGNNData,
    train_nodes: Tensor,
    labels: Tensor,
    *,
    seed: int,
    epochs: int = AUTHORS_CODE_EPOCHS,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    optimizer_state: Mapping[str, Any] | None = None,
    device: str = "auto",
) -> dict[str, Any]:
    """The student as the official PrivGNN code trains it (``fidelity="authors_code"``;
    docs/papers/privgnn.md#algorithm):
    the teachers' network (:class:`dpgnn.nn.privgnn_authors.AuthorsCodeSAGE`, d→64→64→c, re-initialised by the
    last teacher) trained full batch on the public graph with NLL on ``labels`` of ``train_nodes`` for ``epochs``
    (the official 500), by the teachers' Adam: ``optimizer_state`` (:attr:`AuthorsTeacherOutput.optimizer_state`)
    is loaded first, so its moment estimates and step count, computed on the private subgraphs, carry into the
    released model (``None``: a fresh Adam). Accuracy on the public test nodes at the final epoch, as
    :func:`train_student` returns it, with Adam's final step count (``optimizer_steps``). Initialisation and
    dropout come from torch's global generator seeded by ``seed`` inside :func:`torch.random.fork_rng`."""
    from dpgnn.nn.privgnn_authors import AuthorsCodeSAGE

    dev = resolve_device(device)
    x, e = graphs.x_pub.to(dev), graphs.edge_pub.to(dev)
    nodes, y = train_nodes.to(dev), labels.long().to(dev)
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(seed)
        model = AuthorsCodeSAGE(graphs.num_features, hidden, graphs.num_classes, dropout=dropout).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=lr)
        if optimizer_state is not None:
            opt.load_state_dict(copy.deepcopy(dict(optimizer_state)))
        _official_fit(model, opt, x, e, y, epochs, nodes)
        with torch.no_grad():
            pred = model(x, e)[graphs.pub_test.to(dev)].argmax(1).cpu()
    acc = float((pred == graphs.y_pub[graphs.pub_test]).float().mean())
    return {
        "accuracy": acc,
        "train_time_s": time.perf_counter() - t0,
        "model": model,
        "optimizer_steps": _adam_steps(opt),
    }


def authors_code_ledger(
    led: dict[str, Any],
    *,
    lam: float,
    queries: int,
    num_classes: int | None,
    noise_on: str = "posterior",
    student: str | Fidelity = Fidelity.PAPER,
) -> dict[str, Any]:
    """The ledger of a ``fidelity="authors_code"`` row from the paper-mode PrivGNN ledger ``led``.

    ``epsilon`` stays the paper's accountant's value (what the authors report for the run), ``guarantee`` is
    ``as_published`` with :data:`AUTHORS_CODE_ISSUES` saying why it is NOT sound. ``epsilon_sound``: with noise on
    the posterior, each answer is still a noisy argmax over some probability vector, so ``|Q|·ε₀(C)`` (basic
    composition of pure-DP answers, conditional on the data-independent randomness; no subsampling amplification,
    which the shared optimizer voids) is a valid bound; with noise on log-softmax (the official code) the
    sensitivity is unbounded: ∞. ``student="authors_code"`` (:func:`authors_code_student`): the released student
    continues the teachers' Adam, whose state was computed on private subgraphs, so nothing bounds it: ∞.
    """
    from dpgnn.privacy.privgnn import query_epsilon

    if noise_on not in ("posterior", "log_softmax"):
        raise ValueError(f"noise_on must be 'posterior' or 'log_softmax', got {noise_on!r}")
    student = parse(student, "student")
    issues = list(led.get("issues", [])) + list(AUTHORS_CODE_ISSUES)
    if noise_on == "log_softmax":
        issues.append("noise on log-softmax (official code): unbounded sensitivity, no finite epsilon holds")
        sound = math.inf
    else:
        sound = queries * query_epsilon(lam, num_classes)
    if student is Fidelity.AUTHORS_CODE:
        issues.append(
            "the official student is trained by the teachers' Adam optimizer (its moment estimates, "
            "computed from gradients on the private subgraphs, are never reset), so the released model "
            "depends on the private graph beyond the noisy labels: no finite epsilon holds"
        )
        sound = math.inf
    who = (
        "teachers and student (the student: the same network, trained by the teachers' Adam)"
        if student is Fidelity.AUTHORS_CODE
        else "teachers"
    )
    return {
        **led,
        "fidelity": "authors_code",
        "guarantee": AS_PUBLISHED,
        "issues": issues,
        "epsilon_sound": sound,
        "delta_sound": 0.0,
        "note": f"fidelity=authors_code: the official code's {who} (d-64-64-c SAGE, one Adam shared by all "
        "teachers and never reset, fixed-size subsample); epsilon is the paper's accounting, which does "
        "not hold for this run (see issues)",
    }


def authors_code_baseline(
    graphs: PrivGNNData,
    which: str,
    *,
    seed: int,
    epochs: int = 200,
    hidden: int = 64,
    dropout: float = 0.5,
    lr: float = 0.01,
    device: str = "auto",
) -> dict[str, Any]:
    """B1/B2/B3 with the official code's network (:class:`dpgnn.nn.privgnn_authors.AuthorsCodeSAGE`, d→64→64→c)
    instead of the paper's 2-layer SAGE, trained as :func:`baseline_b1` etc. (full batch, Adam, NLL, final epoch);
    non-private, used to measure how much of a baseline's gap to the paper the network shape explains.
    Initialisation and dropout draw from torch's global generator seeded by ``seed`` inside a forked RNG."""
    from dpgnn.nn.privgnn_authors import AuthorsCodeSAGE

    dev = resolve_device(device)
    x, ei, train, y, (x_te, ei_te, te, y_te) = _baseline_graphs(graphs, which)
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        torch.manual_seed(stable_seed(seed, "authors-code-baseline", which))
        model = AuthorsCodeSAGE(graphs.num_features, hidden, graphs.num_classes, dropout=dropout)
        model = _fit(model, x, ei, train, y[train], epochs=epochs, lr=lr, device=dev)
    with torch.no_grad():
        logp = model(x_te.to(dev), ei_te.to(dev)).cpu()
    return {"accuracy": accuracy(logp[te], y_te[te]), "model": model}
