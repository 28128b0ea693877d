"""The attacked models of PrivGNN's membership inference (:mod:`dpgnn.audit.mia`): B1, the student trained on
B1's labels, and PrivGNN's students (one per noise placement), with what each attack queries them on."""

from __future__ import annotations

from typing import Any

import torch

from dpgnn.methods import privgnn as P
from dpgnn.utils import make_generator, resolve_device, stable_seed, torch_global_seed


def _check_targets(targets: tuple[str, ...], noise_on: str | tuple[str, ...]) -> tuple[str, ...]:
    unknown = set(targets) - {"b1", "privgnn"}
    if unknown or not targets:
        raise ValueError(f"targets must be a non-empty subset of ('b1', 'privgnn'), got {targets!r}")
    placements = (noise_on,) if isinstance(noise_on, str) else tuple(noise_on)
    if not placements or set(placements) - {"posterior", "log_softmax"} or len(set(placements)) < len(placements):
        raise ValueError(f"noise_on must be 'posterior', 'log_softmax' or a tuple of both, got {noise_on!r}")
    return placements


#: an attacked model: (``method``, the model, its ``extra`` diagnostics)
_Target = tuple[str, torch.nn.Module, dict[str, float]]


def build_targets(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    noise_on: str | tuple[str, ...] = "posterior",
    targets: tuple[str, ...] = ("b1", "privgnn"),
    device: str = "auto",
) -> list[dict[str, Any]]:
    """The attacked models of one (dataset, run) and what the attacks query them on: one entry per (attack,
    target) with ``attack``, ``method`` (``b1``, ``privgnn``, ``privgnn_code``), the target's log-posteriors on
    the attack's members (``member``) and non-members (``non_member``) and on every public node (``public``), and
    ``extra`` (the pseudo-label diagnostics). Targets as in :func:`~dpgnn.audit.mia.run_attacks`, which attacks them."""
    placements = _check_targets(targets, noise_on)
    device = str(resolve_device(device))
    q_nodes = P.query_nodes(graphs, queries)
    attack1_targets: list[_Target] = []
    attack2_targets: list[_Target] = []
    if "b1" in targets:
        b1, b1_student = _b1_targets(graphs, q_nodes, seed=seed, epochs=student_epochs, device=device)
        attack1_targets.append(b1)
        attack2_targets.append(b1_student)
    if "privgnn" in targets:
        students = _privgnn_students(
            graphs,
            q_nodes,
            placements,
            queries=queries,
            k=k,
            gamma=gamma,
            lam=lam,
            seed=seed,
            teacher_epochs=teacher_epochs,
            student_epochs=student_epochs,
            device=device,
        )
        attack1_targets += students
        attack2_targets += students
    return [_attack1_queries(graphs, *t, device=device) for t in attack1_targets] + [
        _attack2_queries(graphs, *t, q_nodes=q_nodes, device=device) for t in attack2_targets
    ]


def _b1_targets(
    graphs: P.PrivGNNData, q_nodes: torch.Tensor, *, seed: int, epochs: int, device: str
) -> tuple[_Target, _Target]:
    """B1 (Attack-1's target) and the student trained on B1's noise-free labels of the queries (Attack-2's)."""
    with torch_global_seed(stable_seed(seed, "dropout", "b1"), device):
        b1 = P.baseline_b1(graphs, seed=stable_seed(seed, "b1"), epochs=epochs, device=device)["model"]
    b1_labels = P.log_posteriors(b1, graphs.x_pub, graphs.edge_pub, device)[q_nodes].argmax(1)
    with torch_global_seed(stable_seed(seed, "dropout", "student-b1"), device):
        b1_student = P.train_student(
            graphs, q_nodes, b1_labels, seed=stable_seed(seed, "student-b1"), epochs=epochs, device=device
        )["model"]
    return ("b1", b1, {}), ("b1", b1_student, {"label_accuracy": _label_accuracy(b1_labels, graphs, q_nodes)})


def _privgnn_students(
    graphs: P.PrivGNNData,
    q_nodes: torch.Tensor,
    placements: tuple[str, ...],
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    device: str,
) -> list[_Target]:
    """PrivGNN's students, one per noise placement, all from one set of teachers and the same noise draws (the
    authors'-code student's ``extra`` also holds the paper-noise labels' accuracy)."""
    with torch_global_seed(stable_seed(seed, "dropout", "teachers"), device):
        post = P.teacher_posteriors(
            graphs,
            queries,
            k=k,
            gamma=gamma,
            seed=stable_seed(seed, "teachers", k),
            epochs=teacher_epochs,
            device=device,
        )
    out: list[_Target] = []
    for placement in placements:
        noisy = P.noisy_argmax(
            post.posteriors, lam, make_generator(stable_seed(seed, "noise", lam, k)), noise_on=placement
        )
        with torch_global_seed(stable_seed(seed, "dropout", "student"), device):
            student = P.train_student(
                graphs,
                q_nodes,
                noisy[:queries],
                seed=stable_seed(seed, "student", lam),
                epochs=student_epochs,
                device=device,
            )["model"]
        extra = {"label_accuracy": _label_accuracy(noisy[:queries], graphs, q_nodes)}
        if placement != "posterior":
            paper = P.noisy_argmax(post.posteriors, lam, make_generator(stable_seed(seed, "noise", lam, k)))
            extra["label_accuracy_posterior"] = _label_accuracy(paper[:queries], graphs, q_nodes)
        out.append(("privgnn" if placement == "posterior" else "privgnn_code", student, extra))
    return out


def _attack1_queries(
    graphs: P.PrivGNNData, method: str, target: torch.nn.Module, extra: dict[str, float], *, device: str
) -> dict[str, Any]:
    """Attack-1's entry: members = the private nodes on the private graph, non-members = the public test nodes."""
    pub = P.log_posteriors(target, graphs.x_pub, graphs.edge_pub, device)
    return {
        "attack": "attack1",
        "method": method,
        "public": pub,
        "non_member": pub[graphs.pub_test],
        "extra": extra,
        "member": P.log_posteriors(target, graphs.x_priv, graphs.edge_priv, device),
    }


def _attack2_queries(
    graphs: P.PrivGNNData,
    method: str,
    target: torch.nn.Module,
    extra: dict[str, float],
    *,
    q_nodes: torch.Tensor,
    device: str,
) -> dict[str, Any]:
    """Attack-2's entry: members = the query nodes, non-members = the public test nodes, on the public graph."""
    pub = P.log_posteriors(target, graphs.x_pub, graphs.edge_pub, device)
    return {
        "attack": "attack2",
        "method": method,
        "public": pub,
        "member": pub[q_nodes],
        "non_member": pub[graphs.pub_test],
        "extra": extra,
    }


def _label_accuracy(labels: torch.Tensor, graphs: P.PrivGNNData, q_nodes: torch.Tensor) -> float:
    """Share of the query nodes whose pseudo-label equals their true label."""
    return float((labels.cpu() == graphs.y_pub[q_nodes]).double().mean())
