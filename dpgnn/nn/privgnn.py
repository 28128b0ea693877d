"""PrivGNN models (Olatunji et al., TMLR 2023; docs/papers/privgnn.md#algorithm): GraphSAGE teachers/students, the
PATE-M MLP, and a batched trainer that trains many independent GraphSAGE teachers at once.

Architecture (paper Sec. 4.1 / App. G.1): 2-layer GraphSAGE with mean aggregation (PyG ``SAGEConv``: ``lin_l`` with
bias on the neighbour mean, ``lin_r`` without bias on the node itself), hidden 64, BatchNorm after the first layer,
ReLU, dropout 0.5, log-softmax output. PATE-M teachers: ``Linear(d,100)–ReLU–Linear(100,50)–ReLU–Linear(50,c)``.

:class:`BatchedSAGETeachers` holds ``B`` teachers' parameters stacked along a leading axis and trains them with one
set of batched matrix products per epoch. Each teacher sees only its own subgraph (block-diagonal graph, padded to a
common size with masked nodes that enter neither the loss nor the BatchNorm statistics), has its own initialisation
(PyG's ``Linear`` init, from its own generator), its own BatchNorm running statistics, and its own Adam state:
Adam is element-wise, so one Adam over the stacked tensors with the summed per-teacher losses performs exactly the
per-teacher updates. With dropout 0 the result equals training each teacher alone with :class:`SAGE` (tested);
with dropout the masks are independent draws, so the algorithm is statistically identical to the sequential one.
The first layer's neighbour means ``Ā X`` are computed once per teacher before training (the input never changes).

:func:`teacher_step` is one epoch of that training as a ``step(epoch)`` closure: :func:`train_batched_teachers` runs
it back to back for the teachers (the fast path: no selection, no per-epoch bookkeeping or host sync), and PrivGNN's
single models (the student, B1-B3) run it on the plain engine :func:`dpgnn.train.fit`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import SAGEConv

from dpgnn.nn.models import register_model

__all__ = [
    "SAGE",
    "MLP",
    "BatchedSAGETeachers",
    "mean_neighbours",
    "row_dropout",
    "teacher_step",
    "train_batched_teachers",
]


class SAGE(nn.Module):
    """Two-layer GraphSAGE (mean) with BatchNorm after the first layer; ``forward`` returns log-probabilities."""

    def __init__(
        self, in_channels: int, hidden_channels: int, out_channels: int, dropout: float = 0.5, batch_norm: bool = True
    ) -> None:
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        self.conv1 = SAGEConv(in_channels, hidden_channels, aggr="mean")
        self.bn = nn.BatchNorm1d(hidden_channels) if batch_norm else nn.Identity()
        self.conv2 = SAGEConv(hidden_channels, out_channels, aggr="mean")

    def reset_parameters(self) -> None:
        """Re-initialise both convolutions and the BatchNorm (its running statistics included)."""
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()
        if isinstance(self.bn, nn.BatchNorm1d):
            self.bn.reset_parameters()

    def embed(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Hidden representation after the first layer (BatchNorm, ReLU; before dropout)."""
        return F.relu(self.bn(self.conv1(x, edge_index)))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Log-probabilities [N, c] of every node of the graph ``(x, edge_index)``."""
        h = F.dropout(self.embed(x, edge_index), p=self.dropout, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=-1)


class MLP(nn.Module):
    """PATE-M teacher / Table 7 MLP: Linear(d,100)–ReLU–Linear(100,50)–ReLU–Linear(50,c); ignores the graph."""

    def __init__(
        self, in_channels: int, out_channels: int, hidden: Sequence[int] = (100, 50), dropout: float = 0.0
    ) -> None:
        super().__init__()
        dims = [in_channels, *hidden, out_channels]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = float(dropout)

    def reset_parameters(self) -> None:
        """Re-initialise every linear layer."""
        for layer in self.layers:
            layer.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor | None = None) -> Tensor:
        """Log-probabilities [N, c] from the features ``x`` alone (``edge_index`` is ignored)."""
        for layer in self.layers[:-1]:
            x = F.dropout(F.relu(layer(x)), p=self.dropout, training=self.training)
        return F.log_softmax(self.layers[-1](x), dim=-1)


register_model("sage", SAGE)
register_model("mlp", MLP)


def mean_neighbours(x: Tensor, edge_index: Tensor, num_nodes: int | None = None) -> Tensor:
    """Mean of ``x`` over each node's in-neighbours (messages ``edge_index[0] → edge_index[1]``; 0 if none).

    On the CPU, an edge list sorted by (source, target) without repeats (what the loaders give) is summed as one
    sparse CSR product instead of gathering a row per edge: each node's in-neighbours are then added in increasing
    source order, the order ``index_add_`` adds them in, so the result is the same to the bit, 5-15x sooner."""
    n = x.size(0) if num_nodes is None else num_nodes
    src, dst = edge_index
    deg = torch.bincount(dst, minlength=n).clamp(min=1).to(x.dtype)
    if _sorted_unique(src, dst, max(n, x.size(0))) and x.device.type == "cpu":
        ones = torch.ones(src.numel(), dtype=x.dtype)
        with warnings.catch_warnings():  # torch's notes that sparse CSR is in beta and its invariants unchecked
            warnings.filterwarnings("ignore", message="Sparse (CSR tensor support|invariant checks)")
            adj = torch.sparse_coo_tensor(torch.stack([dst, src]), ones, (n, x.size(0))).coalesce().to_sparse_csr()
            out = adj @ x
    else:
        out = torch.zeros(n, x.size(1), dtype=x.dtype, device=x.device).index_add_(0, dst, x[src])
    return out / deg.unsqueeze(1)


def _sorted_unique(src: Tensor, dst: Tensor, n: int) -> bool:
    """Whether the edges are strictly increasing in (source, target) order (at least two of them)."""
    if src.numel() < 2:
        return False
    key = src * n + dst
    return bool((key[1:] > key[:-1]).all())


def row_dropout(h: Tensor, p: float, training: bool, generators: Sequence[torch.Generator]) -> Tensor:
    """Dropout of ``h`` [B, ...] with row ``b``'s mask drawn from ``generators[b]``.

    On the CPU ``F.dropout(h, p, True)`` is ``h * empty_like(h).bernoulli_(1 - p).div_(1 - p)`` from the global
    generator (ATen's ``_dropout_impl``; the fused kernel is CUDA-only), so row ``b`` here equals ``F.dropout`` of
    that row alone with the global generator in ``generators[b]``'s state, bit for bit, and advances the generator
    as that call advances the global one. ``p = 0`` or not ``training``: ``h`` itself, no draw (as ``F.dropout``).
    """
    if len(generators) != h.size(0):
        raise ValueError(f"need one dropout generator per row ({h.size(0)}), got {len(generators)}")
    if not training or p == 0.0:
        return h
    noise = torch.empty_like(h)
    for row, g in zip(noise, generators):
        row.bernoulli_(1 - p, generator=g)
    return h * noise.div_(1 - p)


def _pyg_linear_init(
    shape_in: int, shape_out: int, count: int, generators: Sequence[torch.Generator], bias: bool
) -> tuple[Tensor, Tensor | None]:
    """``count`` weight matrices [in, out] (and biases) drawn like PyG/torch ``Linear``: U(±1/√in)."""
    bound = 1.0 / math.sqrt(shape_in)
    w = torch.empty(count, shape_in, shape_out)
    b = torch.empty(count, shape_out) if bias else None
    for i, g in enumerate(generators):
        # draw in torch's [out, in] layout so a generator gives the same numbers as an nn.Linear would
        w[i] = (torch.rand(shape_out, shape_in, generator=g) * 2 - 1).mul_(bound).t()
        if bias:
            b[i] = (torch.rand(shape_out, generator=g) * 2 - 1).mul_(bound)
    return w, b


class BatchedSAGETeachers(nn.Module):
    """``B`` independent 2-layer GraphSAGE teachers (as :class:`SAGE`) with stacked parameters.

    Parameters: ``w1`` [B, 2d, h] (rows 0..d-1 act on the node itself = ``lin_r``; rows d..2d-1 on the neighbour
    mean = ``lin_l``), ``b1`` [B, h], BatchNorm ``gamma``/``beta`` [B, h] with running statistics, ``w2`` [B, 2h, c],
    ``b2`` [B, c]. ``generators`` (one per teacher) make each teacher's initialisation reproducible on its own.
    """

    def __init__(
        self,
        num_teachers: int,
        in_channels: int,
        hidden_channels: int,
        out_channels: int,
        dropout: float = 0.5,
        generators: Sequence[torch.Generator] | None = None,
        bn_momentum: float = 0.1,
        bn_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        if num_teachers < 1:
            raise ValueError(f"num_teachers must be >= 1, got {num_teachers}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        gens = list(generators) if generators is not None else [torch.default_generator] * num_teachers
        if len(gens) != num_teachers:
            raise ValueError(f"need one generator per teacher ({num_teachers}), got {len(gens)}")
        d, h, c = in_channels, hidden_channels, out_channels
        # per teacher, in the order SAGEConv.reset_parameters draws: lin_l (weight, bias) then lin_r (weight)
        w1 = torch.empty(num_teachers, 2 * d, h)
        b1 = torch.empty(num_teachers, h)
        w2 = torch.empty(num_teachers, 2 * h, c)
        b2 = torch.empty(num_teachers, c)
        for i, g in enumerate(gens):
            wl, bl = _pyg_linear_init(d, h, 1, [g], True)
            wr, _ = _pyg_linear_init(d, h, 1, [g], False)
            w1[i, :d], w1[i, d:], b1[i] = wr[0], wl[0], bl[0]
            wl, bl = _pyg_linear_init(h, c, 1, [g], True)
            wr, _ = _pyg_linear_init(h, c, 1, [g], False)
            w2[i, :h], w2[i, h:], b2[i] = wr[0], wl[0], bl[0]
        self.w1, self.b1 = nn.Parameter(w1), nn.Parameter(b1)
        self.gamma = nn.Parameter(torch.ones(num_teachers, h))
        self.beta = nn.Parameter(torch.zeros(num_teachers, h))
        self.w2, self.b2 = nn.Parameter(w2), nn.Parameter(b2)
        self.register_buffer("running_mean", torch.zeros(num_teachers, h))
        self.register_buffer("running_var", torch.ones(num_teachers, h))
        self.dropout, self.momentum, self.eps = float(dropout), float(bn_momentum), float(bn_eps)
        self.num_teachers, self.in_channels, self.hidden, self.out_channels = num_teachers, d, h, c

    # -- training forward on the stacked subgraphs -------------------------------------------------------------
    def forward(
        self,
        xx: Tensor,
        mask: Tensor,
        src: Tensor,
        dst: Tensor,
        inv_deg: Tensor,
        dropout_generators: Sequence[torch.Generator] | None = None,
    ) -> Tensor:
        """Log-probabilities [B, K, c] of every teacher on its own padded subgraph.

        ``xx`` [B, K, 2d] = [x, mean of x over the node's neighbours in its subgraph], or [K, 2d] when every
        teacher has the same input (students on one public graph: the first layer is then one wide product,
        ``[K, 2d] x [2d, B·h]``, each teacher's columns equal to its own ``[K, 2d] x [2d, h]``); ``mask`` [B, K]
        (1 = real node); ``src``/``dst`` flat indices into B·K of the subgraph edges; ``inv_deg`` [B·K, 1] =
        1/max(deg, 1).
        ``dropout_generators`` (one per teacher, CPU): teacher ``b``'s dropout mask is drawn from its own generator
        (:func:`row_dropout`); ``None``: one ``F.dropout`` over the whole batch from torch's global generator.
        """
        if xx.dim() == 2:  # one input shared by every teacher: one wide product [K, 2d] x [2d, B·h]
            bsz, k = self.num_teachers, xx.size(0)
            wide = torch.addmm(self.b1.reshape(1, -1), xx, self.w1.permute(1, 0, 2).reshape(xx.size(1), -1))
            z = wide.view(k, bsz, -1).transpose(0, 1).contiguous()  # [B, K, h]
        else:
            bsz, k, _ = xx.shape
            z = torch.baddbmm(self.b1.unsqueeze(1), xx, self.w1)  # [B, K, h]
        m = mask.unsqueeze(-1)
        if self.training:
            n = m.sum(1).clamp(min=1.0)  # [B, 1]
            mean = (z * m).sum(1) / n
            var = (((z - mean.unsqueeze(1)) * m) ** 2).sum(1) / n
            with torch.no_grad():
                unbiased = var * (n / (n - 1).clamp(min=1.0))
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * unbiased)
        else:
            mean, var = self.running_mean, self.running_var
        z = (z - mean.unsqueeze(1)) * torch.rsqrt(var.unsqueeze(1) + self.eps) * self.gamma.unsqueeze(
            1
        ) + self.beta.unsqueeze(1)
        if dropout_generators is None:
            h = F.dropout(F.relu(z), p=self.dropout, training=self.training)
        else:
            h = row_dropout(F.relu(z), self.dropout, self.training, dropout_generators)
        flat = h.reshape(bsz * k, -1)
        agg = torch.zeros_like(flat).index_add_(0, dst, flat[src]) * inv_deg
        hh = torch.cat([h, agg.view(bsz, k, -1)], dim=-1)
        return F.log_softmax(torch.baddbmm(self.b2.unsqueeze(1), hh, self.w2), dim=-1)

    @torch.no_grad()
    def predict_graph(self, xx: Tensor, src: Tensor, dst: Tensor, inv_deg: Tensor) -> Tensor:
        """Eval-mode log-probabilities [B, N, c] of every teacher on one shared graph (``xx`` [N, 2d] = [x, Āx])."""
        n = xx.size(0)
        out = []
        for b in range(self.num_teachers):
            z = xx @ self.w1[b] + self.b1[b]
            z = (z - self.running_mean[b]) * torch.rsqrt(self.running_var[b] + self.eps) * self.gamma[b] + self.beta[b]
            h = F.relu(z)
            agg = torch.zeros_like(h).index_add_(0, dst, h[src]) * inv_deg[:n]
            out.append(F.log_softmax(torch.cat([h, agg], -1) @ self.w2[b] + self.b2[b], dim=-1))
        return torch.stack(out)

    # -- inductive inference of one node per teacher ---------------------------------------------------------
    @torch.no_grad()
    def predict_nodes(self, x_pub: Tensor, agg_pub: Tensor, nodes: Tensor, nbr_ptr: Tensor, nbr_idx: Tensor) -> Tensor:
        """Eval-mode log-probabilities [B, c] of teacher ``b`` at public node ``nodes[b]`` on the public graph.

        A 2-layer model's output at v needs only v's layer-1 state and its neighbours': layer 1 of node u uses
        ``x_pub[u]`` and ``agg_pub[u]`` (its neighbour mean on the public graph); ``nbr_ptr``/``nbr_idx`` is the
        public graph in CSR form (in-neighbours of each node). Equals running the teacher on the whole public graph.
        """
        out = []
        for b in range(self.num_teachers):
            v = int(nodes[b])
            nb = nbr_idx[nbr_ptr[v] : nbr_ptr[v + 1]]
            rows = torch.cat([nodes[b : b + 1], nb])
            xx = torch.cat([x_pub[rows], agg_pub[rows]], dim=-1)
            z = xx @ self.w1[b] + self.b1[b]
            z = (z - self.running_mean[b]) * torch.rsqrt(self.running_var[b] + self.eps) * self.gamma[b] + self.beta[b]
            h = F.relu(z)
            neigh = h[1:].mean(0) if nb.numel() else torch.zeros_like(h[0])
            logit = torch.cat([h[0], neigh]) @ self.w2[b] + self.b2[b]
            out.append(F.log_softmax(logit, dim=-1))
        return torch.stack(out)


def teacher_step(
    model: BatchedSAGETeachers,
    xx: Tensor,
    mask: Tensor,
    y: Tensor,
    src: Tensor,
    dst: Tensor,
    inv_deg: Tensor,
    *,
    lr: float = 0.01,
    weight_decay: float = 0.0,
    loss_mask: Tensor | None = None,
    dropout_generators: Sequence[torch.Generator] | None = None,
    per_row: bool = False,
) -> Callable[[int], Tensor]:
    """The epoch of :func:`train_batched_teachers` as a ``step(epoch) -> loss`` closure (one full-batch Adam step of
    every teacher; the summed loss, detached, without a host sync), for :func:`dpgnn.train.fit` when one model is
    trained (PrivGNN's student and baselines) and for the fast loop below when many teachers are.

    ``dropout_generators``: each teacher's dropout masks from its own generator (``forward``). ``per_row``: the step
    returns each teacher's loss [B] instead of their sum, and Adam updates each teacher's slice of every parameter
    as a tensor of its own (sharing the stacked storage), so that every teacher's update is bit for bit the one a
    B = 1 model gets: the fused kernel's vectorised body and scalar tail round differently, and over the stacked
    tensors a teacher's elements would fall in other parts of the split than they do alone."""
    # the fused kernel (CPU and CUDA) does Adam's element-wise update in one pass over the stacked [B, 2d, h]
    # weights: the same update as the default loop, ~2x faster end to end at small K where the update is half the work
    params = list(model.parameters())
    rows_of = [(p, b, nn.Parameter(p.detach()[b])) for p in params for b in range(p.size(0))] if per_row else []
    opt = torch.optim.Adam(
        [leaf for _, _, leaf in rows_of] if per_row else params, lr=lr, weight_decay=weight_decay, fused=True
    )
    lm = mask if loss_mask is None else loss_mask
    n = lm.sum(1).clamp(min=1.0)
    soft = y.dim() == 3
    yy = y if soft else y.clamp(min=0).unsqueeze(-1)

    def step(epoch: int) -> Tensor:
        opt.zero_grad(set_to_none=True)
        if per_row:
            model.zero_grad(set_to_none=True)
        logp = model(xx, mask, src, dst, inv_deg, dropout_generators)
        nll = -(yy * logp).sum(-1) if soft else -logp.gather(-1, yy).squeeze(-1)
        rows = (nll * lm).sum(1) / n
        loss = rows.sum()
        loss.backward()
        for p, b, leaf in rows_of:
            leaf.grad = p.grad[b]
        opt.step()
        return rows.detach() if per_row else loss.detach()

    return step


def train_batched_teachers(
    model: BatchedSAGETeachers,
    xx: Tensor,
    mask: Tensor,
    y: Tensor,
    src: Tensor,
    dst: Tensor,
    inv_deg: Tensor,
    *,
    epochs: int = 200,
    lr: float = 0.01,
    weight_decay: float = 0.0,
    loss_mask: Tensor | None = None,
) -> BatchedSAGETeachers:
    """Full-batch Adam on every teacher's mean loss over its ``loss_mask`` nodes (default: its real nodes), summed
    over teachers, ``epochs`` steps (:func:`teacher_step`). ``y`` holds class ids [B, K] (NLL) or soft targets
    [B, K, c] (cross-entropy). BatchNorm statistics use all real nodes (``mask``), as a full-graph forward does.

    The fast path of PrivGNN's teachers: no validation or selection (a teacher answers with its final weights,
    Algorithm 1), so the epochs run back to back without per-epoch bookkeeping or host syncs; a single model with
    a history runs the same step on :func:`dpgnn.train.fit` instead."""
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    step = teacher_step(model, xx, mask, y, src, dst, inv_deg, lr=lr, weight_decay=weight_decay, loss_mask=loss_mask)
    model.train()
    for epoch in range(1, epochs + 1):
        step(epoch)
    model.eval()
    return model
