"""LPGNN layers and models (Sajadmanesh & Gatica-Perez, CCS 2021; docs/papers/lpgnn.md#kprop to
docs/papers/lpgnn.md#drop-training-and-model-selection): KProp and the three backbones.

* :func:`normalized_adjacency` / :func:`kprop` / :class:`KProp` -- ``Â^K Z`` with ``Â = D^{-1/2} A D^{-1/2}``
  **without self-loops** (docs/papers/lpgnn.md#kprop); :class:`KProp` caches its output (features are propagated once).
* :class:`Backbone` -- the straightforward per-run model: 2 PyG layers (``gcn`` = GCNConv, ``sage`` = SAGEConv
  mean, ``gat`` = GATConv 4 heads → 1 head), hidden 16, SELU, dropout after the activation; returns logits.
* :class:`BatchedBackbone` -- the same three models for ``R`` independent repeats at once, in a ``(nodes, R, ·)``
  layout: one sparse product serves all repeats, and the first layer's weight is applied *before* the (linear)
  KProp and neighbour aggregation, ``Â^K X W = Â^K (X W)``, so a sparse feature matrix (multi-bit reports have
  ``m`` non-zeros per node) is not densified, unless the graph has so many edges per feature column that
  propagating the dense matrix once is cheaper (:func:`propagate_once`). Its weights can be copied from ``R``
  :class:`Backbone` instances (:meth:`BatchedBackbone.from_backbones`), which gives identical outputs (tests).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GATConv, GCNConv, SAGEConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.utils import softmax as edge_softmax

from dpgnn.nn.backbones import BACKBONES
from dpgnn.utils import to_csr

__all__ = [
    "SparseOp",
    "normalized_adjacency",
    "mean_adjacency",
    "kprop",
    "KProp",
    "Backbone",
    "BatchedBackbone",
    "BatchedFeatures",
    "propagate_once",
    "PROPAGATE_ONCE",
    "PROPAGATE_ONCE_LIMIT",
    "BACKBONES",
    "HIDDEN",
    "GAT_HEADS",
]

HIDDEN = 16  # docs/papers/lpgnn.md#drop-training-and-model-selection
GAT_HEADS = 4


# ---------------------------------------------------------------------------------------------------------------
# propagation matrices
# ---------------------------------------------------------------------------------------------------------------
class _SparseProduct(torch.autograd.Function):
    """``A @ z`` with the backward ``Aᵀ @ g`` from a precomputed transpose (torch re-transposes A every call)."""

    @staticmethod
    def forward(ctx, z: Tensor, a: Tensor, a_t: Tensor) -> Tensor:
        ctx.a_t = a_t
        return a @ z

    @staticmethod
    def backward(ctx, grad: Tensor):
        return ctx.a_t @ grad, None, None


class SparseOp:
    """A constant sparse matrix and its transpose; ``op @ z`` is differentiable in ``z``.

    ``coo`` (coalesced) holds the entries for callers that gather by index; products use CSR copies, which on
    one CPU thread are 1.25× (320 columns) to 4× (40 columns) faster than COO for the Facebook adjacency
    (342k entries), with the same sums.
    """

    def __init__(self, coo: Tensor) -> None:
        self.coo = coo.coalesce()
        self.shape = tuple(self.coo.shape)
        self.csr = to_csr(self.coo)
        self.csr_t = to_csr(self.coo.t().coalesce())

    @classmethod
    def from_entries(cls, rows: Tensor, cols: Tensor, vals: Tensor, shape: tuple[int, int]) -> SparseOp:
        """The ``shape`` matrix with entries ``vals`` at ``(rows, cols)`` (repeated positions summed)."""
        return cls(torch.sparse_coo_tensor(torch.stack([rows, cols]), vals, shape, check_invariants=True))

    def __matmul__(self, z: Tensor) -> Tensor:
        if z.requires_grad:
            return _SparseProduct.apply(z, self.csr, self.csr_t)
        return self.csr @ z

    def to(self, device) -> SparseOp:
        """A copy of this operator (entries and CSR copies) on ``device``."""
        out = object.__new__(SparseOp)
        out.coo, out.shape = self.coo.to(device), self.shape
        out.csr, out.csr_t = self.csr.to(device), self.csr_t.to(device)
        return out

    def to_dense(self) -> Tensor:
        """The matrix as a dense tensor."""
        return self.coo.to_dense()


def _csr(rows: Tensor, cols: Tensor, vals: Tensor, n: int) -> SparseOp:
    return SparseOp.from_entries(rows, cols, vals, (n, n))


def normalized_adjacency(edge_index: Tensor, num_nodes: int, *, self_loops: bool = False) -> Tensor:
    """Sparse ``D^{-1/2} A D^{-1/2}`` (``A + I`` when ``self_loops``), row = target, as PyG's ``gcn_norm``.

    KProp uses ``self_loops=False`` (docs/papers/lpgnn.md#kprop); the GCN backbone uses ``True``. Isolated nodes get
    zero rows.
    """
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    ei, w = gcn_norm(edge_index, None, num_nodes, add_self_loops=self_loops)
    return _csr(ei[1], ei[0], w.to(torch.float32), num_nodes)


def mean_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Sparse matrix of the mean aggregation of SAGEConv: row ``i`` averages the sources of ``i``'s in-edges."""
    src, dst = edge_index
    deg = torch.bincount(dst, minlength=num_nodes).clamp(min=1).to(torch.float32)
    return _csr(dst, src, 1.0 / deg[dst], num_nodes)


def _spmm(adj: Tensor, z: Tensor) -> Tensor:
    """``adj @ z`` for ``z`` of shape ``(N, ...)`` (trailing dims flattened for the product)."""
    shape = z.shape
    return (adj @ z.reshape(shape[0], -1)).reshape(shape)


def kprop(z: Tensor, adj: Tensor, steps: int) -> Tensor:
    """``Â^steps z`` (``steps = 0`` returns ``z``); ``z`` has shape ``(N, ...)``."""
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps}")
    for _ in range(int(steps)):
        z = _spmm(adj, z)
    return z


