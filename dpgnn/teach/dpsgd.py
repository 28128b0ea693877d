"""Why DP-SGD breaks on graphs (DRW Sec. 3-4, FDP): one node's influence through the layers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
import torch

from dpgnn.teach.explorer import _adjacency, _int


def node_influence(
    data: Any, depth: int = 2, max_degree: int = 5, walk_length: int = 3, seed: int = 0
) -> dict[str, Any]:
    """For every node, how many training nodes' loss terms it can touch in one pass of a ``depth``-layer GNN.

    - ``plain``: training roots whose ``depth``-hop neighbourhood contains the node (the full graph);
    - ``fdp``: the same in FDP's degree-bounded graph (:func:`dpgnn.methods.fdp.bound_degree`, max degree
      ``max_degree``), never above the bound ``K = Σ_l D^l`` (:func:`dpgnn.privacy.fdp.max_affected`);
    - ``drw``: DRW's disjoint random-walk subgraphs (:func:`dpgnn.data.random_walks.disjoint_random_walks`,
      walk length ``walk_length``): every node lies in at most one subgraph, so it touches at most 1.

    DP-SGD's analysis assumes one record changes one gradient; on a graph ``plain.max()`` gradients can move.
    """
    from dpgnn.data.random_walks import disjoint_random_walks
    from dpgnn.methods.fdp import bound_degree
    from dpgnn.privacy.fdp import max_affected

    L = _int(depth, "depth", 1)
    D = _int(max_degree, "max_degree", 1)
    n = int(data.num_nodes)
    train = data.train_mask.cpu().numpy() if getattr(data, "train_mask", None) is not None else np.ones(n, bool)

    def counts(a: sp.csr_matrix) -> np.ndarray:
        reach = sp.identity(n, format="csr")
        hop = sp.identity(n, format="csr") + a
        for _ in range(L):
            reach = ((reach @ hop) > 0).astype(np.float64)
        return np.asarray(reach[:, np.flatnonzero(train)].sum(axis=1)).ravel()

    plain = counts(_adjacency(data.edge_index, n))
    bounded = bound_degree(data.edge_index, n, D, seed=_int(seed, "seed", 0))
    fdp = counts(_adjacency(torch.as_tensor(bounded), n))
    subs = disjoint_random_walks(
        data.edge_index, n, np.flatnonzero(train), _int(walk_length, "walk_length", 0), seed=seed
    )
    drw = np.zeros(n)
    for nodes in subs.nodes.cpu().numpy() if hasattr(subs.nodes, "cpu") else subs.nodes:
        nodes = np.asarray(nodes)
        drw[np.unique(nodes[nodes >= 0])] += 1
    return {
        "depth": L,
        "max_degree": D,
        "walk_length": int(walk_length),
        "num_train": int(train.sum()),
        "plain": plain,
        "fdp": fdp,
        "drw": drw,
        "fdp_bound": max_affected(D, L),
        "num_subgraphs": int(len(subs.nodes)),
    }


def draw_node_influence(data: Mapping[str, Any]) -> plt.Figure:
    """Histograms of :func:`node_influence`'s ``data``: how many training nodes one node's features reach, on
    the full graph, under FDP's degree bound and in DRW's subgraphs (log-log)."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    top = max(float(data["plain"].max()), 1.0)
    bins = np.unique(np.geomspace(1, top + 1, 30).astype(int))
    for key, label in (
        ("plain", f"full graph (max {int(data['plain'].max())})"),
        ("fdp", f"FDP, degree ≤ {data['max_degree']} (bound K = {data['fdp_bound']}, max {int(data['fdp'].max())})"),
        ("drw", f"DRW subgraphs (max {int(data['drw'].max())})"),
    ):
        ax.hist(np.maximum(data[key], 1), bins=bins, histtype="step", lw=1.5, label=label)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="training nodes one node's features reach",
        ylabel="number of nodes",
        title=f"{data['depth']}-layer GNN, {data['num_train']} training nodes",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
