"""Local DP on node features (LPGCN Sec. 4, LPGNN Sec. 4.1) and noisy labels (LPGNN Sec. 4.3)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch

from dpgnn.privacy import get_mechanism
from dpgnn.privacy.validation import check_positive_finite
from dpgnn.teach.explorer import _int

#: LDP feature mechanisms of LPGCN/LPGNN, as named in :func:`dpgnn.privacy.get_mechanism`.
FEATURE_MECHANISMS = ("laplace", "piecewise", "pgc", "multibit")
_LABELS = {"laplace": "LM (Laplace)", "piecewise": "PM (piecewise)", "pgc": "PGC (LPGCN)", "multibit": "MBM (LPGNN)"}


def _mech(name: str, epsilon: float, d: int = 1):
    if name not in FEATURE_MECHANISMS:
        raise ValueError(f"mechanism must be one of {FEATURE_MECHANISMS}, got {name!r}")
    return get_mechanism(name, epsilon=epsilon, low=0.0, high=1.0)


# ------------------------------------------------------------------------------------------------------------
# 1. local DP on node features (LPGCN Sec. 4, LPGNN Sec. 4.1)
# ------------------------------------------------------------------------------------------------------------
def ldp_draws(
    mechanism: str = "piecewise", epsilon: float = 1.0, x: float = 0.5, n: int = 4000, seed: int = 0
) -> dict[str, Any]:
    """``n`` server-side estimates ``m(x*)`` of one value ``x ∈ [0, 1]`` sent through ``mechanism`` at ``epsilon``.

    Returns the estimates, their empirical mean/variance and the mechanism's analytic variance (``multibit`` with
    one feature, i.e. the one-bit mechanism).
    """
    m = _mech(mechanism, epsilon)
    n = _int(n, "n", 1)
    xs = torch.full((n, 1), float(x), dtype=torch.float64)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    est = m.estimate(m.perturb(xs, gen)).ravel().numpy()
    return {
        "mechanism": mechanism,
        "epsilon": float(epsilon),
        "x": float(x),
        "estimates": est,
        "mean": float(est.mean()),
        "variance": float(est.var(ddof=1)) if n > 1 else float("nan"),
        "variance_theory": float(m.variance(xs[:1]).ravel()[0]),
    }


def ldp_variance(
    epsilon: float = 1.0, x: float = 0.5, mechanisms: Sequence[str] = FEATURE_MECHANISMS, num: int = 41
) -> dict[str, Any]:
    """Analytic variance of each mechanism's estimate: against ε at value ``x`` and against x at ``epsilon``."""
    eps_grid = np.geomspace(0.1, 8.0, num)
    x_grid = np.linspace(0.0, 1.0, num)
    by_eps, by_x = {}, {}
    for name in mechanisms:
        by_eps[name] = np.array(
            [
                float(_mech(name, e).variance(torch.tensor([[float(x)]], dtype=torch.float64)).ravel()[0])
                for e in eps_grid
            ]
        )
        by_x[name] = _mech(name, epsilon).variance(torch.tensor(x_grid, dtype=torch.float64)[:, None]).ravel().numpy()
    return {
        "epsilon": float(epsilon),
        "x": float(x),
        "eps_grid": eps_grid,
        "x_grid": x_grid,
        "var_vs_eps": by_eps,
        "var_vs_x": by_x,
    }


