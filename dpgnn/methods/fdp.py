"""FDP baseline graph side (Daigavane et al., arXiv 2111.15521, as compared against in the DRW paper;
docs/papers/drw.md#fdp-baseline).

- :func:`bound_degree`: a symmetric subgraph of the training graph with every degree ≤ ``D`` (greedy edge
  subsampling: nodes in random order, each keeps its randomly ordered neighbours while both endpoints have fewer
  than ``D`` edges -- the DRW authors' procedure; it bounds in- and out-degree alike, which the sensitivity needs).
- :func:`neighbourhoods`: one padded subgraph per root. ``variant="paper"`` (default): the full ``depth``-hop
  neighbourhood of the root in the bounded graph with its induced edges (≤ K nodes); ``variant="authors"``: the DRW
  code's depth-first path that follows the first unvisited neighbour at each hop (≤ depth + 1 nodes).

Training and accounting live in :mod:`dpgnn.methods.drw` (``method="fdp"``) and :mod:`dpgnn.privacy.fdp`.
"""

from __future__ import annotations

import numpy as np
from torch import Tensor

from dpgnn.data.random_walks import Subgraphs, csr, subgraphs_from_node_lists
from dpgnn.privacy.fdp import max_affected

__all__ = ["bound_degree", "neighbourhoods", "FDP_VARIANTS"]

FDP_VARIANTS = ("paper", "authors")


def bound_degree(edge_index: Tensor, num_nodes: int, max_degree: int, *, seed: int) -> np.ndarray:
    """Undirected edges (both directions, shape [2, E']) of a random subgraph with every degree ≤ ``max_degree``."""
    if isinstance(max_degree, bool) or not isinstance(max_degree, (int, np.integer)) or max_degree < 1:
        raise ValueError(f"max_degree must be an integer >= 1, got {max_degree!r}")
    rng = np.random.default_rng(seed)
    ptr, col = csr(edge_index, num_nodes)
    deg = np.zeros(num_nodes, dtype=np.int64)
    kept: set[tuple[int, int]] = set()
    for u in rng.permutation(num_nodes):
        if deg[u] >= max_degree:
            continue
        for v in rng.permutation(col[ptr[u] : ptr[u + 1]]):
            if deg[u] >= max_degree:
                break
            a, b = (int(u), int(v)) if u < v else (int(v), int(u))
            if a == b or (a, b) in kept or deg[v] >= max_degree:
                continue
            kept.add((a, b))
            deg[u] += 1
            deg[v] += 1
    if not kept:
        return np.zeros((2, 0), dtype=np.int64)
    e = np.array(sorted(kept), dtype=np.int64).T
    return np.concatenate([e, e[::-1]], axis=1)


def neighbourhoods(
    bounded_edges: np.ndarray, num_nodes: int, roots: np.ndarray, depth: int, max_degree: int, variant: str = "paper"
) -> Subgraphs:
    """Per-root subgraphs (root first) in the degree-bounded graph; see the module docstring for ``variant``."""
    if variant not in FDP_VARIANTS:
        raise ValueError(f"variant must be one of {FDP_VARIANTS}, got {variant!r}")
    ptr, col = csr(bounded_edges, num_nodes)
    k = max_affected(max_degree, depth)
    node_lists, edge_lists = [], []
    for r in np.asarray(roots, dtype=np.int64):
        if variant == "paper":
            seen = {int(r): 0}
            frontier = [int(r)]
            for _ in range(depth):
                nxt = []
                for u in frontier:
                    for v in col[ptr[u] : ptr[u + 1]]:
                        if int(v) not in seen:
                            seen[int(v)] = 0
                            nxt.append(int(v))
                frontier = nxt
            ns = list(seen)
            members = set(ns)
            es = [(u, int(v)) for u in ns for v in col[ptr[u] : ptr[u + 1]] if int(v) in members and u < int(v)]
        else:
            ns, es, cur = [int(r)], [], int(r)
            for _ in range(depth):
                nxt = next((int(v) for v in col[ptr[cur] : ptr[cur + 1]] if int(v) not in ns), None)
                if nxt is None:
                    break
                ns.append(nxt)
                es.append((cur, nxt))
                cur = nxt
        node_lists.append(ns)
        edge_lists.append(es)
    size = k if variant == "paper" else depth + 1
    return subgraphs_from_node_lists(
        node_lists, edge_lists, size, sampler=f"fdp-{variant}", walk_length=depth, restarts=1
    )
