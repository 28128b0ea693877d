"""ProGAP's graph side: degree bounding and the NAP mechanism with its query counter
(docs/papers/progap.md#architecture-and-training, docs/papers/progap.md#node-level-privacy)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data.transforms import EdgeCleaning, clean_edges
from dpgnn.privacy.validation import check_int as _int
from dpgnn.utils import make_generator

__all__ = ["NAP", "bound_degree", "graph_edges", "note_edges"]


def _cap_per_group(group: Tensor, num_nodes: int, cap: int, gen: torch.Generator) -> Tensor:
    """Indices (sorted) of at most ``cap`` entries per value of ``group``, chosen uniformly without replacement."""
    key = torch.rand(group.numel(), generator=gen, dtype=torch.float64)
    composite = group.double() * 2.0 + key  # by group, random within a group (key < 1); never negative
    # a non-negative double sorts as its bits read as an int64, which torch sorts by radix (several times faster)
    order = torch.argsort(composite.view(torch.int64))
    counts = torch.bincount(group, minlength=num_nodes)
    rank = torch.arange(group.numel()) - (torch.cumsum(counts, 0) - counts).repeat_interleave(counts)
    past = (rank == cap).nonzero().view(-1)  # each group's first entry over the cap, and the last kept before it
    if bool((composite[order[past]] == composite[order[past - 1]]).any()):
        order = torch.argsort(composite)  # equal keys across a cap: keep the ties as the sort of the doubles puts them
    keep = torch.empty(group.numel(), dtype=torch.bool)
    keep[order] = rank < cap
    return keep.nonzero().view(-1)


def bound_degree(
    edge_index: Tensor, num_nodes: int, max_degree: int, seed: int | torch.Generator = 0, *, cap_out_degree: bool = True
) -> Tensor:
    """Keep at most ``max_degree`` in-edges per node, sampled uniformly without replacement
    (docs/papers/progap.md#node-level-privacy).

    ``edge_index[1]`` is the receiving node. With ``cap_out_degree`` (default) a second pass also keeps at most
    ``D`` out-edges per node, so that removing one node changes at most ``D`` aggregates by one unit row each:
    the ``√D`` node-level sensitivity then holds for any graph. The authors' code caps in-degrees only (and, via
    its seed list ``arange(0, N-1)``, drops every in-edge of the last node); ``cap_out_degree=False`` reproduces
    the in-degree cap alone.
    """
    d = _int(max_degree, "max_degree", 1)
    n = _int(num_nodes, "num_nodes", 1)
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must be a tensor of shape [2, E], got {getattr(edge_index, 'shape', None)}")
    if edge_index.numel() == 0:
        return edge_index
    if int(edge_index.max()) >= n or int(edge_index.min()) < 0:
        raise ValueError(f"edge_index has node ids outside [0, num_nodes={n})")
    gen = make_generator(seed)
    ei = edge_index.cpu()
    ei = ei[:, _cap_per_group(ei[1], n, d, gen)]
    if cap_out_degree:
        ei = ei[:, _cap_per_group(ei[0], n, d, gen)]
    return ei.to(edge_index.device)


def _receiver_csr(edge_index: Tensor, num_nodes: int, device: torch.device) -> Tensor:
    """The 0/1 matrix ``A[dst, src]`` of a coalesced edge list as CSR, rows sorted by ``(dst, src)`` -- what
    ``sparse_coo_tensor(...).coalesce()`` then ``to_sparse_csr()`` give for distinct pairs, without the COO
    coalesce (a per-entry loop that dominated the set-up on graphs of tens of millions of edges)."""
    src, dst = edge_index[0].to(device, torch.long), edge_index[1].to(device, torch.long)
    key = torch.sort(dst * num_nodes + src).values
    counts = torch.bincount(key // num_nodes, minlength=num_nodes)
    crow = torch.zeros(num_nodes + 1, dtype=torch.long, device=device)
    torch.cumsum(counts, 0, out=crow[1:])
    ones = torch.ones(key.numel(), device=device)
    with warnings.catch_warnings():  # torch's one-time "CSR support is in beta" (as dpgnn.utils.to_csr)
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
        return torch.sparse_csr_tensor(crow, key % num_nodes, ones, (num_nodes, num_nodes), check_invariants=False)


class NAP:
    """Normalise-aggregate-perturb on a fixed graph (docs/papers/progap.md#architecture-and-training):
    ``Σ_{j→i} h_j/‖h_j‖ + N(0, σ² I)``.

    Each call is one query of the graph and is counted in :attr:`queries` (Algorithm 2 makes exactly ``K``).
    ``sigma = 0`` is the non-private aggregation. L2 sensitivity of one query: 1 for one directed edge (a unit row
    enters one aggregate), ``√2`` for one undirected edge (two rows); ``√D`` for one node once degrees are bounded
    to ``D`` (paper §4.2, GAP's Lemma 3), so the caller passes ``sigma = z`` (edge) or ``z·√D`` (node). These
    hold for a simple graph: the edge list is coalesced first (:func:`dpgnn.data.transforms.clean_edges`), since a
    pair listed twice would enter its aggregate twice (sensitivity ``2``, ``2√2`` for an undirected edge).
    :attr:`cleaning` reports what was merged.
    """

    def __init__(
        self,
        edge_index: Tensor,
        num_nodes: int,
        sigma: float,
        *,
        generator: torch.Generator,
        device: str | torch.device = "cpu",
    ) -> None:
        if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
        self.sigma = float(sigma)
        self.num_nodes = _int(num_nodes, "num_nodes", 1)
        edge_index, self.cleaning = clean_edges(edge_index, self.num_nodes, owner="NAP")
        self.adj = _receiver_csr(edge_index, self.num_nodes, torch.device(device))
        self.generator = generator
        self.queries = 0

    def __call__(self, h: Tensor) -> Tensor:
        """One noisy aggregation of ``h`` (rows normalised, summed over neighbours, noised); counted in ``queries``."""
        self.queries += 1
        h = F.normalize(h, p=2.0, dim=-1)
        out = self.adj @ h
        if self.sigma > 0:
            noise = torch.randn(out.shape, generator=self.generator, device=self.generator.device)
            out = out + self.sigma * noise.to(out.device)
        return out


def graph_edges(data: Data, level: str, owner: str) -> tuple[Tensor, EdgeCleaning]:
    """The edge list a ProGAP-family run uses (:func:`dpgnn.data.transforms.clean_edges`): repeated pairs merged,
    self-loops kept (a self-loop is one unit row in one aggregate, within every sensitivity above); at edge level
    the graph must be undirected (both directions of every pair), as the ledger's neighbouring relation is one
    undirected edge -- a one-direction ``edge_index`` is refused with the fix. Node level caps in- and out-degrees
    (:func:`bound_degree`), which bounds a node's influence for any directed graph."""
    return clean_edges(data.edge_index, data.num_nodes, undirected=level == "edge", owner=owner)


def note_edges(ledger: dict[str, Any], cleaning: EdgeCleaning) -> dict[str, Any]:
    """Record in ``ledger`` (as ``edge_input``) what :func:`graph_edges` merged; nothing when the graph was used as
    given (every paper dataset)."""
    if cleaning.changed:
        ledger["edge_input"] = cleaning.describe()
    return ledger
