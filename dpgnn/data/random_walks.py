"""Random-walk samplers of the DRW paper (Ayle et al., arXiv 2301.00738;
docs/papers/drw.md#samplers-and-the-sampling-bound).

DP samplers split the training graph into *disjoint* subgraphs, each rooted at one training node, once before
training (DRW, DRW-R) or every ``k`` iterations (DRW-D); a batch is ``B`` subgraphs drawn uniformly without
replacement. Because a node lies in at most one subgraph, changing one node's features changes at most one
per-subgraph gradient, and the probability that this subgraph enters a batch is at most
``q = B / m_min`` with ``m_min = ⌈N_train / (1 + R·L)⌉`` the fewest subgraphs any run on any graph can produce
(:func:`sampling_probability_bound`).

Non-private samplers for the baselines: :func:`random_walk_batch` (GCN "RW": independent, overlapping walks from
``B`` roots drawn with replacement) and :func:`uniform_batch` (MLP: ``B`` training nodes).

Subgraphs are returned padded (:class:`Subgraphs`): ``nodes[i, 0]`` is the root, ``-1`` pads, and ``adj[i]`` is the
symmetric local adjacency of the walk edges, so that per-subgraph computations vectorise over ``i``.

torch is imported by the samplers that build tensors, not here: the bounds (:func:`sampler_bound`) stay light.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dpgnn.privacy.subgraphs import min_num_subgraphs
from dpgnn.privacy.validation import check_int as _check_int

if TYPE_CHECKING:
    from torch import Tensor

__all__ = [
    "Subgraphs",
    "SAMPLERS",
    "csr",
    "disjoint_random_walks",
    "min_num_subgraphs",
    "sampling_probability_bound",
    "sampler_bound",
    "random_walk_batch",
    "uniform_batch",
    "subgraphs_from_node_lists",
]

#: sampler name -> (walks per root R, re-sampled during training); "rw" and "uniform" are the non-private ones.
SAMPLERS = {"drw": (1, False), "drw-d": (1, True), "drw-r": (2, False), "rw": (1, False), "uniform": (0, False)}


@dataclass(frozen=True)
class Subgraphs:
    """Padded subgraphs: ``nodes`` [m, S] global ids (root in column 0, ``-1`` = padding), ``adj`` [m, S, S] bool."""

    nodes: Tensor
    adj: Tensor
    sampler: str = "drw"
    walk_length: int = 0
    restarts: int = 1

    @property
    def roots(self) -> Tensor:
        """``[m]`` global id of each subgraph's root (column 0 of ``nodes``)."""
        return self.nodes[:, 0]

    @property
    def num_subgraphs(self) -> int:
        """Number of subgraphs ``m``."""
        return int(self.nodes.shape[0])

    @property
    def max_size(self) -> int:
        """Padded size ``S``: the most nodes a subgraph can hold."""
        return int(self.nodes.shape[1])

    @property
    def mask(self) -> Tensor:
        """``[m, S]`` bool: which slots of ``nodes`` hold a node (``False`` = padding)."""
        return self.nodes >= 0

    def sizes(self) -> Tensor:
        """``[m]`` number of nodes of each subgraph (root included, padding not)."""
        return self.mask.sum(dim=1)


