"""DRW's sampling bound (Ayle et al., arXiv 2301.00738, Sec. 4.2; docs/papers/drw.md#samplers-and-the-sampling-bound):
pure arithmetic, no graphs, so that the ``dpgnn epsilon drw`` calculator needs neither torch nor the samplers.

A DRW subgraph (one root, ``R`` walks of length ``L``) holds at most ``1 + R·L`` nodes, so ``N`` training nodes give
at least ``m_min = ⌈N / (1 + R·L)⌉`` disjoint subgraphs on any graph; a batch of ``B`` subgraphs drawn uniformly
without replacement then holds one node's subgraph with probability at most ``q = B / m_min`` (the rate of the
replace-one accounting in :mod:`dpgnn.privacy.drw`). The samplers (:mod:`dpgnn.data.random_walks`) use this bound.
"""

from __future__ import annotations

from dpgnn.privacy.validation import check_int

__all__ = ["min_num_subgraphs"]


def min_num_subgraphs(num_train: int, walk_length: int, restarts: int = 1) -> int:
    """``m_min = ⌈N_train / (1 + R·L)⌉``: a subgraph holds at most ``1 + R·L`` nodes, so at least this many
    exist."""
    n = check_int(num_train, "num_train", 1)
    L = check_int(walk_length, "walk_length", 0)
    R = check_int(restarts, "restarts", 1)
    return -(-n // (1 + R * L))
