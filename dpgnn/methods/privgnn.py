"""PrivGNN -- Olatunji, Funke & Khosla, "Releasing Graph Neural Networks with Differential Privacy Guarantees"
(TMLR 2023); docs/papers/privgnn.md.

Setting: a labelled private graph G† and an unlabelled public graph G (induced subgraphs of one dataset, no shared
edges). For each public query node v ∈ Q (Algorithm 1): Poisson-subsample the private nodes with rate γ, keep the K
nearest (Euclidean feature distance to v), train a GraphSAGE teacher on the induced private subgraph, answer v
inductively on the public graph, add Laplace(0, 1/λ) noise to each coordinate of the posterior and release the
argmax. A student GraphSAGE trained transductively on the public graph with the |Q| pseudo-labels is the only
released model; its ε comes from :mod:`dpgnn.privacy.pate`.

What is here (the series layer :mod:`dpgnn.series.privgnn` calls only this):

* data: :func:`prepare` (private/public graphs of docs/papers/privgnn.md#data-and-splits, query order), :func:`query_nodes`;
* the mechanism: :func:`poisson_subsample` (and the authors' fixed-size variant), :func:`knn_select`,
  :func:`induced_subgraph`, :func:`teacher_posteriors` (many teachers trained at once with
  :class:`dpgnn.nn.privgnn.BatchedSAGETeachers`), :func:`noisy_argmax`;
* the student: :func:`train_student` (hard or soft labels, optional pre-training, App. D.7);
* baselines: :func:`baseline_b1`, :func:`baseline_b2`, :func:`baseline_b3`, :func:`b4_soft_labels` (App. D.5),
  :func:`mlp_baseline` (Table 7), :func:`pate_votes` (PATE-M with MLP teachers, PATE-G with SAGE teachers);
* ablations: KNNRem (``knn=False``: the teacher sees the whole subsample) and SingleGNN (:func:`single_gnn_posteriors`);
* ledgers: :func:`privacy_ledger`.

Teacher posteriors do not depend on λ, and the |Q| = 500 queries are a prefix of the |Q| = 1000 ones, so one set of
teachers serves a whole λ sweep and both |Q| settings (:func:`teacher_posteriors` is computed for the largest |Q|).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data import load_dataset
from dpgnn.nn.privgnn import MLP, SAGE, BatchedSAGETeachers, mean_neighbours, train_batched_teachers
from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, SOUND, non_private, statement
from dpgnn.privacy.pate import (
    PRIVGNN_ACCOUNTANT,
    check_lam,
    pate_epsilon,
    privgnn_epsilon,
    privgnn_event,
    vote_counts,
)
from dpgnn.privacy.privgnn import statement_as_published as privgnn_statement
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = [
    "PAPER", "LAMBDAS", "GLOBAL_SEED", "SEEDS", "DATASETS", "DatasetInfo", "PrivGNNData", "prepare", "query_nodes",
    "poisson_subsample", "knn_select", "induced_subgraph", "teacher_subgraphs", "teacher_posteriors",
    "single_gnn_posteriors", "noisy_argmax", "b4_soft_labels", "train_student", "baseline_b1", "baseline_b2",
    "baseline_b3", "mlp_baseline", "pate_votes", "pate_labels", "privacy_ledger", "check_k", "check_gamma",
    "fit_sage", "log_posteriors",
]

PAPER = "privgnn"
LAMBDAS = (0.1, 0.2, 0.4, 0.8, 1.0)
GLOBAL_SEED = 12345
#: the authors' seed list (docs/papers/privgnn.md#runs-and-aggregation); run r of a cell uses SEEDS[r] mixed with the profile seed
SEEDS = (2763934991, 87952126, 461858464, 2251922041, 2203565404, 2569991973, 569824674, 2721098863, 836273002,
         2935227127)


@dataclass(frozen=True)
class DatasetInfo:
    """Per-dataset settings (docs/papers/privgnn.md#data-and-splits to docs/papers/privgnn.md#baselines). ``delta_stated``: the δ the paper states; ``delta_reproducing``: the δ
    that reproduces its ε tables (ten times larger, see notebook 01); ``pate_delta``: implied by Table 2's PATE
    offsets; ``k``: main-result K; ``gamma``: main-result γ; ``pate_teachers``: n for PATE."""

    load: tuple[str, str | None]
    classes: int
    k: int | None
    gamma: float
    delta_stated: float
    delta_reproducing: float
    pate_delta: float | None
    pate_teachers: int
    available_offline: bool
    standin_for: str | None = None


DATASETS: dict[str, DatasetInfo] = {
    "amazon": DatasetInfo(("amazon", "privgnn"), 10, 750, 0.3, 1e-4, 1e-3, 1 / 2500, 20, True),
    "amazon2m": DatasetInfo(("amazon2m", "privgnn"), 47, 3000, 0.1, 1e-5, 1e-4, 1e-6, 50, False),
    "reddit": DatasetInfo(("reddit", "privgnn"), 41, 3000, 0.3, 1e-4, 1e-3, 8e-5, 20, False),
    "facebook": DatasetInfo(("facebook", "privgnn"), 34, 3000, 0.3, 1e-4, 1e-3, 3.0e-5, 20, False),
    "arxiv": DatasetInfo(("ogbn-arxiv", "privgnn"), 40, 1000, 0.3, 1e-5, 1e-4, None, 50, False),
    # K unstated for Credit [AMBIG]; 750 as Amazon (repo config default) -- γ|V†| = 3,000 allows it
    "credit": DatasetInfo(("credit", "privgnn"), 2, 750, 0.3, 1e-4, 1e-3, None, 20, True),
    # clearly labelled stand-in for the missing Facebook100 UIUC graph (same PrivGNN preprocessing)
    "fb100-cornell5 (stand-in for facebook)": DatasetInfo(("fb100-cornell5", "privgnn"), 0, 1000, 0.3, 1e-4, 1e-3,
                                                          3.0e-5, 20, True, standin_for="facebook"),
}


def _info(name: str) -> DatasetInfo:
    if name not in DATASETS:
        raise ValueError(f"unknown PrivGNN dataset {name!r}; valid names: {list(DATASETS)}")
    return DATASETS[name]


# ---------------------------------------------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------------------------------------------
def check_gamma(gamma: Any) -> float:
    g = float(gamma)
    if not (0.0 < g <= 1.0):
        raise ValueError(f"gamma (the Poisson sampling rate) must lie in (0, 1], got {gamma}")
    return g


def check_k(k: Any, num_private: int, gamma: float) -> int:
    """K must be a positive integer no larger than the expected subsample size ⌊γ·|V†|⌋."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"K must be an integer >= 1, got {k!r}")
    cap = int(math.floor(gamma * num_private))
    if k > cap:
        raise ValueError(f"K={k} is larger than the subsample: gamma * |V_private| = {gamma} * {num_private} = "
                         f"{gamma * num_private:g}, so K must lie in [1, {cap}]")
    return int(k)


# ---------------------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class PrivGNNData:
    """The private graph (``x_priv``, ``y_priv``, ``edge_priv`` relabelled 0..|V†|-1) and the public graph
    (``x_pub``, ``y_pub``, ``edge_pub``; ``pub_train`` in a random order -- queries are its prefix -- and
    ``pub_test``), plus shared preprocessing of the public graph (neighbour means, CSR of in-neighbours)."""

    name: str
    x_priv: Tensor
    y_priv: Tensor
    edge_priv: Tensor
    x_pub: Tensor
    y_pub: Tensor
    edge_pub: Tensor
    pub_train: Tensor
    pub_test: Tensor
    num_classes: int
    #: feature columns z-scored with statistics of all nodes, private ones included (Credit): a preprocessing
    #: statistic the ε does not cover
    standardized: bool = False
    agg_pub: Tensor = field(init=False)
    csr_ptr: Tensor = field(init=False)
    csr_idx: Tensor = field(init=False)

    def __post_init__(self) -> None:
        n = self.x_pub.size(0)
        self.agg_pub = mean_neighbours(self.x_pub, self.edge_pub, n)
        src, dst = self.edge_pub
        order = torch.argsort(dst, stable=True)
        self.csr_idx = src[order]
        self.csr_ptr = torch.zeros(n + 1, dtype=torch.long)
        self.csr_ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)

    @property
    def num_private(self) -> int:
        return int(self.x_priv.size(0))

    @property
    def num_features(self) -> int:
        return int(self.x_priv.size(1))

    def stats(self) -> dict[str, Any]:
        """Table 11 statistics: |V†|, |E†|, |V|, |E| (directed edge_index entries), public train/test sizes."""
        return {"dataset": self.name, "private_nodes": self.num_private, "private_edges": int(self.edge_priv.size(1)),
                "public_nodes": int(self.x_pub.size(0)), "public_edges": int(self.edge_pub.size(1)),
                "public_train": int(self.pub_train.numel()), "public_test": int(self.pub_test.numel()),
                "features": self.num_features, "classes": self.num_classes}


