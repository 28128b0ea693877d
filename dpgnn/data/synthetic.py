"""Synthetic graphs for tests and smoke runs: a contextual stochastic block model (CSBM)."""

from __future__ import annotations

import torch
from torch_geometric.data import Data

from dpgnn.data.transforms import random_node_split, undirected_edges
from dpgnn.utils import make_generator

__all__ = ["csbm"]

#: rows of the feature matrix drawn at a time
_ROWS = 65_536


def _sample_pairs(pool_a: torch.Tensor, pool_b: torch.Tensor | None, count: int, gen: torch.Generator) -> torch.Tensor:
    """``count`` random node pairs, first end from ``pool_a``, second from ``pool_b`` (same pool if None)."""
    a = pool_a[torch.randint(pool_a.numel(), (count,), generator=gen)]
    pb = pool_a if pool_b is None else pool_b
    b = pb[torch.randint(pb.numel(), (count,), generator=gen)]
    return torch.stack([a, b])


def _edges(
    y: torch.Tensor, num_classes: int, avg_degree: float, homophily: float, gen: torch.Generator
) -> torch.Tensor:
    """:func:`csbm`'s ``edge_index``: a ``homophily`` fraction of intra-class edges, the rest inter-class."""
    num_nodes = y.numel()
    m = int(round(avg_degree * num_nodes / 2))
    m_intra = int(round(homophily * m))
    chunks = []
    per_class = torch.bincount(y, minlength=num_classes).double()
    if m_intra:
        # choose the class of each intra edge proportional to its number of node pairs
        w = per_class * (per_class - 1)
        cls = torch.multinomial(w / w.sum(), m_intra, replacement=True, generator=gen)
        for c in range(num_classes):
            k = int((cls == c).sum())
            if k:
                chunks.append(_sample_pairs((y == c).nonzero().view(-1), None, k, gen))
    m_inter = m - m_intra
    if m_inter:
        a = torch.randint(num_nodes, (m_inter,), generator=gen)
        # second end: uniform among nodes of another class
        off = torch.randint(1, num_classes, (m_inter,), generator=gen)
        target_cls = (y[a] + off) % num_classes
        b = torch.empty_like(a)
        for c in range(num_classes):
            sel = target_cls == c
            pool = (y == c).nonzero().view(-1)
            b[sel] = pool[torch.randint(pool.numel(), (int(sel.sum()),), generator=gen)]
        chunks.append(torch.stack([a, b]))
    ei = torch.cat(chunks, dim=1) if chunks else torch.empty(2, 0, dtype=torch.long)
    return undirected_edges(ei, num_nodes)


def _features(
    y: torch.Tensor,
    num_classes: int,
    num_features: int,
    feature_sparsity: float,
    feature_signal: float,
    gen: torch.Generator,
) -> torch.Tensor:
    """:func:`csbm`'s features: sparse, uniform in (0, 1], denser on each class's prototype columns."""
    num_nodes = y.numel()
    density = 1.0 - feature_sparsity
    d = num_features
    k = min(max(int(round(0.5 * d)), 1), max(d - 1, 1))  # prototype columns per class
    proto = torch.zeros(num_classes, d, dtype=torch.bool)
    for c in range(num_classes):
        proto[c, torch.randperm(d, generator=gen)[:k]] = True
    s = max(0.0, min(float(feature_signal), 1.0))
    p_on = min(1.0, density * (1 + s))
    # the off-prototype probability keeps each row's expected density exactly 1 - sparsity
    p_off = (density * d - k * p_on) / (d - k) if d > k else 0.0
    p_off = min(max(p_off, 0.0), 1.0)
    on, off = torch.tensor(p_on), torch.tensor(p_off)
    # drawn in row blocks (the generator's stream is the same as one [N, F] draw) so that no [N, F] temporary
    # beyond the non-zero pattern and ``x`` itself is held: millions of nodes fit in little more than ``x``
    blocks = [slice(start, min(start + _ROWS, num_nodes)) for start in range(0, num_nodes, _ROWS)]
    nz = torch.empty(num_nodes, num_features, dtype=torch.bool)
    for b in blocks:
        nz[b] = torch.rand(b.stop - b.start, num_features, generator=gen) < torch.where(proto[y[b]], on, off)
    x = torch.empty(num_nodes, num_features, dtype=torch.float32)
    for b in blocks:
        x[b] = (1.0 - torch.rand(b.stop - b.start, num_features, generator=gen)) * nz[b]  # values in (0, 1]
    return x


def csbm(
    num_nodes: int = 200,
    num_classes: int = 3,
    num_features: int = 32,
    avg_degree: float = 5.0,
    homophily: float = 0.8,
    feature_sparsity: float = 0.9,
    feature_signal: float = 1.0,
    seed: int = 0,
) -> Data:
    """Contextual stochastic block model with controllable homophily, degree and feature sparsity.

    * labels: balanced classes (node ``i`` has class ``i % C`` before a seeded shuffle);
    * edges: ``round(avg_degree * n / 2)`` undirected edges, a ``homophily`` fraction of them drawn between two
      random nodes of the same class and the rest between nodes of different classes (duplicates and self-loops
      removed, so the realised degree can be slightly lower); ``edge_index`` holds both directions;
    * features in [0, 1], a ``feature_sparsity`` fraction of zeros: each class owns a random "prototype" set of
      columns; entry ``(i, j)`` is non-zero with probability ``(1 - sparsity) * (1 + s)`` on the columns of its
      class's prototype (half of the columns) and elsewhere with the probability that keeps every row's expected
      density at ``1 - sparsity`` (``s = feature_signal`` in [0, 1]; 0 = uninformative), values uniform in (0, 1];
    * random 50/25/25 train/val/test masks.

    Deterministic given ``seed`` (a ``torch.Generator`` drives everything).
    """
    if num_nodes < 2 * num_classes:
        raise ValueError("num_nodes must be at least 2 * num_classes")
    if not 0.0 <= homophily <= 1.0 or not 0.0 <= feature_sparsity <= 1.0:
        raise ValueError("homophily and feature_sparsity must lie in [0, 1]")
    if num_classes < 2 and homophily < 1.0:
        raise ValueError("a single class cannot have inter-class edges; use homophily=1.0")
    gen = make_generator(seed)
    y = torch.arange(num_nodes) % num_classes
    y = y[torch.randperm(num_nodes, generator=gen)]

    edge_index = _edges(y, num_classes, avg_degree, homophily, gen)
    x = _features(y, num_classes, num_features, feature_sparsity, feature_signal, gen)

    data = Data(x=x, y=y.long(), edge_index=edge_index, num_nodes=num_nodes)
    return random_node_split(data, 0.5, 0.25, 0.25, seed=int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
