"""PrivGNN (Olatunji et al., "Releasing Graph Neural Networks with Differential Privacy Guarantees", TMLR 2023)
behind :func:`dpgnn.fit`: teachers on a private graph label |Q| public nodes with noisy argmax; a GraphSAGE student
trained on the public graph with those labels is released.

The graph needs a public part: ``private_mask``, ``public_train_mask`` and ``public_test_mask`` on ``data`` (all
three), or none of them and a seeded split (:data:`PRIVATE_SHARE` of the nodes private, :data:`PUBLIC_TEST_SHARE` of
the rest public test; stated in the result). Privacy (:func:`dpgnn.methods.privgnn.privacy_ledger`, paper §5.5):
neighbouring = add/remove one private node; each query is Poisson(γ)-subsampled noisy argmax with Laplace
``1/λ``. λ is the largest one on a geometric grid whose sound ε (``epsilon_sound``: exact per-query ε₀ for C
classes, :mod:`dpgnn.privacy.privgnn`) and the paper's ``epsilon`` are both ≤ fit's ε. Only the student's
public-test accuracy is reported (``metrics["test"]``). :func:`pate_runner` does the same with PATE-G/PATE-M
teachers (calibrated on the exact composition of their answers, :func:`calibrate_lam`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.api.configs import Checked, documented
from dpgnn.methods import RunResult

PRIVATE_SHARE = 0.5
PUBLIC_TEST_SHARE = 0.3
MASKS = ("private_mask", "public_train_mask", "public_test_mask")
_P = "PrivGNN §6 / Table 12"


@dataclass(frozen=True)
class PrivGNNConfig(Checked):
    """Teachers (KNN-selected private subgraphs), noisy argmax, GraphSAGE student on the public graph."""

    queries: int = documented(
        0,
        "|Q|: public nodes labelled by the teachers; 0 = half the public training nodes (at most 1000)",
        low=0,
        integer=True,
        paper=_P,
    )
    gamma: float = documented(
        0.3, "γ: Poisson sampling rate of the private nodes per query", low=1e-3, high=1.0, paper=_P
    )
    k: int = documented(
        0, "K: private nodes per teacher (KNN); 0 = ⌊γ·|V_private|⌋ // 2", low=0, integer=True, paper=_P
    )
    teacher_epochs: int = documented(200, "training epochs of each teacher", low=1, integer=True, paper=_P)
    student_epochs: int = documented(200, "training epochs of the student", low=1, integer=True, paper=_P)
    hidden: int = documented(64, "GraphSAGE hidden width (units)", low=1, integer=True, paper=_P)
    dropout: float = documented(0.5, "dropout of the GraphSAGE models", low=0.0, high=0.95, paper=_P)
    lr: float = documented(0.01, "Adam learning rate", low=1e-6, high=10.0, paper=_P)


def public_split(data: Data, seed: int) -> tuple[Data, list[str]]:
    """``data`` with its private/public masks: the given ones (all three, boolean ``[N]``), or a seeded split."""
    from dpgnn.data.transforms import private_public_split
    from dpgnn.utils import stable_seed

    given = [m for m in MASKS if getattr(data, m, None) is not None]
    if given and len(given) < 3:
        raise ValueError(f"data has {given} but not all of {list(MASKS)}: give all three or none (a seeded split)")
    if given:
        for m in MASKS:
            t = getattr(data, m)
            if not isinstance(t, Tensor) or t.dim() != 1 or t.numel() != data.num_nodes:
                raise ValueError(f"data.{m} must be a boolean tensor of shape [{data.num_nodes}]")
        return data, []
    s = stable_seed("fit-public-split", seed)
    out = private_public_split(
        data, seed=s, num_private=int(round(PRIVATE_SHARE * data.num_nodes)), public_test_share=PUBLIC_TEST_SHARE
    )
    return out, [
        f"no private/public masks given: {PRIVATE_SHARE:.0%} of the nodes private, {PUBLIC_TEST_SHARE:.0%} "
        f"of the rest public test, drawn with seed {s} (stable_seed('fit-public-split', {seed}))"
    ]


def calibrate_lam(
    target: float, *, queries: int, gamma: float, delta: float, num_classes: int, method: str = "privgnn"
) -> tuple[float, dict]:
    """The largest λ on the grid ``10^(-4 + j/40)`` whose ledger meets ``target``, and that ledger; none on the grid
    is an error naming the fix. PrivGNN: both the sound ε (``epsilon_sound``) and the paper's ``epsilon`` ≤ ``target``
    (both grow with λ: less noise). PATE (``method`` ``pate_g``/``pate_m``): the sound ε, the exact composition of
    its ``2λ``-DP answers, which reads no vote counts; PATE's data-independent moments bound (the paper's accounting,
    sound but looser: it cannot go below ``log(1/δ)`` over its largest moment order) stays in the ledger beside it."""
    from dpgnn.methods.privgnn import privacy_ledger

    def ledger(lam: float) -> dict[str, Any]:
        if method == "privgnn":
            return privacy_ledger(
                "privgnn", lam=lam, queries=queries, gamma=gamma, delta=delta, num_classes=num_classes
            )
        return privacy_ledger(method, lam=lam, queries=queries, delta=delta)  # PATE: data-independent, no counts

    def eps(lam: float) -> float:
        led = ledger(lam)
        return max(led["epsilon"], led["epsilon_sound"]) if method == "privgnn" else led["epsilon_sound"]

    lo, hi = 0, 40 * 6  # λ from 1e-4 to 1e2
    if eps(10**-4) > target:
        name = "PrivGNN" if method == "privgnn" else "PATE"
        raise ValueError(
            f"epsilon={target} is below {name}'s ε at λ = 1e-4 with {queries} queries: raise epsilon "
            "or lower queries" + ("/gamma" if method == "privgnn" else "")
        )
    while lo < hi:  # bisection on the grid index: ε_sound is monotone in λ
        mid = (lo + hi + 1) // 2
        if eps(10 ** (-4 + mid / 40)) <= target:
            lo = mid
        else:
            hi = mid - 1
    lam = 10 ** (-4 + lo / 40)
    led = ledger(lam)
    assert eps(lam) <= target
    return lam, led


def privgnn_runner(
    graph: Data, cfg: PrivGNNConfig, level: str, epsilon: float, seed: int, device: str, delta: float | None = None
) -> RunResult:
    """One PrivGNN run on a user's graph (``extra``: the student, the resolved config, the split notes)."""
    from dpgnn.methods.privgnn import prepare_from_data, run_privgnn

    data, notes = public_split(graph, seed)
    graphs = prepare_from_data(data, "own-graph", order_seed=seed)
    n_tr, n_priv = int(graphs.pub_train.numel()), graphs.num_private
    if n_tr < 1 or n_priv < 2:
        raise ValueError(f"PrivGNN needs private nodes and public training nodes, got {n_priv} and {n_tr}")
    cfg = replace(
        cfg,
        queries=cfg.queries or max(1, min(1000, n_tr // 2)),
        k=cfg.k or max(1, int(math.floor(cfg.gamma * n_priv)) // 2),
    )
    lam, _ = calibrate_lam(epsilon, queries=cfg.queries, gamma=cfg.gamma, delta=delta, num_classes=graphs.num_classes)
    config = {
        "queries": cfg.queries,
        "lam": lam,
        "gamma": cfg.gamma,
        "k": cfg.k,
        "delta": delta,
        "teacher_epochs": cfg.teacher_epochs,
        "student_epochs": cfg.student_epochs,
        "hidden": cfg.hidden,
        "dropout": cfg.dropout,
        "lr": cfg.lr,
    }
    res = run_privgnn(graphs, config, seed=seed, device=device)
    ledger = {**res.ledger, "lam": lam, "target_epsilon": epsilon, "split": notes or ["masks given"]}
    metrics = {"train": math.nan, "val": math.nan, "test": res.metrics["test"]}
    return RunResult(
        metrics=metrics,
        ledger=ledger,
        history=res.history,
        seconds=res.seconds,
        extra={"model": res.extra["model"], "config": cfg},
    )


def predict_privgnn(model: Any, x: Tensor, ei: Tensor, ctx: Any) -> Tensor:
    """The released student (GraphSAGE) on the given graph: log-posteriors of every node."""
    from dpgnn.methods.privgnn import log_posteriors

    model.eval()
    with torch.no_grad():
        return log_posteriors(model, x, ei, ctx.device)


@dataclass(frozen=True)
class PATEConfig(Checked):
    """PATE-G / PATE-M (the PrivGNN paper's baselines): teachers on disjoint partitions of the private part, noisy
    argmax of their vote counts, the same GraphSAGE student on the public part."""

    teachers: str = documented(
        "gnn",
        "teacher model: 'gnn' (GraphSAGE, PATE-G) or 'mlp' (PATE-M)",
        choices=("gnn", "mlp"),
        paper="PrivGNN Table 5",
    )
    num_teachers: int = documented(
        0, "teachers (disjoint partitions); 0 = max(2, |V_private| // 20)", low=0, integer=True, paper="PrivGNN Table 5"
    )
    queries: int = documented(
        0,
        "|Q|: public nodes labelled; 0 = half the public training nodes (at most 1000)",
        low=0,
        integer=True,
        paper=_P,
    )
    teacher_epochs: int = documented(200, "training epochs of each teacher", low=1, integer=True, paper=_P)
    student_epochs: int = documented(200, "training epochs of the student", low=1, integer=True, paper=_P)
    hidden: int = documented(64, "hidden width (units)", low=1, integer=True, paper=_P)
    dropout: float = documented(0.5, "dropout", low=0.0, high=0.95, paper=_P)
    lr: float = documented(0.01, "Adam learning rate", low=1e-6, high=10.0, paper=_P)


def pate_runner(
    graph: Data, cfg: PATEConfig, level: str, epsilon: float, seed: int, device: str, delta: float | None = None
) -> RunResult:
    """One PATE run on a user's graph (sound: λ from the exact composition of the answers, :func:`calibrate_lam`;
    the paper's data-independent moments bound and the run's data-dependent value beside it; ``extra``: the
    student, the resolved config)."""
    from dpgnn.methods.privgnn import prepare_from_data, run_pate_g, run_pate_m

    data, notes = public_split(graph, seed)
    graphs = prepare_from_data(data, "own-graph", order_seed=seed)
    n_tr, n_priv = int(graphs.pub_train.numel()), graphs.num_private
    if n_tr < 1 or n_priv < 2:
        raise ValueError(f"PATE needs private nodes and public training nodes, got {n_priv} and {n_tr}")
    cfg = replace(
        cfg, queries=cfg.queries or max(1, min(1000, n_tr // 2)), num_teachers=cfg.num_teachers or max(2, n_priv // 20)
    )
    kind = "pate_g" if cfg.teachers == "gnn" else "pate_m"
    lam, independent = calibrate_lam(
        epsilon, queries=cfg.queries, gamma=1.0, delta=delta, num_classes=graphs.num_classes, method=kind
    )
    config = {
        "queries": cfg.queries,
        "lam": lam,
        "num_teachers": cfg.num_teachers,
        "delta": delta,
        "teacher_epochs": cfg.teacher_epochs,
        "student_epochs": cfg.student_epochs,
        "hidden": cfg.hidden,
        "dropout": cfg.dropout,
        "lr": cfg.lr,
    }
    res = (run_pate_g if kind == "pate_g" else run_pate_m)(graphs, config, seed=seed, device=device)
    # the released statement reads no vote counts: the data-independent ledger (sound); the run's data-dependent
    # value is kept beside it, marked as computed from private counts
    ledger = {
        **independent,
        "epsilon_data_dependent": res.ledger["epsilon"],
        "lam": lam,
        "target_epsilon": epsilon,
        "split": notes or ["masks given"],
    }
    return RunResult(
        metrics={"train": math.nan, "val": math.nan, "test": res.metrics["test"]},
        ledger=ledger,
        history=res.history,
        seconds=res.seconds,
        extra={"model": res.extra["model"], "config": cfg},
    )
