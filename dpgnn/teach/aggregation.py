"""Aggregation perturbation (GAP / ProGAP): noisy aggregates and the stages' privacy budget."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import torch

from dpgnn.privacy import get_accountant
from dpgnn.privacy.validation import check_delta, check_positive_finite
from dpgnn.teach.explorer import _adjacency, _int


def aggregation_noise(
    data: Any, noise_std: float = 2.0, max_degree: int = 10, dim: int = 16, seed: int = 0
) -> dict[str, Any]:
    """Sum aggregation of unit-norm embeddings plus Gaussian noise, as GAP/ProGAP's aggregation module does.

    Each row of ``H`` has norm 1, so adding or removing one *edge* changes ``A H`` by one row: L2 sensitivity 1.
    Removing one *node* changes up to ``max_degree`` rows (after bounding in-degrees): sensitivity ``√D`` -- at
    node level the same noise buys a ``√D``-times weaker guarantee. Returns the signal-to-noise ratio
    ``‖(AH)_v‖ / ‖noise_v‖`` per node against its (bounded) degree.
    """
    from dpgnn.methods.fdp import bound_degree

    n = int(data.num_nodes)
    s = check_positive_finite(noise_std, "noise_std")
    D = _int(max_degree, "max_degree", 1)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    h = torch.nn.functional.normalize(
        torch.randn((n, _int(dim, "dim", 1)), generator=gen, dtype=torch.float64).abs(), dim=1
    )
    a = _adjacency(torch.as_tensor(bound_degree(data.edge_index, n, D, seed=seed)), n)
    agg = torch.as_tensor(a @ h.numpy())
    noise = s * torch.randn(agg.shape, generator=gen, dtype=torch.float64)
    deg = np.asarray(a.sum(axis=1)).ravel()
    snr = (agg.norm(dim=1) / noise.norm(dim=1)).numpy()
    return {
        "noise_std": s,
        "max_degree": D,
        "degree": deg,
        "snr": snr,
        "edge_sensitivity": 1.0,
        "node_sensitivity": math.sqrt(D),
    }


def progap_budget(
    noise_std: float = 5.0, max_stages: int = 6, delta: float = 1e-5, max_degree: int = 50
) -> dict[str, Any]:
    """ε of ProGAP's aggregations against the number of stages K (edge level and node level).

    Stage k perturbs one aggregation and caches it; later stages and every training epoch reuse the cached noisy
    aggregate (post-processing), so the budget grows with K, not with epochs. Edge level: K Gaussian queries of
    sensitivity 1 (:func:`dpgnn.privacy.progap.privacy_event`, ``rdp`` accountant) next to the paper's
    Theorem 4.1 closed form; node level: the same noise against sensitivity ``√D`` (noise multiplier
    ``σ/√D``), aggregations only (ProGAP's node level adds DP-SGD stages on top, so this is a lower bound for it).
    """
    from dpgnn.privacy.progap import privacy_event, theorem41_epsilon

    s = check_positive_finite(noise_std, "noise_std")
    d = check_delta(delta)
    D = _int(max_degree, "max_degree", 1)
    ks = np.arange(1, _int(max_stages, "max_stages", 1) + 1)
    acc = get_accountant("rdp")
    edge = np.array([acc.compose(privacy_event("edge", s, aggregations=int(k))).get_epsilon(d) for k in ks])
    node = np.array(
        [acc.compose(privacy_event("node", s / math.sqrt(D), aggregations=int(k))).get_epsilon(d) for k in ks]
    )
    thm = np.array([theorem41_epsilon(s, int(k), d) for k in ks])
    return {"noise_std": s, "delta": d, "max_degree": D, "stages": ks, "edge": edge, "node": node, "theorem41": thm}


def draw_aggregation_noise(data: Mapping[str, Any]) -> plt.Figure:
    """Scatter of :func:`aggregation_noise`'s ``data``: each node's signal-to-noise ratio of its noisy aggregate
    against its bounded degree (log-log)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.scatter(np.maximum(data["degree"], 0.5), data["snr"], s=4, alpha=0.4)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=f"degree (bounded at {data['max_degree']})",
        ylabel="‖signal‖ / ‖noise‖",
        title=f"noise σ = {data['noise_std']:g}: edge sensitivity 1, node "
        f"sensitivity √D = {data['node_sensitivity']:.2f}",
    )
    ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def draw_progap_budget(data: Mapping[str, Any]) -> plt.Figure:
    """Plot of :func:`progap_budget`'s ``data``: ε against the number of stages K, edge level (RDP and
    Theorem 4.1) and node level."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["stages"], data["edge"], "o-", label="edge level (RDP accountant)")
    ax.plot(data["stages"], data["theorem41"], "k:", label="edge level, Theorem 4.1")
    ax.plot(data["stages"], data["node"], "s-", label=f"node level, aggregations only (D = {data['max_degree']})")
    ax.set(
        yscale="log",
        xlabel="stages K (noisy aggregations)",
        ylabel=f"ε at δ = {data['delta']:g}",
        title=f"aggregation noise σ = {data['noise_std']:g}",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
