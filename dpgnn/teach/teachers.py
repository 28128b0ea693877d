"""Teachers and students (PATE, PrivGNN): noisy teacher votes and the cost of queries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch

from dpgnn.teach.explorer import _int


def teacher_votes(
    lam: float = 0.1,
    num_teachers: int = 250,
    agreement: float = 0.6,
    num_classes: int = 7,
    queries: int = 500,
    seed: int = 0,
) -> dict[str, Any]:
    """PATE's noisy vote against PrivGNN's noisy argmax on simulated answers, and PATE's data-dependent ε.

    Teachers vote for the true class with probability ``agreement`` (else uniformly among the others). PATE adds
    Laplace(1/λ) to each vote count; PrivGNN's one teacher (on a Poisson subsample) adds Laplace(1/λ) to its
    posterior, a vector of L1 norm 1 (:func:`dpgnn.methods.privgnn.noisy_argmax`). Large vote margins make PATE's
    data-dependent ε (:func:`dpgnn.privacy.pate.pate_epsilon`) far below the data-independent bound.
    """
    from dpgnn.methods.privgnn import noisy_argmax
    from dpgnn.privacy.pate import check_lam, pate_epsilon

    lam = check_lam(lam)
    c = _int(num_classes, "num_classes", 2)
    t = _int(num_teachers, "num_teachers", 1)
    nq = _int(queries, "queries", 1)
    if not 0.0 <= agreement <= 1.0:
        raise ValueError(f"agreement must lie in [0, 1], got {agreement}")
    rng = np.random.default_rng(_int(seed, "seed", 0))
    truth = rng.integers(0, c, nq)
    right = rng.random((nq, t)) < agreement
    other = (truth[:, None] + rng.integers(1, c, (nq, t))) % c
    votes = np.where(right, truth[:, None], other)
    counts = np.stack([np.bincount(v, minlength=c) for v in votes]).astype(float)
    pate = (counts + rng.laplace(0.0, 1.0 / lam, counts.shape)).argmax(axis=1)
    post = torch.as_tensor(counts / t)  # the vote share stands in for one teacher's posterior
    gen = torch.Generator().manual_seed(int(seed))
    priv = noisy_argmax(post, lam, gen).numpy()
    eps = pate_epsilon(lam, nq, 1e-5, counts=counts)
    return {
        "lam": lam,
        "agreement": float(agreement),
        "num_teachers": t,
        "queries": nq,
        "pate_accuracy": float((pate == truth).mean()),
        "privgnn_accuracy": float((priv == truth).mean()),
        "pate_epsilon": eps.epsilon,
        "pate_epsilon_data_independent": eps.epsilon_data_independent,
        "margin": (np.sort(counts, axis=1)[:, -1] - np.sort(counts, axis=1)[:, -2]),
    }


def query_cost(
    lam: float = 0.1, max_queries: int = 1000, gamma: float = 0.3, delta: float = 1e-4, points: int = 4
) -> dict[str, Any]:
    """ε against the number of answered queries |Q| for PrivGNN (Laplace on a Poisson(γ) subsample) and PATE.

    PrivGNN: :func:`dpgnn.privacy.pate.privgnn_epsilon` with the authors' accountant (autodp RDP, classic
    conversion) and with our ``rdp`` accountant (tight conversion); PATE: the data-independent moments bound of
    :func:`dpgnn.privacy.pate.pate_epsilon` (each answer is 2λ-DP).
    """
    from dpgnn.privacy.pate import pate_epsilon, privgnn_epsilon

    qs = np.unique(np.geomspace(1, _int(max_queries, "max_queries", 1), _int(points, "points", 2)).round().astype(int))
    authors = np.array([privgnn_epsilon(lam, int(q), gamma, delta) for q in qs])
    ours = np.array([privgnn_epsilon(lam, int(q), gamma, delta, accountant="rdp") for q in qs])
    pate = np.array([pate_epsilon(lam, int(q), delta).epsilon for q in qs])
    return {
        "lam": float(lam),
        "gamma": float(gamma),
        "delta": float(delta),
        "queries": qs,
        "privgnn_authors": authors,
        "privgnn_rdp": ours,
        "pate": pate,
    }


def draw_teacher_votes(data: Mapping[str, Any]) -> plt.Figure:
    """Two panels of :func:`teacher_votes`'s ``data``: the teachers' vote margins, and the share of correct
    labels of PATE's noisy vote and PrivGNN's noisy argmax."""
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.2))
    axes[0].hist(data["margin"], bins=30)
    axes[0].set(
        xlabel="vote margin (top − runner-up)",
        ylabel="queries",
        title=f"{data['num_teachers']} teachers, agreement {data['agreement']:.2f}",
    )
    axes[1].bar(
        ["PATE\nnoisy vote", "PrivGNN\nnoisy argmax"],
        [100 * data["pate_accuracy"], 100 * data["privgnn_accuracy"]],
        color=["#4c72b0", "#dd8452"],
    )
    axes[1].set(
        ylabel="labels correct (%)",
        ylim=(0, 100),
        title=f"λ = {data['lam']:g}; PATE ε = {data['pate_epsilon']:.2f} "
        f"(data-indep. {data['pate_epsilon_data_independent']:.1f})",
    )
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def draw_query_cost(data: Mapping[str, Any]) -> plt.Figure:
    """Log-log plot of :func:`query_cost`'s ``data``: ε against answered queries |Q| for PrivGNN (authors' and
    our accountant) and PATE."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["queries"], data["privgnn_authors"], "o-", label="PrivGNN, authors' accountant")
    ax.plot(data["queries"], data["privgnn_rdp"], "x--", label="PrivGNN, our RDP accountant")
    ax.plot(data["queries"], data["pate"], "s:", label="PATE, data-independent")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="answered queries |Q|",
        ylabel=f"ε at δ = {data['delta']:g}",
        title=f"λ = {data['lam']:g}, γ = {data['gamma']:g}",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
