"""Models of the DRW paper (docs/papers/drw.md#model): GCN with row-L2-normalised logits and MLP with raw logits.

GCN layer = propagation ``Â·H`` (Â = D^{-1/2}(A+I)D^{-1/2} of whatever graph is passed: a padded subgraph as a
dense [S, S] matrix, a batch or the full graph as a sparse matrix) followed by a Linear map (Xavier-uniform weights,
zero bias); ReLU between layers, no dropout; the final logits are divided by their L2 norm (the authors' code).
``num_layers`` 1 = one propagation + Linear(in → classes); 2 = hidden width ``hidden`` (256 or 512 in the paper).
The MLP is the same without propagation. Both are plain ``nn.Module``s whose ``forward(x, adj)`` works under
``torch.func.vmap`` (dense ``adj``), so per-subgraph gradients of any depth are exact.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dpgnn.nn.progap import gather_rows
from dpgnn.utils import density, segments, to_csr, transpose_csr

__all__ = ["DRWGCN", "DRWMLP", "SplitFeatures", "build_model"]


def split_modes(x: Tensor) -> tuple[Tensor, Tensor]:
    """``(base, rest)`` with ``base`` the most frequent value of each column of ``x`` ``[N, d]`` (``Tensor.mode``)
    and ``rest = x − base`` as CSR. Where zeros are a strict majority of every column (one-hot attributes), 0 is
    each column's only mode: ``rest`` is then ``x``'s own CSR, without sorting the columns."""
    if x.size(0) and density(x) < 0.5:
        csr = to_csr(x)
        if bool((2 * torch.bincount(csr.col_indices(), minlength=x.size(1)) < x.size(0)).all()):
            return x.new_zeros(x.size(1)), csr
    base = x.mode(dim=0).values
    return base, to_csr(x - base)


class SplitFeatures:
    """A feature matrix stored as ``x = 1·baseᵀ + rest``: ``base`` the most frequent value of each column, ``rest``
    sparse (CSR). Standardised bag-of-words features are dense (a word absent from a node is ``−μ/σ``, not 0), but
    every column has one value for "absent", so ``rest`` keeps only the present words (about 1% of CiteSeer's
    entries): ``x @ W`` costs ``nnz(rest)·k + d·k`` instead of ``N·d·k``. Same products up to rounding.
    """

    def __init__(self, x: Tensor) -> None:
        if x.dim() != 2:
            raise ValueError(f"features must be a matrix, got shape {tuple(x.shape)}")
        self.base, self.rest = split_modes(x)
        self.density = self.rest.values().numel() / x.numel() if x.numel() else 0.0
        self.rest_t = transpose_csr(self.rest)
        self.shape = tuple(x.shape)
        self._memo: tuple | None = None
        self._base_sq = float(self.base @ self.base)
        self._rest_base = self.rest @ self.base if self._base_sq else None  # r_v · base per node

    def matmul(self, w: Tensor) -> Tensor:
        """``x @ w`` for ``w`` of shape ``(d, k)``. The last product is kept while ``w`` is unchanged (same storage,
        shape and version counter): DP training evaluates the weights after step ``t`` and starts step ``t + 1``
        from the same weights. Products that need gradients are never reused."""
        key = (w.data_ptr(), tuple(w.shape), w.stride(), w._version, w.dtype, w.device)
        if not w.requires_grad and self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        out = self.rest @ w + self.base @ w
        if not w.requires_grad:
            self._memo = (key, out)
        return out

    def tmatmul(self, v: Tensor) -> Tensor:
        """``xᵀ @ v`` for ``v`` of shape ``(N, k)``."""
        return self.rest_t @ v + torch.outer(self.base, v.sum(0))

    def rows_matmul(self, rows: Tensor, w: Tensor) -> Tensor:
        """``x[rows] @ w``: the rows of :meth:`matmul` (each row's sum in the same order), for a batch's nodes."""
        return gather_rows(self.rest, rows) @ w + self.base @ w

    def rows_tmatmul(self, rows: Tensor, v: Tensor) -> Tensor:
        """``x[rows]ᵀ @ v`` for distinct increasing ``rows`` and ``v`` of shape ``(len(rows), k)``: :meth:`tmatmul`
        of ``v`` put at those rows (zero elsewhere), without the other nodes' products."""
        return transpose_csr(gather_rows(self.rest, rows)) @ v + torch.outer(self.base, v.sum(0))

    def gram(self, nodes: Tensor) -> Tensor:
        """``X_i X_iᵀ`` ``[B, S, S]`` for the rows ``X_i`` of each row of ``nodes`` ``[B, S]`` (node ids; ``-1`` is
        padding, whose row and column are zero), without gathering the dense rows: ``x_a · x_b = ‖base‖² +
        r_a · base + r_b · base + r_a · r_b``, the last a sum over the features that two rows of one subgraph both
        hold (each such group of ``k`` entries gives ``k²`` products)."""
        b, s = nodes.shape
        valid = nodes >= 0
        v = nodes.clamp(min=0).reshape(-1)
        crow, col, val = self.rest.crow_indices(), self.rest.col_indices(), self.rest.values()
        row, offset = segments((crow[v + 1] - crow[v]) * valid.reshape(-1))  # entry → its row b·S + slot
        pos = crow[v][row] + offset
        key, order = torch.sort((row // s) * self.shape[1] + col[pos], stable=True)  # (subgraph, feature)
        row, x = row[order], val[pos][order]
        size = torch.unique_consecutive(key, return_counts=True)[1]
        group = segments(size)[0]  # entry → its group
        left, partner = segments(size[group])  # one product of each entry with every entry of its group
        right = (torch.cumsum(size, 0) - size)[group[left]] + partner
        a, c = row[left], row[right]
        out = val.new_zeros(b * s * s).index_add_(0, (a // s) * s * s + (a % s) * s + c % s, x[left] * x[right])
        out = out.view(b, s, s)
        if self._rest_base is not None:
            rb = self._rest_base[v].view(b, s) * valid
            pair = (valid.unsqueeze(-1) & valid.unsqueeze(-2)).to(out.dtype)
            out = out + (self._base_sq + rb.unsqueeze(-1) + rb.unsqueeze(-2)) * pair
        return out


class _Stack(nn.Module):
    propagate = True

    def __init__(
        self, in_channels: int, out_channels: int, num_layers: int = 1, hidden: int = 256, normalize_logits: bool = True
    ) -> None:
        super().__init__()
        for name, v, low in (("in_channels", in_channels, 1), ("out_channels", out_channels, 1), ("hidden", hidden, 1)):
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if num_layers not in (1, 2, 3):
            raise ValueError(f"num_layers must be 1, 2 or 3, got {num_layers!r}")
        dims = [in_channels] + [hidden] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.normalize_logits = bool(normalize_logits)
        self.num_layers = num_layers
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in self.lins:
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x: Tensor | SplitFeatures, adj: Tensor | None = None) -> Tensor:
        h = x
        last = len(self.lins) - 1
        for i, lin in enumerate(self.lins):
            if isinstance(h, SplitFeatures):  # full-graph inputs (evaluation): project first, then propagate
                h = h.matmul(lin.weight.T)
                h = (adj @ h if self.propagate else h) + lin.bias
            elif self.propagate:
                if adj is None:
                    raise ValueError("a GCN needs the normalised adjacency `adj`")
                # Â(HW) + b == (ÂH)W + b; the cheaper product order is used
                h = adj @ (h @ lin.weight.T) + lin.bias if lin.out_features < lin.in_features else lin(adj @ h)
            else:
                h = lin(h)
            if i < last:
                h = F.relu(h)
        return F.normalize(h, dim=-1) if self.normalize_logits else h


class DRWGCN(_Stack):
    """GCN of the DRW code: ``num_layers`` × (Â·H → Linear), ReLU between, L2-normalised logits."""

    propagate = True


class DRWMLP(_Stack):
    """MLP baseline of the DRW paper (uniform node sampling): Linear layers, ReLU between, raw logits -- the DRW
    code normalises only its GCN's logits (docs/papers/drw.md#model)."""

    propagate = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        num_layers: int = 1,
        hidden: int = 256,
        normalize_logits: bool = False,
    ) -> None:
        super().__init__(in_channels, out_channels, num_layers, hidden, normalize_logits)


def build_model(
    kind: str,
    in_channels: int,
    out_channels: int,
    num_layers: int = 1,
    hidden: int = 256,
    normalize_logits: bool | None = None,
) -> nn.Module:
    """``kind`` ``"gcn"`` or ``"mlp"``; ``normalize_logits`` defaults to the DRW code's choice per kind (GCN: L2-
    normalised logits, MLP: raw logits)."""
    key = str(kind).lower()
    if key not in ("gcn", "mlp"):
        raise ValueError(f"kind must be 'gcn' or 'mlp', got {kind!r}")
    cls = DRWGCN if key == "gcn" else DRWMLP
    if normalize_logits is None:
        normalize_logits = key == "gcn"
    return cls(in_channels, out_channels, num_layers, hidden, normalize_logits)
