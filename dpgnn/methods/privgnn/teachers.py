"""The query-specific teachers (Algorithm 1 lines 3-7 without noise): many teachers trained at once with
:class:`dpgnn.nn.privgnn.BatchedSAGETeachers` (:func:`teacher_posteriors`) and the SingleGNN ablation's one teacher
(:func:`single_gnn_posteriors`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from dpgnn.methods.privgnn.data import PrivGNNData, query_nodes
from dpgnn.methods.privgnn.mechanism import induced_subgraph, poisson_subsample, teacher_subgraphs
from dpgnn.nn.privgnn import BatchedSAGETeachers, mean_neighbours, train_batched_teachers
from dpgnn.utils import make_generator, resolve_device, stable_seed


@dataclass
class TeacherOutput:
    """Teachers' posteriors (probabilities) [|Q|, c] at the query nodes, with timing and size statistics."""

    posteriors: Tensor
    sizes: Tensor
    seconds: float
    teacher_epochs: int

    @property
    def teacher_epochs_per_second(self) -> float:
        """Teacher training epochs (all teachers together) per second of :attr:`seconds`."""
        return self.teacher_epochs / max(self.seconds, 1e-9)


def _stack(
    graphs: PrivGNNData, node_sets: Sequence[Tensor], device: torch.device
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Pad ``B`` node sets to a common size: features [B, K, 2d] with neighbour means, mask, labels, flat edges."""
    bsz, kmax, d = len(node_sets), max(int(s.numel()) for s in node_sets), graphs.num_features
    xx = torch.zeros(bsz, kmax, 2 * d)
    mask = torch.zeros(bsz, kmax)
    y = torch.zeros(bsz, kmax, dtype=torch.long)
    srcs, dsts = [], []
    for b, nodes in enumerate(node_sets):
        n = int(nodes.numel())
        ei = induced_subgraph(graphs.edge_priv, nodes, graphs.num_private)
        x = graphs.x_priv[nodes]
        xx[b, :n, :d] = x
        xx[b, :n, d:] = mean_neighbours(x, ei, n)
        mask[b, :n] = 1.0
        y[b, :n] = graphs.y_priv[nodes]
        srcs.append(ei[0] + b * kmax)
        dsts.append(ei[1] + b * kmax)
    src, dst = torch.cat(srcs), torch.cat(dsts)
    inv_deg = 1.0 / torch.bincount(dst, minlength=bsz * kmax).clamp(min=1).float().unsqueeze(1)
    return (xx.to(device), mask.to(device), y.to(device), src.to(device), dst.to(device), inv_deg.to(device))


def train_teacher_batch(
    graphs: PrivGNNData,
    node_sets: Sequence[Tensor],
    seeds: Sequence[int],
    *,
    hidden: int = 64,
    dropout: float = 0.5,
    epochs: int = 200,
    lr: float = 0.01,
    device: str = "cpu",
) -> BatchedSAGETeachers:
    """Train one batched model holding a teacher per node set (teacher ``b`` initialised from ``seeds[b]``)."""
    dev = resolve_device(device)
    gens = [make_generator(s) for s in seeds]
    model = BatchedSAGETeachers(
        len(node_sets), graphs.num_features, hidden, graphs.num_classes, dropout=dropout, generators=gens
    ).to(dev)
    xx, mask, y, src, dst, inv_deg = _stack(graphs, node_sets, dev)
    return train_batched_teachers(model, xx, mask, y, src, dst, inv_deg, epochs=epochs, lr=lr)


def _batch_size(k: int, d: int, budget_bytes: float = 256e6) -> int:
    """Teachers per batch so that the stacked inputs and activations stay within ``budget_bytes``."""
    per_teacher = 4.0 * k * (2 * d + 8 * 64)
    return int(max(1, min(256, budget_bytes // per_teacher)))


def teacher_posteriors(
    graphs: PrivGNNData,
    num_queries: int,
    *,
    k: int | None,
    gamma: float,
    seed: int,
    sampling: str = "poisson",
    knn: bool = True,
    hidden: int = 64,
    dropout: float = 0.5,
    epochs: int = 200,
    lr: float = 0.01,
    batch_size: int | None = None,
    device: str = "auto",
) -> TeacherOutput:
    """Posteriors of the |Q| query-specific teachers at their query nodes (Algorithm 1 lines 3-6 and the forward of
    line 7, without noise). Teacher i depends only on (``seed``, i): any prefix of the queries gets the same
    teachers, and one set serves every λ."""
    queries = query_nodes(graphs, num_queries)
    dev = resolve_device(device)
    sets = teacher_subgraphs(graphs, queries, k=k, gamma=gamma, seed=seed, sampling=sampling, knn=knn)
    bs = batch_size or _batch_size(max(int(s.numel()) for s in sets), graphs.num_features)
    t0 = time.perf_counter()
    post = []
    x_pub, agg_pub = graphs.x_pub.to(dev), graphs.agg_pub.to(dev)
    ptr, idx = graphs.csr_ptr, graphs.csr_idx.to(dev)
    for start in range(0, len(sets), bs):
        chunk = sets[start : start + bs]
        seeds = [stable_seed(seed, "teacher", start + j) for j in range(len(chunk))]
        model = train_teacher_batch(
            graphs, chunk, seeds, hidden=hidden, dropout=dropout, epochs=epochs, lr=lr, device=str(dev)
        )
        logp = model.predict_nodes(x_pub, agg_pub, queries[start : start + bs].to(dev), ptr, idx)
        post.append(logp.exp().cpu())
    seconds = time.perf_counter() - t0
    sizes = torch.tensor([int(s.numel()) for s in sets])
    return TeacherOutput(torch.cat(post), sizes, seconds, epochs * len(sets))


def single_gnn_posteriors(
    graphs: PrivGNNData,
    num_queries: int,
    *,
    gamma: float,
    seed: int,
    sampling: str = "poisson",
    hidden: int = 64,
    dropout: float = 0.5,
    epochs: int = 200,
    lr: float = 0.01,
    device: str = "auto",
) -> TeacherOutput:
    """SingleGNN ablation (Table 4): one subsample, one teacher on its induced subgraph, answering every query."""
    queries = query_nodes(graphs, num_queries)
    t0 = time.perf_counter()
    cand = poisson_subsample(
        graphs.num_private, gamma, make_generator(stable_seed(seed, "subsample", "single")), sampling
    )
    model = train_teacher_batch(
        graphs,
        [cand],
        [stable_seed(seed, "teacher", "single")],
        hidden=hidden,
        dropout=dropout,
        epochs=epochs,
        lr=lr,
        device=device,
    )
    dev = resolve_device(device)
    probs = []
    for v in queries.tolist():
        probs.append(
            model.predict_nodes(
                graphs.x_pub.to(dev),
                graphs.agg_pub.to(dev),
                torch.tensor([v], device=dev),
                graphs.csr_ptr,
                graphs.csr_idx.to(dev),
            )
            .exp()
            .cpu()
        )
    return TeacherOutput(torch.cat(probs), torch.tensor([cand.numel()]), time.perf_counter() - t0, epochs)