class KProp(nn.Module):
    """K-step propagation ``Â^K x`` with ``Â = D^{-1/2} A D^{-1/2}`` without self-loops (LPGNN Sec. 4.2).

    ``cached=True`` stores the result of the first call and returns it afterwards (valid when the module always
    sees the same features and graph, as for the fixed perturbed features of one run).
    """

    def __init__(self, steps: int, cached: bool = True) -> None:
        super().__init__()
        if int(steps) != steps or steps < 0:
            raise ValueError(f"steps must be an integer >= 0, got {steps}")
        self.steps, self.cached = int(steps), bool(cached)
        self._cache: Tensor | None = None

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """``Â^K x`` on the graph ``edge_index`` (the cached result after the first call if ``cached``)."""
        if self._cache is not None:
            return self._cache
        out = x if self.steps == 0 else kprop(x, normalized_adjacency(edge_index, x.size(0)), self.steps)
        if self.cached:
            self._cache = out.detach()
        return out


# ---------------------------------------------------------------------------------------------------------------
# the straightforward per-run backbone (PyG layers)
# ---------------------------------------------------------------------------------------------------------------
def _check(kind: str, dropout: float) -> str:
    key = str(kind).strip().lower()
    if key not in BACKBONES:
        raise ValueError(f"unknown backbone {kind!r}; valid: {list(BACKBONES)}")
    if not 0.0 <= float(dropout) < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {dropout}")
    return key


