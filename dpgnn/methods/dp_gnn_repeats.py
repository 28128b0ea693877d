"""DP-GNN's repeats in one batched run: :func:`train_dp_gnn_repeats` trains ``R`` seeds of one configuration
together and returns, per seed, the :class:`~dpgnn.methods.progap.ProGAPResult` that
:func:`~dpgnn.methods.dp_gnn.train_dp_gnn` returns for that seed, equal up to float rounding (accuracies,
histories, the ledger, the trained models; tested).

:class:`StackedDPGNN` holds the ``R`` seeds' :class:`~dpgnn.methods.dp_gnn.DPGNNModel` weights stacked along a seed
axis (:class:`~dpgnn.methods.batched.StackedMLP` for the base and the head). A step computes every seed's per-root
clipped gradient sums at once, without ``vmap``:

- the base's first layer runs once on the whole feature matrix for every seed (one product with the seeds' weights
  side by side, or a sparse product when the features are sparse), and each root's rows (the root and its padded
  in-neighbours) are gathered from it, so the wide feature rows of a batch are never copied;
- one backward pass of the summed per-root losses gives each row's output gradient at every layer (a row belongs
  to one root, so they are the per-root ones); each root's gradient is then a sum of outer products over its rows
  (the first layer's from the sparse feature rows when the features are sparse), clipped to ``C`` per root and
  summed per seed. The first layer's per-root gradients are never formed where a subgraph has few rows: a root's
  squared norm is ``Σ (δ δ^T) ⊙ (X_v X_v^T)`` with its rows' Gram matrix computed once per seed (a root's rows are
  fixed by its seed's degree-bounded graph), and the clipped sum is one product of ``X^T`` with the factor-weighted
  ``δ`` summed per node.

Randomness stays per seed, drawn as the sequential run draws it: the global stream seeded with the seed's init
seed builds its model, and its own generator gives every step's roots (one ``randperm``) and then its noise (one
``randn`` per parameter, in parameter order); each seed bounds the degrees of the graph with its own draw.
``seconds`` of each result is the batched wall time divided by ``R``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data

from dpgnn.methods.batched import StackedMLP, _fit, split_accuracies
from dpgnn.methods.dp_gnn import (
    DPGNNConfig,
    DPGNNModel,
    dp_gnn_setup,
    draw_roots,
    init_model,
    noise_generator,
    seed_graph,
)
from dpgnn.methods.progap import ProGAPResult
from dpgnn.nn.progap import SPARSE_FEATURES
from dpgnn.train import NoisyStep
from dpgnn.utils import density, resolve_device, segments, to_csr, transpose_csr

__all__ = ["StackedDPGNN", "train_dp_gnn_repeats", "SPARSE_FEATURES", "GRAM_ROWS", "GRAM_ELEMENTS"]

#: the first layer's per-root gradient norms come from precomputed Gram matrices of each subgraph's feature rows
#: when a subgraph has at most this many rows (root and ``D`` neighbours) ...
GRAM_ROWS = 32
#: ... and the seeds' Gram matrices hold at most this many numbers (``R · N · (D + 1)²``; 256 MiB of float32)
GRAM_ELEMENTS = 2**26


class _Features:
    """The padded features ``[N + 1, F]`` (the last row all zero: the padding neighbour), dense and, when sparse
    enough (:data:`SPARSE_FEATURES`), as CSR too; with :meth:`use_gram`, each root's Gram matrix of its rows."""

    def __init__(self, x: Tensor) -> None:
        self.dense = torch.cat([x, x.new_zeros(1, x.size(1))])
        self.sparse = to_csr(self.dense) if density(x) <= SPARSE_FEATURES else None
        self.dense_t = self.dense.t() if self.sparse is None else transpose_csr(self.sparse)  # [F, N + 1]
        if self.sparse is not None:
            self.binary = bool((self.sparse.values() == 1).all())
        self.gram: Tensor | None = None

    def use_gram(self, table: Tensor) -> bool:
        """Precompute, per seed and node, the Gram matrix ``X_v X_v^T`` of the feature rows ``X_v`` of the node's
        subgraph (the node, then its row of ``table`` ``[R, N, D]``, padding ``N``), when they hold at most
        :data:`GRAM_ELEMENTS` numbers and a subgraph at most :data:`GRAM_ROWS` rows; whether it did. A root's
        squared gradient norm at the first layer is then ``Σ (δ δ^T) ⊙ X_v X_v^T`` (:meth:`root_gradients`)."""
        r, n, d = table.shape
        j, f = d + 1, self.dense.size(1)
        if j > GRAM_ROWS or r * n * j * j > GRAM_ELEMENTS:
            return False
        rows = torch.cat([torch.arange(n, device=table.device).view(1, n, 1).expand(r, n, 1), table], dim=-1)
        gram = self.dense.new_empty(r, n, j, j)
        chunk = max(1, 2**22 // (j * f))  # nodes per product: their feature rows hold about 4M numbers
        for s in range(r):
            for lo in range(0, n, chunk):
                a = self.dense[rows[s, lo : lo + chunk]]
                torch.bmm(a, a.transpose(1, 2), out=gram[s, lo : lo + chunk])
        self.gram = gram
        return True

    def product(self, weight: Tensor, bias: Tensor) -> Tensor:
        """``x W_r^T + b_r`` for every seed: node-major ``[N + 1, R, out]`` (``weight`` ``[R, out, F]``)."""
        r, o, f = weight.shape
        w = weight.reshape(r * o, f).t()
        if self.sparse is None:
            return torch.addmm(bias.reshape(r * o), self.dense, w).view(-1, r, o)
        return (torch.sparse.mm(self.sparse, w) + bias.reshape(r * o)).view(-1, r, o)

    def root_gradients(self, delta: Tensor, idx: Tensor) -> tuple[Tensor, Callable[[Tensor], Tensor]]:
        """The first layer's per-root weight gradients ``G_i = Σ_j δ_ij x_{idx_ij}^T`` from the rows' output
        gradients ``delta`` ``[R, B, J, out]`` and node ids ``idx`` ``[R, B, J]`` (each root, then its row of the
        table given to :meth:`use_gram`, if used): their squared norms ``[R, B]`` and a function of the clipping
        factors ``c`` ``[R, B]`` giving ``Σ_i c_i G_i`` ``[R, out, F]``."""
        r, b, j, o = delta.shape

        def weighted_sum(c: Tensor) -> Tensor:  # Σ_i c_i G_i = X^T S, S[v] = Σ of c_i δ_ij over the rows of node v
            n = self.dense.size(0)
            rows = (idx * r + torch.arange(r, device=idx.device).view(r, 1, 1)).reshape(-1)
            node_sums = delta.new_zeros(n * r, o).index_add_(0, rows, (delta * c.view(r, b, 1, 1)).reshape(-1, o))
            return (self.dense_t @ node_sums.view(n, r * o)).view(-1, r, o).permute(1, 2, 0).contiguous()

        if self.gram is not None:
            gram = self.gram[torch.arange(r, device=idx.device).view(r, 1), idx[:, :, 0]]  # [R, B, J, J]
            return (delta @ delta.transpose(-1, -2) * gram).sum((-2, -1)), weighted_sum
        f = self.dense.size(1)
        if self.sparse is None:
            out = delta.new_empty(r, b, o, f)
            for s in range(r):  # one seed's feature rows at a time
                torch.bmm(delta[s].transpose(1, 2), self.dense[idx[s]], out=out[s])
            flat = out.view(r, b, o * f)
            return torch.einsum("rbk,rbk->rb", flat, flat), lambda c: torch.einsum("rb,rbk->rk", c, flat).view(r, o, f)
        crow, col, val = self.sparse.crow_indices(), self.sparse.col_indices(), self.sparse.values()
        buf = delta.new_zeros(b * f, o)
        sq = delta.new_empty(r, b)
        for s in range(r):  # per seed: (root, feature) rows of G, each the sum of its rows' δ times the feature
            v = idx[s].reshape(-1)
            row, offset = segments(crow[v + 1] - crow[v])
            pos = crow[v][row] + offset
            src = delta[s].reshape(-1, o)[row]
            buf.index_add_(
                0, torch.div(row, j, rounding_mode="floor") * f + col[pos], src if self.binary else src * val[pos, None]
            )
            sq[s] = torch.einsum("bk,bk->b", buf.view(b, -1), buf.view(b, -1))
            buf.zero_()
        return sq, weighted_sum


def _outer(delta: Tensor, a: Tensor) -> Tensor:
    """Per-root ``Σ_rows δ a^T``: ``[m, out, in]`` from ``[m, rows, out]`` and ``[m, rows, in]``."""
    return torch.bmm(delta.transpose(1, 2), a)


class StackedDPGNN(nn.Module):
    """``R`` seeds' :class:`~dpgnn.methods.dp_gnn.DPGNNModel` of one architecture, weights stacked (from
    ``models``, which receive the trained weights by :meth:`write_back`)."""

    def __init__(self, models: Sequence[DPGNNModel]) -> None:
        super().__init__()
        self.models = list(models)
        self.repeats = len(self.models)
        self.base = StackedMLP([m.base for m in models])
        self.root_weight = nn.Parameter(torch.stack([m.lin_root.weight.detach() for m in models]).clone())
        self.root_bias = nn.Parameter(torch.stack([m.lin_root.bias.detach() for m in models]).clone())
        self.nbr_weight = nn.Parameter(torch.stack([m.lin_nbr.weight.detach() for m in models]).clone())
        self.head = StackedMLP([m.head for m in models])
        self.act = models[0].act

    def trainable(self) -> list[nn.Parameter]:
        """The parameters in the order of ``DPGNNModel.named_parameters()`` (each ``[R, *shape]``)."""
        return [*self.base.params(), self.root_weight, self.root_bias, self.nbr_weight, *self.head.params()]

    def state(self) -> dict[str, Tensor]:
        """Every stacked tensor whose seed slices a restore copies."""
        return dict(self.named_parameters())

    def _mix(self, h: Tensor, agg: Tensor) -> Tensor:
        """The SAGE layer's pre-activation ``W_root h + b + W_nbr agg`` for seed-major ``[R, m, hidden]``."""
        z = torch.baddbmm(self.root_bias.unsqueeze(1), h, self.root_weight.transpose(1, 2))
        return z + torch.bmm(agg, self.nbr_weight.transpose(1, 2))

    def full(self, x: Tensor, adjs: Sequence[Tensor]) -> Tensor:
        """:meth:`DPGNNModel.full` for every seed, each on its own adjacency: logits ``[R, N, C]``."""
        h = self.base(x)
        agg = torch.stack([adj @ h[r] for r, adj in enumerate(adjs)])
        return self.head(torch.cat([h, self.act(self._mix(h, agg))], dim=-1))

    def write_back(self) -> list[DPGNNModel]:
        """The ``R`` sequential models holding the stacked weights."""
        self.base.write_back()
        self.head.write_back()
        with torch.no_grad():
            for r, m in enumerate(self.models):
                m.lin_root.weight.copy_(self.root_weight[r])
                m.lin_root.bias.copy_(self.root_bias[r])
                m.lin_nbr.weight.copy_(self.nbr_weight[r])
        return self.models

    def _run_rows(self, feats: _Features, idx: Tensor, records: list) -> Tensor:
        """The base on every root's rows (``idx`` ``[R, B, J]``): ``[R, B·J, hidden]``; records (layer, input,
        output) per linear layer (the first layer's input is the feature rows, not materialised)."""
        first = self.base.layers[0]
        r, b, j = idx.shape
        with torch.no_grad():
            z_all = feats.product(first.weight, first.bias)  # [N + 1, R, out]
        flat = (idx * r + torch.arange(r, device=idx.device).view(r, 1, 1)).reshape(r, b * j)
        z = z_all.reshape(-1, z_all.size(-1))[flat].requires_grad_()
        records.append((first, None, z))
        a = first.act(z)
        for layer in self.base.layers[1:]:
            z = layer.linear(a)
            records.append((layer, a, z))
            a = layer.act(z)
        return a

    def clipped_sums(self, feats: _Features, idx: Tensor, mask: Tensor, y: Tensor, clip: float) -> list[Tensor]:
        """Per seed ``Σ_i clip_C(∇ℓ_i)`` over its roots: ``idx`` ``[R, B, 1 + D]`` (each root, then its padded
        in-neighbours), ``mask`` ``[R, B, D]``, targets ``[R, B]``; stacked ``[R, *shape]`` in :meth:`trainable`
        order. Each root's gradient is its own loss's on its own subgraph, as
        :func:`~dpgnn.methods.dp_gnn.per_root_gradients` computes it."""
        r, b, j = idx.shape
        records: list = []
        rows = self._run_rows(feats, idx, records).view(r, b, j, -1)
        h = rows[:, :, 0]
        agg = (rows[:, :, 1:] * mask.unsqueeze(-1).to(rows.dtype)).sum(-2)
        mix = self._mix(h, agg)
        out = torch.cat([h, self.act(mix)], dim=-1)
        head_records = []
        for layer in self.head.layers:
            z = layer.linear(out)
            head_records.append((layer, out, z))
            out = z if layer.act is None else layer.act(z)
        loss = F.cross_entropy(out.reshape(-1, out.size(-1)), y.reshape(-1), reduction="sum")
        outputs = [rec[2] for rec in records] + [mix] + [rec[2] for rec in head_records]
        grads = torch.autograd.grad(loss, outputs)
        with torch.no_grad():
            per_root = self._per_root(feats, idx, records, grads, h, agg, head_records)
            sq = sum(g if total else torch.einsum("rbk,rbk->rb", g, g) for g, _, total in per_root)
            scale = (clip / (sq.sqrt() + 1e-6)).clamp(max=1.0)
            return [
                shape(scale) if total else shape(torch.einsum("rb,rbk->rk", scale, g)) for g, shape, total in per_root
            ]

    def _per_root(self, feats, idx, records, grads, h, agg, head_records) -> list:
        """Each root's gradient of every parameter, in :meth:`trainable` order: ``(flat [R, B, numel], shape,
        False)``, ``shape`` mapping a flat ``[R, numel]`` sum to the parameter's ``[R, *shape]``, or (the first
        layer's weight) ``(squared norms [R, B], clipped sum of the factors [R, B], True)``."""
        r, b, j = idx.shape
        out: list = []

        def entry(g: Tensor, p: Tensor):
            return g, lambda flat: flat.view(p.shape), False

        for (layer, a, _), g in zip(records, grads):
            delta = g.view(r * b, j, -1)
            if a is None:
                out.append((*feats.root_gradients(g.view(r, b, j, -1), idx), True))
            else:
                out.append(entry(_outer(delta, a.reshape(r * b, j, -1)).view(r, b, -1), layer.weight))
            out.append(entry(delta.sum(1).view(r, b, -1), layer.bias))
        d_mix = grads[len(records)].reshape(r * b, 1, -1)
        out += [
            entry(_outer(d_mix, h.reshape(r * b, 1, -1)).view(r, b, -1), self.root_weight),
            entry(d_mix.view(r, b, -1), self.root_bias),
            entry(_outer(d_mix, agg.reshape(r * b, 1, -1)).view(r, b, -1), self.nbr_weight),
        ]
        for (layer, a, _), g in zip(head_records, grads[len(records) + 1 :]):
            delta = g.reshape(r * b, 1, -1)
            out += [entry(_outer(delta, a.reshape(r * b, 1, -1)).view(r, b, -1), layer.weight), entry(g, layer.bias)]
        return out


def _epoch_step(model: StackedDPGNN, setup, feats: _Features, tables, y: Tensor, cfg: DPGNNConfig, gens):
    """``step(epoch)`` for every seed: per step, each seed's roots from its generator, the clipped sums of all
    seeds at once, each seed's noise from its generator (in parameter order), one Adam step of the stack."""
    table, tmask = tables
    ledger, train_idx = setup.ledger, setup.train_idx
    b = min(cfg.batch_size, train_idx.numel())
    std = ledger["noise_multiplier"] * ledger["sensitivity"]
    steps_per_epoch = ledger["steps_trained"] // cfg.epochs
    params = model.trainable()
    seeds = torch.arange(model.repeats, device=y.device).unsqueeze(1)

    def add_noise(sums: dict[str, Tensor]) -> dict[str, Tensor]:
        for r, gen in enumerate(gens):
            for k, p in zip(sums, params):
                sums[k][r] += std * torch.randn(p.shape[1:], generator=gen, device=gen.device).to(p.device)
        return sums

    opt = torch.optim.Adam(params, lr=cfg.lr)
    private = NoisyStep(opt, {str(i): p for i, p in enumerate(params)}, add_noise, b)

    def step(epoch: int) -> None:
        for _ in range(steps_per_epoch):
            roots = torch.stack([draw_roots(train_idx, b, gen) for gen in gens])  # [R, B]
            idx = torch.cat([roots.unsqueeze(-1), table[seeds, roots]], dim=-1)
            sums = model.clipped_sums(feats, idx, tmask[seeds, roots], y[roots], cfg.clip)
            private({str(i): g for i, g in enumerate(sums)})

    return step


def train_dp_gnn_repeats(
    data: Data, cfg: DPGNNConfig, seeds: Sequence[int], *, device: str = "auto"
) -> list[ProGAPResult]:
    """:func:`~dpgnn.methods.dp_gnn.train_dp_gnn` for each of ``seeds``, trained together; one result per seed,
    in order."""
    t0 = time.perf_counter()
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of ints, got {seeds!r}")
    dev = resolve_device(device)
    setup = dp_gnn_setup(data, cfg, dev)
    n = data.num_nodes
    graphs = [seed_graph(setup.edges, n, cfg.max_degree, s, dev) for s in seeds]
    tables = (torch.stack([g[0] for g in graphs]), torch.stack([g[1] for g in graphs]))
    adjs = [g[2] for g in graphs]
    x, y = data.x.to(dev).float(), data.y.to(dev)
    feats = _Features(x)
    feats.use_gram(tables[0])
    model = StackedDPGNN([init_model(cfg, x.size(1), int(data.y.max()) + 1, s, dev) for s in seeds])
    gens = [noise_generator(s, dev) for s in seeds]
    step = _epoch_step(model, setup, feats, tables, y, cfg, gens)
    watched = {"train": setup.masks["train"], "val": setup.masks["val"]}

    def evaluate() -> dict[str, Tensor]:
        with torch.no_grad():
            return split_accuracies(model.full(x, adjs), y, watched)

    hist = _fit(model, step, evaluate, cfg.epochs, 0)
    with torch.no_grad():
        acc = split_accuracies(model.full(x, adjs), y, setup.masks)
    models = [m.eval() for m in model.write_back()]
    seconds = (time.perf_counter() - t0) / len(seeds)
    return [
        ProGAPResult(
            train_acc=float(acc["train"][r]),
            val_acc=float(acc["val"][r]),
            test_acc=float(acc["test"][r]),
            ledger=copy.deepcopy(setup.ledger),
            history=hist[r],
            seconds=seconds,
            model=models[r],
        )
        for r in range(len(seeds))
    ]