def csr(edge_index: Tensor, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR (``ptr``, ``col``) of a directed edge list (pass both directions for an undirected graph)."""
    from torch import Tensor

    ei = np.asarray(edge_index.cpu().numpy() if isinstance(edge_index, Tensor) else edge_index, dtype=np.int64)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {tuple(ei.shape)}")
    if ei.size and (ei.min() < 0 or ei.max() >= num_nodes):
        raise ValueError(f"edge_index has node ids outside [0, {num_nodes})")
    order = np.lexsort((ei[1], ei[0]))
    src, dst = ei[0][order], ei[1][order]
    ptr = np.zeros(num_nodes + 1, dtype=np.int64)
    np.add.at(ptr, src + 1, 1)
    return np.cumsum(ptr), dst


def subgraphs_from_node_lists(
    node_lists: Sequence[Sequence[int]],
    edge_lists: Sequence[Sequence[tuple[int, int]]],
    max_size: int,
    *,
    sampler: str,
    walk_length: int,
    restarts: int,
) -> Subgraphs:
    """Pad lists of global node ids (root first) and global edges into a :class:`Subgraphs`."""
    import torch

    m = len(node_lists)
    size = max(1, max_size)
    nodes = torch.full((m, size), -1, dtype=torch.long)
    adj = torch.zeros((m, size, size), dtype=torch.bool)
    for i, (ns, es) in enumerate(zip(node_lists, edge_lists)):
        if len(ns) > size:
            raise ValueError(f"subgraph {i} has {len(ns)} nodes, more than max_size={size}")
        nodes[i, : len(ns)] = torch.as_tensor(list(ns), dtype=torch.long)
        pos = {int(v): k for k, v in enumerate(ns)}
        for u, v in es:
            a, b = pos[int(u)], pos[int(v)]
            if a != b:
                adj[i, a, b] = adj[i, b, a] = True
    return Subgraphs(nodes, adj, sampler, walk_length, restarts)


def disjoint_random_walks(
    edge_index: Tensor,
    num_nodes: int,
    roots: Tensor | Sequence[int],
    walk_length: int,
    restarts: int = 1,
    *,
    seed: int | np.random.Generator,
    sampler: str | None = None,
) -> Subgraphs:
    """DRW (``restarts=1``) / DRW-R (``restarts=R``) disjoint subgraphs (paper Sec. 4.2, Appendix B).

    Pool = ``roots`` (the training nodes). Until the pool is empty: draw a root uniformly from the pool, remove it
    and mark it sampled; from it take ``restarts`` walks of up to ``walk_length`` steps, each restarting at the
    root and moving to a uniformly chosen neighbour that is not yet sampled (any node, training or not), stopping
    early when there is none. Every visited node is marked sampled and leaves the pool if it is a root candidate.
    The subgraph is the root plus its walks; its edges are the walk edges (made symmetric).
    """
    from torch import Tensor

    L = _check_int(walk_length, "walk_length", 0)
    R = _check_int(restarts, "restarts", 1)
    _check_int(num_nodes, "num_nodes", 1)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(_check_int(seed, "seed", 0))
    ptr, col = csr(edge_index, num_nodes)
    pool = np.asarray(roots.cpu().numpy() if isinstance(roots, Tensor) else roots, dtype=np.int64).ravel()
    if pool.size == 0:
        raise ValueError("roots must contain at least one node")
    if pool.min() < 0 or pool.max() >= num_nodes or np.unique(pool).size != pool.size:
        raise ValueError(f"roots must be distinct node ids in [0, {num_nodes})")
    sampled = np.zeros(num_nodes, dtype=bool)
    node_lists, edge_lists = [], []
    for r in rng.permutation(pool):  # a uniform draw from the remaining pool = the next root of a random order
        if sampled[r]:
            continue
        sampled[r] = True
        ns, es = [int(r)], []
        for _ in range(R):
            cur = r
            for _ in range(L):
                nbrs = col[ptr[cur] : ptr[cur + 1]]
                valid = nbrs[~sampled[nbrs]]
                if valid.size == 0:
                    break
                nxt = int(valid[rng.integers(valid.size)])
                sampled[nxt] = True
                ns.append(nxt)
                es.append((int(cur), nxt))
                cur = nxt
        node_lists.append(ns)
        edge_lists.append(es)
    name = sampler or ("drw" if R == 1 else "drw-r")
    return subgraphs_from_node_lists(node_lists, edge_lists, 1 + R * L, sampler=name, walk_length=L, restarts=R)


def sampling_probability_bound(batch_size: int, num_train: int, walk_length: int, restarts: int = 1) -> float:
    """Bound on P(a given node's subgraph is in a batch of ``batch_size`` subgraphs): ``q = B / m_min``.

    ``num_train`` is the number of TRAINING nodes (the root pool), also for transductive datasets. A batch larger
    than ``m_min`` is refused: a run could produce fewer subgraphs than the batch needs.
    """
    B = _check_int(batch_size, "batch_size", 1)
    m = min_num_subgraphs(num_train, walk_length, restarts)
    if B > m:
        raise ValueError(
            f"batch_size must be in [1, m_min={m}] (m_min = ceil(num_train / (1 + restarts * "
            f"walk_length)) with num_train={num_train}, walk_length={walk_length}, restarts={restarts}), "
            f"got {B}"
        )
    return B / m


def sampler_bound(sampler: str, batch_size: int, num_train: int, walk_length: int) -> float:
    """:func:`sampling_probability_bound` of a named DP sampler (``drw``, ``drw-d``: R = 1; ``drw-r``: R = 2)."""
    key = str(sampler).lower()
    if key not in ("drw", "drw-d", "drw-r"):
        raise ValueError(f"sampler must be one of 'drw', 'drw-d', 'drw-r' (DP samplers), got {sampler!r}")
    return sampling_probability_bound(batch_size, num_train, walk_length, SAMPLERS[key][0])


def random_walk_batch(
    ptr: np.ndarray,
    col: np.ndarray,
    train_nodes: np.ndarray,
    batch_size: int,
    walk_length: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Non-private RW batch: ``B`` roots with replacement, one independent walk of ``L`` steps each (revisits
    allowed); returns (sorted union of visited nodes, the training nodes among them = loss nodes)."""
    B = _check_int(batch_size, "batch_size", 1)
    L = _check_int(walk_length, "walk_length", 0)
    cur = rng.choice(train_nodes, size=B, replace=True)
    visited = [cur]
    for _ in range(L):
        deg = ptr[cur + 1] - ptr[cur]
        step = np.where(deg > 0, ptr[cur] + (rng.random(B) * np.maximum(deg, 1)).astype(np.int64), -1)
        cur = np.where(step >= 0, col[np.maximum(step, 0)], cur)
        visited.append(cur)
    nodes = np.unique(np.concatenate(visited))
    loss = nodes[np.isin(nodes, train_nodes)]
    return nodes, loss


def uniform_batch(train_nodes: np.ndarray, batch_size: int, rng: np.random.Generator) -> np.ndarray:
    """Non-private MLP batch: ``min(B, N_train)`` training nodes drawn uniformly without replacement."""
    B = _check_int(batch_size, "batch_size", 1)
    return rng.choice(train_nodes, size=min(B, len(train_nodes)), replace=False)