def _induced(edge_index: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Edges among ``mask`` nodes, relabelled; also returns the old → new index map."""
    idx = torch.full((mask.numel(),), -1, dtype=torch.long)
    idx[mask] = torch.arange(int(mask.sum()))
    keep = mask[edge_index[0]] & mask[edge_index[1]]
    return idx[edge_index[:, keep]], idx


def _standardize(x: Tensor) -> Tensor:
    mu, sd = x.mean(0), x.std(0)
    return (x - mu) / torch.where(sd > 0, sd, torch.ones_like(sd))


def prepare_from_data(data: Data, name: str, *, order_seed: int = GLOBAL_SEED, standardize: bool = False
                      ) -> PrivGNNData:
    """Split a graph carrying ``private_mask``/``public_train_mask``/``public_test_mask`` into G† and G (docs/papers/privgnn.md#data-and-splits).

    ``order_seed`` orders the public-train nodes randomly (the query set is its first |Q| entries).
    ``standardize`` z-scores the feature columns (used for Credit, whose raw columns span 0..10^6).
    """
    x = check_features(data.x, "data.x (node features)").to(torch.float32)
    if standardize:
        x = _standardize(x)
    y = data.y.long()
    edge_priv, _ = _induced(data.edge_index, data.private_mask)
    pub_mask = data.public_train_mask | data.public_test_mask
    edge_pub, pub_map = _induced(data.edge_index, pub_mask)
    tr = pub_map[data.public_train_mask.nonzero().view(-1)]
    te = pub_map[data.public_test_mask.nonzero().view(-1)]
    tr = tr[torch.randperm(tr.numel(), generator=make_generator(order_seed))]
    classes = int(y.max()) + 1
    return PrivGNNData(name, x[data.private_mask], y[data.private_mask], edge_priv, x[pub_mask], y[pub_mask],
                       edge_pub, tr, te, classes, standardized=bool(standardize))


def prepare(name: str, *, order_seed: int = GLOBAL_SEED, root=None) -> PrivGNNData:
    """Load a PrivGNN dataset (``DATASETS`` key) with its private/public split; raises ``DatasetUnavailable``."""
    info = _info(name)
    kwargs = {} if root is None else {"root": root}
    data = load_dataset(info.load[0], variant=info.load[1], **kwargs)
    return prepare_from_data(data, name, order_seed=order_seed, standardize=name in STANDARDIZED)


def query_nodes(pd_: PrivGNNData, num_queries: int) -> Tensor:
    """The first ``num_queries`` public-train nodes (indices into the public graph)."""
    n_tr = int(pd_.pub_train.numel())
    if isinstance(num_queries, bool) or not isinstance(num_queries, (int, np.integer)) or num_queries < 1:
        raise ValueError(f"num_queries must be an integer >= 1, got {num_queries!r}")
    if num_queries > n_tr:
        raise ValueError(f"num_queries={num_queries} is larger than the public train set ({n_tr} nodes); "
                         f"|Q| must lie in [1, {n_tr}]")
    return pd_.pub_train[:num_queries]


# ---------------------------------------------------------------------------------------------------------------
# the mechanism's pieces
# ---------------------------------------------------------------------------------------------------------------
def poisson_subsample(num_private: int, gamma: float, generator: torch.Generator, sampling: str = "poisson"
                      ) -> Tensor:
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


def teacher_subgraphs(pd_: PrivGNNData, queries: Tensor, *, k: int | None, gamma: float, seed: int,
                      sampling: str = "poisson", knn: bool = True) -> list[Tensor]:
    """Private node sets of the teachers of ``queries`` (one per query; each from its own generator seeded by
    ``(seed, query position)``): subsample, then the K nearest (``knn=False``: the whole subsample, KNNRem)."""
    g = check_gamma(gamma)
    if knn:
        k = check_k(k, pd_.num_private, g)
    out = []
    for i, v in enumerate(queries.tolist()):
        gen = make_generator(stable_seed(seed, "subsample", i))
        cand = poisson_subsample(pd_.num_private, g, gen, sampling)
        out.append(knn_select(pd_.x_pub[v], pd_.x_priv[cand], cand, k) if knn else cand)
    return out


@dataclass
class TeacherOutput:
    """Teachers' posteriors (probabilities) [|Q|, c] at the query nodes, with timing and size statistics."""

    posteriors: Tensor
    sizes: Tensor
    seconds: float
    teacher_epochs: int

    @property
    def teacher_epochs_per_second(self) -> float:
        return self.teacher_epochs / max(self.seconds, 1e-9)


def _stack(pd_: PrivGNNData, node_sets: Sequence[Tensor], device: torch.device
           ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Pad ``B`` node sets to a common size: features [B, K, 2d] with neighbour means, mask, labels, flat edges."""
    bsz, kmax, d = len(node_sets), max(int(s.numel()) for s in node_sets), pd_.num_features
    xx = torch.zeros(bsz, kmax, 2 * d)
    mask = torch.zeros(bsz, kmax)
    y = torch.zeros(bsz, kmax, dtype=torch.long)
    srcs, dsts = [], []
    for b, nodes in enumerate(node_sets):
        n = int(nodes.numel())
        ei = induced_subgraph(pd_.edge_priv, nodes, pd_.num_private)
        x = pd_.x_priv[nodes]
        xx[b, :n, :d] = x
        xx[b, :n, d:] = mean_neighbours(x, ei, n)
        mask[b, :n] = 1.0
        y[b, :n] = pd_.y_priv[nodes]
        srcs.append(ei[0] + b * kmax)
        dsts.append(ei[1] + b * kmax)
    src, dst = torch.cat(srcs), torch.cat(dsts)
    inv_deg = 1.0 / torch.bincount(dst, minlength=bsz * kmax).clamp(min=1).float().unsqueeze(1)
    return (xx.to(device), mask.to(device), y.to(device), src.to(device), dst.to(device), inv_deg.to(device))


def train_teacher_batch(pd_: PrivGNNData, node_sets: Sequence[Tensor], seeds: Sequence[int], *, hidden: int = 64,
                        dropout: float = 0.5, epochs: int = 200, lr: float = 0.01, device: str = "cpu"
                        ) -> BatchedSAGETeachers:
    """Train one batched model holding a teacher per node set (teacher ``b`` initialised from ``seeds[b]``)."""
    dev = resolve_device(device)
    gens = [make_generator(s) for s in seeds]
    model = BatchedSAGETeachers(len(node_sets), pd_.num_features, hidden, pd_.num_classes, dropout=dropout,
                                generators=gens).to(dev)
    xx, mask, y, src, dst, inv_deg = _stack(pd_, node_sets, dev)
    return train_batched_teachers(model, xx, mask, y, src, dst, inv_deg, epochs=epochs, lr=lr)


def _batch_size(k: int, d: int, budget_bytes: float = 256e6) -> int:
    """Teachers per batch so that the stacked inputs and activations stay within ``budget_bytes``."""
    per_teacher = 4.0 * k * (2 * d + 8 * 64)
    return int(max(1, min(256, budget_bytes // per_teacher)))


def teacher_posteriors(pd_: PrivGNNData, num_queries: int, *, k: int | None, gamma: float, seed: int,
                       sampling: str = "poisson", knn: bool = True, hidden: int = 64, dropout: float = 0.5,
                       epochs: int = 200, lr: float = 0.01, batch_size: int | None = None, device: str = "auto"
                       ) -> TeacherOutput:
    """Posteriors of the |Q| query-specific teachers at their query nodes (Algorithm 1 lines 3-6 and the forward of
    line 7, without noise). Teacher i depends only on (``seed``, i): any prefix of the queries gets the same
    teachers, and one set serves every λ."""
    queries = query_nodes(pd_, num_queries)
    dev = resolve_device(device)
    sets = teacher_subgraphs(pd_, queries, k=k, gamma=gamma, seed=seed, sampling=sampling, knn=knn)
    bs = batch_size or _batch_size(max(int(s.numel()) for s in sets), pd_.num_features)
    t0 = time.perf_counter()
    post = []
    x_pub, agg_pub = pd_.x_pub.to(dev), pd_.agg_pub.to(dev)
    ptr, idx = pd_.csr_ptr, pd_.csr_idx.to(dev)
    for start in range(0, len(sets), bs):
        chunk = sets[start:start + bs]
        seeds = [stable_seed(seed, "teacher", start + j) for j in range(len(chunk))]
        model = train_teacher_batch(pd_, chunk, seeds, hidden=hidden, dropout=dropout, epochs=epochs, lr=lr,
                                    device=str(dev))
        logp = model.predict_nodes(x_pub, agg_pub, queries[start:start + bs].to(dev), ptr, idx)
        post.append(logp.exp().cpu())
    seconds = time.perf_counter() - t0
    sizes = torch.tensor([int(s.numel()) for s in sets])
    return TeacherOutput(torch.cat(post), sizes, seconds, epochs * len(sets))


def single_gnn_posteriors(pd_: PrivGNNData, num_queries: int, *, gamma: float, seed: int, sampling: str = "poisson",
                          hidden: int = 64, dropout: float = 0.5, epochs: int = 200, lr: float = 0.01,
                          device: str = "auto") -> TeacherOutput:
    """SingleGNN ablation (Table 4): one subsample, one teacher on its induced subgraph, answering every query."""
    queries = query_nodes(pd_, num_queries)
    t0 = time.perf_counter()
    cand = poisson_subsample(pd_.num_private, gamma, make_generator(stable_seed(seed, "subsample", "single")),
                             sampling)
    model = train_teacher_batch(pd_, [cand], [stable_seed(seed, "teacher", "single")], hidden=hidden,
                                dropout=dropout, epochs=epochs, lr=lr, device=device)
    dev = resolve_device(device)
    probs = []
    for v in queries.tolist():
        probs.append(model.predict_nodes(pd_.x_pub.to(dev), pd_.agg_pub.to(dev), torch.tensor([v], device=dev),
                                         pd_.csr_ptr, pd_.csr_idx.to(dev)).exp().cpu())
    return TeacherOutput(torch.cat(probs), torch.tensor([cand.numel()]), time.perf_counter() - t0, epochs)


def noisy_argmax(posteriors: Tensor, lam: float, generator: torch.Generator, *, noise_on: str = "posterior"
                 ) -> Tensor:
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


def b4_soft_labels(true_labels: Tensor, num_classes: int, lam: float, generator: torch.Generator) -> Tensor:
    """B4 "noisy oracle" (App. D.5): one-hot true label + Lap(0, 1/λ) noise, negatives set to 0, renormalised
    (a vector that is all non-positive becomes uniform)."""
    lam = check_lam(lam)
    onehot = F.one_hot(true_labels, num_classes).double()
    u = torch.rand(onehot.shape, generator=generator, dtype=torch.float64) - 0.5
    v = (onehot - (1.0 / lam) * torch.sign(u) * torch.log1p(-2 * u.abs())).clamp_min(0.0)
    s = v.sum(1, keepdim=True)
    return torch.where(s > 0, v / s.clamp_min(1e-300), torch.full_like(v, 1.0 / num_classes)).float()


# ---------------------------------------------------------------------------------------------------------------
# student and non-private baselines
# ---------------------------------------------------------------------------------------------------------------
def _fit(model: torch.nn.Module, x: Tensor, edge_index: Tensor, train_idx: Tensor, target: Tensor, *, epochs: int,
         lr: float, device: torch.device) -> torch.nn.Module:
    """Full-batch Adam for ``epochs`` epochs on NLL (hard labels) or cross-entropy with soft labels (any model)."""
    model = model.to(device)
    x, edge_index, train_idx, target = x.to(device), edge_index.to(device), train_idx.to(device), target.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    soft = target.dim() == 2
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        logp = model(x, edge_index)[train_idx]
        loss = -(target * logp).sum(1).mean() if soft else F.nll_loss(logp, target)
        loss.backward()
        opt.step()
    model.eval()
    return model


@torch.no_grad()
def _accuracy(model: torch.nn.Module, x: Tensor, edge_index: Tensor, idx: Tensor, y: Tensor,
              device: torch.device) -> float:
    logp = model(x.to(device), edge_index.to(device))
    return float((logp[idx.to(device)].argmax(1).cpu() == y[idx]).float().mean())


def _graph_inputs(x: Tensor, edge_index: Tensor, device: torch.device) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """[x, Āx] (the first layer's fixed input, computed once), flat edges and 1/deg of one graph."""
    n = x.size(0)
    xx = torch.cat([x, mean_neighbours(x, edge_index, n)], dim=1)
    inv = 1.0 / torch.bincount(edge_index[1], minlength=n).clamp(min=1).float().unsqueeze(1)
    return xx.to(device), edge_index[0].to(device), edge_index[1].to(device), inv.to(device)


def _fit_sage(x: Tensor, edge_index: Tensor, train_idx: Tensor, target: Tensor, *, seed: int, epochs: int,
              hidden: int, dropout: float, lr: float, num_classes: int, device: torch.device,
              init: SAGE | None = None) -> BatchedSAGETeachers:
    """One 2-layer SAGE (as :class:`SAGE`; BatchNorm over all nodes) trained transductively on one graph, with the
    neighbour means of the input precomputed once. ``init`` copies a (pre-trained) :class:`SAGE`'s weights."""
    xx, src, dst, inv = _graph_inputs(x, edge_index, device)
    n = x.size(0)
    model = BatchedSAGETeachers(1, x.size(1), hidden, num_classes, dropout=dropout,
                                generators=[make_generator(seed)]).to(device)
    if init is not None:
        _copy_into_batch(init, model)
    loss_mask = torch.zeros(1, n, device=device)
    loss_mask[0, train_idx.to(device)] = 1.0
    if target.dim() == 2:
        y = torch.zeros(1, n, target.size(1), device=device)
        y[0, train_idx.to(device)] = target.to(device)
    else:
        y = torch.zeros(1, n, dtype=torch.long, device=device)
        y[0, train_idx.to(device)] = target.to(device)
    return train_batched_teachers(model, xx.unsqueeze(0), torch.ones(1, n, device=device), y, src, dst, inv,
                                  epochs=epochs, lr=lr, loss_mask=loss_mask)


def _sage_accuracy(model: BatchedSAGETeachers, x: Tensor, edge_index: Tensor, idx: Tensor, y: Tensor,
                   device: torch.device) -> float:
    xx, src, dst, inv = _graph_inputs(x, edge_index, device)
    logp = model.predict_graph(xx, src, dst, inv)[0]
    return float((logp[idx.to(device)].argmax(1).cpu() == y[idx]).float().mean())


def _copy_into_batch(m: SAGE, batched: BatchedSAGETeachers, b: int = 0) -> None:
    d, h = batched.in_channels, batched.hidden
    with torch.no_grad():
        batched.w1[b, :d].copy_(m.conv1.lin_r.weight.t())
        batched.w1[b, d:].copy_(m.conv1.lin_l.weight.t())
        batched.b1[b].copy_(m.conv1.lin_l.bias)
        batched.gamma[b].copy_(m.bn.weight)
        batched.beta[b].copy_(m.bn.bias)
        batched.running_mean[b].copy_(m.bn.running_mean)
        batched.running_var[b].copy_(m.bn.running_var)
        batched.w2[b, :h].copy_(m.conv2.lin_r.weight.t())
        batched.w2[b, h:].copy_(m.conv2.lin_l.weight.t())
        batched.b2[b].copy_(m.conv2.lin_l.bias)


def _pretrain(model: SAGE, x: Tensor, edge_index: Tensor, *, epochs: int, lr: float, generator: torch.Generator,
              device: torch.device) -> None:
    """Unsupervised GraphSAGE pre-training on the public graph (App. D.7): the first layer's embeddings of linked
    nodes are pulled together and of random pairs pushed apart (link reconstruction, one negative per edge)."""
    x, edge_index = x.to(device), edge_index.to(device)
    opt = torch.optim.Adam(list(model.conv1.parameters()) + list(model.bn.parameters()), lr=lr)
    n = x.size(0)
    model.train()
    for _ in range(epochs):
        opt.zero_grad(set_to_none=True)
        h = model.embed(x, edge_index)
        src, dst = edge_index
        neg = torch.randint(0, n, (src.numel(),), generator=generator).to(device)
        loss = F.softplus(-(h[src] * h[dst]).sum(1)).mean() + F.softplus((h[src] * h[neg]).sum(1)).mean()
        loss.backward()
        opt.step()
    model.eval()


def train_student(pd_: PrivGNNData, train_nodes: Tensor, labels: Tensor, *, seed: int, epochs: int = 200,
                  hidden: int = 64, dropout: float = 0.5, lr: float = 0.01, pretrain_epochs: int = 0,
                  device: str = "auto") -> dict[str, Any]:
    """The released student: GraphSAGE trained transductively on the public graph with ``labels`` of
    ``train_nodes`` (hard [n] or soft [n, c]); accuracy on the public test nodes at the final epoch (docs/papers/privgnn.md#algorithm).
    ``pretrain_epochs > 0``: unsupervised pre-training of the first layer on the public graph first (App. D.7)."""
    dev = resolve_device(device)
    t0 = time.perf_counter()
    init = None
    if pretrain_epochs:
        torch.manual_seed(stable_seed(seed, "pretrain-init"))
        init = SAGE(pd_.num_features, hidden, pd_.num_classes, dropout=dropout).to(dev)
        _pretrain(init, pd_.x_pub, pd_.edge_pub, epochs=pretrain_epochs, lr=lr,
                  generator=make_generator(stable_seed(seed, "pretrain")), device=dev)
    model = _fit_sage(pd_.x_pub, pd_.edge_pub, train_nodes, labels, seed=stable_seed(seed, "student"),
                      epochs=epochs, hidden=hidden, dropout=dropout, lr=lr, num_classes=pd_.num_classes, device=dev,
                      init=init)
    acc = _sage_accuracy(model, pd_.x_pub, pd_.edge_pub, pd_.pub_test, pd_.y_pub, dev)
    return {"accuracy": acc, "train_time_s": time.perf_counter() - t0, "model": model}


def baseline_b1(pd_: PrivGNNData, *, seed: int, epochs: int = 200, hidden: int = 64, dropout: float = 0.5,
                lr: float = 0.01, device: str = "auto") -> dict[str, Any]:
    """B1 (non-private, inductive): SAGE on the whole private graph with all its labels, tested on public test."""
    dev = resolve_device(device)
    model = _fit_sage(pd_.x_priv, pd_.edge_priv, torch.arange(pd_.num_private), pd_.y_priv,
                      seed=stable_seed(seed, "b1"), epochs=epochs, hidden=hidden, dropout=dropout, lr=lr,
                      num_classes=pd_.num_classes, device=dev)
    return {"accuracy": _sage_accuracy(model, pd_.x_pub, pd_.edge_pub, pd_.pub_test, pd_.y_pub, dev),
            "model": model}


def baseline_b2(pd_: PrivGNNData, *, seed: int, epochs: int = 200, hidden: int = 64, dropout: float = 0.5,
                lr: float = 0.01, device: str = "auto") -> dict[str, Any]:
    """B2 (non-private, transductive): SAGE on the public graph with the TRUE labels of all public-train nodes."""
    dev = resolve_device(device)
    model = _fit_sage(pd_.x_pub, pd_.edge_pub, pd_.pub_train, pd_.y_pub[pd_.pub_train],
                      seed=stable_seed(seed, "b2"), epochs=epochs, hidden=hidden, dropout=dropout, lr=lr,
                      num_classes=pd_.num_classes, device=dev)
    return {"accuracy": _sage_accuracy(model, pd_.x_pub, pd_.edge_pub, pd_.pub_test, pd_.y_pub, dev),
            "model": model}


def baseline_b3(pd_: PrivGNNData, *, seed: int, epochs: int = 200, hidden: int = 64, dropout: float = 0.5,
                lr: float = 0.01, device: str = "auto") -> dict[str, Any]:
    """B3 (App. D.4): one SAGE on the union of the private graph and the public graph (both edge sets), trained on
    all private nodes and the public-train nodes, tested on public test."""
    dev = resolve_device(device)
    n_priv = pd_.num_private
    x = torch.cat([pd_.x_priv, pd_.x_pub])
    ei = torch.cat([pd_.edge_priv, pd_.edge_pub + n_priv], dim=1)
    train = torch.cat([torch.arange(n_priv), pd_.pub_train + n_priv])
    y = torch.cat([pd_.y_priv, pd_.y_pub])
    model = _fit_sage(x, ei, train, y[train], seed=stable_seed(seed, "b3"), epochs=epochs, hidden=hidden,
                      dropout=dropout, lr=lr, num_classes=pd_.num_classes, device=dev)
    return {"accuracy": _sage_accuracy(model, x, ei, pd_.pub_test + n_priv, y, dev)}


def mlp_baseline(pd_: PrivGNNData, *, seed: int, epochs: int = 200, lr: float = 0.01, device: str = "auto"
                 ) -> dict[str, Any]:
    """Table 7 MLP: features only, trained on the public-train nodes' true labels, tested on public test."""
    dev = resolve_device(device)
    torch.manual_seed(stable_seed(seed, "mlp"))
    model = _fit(MLP(pd_.num_features, pd_.num_classes), pd_.x_pub[pd_.pub_train], pd_.edge_pub[:, :0],
                 torch.arange(pd_.pub_train.numel()), pd_.y_pub[pd_.pub_train], epochs=epochs, lr=lr, device=dev)
    return {"accuracy": _accuracy(model, pd_.x_pub[pd_.pub_test], pd_.edge_pub[:, :0],
                                  torch.arange(pd_.pub_test.numel()), pd_.y_pub[pd_.pub_test], dev)}


# ---------------------------------------------------------------------------------------------------------------
# PATE baselines
# ---------------------------------------------------------------------------------------------------------------
def pate_votes(pd_: PrivGNNData, num_queries: int, *, kind: str, num_teachers: int, seed: int, epochs: int = 200,
               hidden: int = 64, dropout: float = 0.5, lr: float = 0.01, device: str = "auto") -> Tensor:
    """Vote counts [|Q|, c] of ``num_teachers`` teachers on disjoint random partitions of the private nodes.

    ``kind="gnn"`` (PATE-G): a SAGE teacher per induced partition subgraph, predicting each query by a forward pass
    over the public graph. ``kind="mlp"`` (PATE-M): an MLP teacher on the partition's features and labels.
    """
    if kind not in ("gnn", "mlp"):
        raise ValueError(f"kind must be 'gnn' (PATE-G) or 'mlp' (PATE-M), got {kind!r}")
    if isinstance(num_teachers, bool) or not isinstance(num_teachers, int) or not 1 <= num_teachers <= pd_.num_private:
        raise ValueError(f"num_teachers must be an integer in [1, {pd_.num_private}], got {num_teachers!r}")
    queries = query_nodes(pd_, num_queries)
    dev = resolve_device(device)
    perm = torch.randperm(pd_.num_private, generator=make_generator(stable_seed(seed, "pate-partition")))
    parts = [torch.sort(p).values for p in torch.tensor_split(perm, num_teachers)]
    preds = []
    if kind == "gnn":
        for start in range(0, num_teachers, 64):
            chunk = parts[start:start + 64]
            seeds = [stable_seed(seed, "pate-teacher", start + j) for j in range(len(chunk))]
            model = train_teacher_batch(pd_, chunk, seeds, hidden=hidden, dropout=dropout, epochs=epochs, lr=lr,
                                        device=str(dev))
            xx, src, dst, inv = _graph_inputs(pd_.x_pub, pd_.edge_pub, dev)
            logp = model.predict_graph(xx, src, dst, inv)[:, queries.to(dev)]
            preds.extend(logp.argmax(-1).cpu())
    else:
        for t, nodes in enumerate(parts):
            torch.manual_seed(stable_seed(seed, "pate-mlp", t))
            model = _fit(MLP(pd_.num_features, pd_.num_classes), pd_.x_priv[nodes], pd_.edge_priv[:, :0],
                         torch.arange(nodes.numel()), pd_.y_priv[nodes], epochs=epochs, lr=lr, device=dev)
            with torch.no_grad():
                preds.append(model(pd_.x_pub[queries].to(dev)).argmax(1).cpu())
    return torch.as_tensor(vote_counts(torch.stack(preds).numpy(), pd_.num_classes))


def pate_labels(counts: Tensor, lam: float, generator: torch.Generator) -> Tensor:
    """PATE aggregation: argmax of the vote counts + Lap(0, 1/λ) per class."""
    return noisy_argmax(counts.double(), lam, generator)


# ---------------------------------------------------------------------------------------------------------------
# privacy ledgers
# ---------------------------------------------------------------------------------------------------------------
#: datasets whose feature columns are z-scored over all nodes, private ones included (:func:`prepare`)
STANDARDIZED = frozenset({"credit"})


def pate_statement(queries: int, *, data_dependent: bool, not_covered: Sequence[str] = ()) -> dict[str, Any]:
    """Guarantee fields of a PATE-G/PATE-M row (noisy argmax over vote counts; see :func:`privacy_ledger`)."""
    nc = list(not_covered)
    return statement(AS_PUBLISHED if data_dependent or nc else SOUND,
                     "replace one private node (changes one teacher's vote)", not_covered=nc,
                     accounted=f"{queries} noisy-argmax answers over teacher vote counts, Laplace(1/lambda)"
                               " per count (PATE moments accountant, Papernot et al. 2017"
                               + (", data-dependent)" if data_dependent else ", data-independent)"),
                     issues=["the data-dependent epsilon is computed from the private vote counts and is "
                             "itself not released privately (epsilon_data_independent is the sound bound)"]
                     if data_dependent else ())


def privacy_ledger(method: str, *, lam: float | None = None, queries: int | None = None, gamma: float | None = None,
                   delta: float | None = None, counts: np.ndarray | None = None, num_classes: int | None = None,
                   delta_sound: float | None = None, standardized: bool = False) -> dict[str, Any]:
    """The privacy statement of one run (flat, for a tidy row). PrivGNN/KNNRem/SingleGNN share PrivGNN's
    accounting (paper Sec. 5.5): ``epsilon`` is the paper's (``guarantee = as_published``), ``epsilon_sound`` the
    algorithm's (:mod:`dpgnn.privacy.privgnn`, exact per-query ε₀ for ``num_classes``, at ``delta_sound``,
    default ``delta``). PATE-M/G use the moments accountant (data-dependent when ``counts`` are given; noisy argmax
    of vote counts, whose sensitivity argument holds: sound). B1/B2/B3 are non-private; B4 touches the public
    labels (not a private mechanism of G†: ε = ∞ w.r.t. the ground truth it reads). ``standardized``: the
    features were z-scored with statistics that include the private nodes (Credit): not covered."""
    nc = [PREPROCESSING] if standardized else []
    if method in ("privgnn", "knnrem", "singlegnn"):
        eps = privgnn_epsilon(lam, queries, gamma, delta)
        return {"level": "node", "mechanism": "laplace",
                "noise_scale": 1.0 / lam, "sample_rate": gamma, "steps": queries, "epsilon": eps, "delta": delta,
                "accountant": PRIVGNN_ACCOUNTANT, "event": privgnn_event(lam, queries, gamma).to_dict(),
                **privgnn_statement(lam, queries, gamma, delta, num_classes, delta_sound=delta_sound,
                                    not_covered=nc)}
    if method in ("pate_g", "pate_m"):
        res = pate_epsilon(lam, queries, delta, counts)
        return {"level": "node", "mechanism": "laplace on vote counts",
                "noise_scale": 1.0 / lam, "sample_rate": 1.0, "steps": queries, "epsilon": res.epsilon,
                "epsilon_data_independent": res.epsilon_data_independent, "delta": delta,
                "accountant": "pate_moments" + ("_data_dependent" if res.data_dependent else ""),
                **pate_statement(queries, data_dependent=res.data_dependent, not_covered=nc)}
    if method in ("b1", "b2", "b3", "mlp", "b4"):
        return {"level": "none", "mechanism": "none", "epsilon": math.inf,
                "delta": 0.0, "accountant": "none", **non_private()}
    raise ValueError(f"unknown method {method!r}")


# ---------------------------------------------------------------------------------------------------------------
# hooks for audits (membership inference, dpgnn.audit.mia): the same SAGE as B1/the student, any graph
# ---------------------------------------------------------------------------------------------------------------
def fit_sage(x: Tensor, edge_index: Tensor, train_idx: Tensor, target: Tensor, *, seed: int, epochs: int = 200,
             hidden: int = 64, dropout: float = 0.5, lr: float = 0.01, num_classes: int,
             device: str = "auto") -> BatchedSAGETeachers:
    """The 2-layer SAGE of B1 and the student, trained transductively on one graph with ``target`` labels of
    ``train_idx`` (a shadow model has the target's architecture and training recipe)."""
    return _fit_sage(x, edge_index, train_idx, target, seed=seed, epochs=epochs, hidden=hidden, dropout=dropout,
                     lr=lr, num_classes=num_classes, device=resolve_device(device))


@torch.no_grad()
def log_posteriors(model: BatchedSAGETeachers, x: Tensor, edge_index: Tensor, device: str = "auto") -> Tensor:
    """Eval-mode log-probabilities [N, c] of a trained SAGE (B1, the student, a shadow) on the graph (x, edges):
    what black-box query access to the released model returns."""
    dev = resolve_device(device)
    xx, src, dst, inv = _graph_inputs(x, edge_index, dev)
    return model.predict_graph(xx, src, dst, inv)[0].cpu()
