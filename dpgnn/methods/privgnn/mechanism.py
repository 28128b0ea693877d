"""The mechanism's pieces (Algorithm 1): the private subsample, the K nearest private nodes, the induced teacher
subgraph, and the noisy argmax that releases a label (and B4's noisy one-hot vectors, PATE's noisy vote argmax)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from dpgnn.methods.privgnn.data import PrivGNNData, _induced
from dpgnn.methods.privgnn.paper import check_gamma, check_k
from dpgnn.privacy.pate import check_lam
from dpgnn.utils import make_generator, stable_seed


def poisson_subsample(num_private: int, gamma: float, generator: torch.Generator, sampling: str = "poisson") -> Tensor:
    """Indices of a private subsample: each node independently w.p. γ (``poisson``, Algorithm 1 line 3), or exactly
    ⌊γ·|V†|⌋ nodes uniformly without replacement (``fixed``, the authors' code). Sorted."""
    g = check_gamma(gamma)
    if sampling == "poisson":
        return (torch.rand(num_private, generator=generator) < g).nonzero().view(-1)
    if sampling == "fixed":
        m = int(math.floor(g * num_private))
        return torch.sort(torch.randperm(num_private, generator=generator)[:m]).values
    raise ValueError(f"sampling must be 'poisson' or 'fixed', got {sampling!r}")


def knn_select(x_query: Tensor, x_candidates: Tensor, candidates: Tensor, k: int) -> Tensor:
    """The ``k`` candidates nearest to ``x_query`` in Euclidean distance (all of them when fewer); ties by index."""
    if candidates.numel() <= k:
        return candidates
    d = torch.cdist(x_query.view(1, -1).double(), x_candidates.double()).view(-1)
    # stable: sort by distance, then by position (candidates are sorted by index)
    order = torch.argsort(d, stable=True)[:k]
    return torch.sort(candidates[order]).values


def induced_subgraph(edge_index: Tensor, nodes: Tensor, num_nodes: int) -> Tensor:
    """Edges of the subgraph induced by ``nodes``, relabelled to positions in ``nodes``."""
    mask = torch.zeros(num_nodes, dtype=torch.bool)
    mask[nodes] = True
    ei, idx = _induced(edge_index, mask)
    # _induced relabels by ascending node id; map to positions in ``nodes``
    pos = torch.empty(num_nodes, dtype=torch.long)
    pos[nodes] = torch.arange(nodes.numel())
    rank_to_node = mask.nonzero().view(-1)
    return pos[rank_to_node[ei]]


def teacher_subgraphs(
    graphs: PrivGNNData,
    queries: Tensor,
    *,
    k: int | None,
    gamma: float,
    seed: int,
    sampling: str = "poisson",
    knn: bool = True,
) -> list[Tensor]:
    """Private node sets of the teachers of ``queries`` (one per query; each from its own generator seeded by
    ``(seed, query position)``): subsample, then the K nearest (``knn=False``: the whole subsample, KNNRem)."""
    g = check_gamma(gamma)
    if knn:
        k = check_k(k, graphs.num_private, g)
    out = []
    for i, v in enumerate(queries.tolist()):
        gen = make_generator(stable_seed(seed, "subsample", i))
        cand = poisson_subsample(graphs.num_private, g, gen, sampling)
        out.append(knn_select(graphs.x_pub[v], graphs.x_priv[cand], cand, k) if knn else cand)
    return out


def noisy_argmax(posteriors: Tensor, lam: float, generator: torch.Generator, *, noise_on: str = "posterior") -> Tensor:
    """Pseudo-labels argmax(p + Lap(0, 1/λ)^c) (Algorithm 1 line 7). ``noise_on="log_softmax"``: the authors' code
    (noise added to log-probabilities; the L1-sensitivity-1 argument then does not hold)."""
    lam = check_lam(lam)
    p = posteriors.double()
    if noise_on == "log_softmax":
        p = p.clamp_min(1e-300).log()
    elif noise_on != "posterior":
        raise ValueError(f"noise_on must be 'posterior' or 'log_softmax', got {noise_on!r}")
    u = torch.rand(p.shape, generator=generator, dtype=torch.float64) - 0.5
    noise = -(1.0 / lam) * torch.sign(u) * torch.log1p(-2 * u.abs())
    return (p + noise).argmax(dim=1)


def b4_noisy_onehot(true_labels: Tensor, num_classes: int, lam: float, generator: torch.Generator) -> Tensor:
    """B4's noisy vector (App. D.5): the one-hot true label + i.i.d. Lap(0, 1/λ) per class (float64)."""
    lam = check_lam(lam)
    onehot = F.one_hot(true_labels, num_classes).double()
    u = torch.rand(onehot.shape, generator=generator, dtype=torch.float64) - 0.5
    return onehot - (1.0 / lam) * torch.sign(u) * torch.log1p(-2 * u.abs())


def b4_soft_labels(true_labels: Tensor, num_classes: int, lam: float, generator: torch.Generator) -> Tensor:
    """B4 "noisy oracle" (App. D.5): :func:`b4_noisy_onehot` with negatives set to 0, renormalised (a vector
    that is all non-positive becomes uniform)."""
    v = b4_noisy_onehot(true_labels, num_classes, lam, generator).clamp_min(0.0)
    s = v.sum(1, keepdim=True)
    return torch.where(s > 0, v / s.clamp_min(1e-300), torch.full_like(v, 1.0 / num_classes)).float()


def pate_labels(counts: Tensor, lam: float, generator: torch.Generator) -> Tensor:
    """PATE aggregation: argmax of the vote counts + Lap(0, 1/λ) per class."""
    return noisy_argmax(counts.double(), lam, generator)