class Backbone(nn.Module):
    """Two-layer GCN / GraphSAGE / GAT with SELU and dropout after the activation
    (docs/papers/lpgnn.md#drop-training-and-model-selection); returns logits."""

    def __init__(
        self, kind: str, in_channels: int, out_channels: int, hidden: int = HIDDEN, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.kind = _check(kind, dropout)
        self.dropout = float(dropout)
        if self.kind == "gcn":
            self.conv1, self.conv2 = GCNConv(in_channels, hidden), GCNConv(hidden, out_channels)
        elif self.kind == "sage":
            self.conv1, self.conv2 = SAGEConv(in_channels, hidden), SAGEConv(hidden, out_channels)
        else:
            self.conv1 = GATConv(in_channels, hidden, heads=GAT_HEADS)
            self.conv2 = GATConv(hidden * GAT_HEADS, out_channels, heads=1)

    def forward(self, x: Tensor, edge_index: Tensor, *, neighbour_mean: Tensor | None = None) -> Tensor:
        """Logits ``(N, c)`` of the nodes ``x`` on the graph ``edge_index``. ``neighbour_mean`` (GraphSAGE): the
        first layer's mean of the neighbours' ``x``, from :meth:`neighbour_mean` on the same ``x`` and graph."""
        if neighbour_mean is None:
            h = self.conv1(x, edge_index)
        else:  # SAGEConv's forward (mean aggregation, root weight, no projection or normalisation) on the given mean
            h = self.conv1.lin_l(neighbour_mean) + self.conv1.lin_r(x)
        h = F.dropout(F.selu(h), p=self.dropout, training=self.training)
        return self.conv2(h, edge_index)

    @torch.no_grad()
    def neighbour_mean(self, x: Tensor, edge_index: Tensor) -> Tensor | None:
        """GraphSAGE: the first layer's mean of each node's in-neighbours' ``x``, which a loop that feeds the same
        fixed input every epoch computes once and passes to :meth:`forward` (the same logits, without gathering
        ``E × d`` features per call: most of an epoch on Cora's 1,433 features); ``None`` for GCN and GAT, which
        transform before they aggregate."""
        if self.kind != "sage":
            return None
        return self.conv1.propagate(edge_index, x=(x, x), size=None)


# ---------------------------------------------------------------------------------------------------------------
# batched repeats
# ---------------------------------------------------------------------------------------------------------------
#: :func:`propagate_once` holds a sparse release dense when ``N·d ≤ PROPAGATE_ONCE · K · nnz(Â)``: an epoch's dense
#: ``N × d`` projection (forward and weight gradient) against ``K`` sparse products with ``Â`` and their backward,
#: a dense multiply-add being several times cheaper than a sparse one. One multi-bit run of the bench, K = 8, one CPU
#: thread (``benchmarks/kprop_once.py``): Credit (N·d / K·nnz = 0.18) 4.0× faster dense, Amazon Computers (2.7)
#: 1.4×, Facebook page-page (39) 4× slower.
PROPAGATE_ONCE = 4.0
#: the most numbers (``N·d``) of a release :func:`propagate_once` holds dense (600 MB of float32)
PROPAGATE_ONCE_LIMIT = 150_000_000


def propagate_once(num_nodes: int, num_features: int, adj: SparseOp | None, steps: int) -> bool:
    """Whether :class:`BatchedFeatures` should hold a sparse release dense and propagate it once (``Â^K X``, then
    one dense projection per epoch) rather than propagate each epoch's projection ``K`` times: KProp steps on a
    graph with many edges per feature column (:data:`PROPAGATE_ONCE`), and a matrix of at most
    :data:`PROPAGATE_ONCE_LIMIT` numbers."""
    if steps <= 0 or adj is None or num_nodes * num_features > PROPAGATE_ONCE_LIMIT:
        return False
    return num_nodes * num_features <= PROPAGATE_ONCE * steps * adj.csr.values().numel()


class BatchedFeatures:
    """The (fixed) node features of ``R`` repeats, and ``project(W) = Â^{K_x} X_r W_r`` for all repeats at once.

    Two storage modes, chosen by the caller (:func:`propagate_once` says which is cheaper):

    * ``sparse``: ``X_r = offset_r + S_r`` with ``S_r`` sparse; ``S`` is kept as one block matrix whose row
      ``n·R + r`` holds node ``n`` of repeat ``r`` in columns ``r·d …``, so ``S @ W`` is a single product; KProp is
      applied after the projection (``K_x`` products with ``R·k`` columns per epoch, no dense ``N × d`` matrix).
    * ``dense``: ``Â^{K_x} X_r`` is propagated once and cached (``R × N × d``); the projection is a batched matmul.
    """

    def __init__(
        self,
        *,
        num_nodes: int,
        num_features: int,
        repeats: int,
        adj: Tensor | None,
        steps: int,
        sparse: Tensor | None = None,
        offset: Tensor | None = None,
        dense: Tensor | None = None,
    ) -> None:
        self.n, self.d, self.r, self.steps, self.adj = num_nodes, num_features, repeats, int(steps), adj
        if (sparse is None) == (dense is None):
            raise ValueError("pass exactly one of sparse (with optional offset) or dense")
        if self.steps > 0 and adj is None:
            raise ValueError("KProp steps > 0 need the propagation matrix adj")
        self.sparse, self.offset = sparse, offset
        if dense is not None:
            if dense.shape != (repeats, num_nodes, num_features):
                raise ValueError(f"dense features must have shape (R, N, d) = {(repeats, num_nodes, num_features)}")
            dense = dense.to(torch.float32)
            if self.steps:
                dense = kprop(dense.permute(1, 0, 2).contiguous(), adj, self.steps).permute(1, 0, 2).contiguous()
        self.dense = dense

    @classmethod
    def from_sparse_parts(
        cls,
        rows: Sequence[Tensor],
        cols: Sequence[Tensor],
        vals: Sequence[Tensor],
        offsets: Sequence[float | Tensor],
        *,
        num_nodes: int,
        num_features: int,
        adj: Tensor | None,
        steps: int,
    ) -> BatchedFeatures:
        """Build the block matrix from per-repeat COO parts ``(rows, cols, vals)`` and per-repeat offsets."""
        r = len(rows)
        n, d = num_nodes, num_features
        br = torch.cat([rw * r + i for i, rw in enumerate(rows)])
        bc = torch.cat([cl + i * d for i, cl in enumerate(cols)])
        bv = torch.cat([v.to(torch.float32) for v in vals])
        sp = SparseOp.from_entries(br, bc, bv, (n * r, r * d))
        off = torch.stack([torch.as_tensor(o, dtype=torch.float32, device=bv.device).expand(d) for o in offsets])
        off = None if bool((off == 0).all()) else off
        return cls(num_nodes=n, num_features=d, repeats=r, adj=adj, steps=steps, sparse=sp, offset=off)

    @classmethod
    def shared(
        cls,
        rows: Tensor,
        cols: Tensor,
        vals: Tensor,
        offset: float,
        *,
        repeats: int,
        num_nodes: int,
        num_features: int,
        adj: SparseOp | None,
        steps: int,
    ) -> BatchedFeatures:
        """The same sparse features for every repeat (unperturbed features, deterministic replacements): one
        ``N × d`` matrix multiplies the ``R`` weights side by side."""
        out = cls(
            num_nodes=num_nodes,
            num_features=num_features,
            repeats=repeats,
            adj=adj,
            steps=steps,
            sparse=SparseOp.from_entries(rows, cols, vals.to(torch.float32), (num_nodes, num_features)),
        )
        out.is_shared = True
        out.offset = (
            None if float(offset) == 0 else torch.full((repeats, num_features), float(offset), device=rows.device)
        )
        return out

    is_shared = False

    def project(self, weight: Tensor) -> Tensor:
        """``Â^{K_x} X_r W_r`` for every repeat, shape ``(N, R, k)``; ``weight`` has shape ``(R, d, k)``."""
        r, d, k = weight.shape
        if self.dense is not None:
            return torch.bmm(self.dense, weight).permute(1, 0, 2)
        if self.is_shared:
            out = (self.sparse @ weight.permute(1, 0, 2).reshape(d, r * k)).reshape(self.n, r, k)
            if self.offset is not None:
                out = out + torch.einsum("rd,rdk->rk", self.offset, weight).unsqueeze(0)
            return kprop(out, self.adj, self.steps) if self.steps else out
        # gather rows of W at the non-zero columns and add them up per (node, repeat): O(nnz · k)
        msg = weight.reshape(r * d, k).index_select(0, self._cols) * self._vals
        out = torch.zeros(self.n * r, k, dtype=weight.dtype, device=weight.device).index_add(0, self._rows, msg)
        out = out.reshape(self.n, r, k)
        if self.offset is not None:
            out = out + torch.einsum("rd,rdk->rk", self.offset, weight).unsqueeze(0)
        return kprop(out, self.adj, self.steps) if self.steps else out

    @property
    def _rows(self) -> Tensor:
        return self.sparse.coo.indices()[0]

    @property
    def _cols(self) -> Tensor:
        return self.sparse.coo.indices()[1]

    @property
    def _vals(self) -> Tensor:
        return self.sparse.coo.values().unsqueeze(1)


class BatchedBackbone(nn.Module):
    """``R`` independent copies of :class:`Backbone` evaluated together on :class:`BatchedFeatures`.

    ``forward(features, graph)`` returns logits of shape ``(N, R, c)``; ``graph`` is a dict of the precomputed
    sparse matrices (:meth:`graph_ops`). Parameters have a leading repeat dimension, so one Adam over them equals
    ``R`` independent Adams when the loss is the *sum* of the repeats' losses.
    """

    def __init__(
        self, kind: str, in_channels: int, out_channels: int, repeats: int, hidden: int = HIDDEN, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.kind = _check(kind, dropout)
        self.dropout, self.r, self.hidden_size, self.c = float(dropout), int(repeats), int(hidden), int(out_channels)
        r, d, h, c = self.r, in_channels, hidden, out_channels
        z = torch.zeros
        if self.kind == "sage":  # W1 = [W_l | W_r]
            self.w1, self.b1 = nn.Parameter(z(r, d, 2 * h)), nn.Parameter(z(r, h))
            self.w2, self.b2 = nn.Parameter(z(r, h, 2 * c)), nn.Parameter(z(r, c))
        elif self.kind == "gcn":
            self.w1, self.b1 = nn.Parameter(z(r, d, h)), nn.Parameter(z(r, h))
            self.w2, self.b2 = nn.Parameter(z(r, h, c)), nn.Parameter(z(r, c))
        else:
            hh = GAT_HEADS
            self.w1, self.b1 = nn.Parameter(z(r, d, hh * h)), nn.Parameter(z(r, hh * h))
            self.a1_src, self.a1_dst = nn.Parameter(z(r, hh, h)), nn.Parameter(z(r, hh, h))
            self.w2, self.b2 = nn.Parameter(z(r, hh * h, c)), nn.Parameter(z(r, c))
            self.a2_src, self.a2_dst = nn.Parameter(z(r, 1, c)), nn.Parameter(z(r, 1, c))

    # -- weights ----------------------------------------------------------------------------------------------
    @classmethod
    def from_backbones(cls, models: Sequence[Backbone]) -> BatchedBackbone:
        """Stack the weights of ``R`` :class:`Backbone` models (same kind and sizes) into one batched model."""
        m0 = models[0]
        kind = m0.kind
        if kind == "sage":
            d, h, c = m0.conv1.lin_l.in_channels, m0.conv1.lin_l.out_channels, m0.conv2.lin_l.out_channels
        elif kind == "gcn":
            d, h, c = m0.conv1.lin.in_channels, m0.conv1.lin.out_channels, m0.conv2.lin.out_channels
        else:
            d, h, c = m0.conv1.lin.in_channels, m0.conv1.out_channels, m0.conv2.out_channels
        out = cls(kind, d, c, len(models), hidden=h, dropout=m0.dropout)
        with torch.no_grad():
            for i, m in enumerate(models):
                if kind == "sage":
                    out.w1[i] = torch.cat([m.conv1.lin_l.weight.T, m.conv1.lin_r.weight.T], dim=1)
                    out.b1[i] = m.conv1.lin_l.bias
                    out.w2[i] = torch.cat([m.conv2.lin_l.weight.T, m.conv2.lin_r.weight.T], dim=1)
                    out.b2[i] = m.conv2.lin_l.bias
                elif kind == "gcn":
                    out.w1[i], out.b1[i] = m.conv1.lin.weight.T, m.conv1.bias
                    out.w2[i], out.b2[i] = m.conv2.lin.weight.T, m.conv2.bias
                else:
                    out.w1[i], out.b1[i] = m.conv1.lin.weight.T, m.conv1.bias
                    out.a1_src[i], out.a1_dst[i] = m.conv1.att_src[0], m.conv1.att_dst[0]
                    out.w2[i], out.b2[i] = m.conv2.lin.weight.T, m.conv2.bias
                    out.a2_src[i], out.a2_dst[i] = m.conv2.att_src[0], m.conv2.att_dst[0]
        return out

    def backbone(self, r: int) -> Backbone:
        """Repeat ``r`` as a :class:`Backbone` with its weights (the inverse of :meth:`from_backbones`; the new
        module's throw-away initialisation does not advance the global random stream)."""
        d, h, c = self.w1.size(1), self.hidden_size, self.c
        with torch.random.fork_rng(devices=[]):
            m = Backbone(self.kind, d, c, hidden=h, dropout=self.dropout).to(self.w1.device)
        with torch.no_grad():
            if self.kind == "sage":
                m.conv1.lin_l.weight.copy_(self.w1[r, :, :h].T)
                m.conv1.lin_r.weight.copy_(self.w1[r, :, h:].T)
                m.conv1.lin_l.bias.copy_(self.b1[r])
                m.conv2.lin_l.weight.copy_(self.w2[r, :, :c].T)
                m.conv2.lin_r.weight.copy_(self.w2[r, :, c:].T)
                m.conv2.lin_l.bias.copy_(self.b2[r])
            elif self.kind == "gcn":
                m.conv1.lin.weight.copy_(self.w1[r].T)
                m.conv1.bias.copy_(self.b1[r])
                m.conv2.lin.weight.copy_(self.w2[r].T)
                m.conv2.bias.copy_(self.b2[r])
            else:
                m.conv1.lin.weight.copy_(self.w1[r].T)
                m.conv1.bias.copy_(self.b1[r])
                m.conv1.att_src[0].copy_(self.a1_src[r])
                m.conv1.att_dst[0].copy_(self.a1_dst[r])
                m.conv2.lin.weight.copy_(self.w2[r].T)
                m.conv2.bias.copy_(self.b2[r])
                m.conv2.att_src[0].copy_(self.a2_src[r])
                m.conv2.att_dst[0].copy_(self.a2_dst[r])
        return m

    @classmethod
    def initialised(
        cls,
        kind: str,
        in_channels: int,
        out_channels: int,
        seeds: Sequence[int],
        hidden: int = HIDDEN,
        dropout: float = 0.0,
    ) -> BatchedBackbone:
        """One repeat per seed, each initialised exactly like ``Backbone`` under ``torch.manual_seed(seed)``."""
        models = []
        for s in seeds:
            torch.manual_seed(int(s))
            models.append(Backbone(kind, in_channels, out_channels, hidden, dropout))
        return cls.from_backbones(models)

    @staticmethod
    def graph_ops(kind: str, edge_index: Tensor, num_nodes: int) -> dict[str, Tensor]:
        """The sparse operators a backbone needs (built once per graph)."""
        key = _check(kind, 0.0)
        if key == "sage":
            return {"mean": mean_adjacency(edge_index, num_nodes)}
        if key == "gcn":
            return {"gcn": normalized_adjacency(edge_index, num_nodes, self_loops=True)}
        from torch_geometric.utils import add_self_loops, remove_self_loops

        ei, _ = remove_self_loops(edge_index)
        ei, _ = add_self_loops(ei, num_nodes=num_nodes)
        return {"edges": ei}

    # -- forward ----------------------------------------------------------------------------------------------
    def _gat(self, z: Tensor, a_src: Tensor, a_dst: Tensor, edges: Tensor, heads: int) -> Tensor:
        n, r, _ = z.shape
        z = z.reshape(n, r, heads, -1)
        al_s = (z * a_src).sum(-1)  # (N, R, H)
        al_d = (z * a_dst).sum(-1)
        src, dst = edges
        e = F.leaky_relu(al_s[src] + al_d[dst], 0.2)
        att = edge_softmax(e, dst, num_nodes=n)  # (E, R, H)
        msg = z[src] * att.unsqueeze(-1)
        out = torch.zeros_like(z).index_add_(0, dst, msg)
        return out.reshape(n, r, -1)

    def hidden(self, features: BatchedFeatures, graph: dict[str, Tensor]) -> Tensor:
        """First layer and SELU (before dropout), ``(N, R, hidden)``: the part shared by train and eval forwards."""
        h = self.hidden_size
        p = features.project(self.w1)  # (N, R, k) = Â^{K_x} X W1
        if self.kind == "sage":
            x1 = _spmm(graph["mean"], p[..., :h].contiguous()) + p[..., h:] + self.b1
        elif self.kind == "gcn":
            x1 = _spmm(graph["gcn"], p) + self.b1
        else:
            x1 = self._gat(p, self.a1_src, self.a1_dst, graph["edges"], GAT_HEADS) + self.b1
        return F.selu(x1)

    def head(self, x1: Tensor, graph: dict[str, Tensor], training: bool) -> Tensor:
        """Dropout (when ``training``) and the second layer: logits ``(N, R, c)``."""
        c = self.c
        x1 = F.dropout(x1, p=self.dropout, training=training)
        q = torch.einsum("nrh,rhk->nrk", x1, self.w2)
        if self.kind == "sage":
            return _spmm(graph["mean"], q[..., :c].contiguous()) + q[..., c:] + self.b2
        if self.kind == "gcn":
            return _spmm(graph["gcn"], q) + self.b2
        return self._gat(q, self.a2_src, self.a2_dst, graph["edges"], 1) + self.b2

    def forward(self, features: BatchedFeatures, graph: dict[str, Tensor]) -> Tensor:
        """Logits ``(N, R, c)`` of every repeat: :meth:`hidden` then :meth:`head` (dropout in train mode)."""
        return self.head(self.hidden(features, graph), graph, self.training)