def aggregation_error(
    mechanism: str = "multibit",
    epsilon: float = 1.0,
    num_features: int = 100,
    degrees: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    trials: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Error of a mean-aggregated first layer under feature LDP, by node degree (LPGCN Sec. 4, LPGNN Sec. 4.2).

    A node with ``k`` neighbours averages ``k`` independent unbiased estimates, so the noise of the aggregate has
    variance ``Var/k``: its root-mean-square error per feature shrinks like ``1/√k``. Features are drawn uniformly
    in ``[0, 1]^d``; ``multibit`` uses the paper's ``m*`` for ``d = num_features`` (its variance grows with ``d``).
    Returns the measured RMSE and the analytic ``√(Var/k)`` (mean analytic variance over the drawn features).
    """
    d = _int(num_features, "num_features", 1)
    t = _int(trials, "trials", 1)
    ks = [_int(k, "degree", 1) for k in degrees]
    if mechanism not in FEATURE_MECHANISMS:
        raise ValueError(f"mechanism must be one of {FEATURE_MECHANISMS}, got {mechanism!r}")
    per_feature = epsilon if mechanism == "multibit" else check_positive_finite(epsilon, "epsilon") / d
    m = get_mechanism(mechanism, epsilon=per_feature, low=0.0, high=1.0)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    rmse, exact = [], []
    for k in ks:
        x = torch.rand((t * k, d), generator=gen, dtype=torch.float64)
        err = (m.estimate(m.perturb(x, gen)) - x).reshape(t, k, d).mean(dim=1)
        rmse.append(float(err.pow(2).mean().sqrt()))
        exact.append(math.sqrt(float(m.variance(x).mean()) / k))
    return {
        "mechanism": mechanism,
        "epsilon": float(epsilon),
        "num_features": d,
        "degrees": np.array(ks),
        "rmse": np.array(rmse),
        "rmse_theory": np.array(exact),
    }


def draw_ldp_draws(data: Mapping[str, Any]) -> plt.Figure:
    """Histogram of :func:`ldp_draws`'s estimates, with the true value, their mean and the measured against the
    analytic variance in the title."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist(data["estimates"], bins=60, color="#4c72b0", alpha=0.8)
    ax.axvline(data["x"], color="k", lw=1.5, label=f"true x = {data['x']:.2f}")
    ax.axvline(data["mean"], color="#dd8452", ls="--", label=f"mean of estimates = {data['mean']:.3f}")
    ax.set(
        xlabel="server-side estimate m(x*)",
        ylabel="count",
        title=f"{_LABELS[data['mechanism']]}, ε = {data['epsilon']:g}: var {data['variance']:.3g} "
        f"(theory {data['variance_theory']:.3g})",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_ldp_variance(data: Mapping[str, Any]) -> plt.Figure:
    """Two panels of :func:`ldp_variance`'s ``data``: each mechanism's variance against ε, and against x."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for name, v in data["var_vs_eps"].items():
        axes[0].plot(data["eps_grid"], v, label=_LABELS[name])
        axes[1].plot(data["x_grid"], data["var_vs_x"][name], label=_LABELS[name])
    axes[0].set(xscale="log", yscale="log", xlabel="ε", ylabel="Var[m(x*)]", title=f"at x = {data['x']:.2f}")
    axes[1].set(yscale="log", xlabel="x", title=f"at ε = {data['epsilon']:g} (one feature)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_aggregation_error(data: Mapping[str, Any]) -> plt.Figure:
    """Plot of :func:`aggregation_error`'s ``data``: measured and analytic RMSE of the mean-aggregated feature
    against node degree (log-log)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["degrees"], data["rmse"], "o-", label="measured")
    ax.plot(data["degrees"], data["rmse_theory"], "k--", label="√(Var/k)")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="node degree k",
        ylabel="RMSE of the mean-aggregated feature",
        title=f"{_LABELS[data['mechanism']]}, ε = {data['epsilon']:g}, d = {data['num_features']}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# 2. noisy labels (LPGNN Sec. 4.3)
# ------------------------------------------------------------------------------------------------------------
def rr_labels(epsilon: float = 1.0, num_classes: int = 7, n: int = 5000, seed: int = 0) -> dict[str, Any]:
    """Randomized response on ``n`` labels: the transition matrix, the empirical one, and forward correction.

    Forward correction trains on ``P(ỹ|x) = P(y|x)·T``; for a perfect classifier (one-hot ``P(y|x)``) that is the
    true row of ``T``, so the corrected loss is minimised by the clean prediction. ``corrected_argmax_ok`` checks
    that ``argmax(e_y T) = y`` for every class (true whenever ``keep > (1 − keep)/(c − 1)``, i.e. every ε > 0).
    """
    c = _int(num_classes, "num_classes", 2)
    rr = get_mechanism("rr", epsilon=epsilon, num_classes=c)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    y = torch.randint(0, c, (_int(n, "n", 1),), generator=gen)
    noisy = rr.perturb(y, gen)
    T = rr.transition_matrix().numpy()
    emp = np.zeros((c, c))
    np.add.at(emp, (y.numpy(), noisy.numpy()), 1.0)
    emp = emp / np.maximum(emp.sum(axis=1, keepdims=True), 1)
    return {
        "epsilon": float(epsilon),
        "num_classes": c,
        "keep": rr.keep_probability,
        "T": T,
        "T_empirical": emp,
        "label_accuracy": float((noisy == y).double().mean()),
        "corrected_argmax_ok": bool((T.argmax(axis=1) == np.arange(c)).all()),
    }


def drop_accuracy(
    epsilon: float = 1.0,
    homophily: float = 0.8,
    avg_degree: float = 10.0,
    max_steps: int = 4,
    num_nodes: int = 1000,
    num_classes: int = 5,
    seed: int = 0,
) -> dict[str, Any]:
    """How often Drop's propagated targets ``argmax softmax(Â^K Ỹ)`` equal the true label, for K = 0..max_steps.

    On a contextual SBM (:func:`dpgnn.data.synthetic.csbm`) every node's label goes through RR at ``epsilon``
    (:func:`dpgnn.methods.lpgnn.perturb_labels`); Drop (:func:`dpgnn.methods.lpgnn.drop_targets`) then votes over
    K-hop neighbourhoods. K = 0 is the raw noisy label; with homophily, neighbours' noisy labels agree on the truth
    more often than one label alone.
    """
    from dpgnn.data.synthetic import csbm
    from dpgnn.methods.lpgnn import drop_targets, perturb_labels
    from dpgnn.nn.lpgnn import normalized_adjacency

    data = csbm(
        num_nodes=_int(num_nodes, "num_nodes", 10),
        num_classes=_int(num_classes, "num_classes", 2),
        num_features=4,
        avg_degree=avg_degree,
        homophily=homophily,
        seed=_int(seed, "seed", 0),
    )
    n, c = data.num_nodes, num_classes
    everyone = torch.ones(n, dtype=torch.bool)
    noisy = perturb_labels(data.y, epsilon, c, everyone, generator=seed)
    adj = normalized_adjacency(data.edge_index, n)
    idx = torch.arange(n)
    ks = list(range(_int(max_steps, "max_steps", 0) + 1))
    acc = [float((drop_targets(noisy, idx, adj, k, c) == data.y).double().mean()) for k in ks]
    return {"epsilon": float(epsilon), "homophily": float(homophily), "steps": np.array(ks), "accuracy": np.array(acc)}


def draw_rr_labels(data: Mapping[str, Any]) -> plt.Figure:
    """Heat maps of :func:`rr_labels`'s ``data``: RR's transition matrix beside the measured one."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for ax, mat, title in (
        (axes[0], data["T"], "transition matrix T"),
        (axes[1], data["T_empirical"], "measured P(ỹ = j | y = i)"),
    ):
        im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
        ax.set(xlabel="noisy label j", ylabel="true label i", title=title)
    fig.colorbar(im, ax=axes, shrink=0.8)
    fig.suptitle(
        f"RR, ε = {data['epsilon']:g}, c = {data['num_classes']}: keep p = {data['keep']:.3f}, "
        f"measured {data['label_accuracy']:.3f}",
        fontsize=9,
    )
    return fig


def draw_drop_accuracy(data: Mapping[str, Any]) -> plt.Figure:
    """Plot of :func:`drop_accuracy`'s ``data``: share of Drop's targets equal to the true label (%) against K."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["steps"], 100 * data["accuracy"], "o-")
    ax.set(
        xlabel="Drop propagation steps K_y",
        ylabel="targets equal to the true label (%)",
        title=f"RR ε = {data['epsilon']:g}, homophily {data['homophily']:.2f}",
    )
    fig.tight_layout()
    return fig
