"""Building blocks of ProGAP (Sajadmanesh & Gatica-Perez, WSDM 2024) and of its MLP-based baselines.

- :class:`MLP`: ``Linear → activation → norm → dropout`` per layer (norm AFTER the activation, as the authors'
  code); ``plain_last=True`` leaves the last layer a bare ``Linear`` (heads), ``False`` keeps activation + norm on
  it too (base MLPs).
- :class:`StageModel`: stage ``s`` of the progressive model: base MLPs ``0..s`` (one per cached input
  ``X̃^(k)``), jumping knowledge by concatenation, row-wise L2 normalisation of the JK output (present in the
  authors' code, not in the paper; docs/papers/progap.md#architecture-and-training) and a head MLP producing logits.
- :func:`batchnorm_to_groupnorm`: replaces every ``BatchNorm1d`` by ``GroupNorm`` with ONE group (the authors'
  opacus fixer): per-sample normalisation, so per-sample gradients stay those of independent samples.
- :class:`GhostClipper` / :func:`clipped_grad_sum`: the DP-SGD step's ``Σ_i clip_C(∇ℓ_i)`` of a :class:`StageModel`
  by ghost norms, without materialising per-sample gradients (equal to opacus' per-sample clipping, tested).
- :func:`sparse_rows`: one-hot-like node features as a sparse CSR tensor, which every module here takes as input
  (a first linear layer then costs a fraction of the dense product), with :func:`gather_rows` and :func:`row_norms`.

Every module here takes tensors of independent rows (no message passing): the graph only enters through the
cached, already privatised aggregates, which is what makes per-sample clipping (opacus, or the exact ghost norms
of :class:`GhostClipper`) valid DP-SGD (docs/papers/progap.md#node-level-privacy).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from dpgnn.privacy.validation import check_int as _check_int
from dpgnn.utils import density, segments, to_csr

__all__ = [
    "MLP",
    "StageModel",
    "SAGEClassifier",
    "batchnorm_to_groupnorm",
    "GhostClipper",
    "clipped_grad_sum",
    "sparse_rows",
    "gather_rows",
    "row_norms",
    "ACTIVATIONS",
    "SPARSE_FEATURES",
]

ACTIVATIONS = {"selu": nn.SELU, "relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU}

#: node features with at most this fraction of nonzeros are held sparse (one-hot attributes)
SPARSE_FEATURES = 0.05


def sparse_rows(x: Tensor) -> Tensor:
    """``x`` ``[N, F]`` as a sparse CSR tensor when it is on the CPU and at most :data:`SPARSE_FEATURES` of it is
    nonzero, else ``x`` itself (a GPU multiplies the dense matrix fast). A ``Linear`` on it (``F.linear``) and its
    weight gradient take it as they take the dense rows, :func:`gather_rows` gathers its rows and
    :func:`row_norms` their norms, equal up to float rounding: ProGAP, GAP and the MLP baselines train and evaluate
    on it."""
    if x.layout != torch.strided or x.device.type != "cpu" or x.dim() != 2 or x.numel() == 0:
        return x
    if density(x) > SPARSE_FEATURES:
        return x
    return to_csr(x)


def gather_rows(x: Tensor, index: Tensor) -> Tensor:
    """The rows ``index`` of ``x`` (dense, or sparse CSR from :func:`sparse_rows`), in the same layout."""
    if x.layout != torch.sparse_csr:
        return x.index_select(0, index)
    crow, col, val = x.crow_indices(), x.col_indices(), x.values()
    count = crow[index + 1] - crow[index]
    row, offset = segments(count)
    pos = crow[index][row] + offset
    out_crow = torch.cat([count.new_zeros(1), torch.cumsum(count, 0)])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
        return torch.sparse_csr_tensor(out_crow, col[pos], val[pos], (index.numel(), x.size(1)), check_invariants=False)


def row_norms(a: Tensor) -> Tensor:
    """The L2 norm of every row of ``a`` ``[B, d]``, dense or sparse CSR: ``[B]``."""
    if a.layout != torch.sparse_csr:
        return torch.linalg.vector_norm(a, dim=1)
    crow = a.crow_indices()
    row = segments(crow[1:] - crow[:-1])[0]
    return a.values().new_zeros(a.size(0)).index_add_(0, row, a.values().square()).sqrt()


class MLP(nn.Module):
    """Multi-layer perceptron of ``num_layers`` layers ``in_dim → hidden → … → out_dim``.

    Args:
        in_dim: input width.
        hidden: width of every hidden layer (and of the output when ``out_dim`` is None).
        num_layers: number of linear layers (>= 1).
        out_dim: output width (default ``hidden``).
        dropout: dropout probability after each non-plain layer.
        activation: ``selu`` (the paper's), ``relu``, ``tanh`` or ``elu``.
        norm: ``batch`` (BatchNorm1d), ``group`` (GroupNorm with one group) or ``none``.
        plain_last: the last layer is a bare ``Linear`` (heads) instead of ``Linear → act → norm → dropout``.
    """

    def __init__(
        self,
        in_dim: int,
        hidden: int,
        num_layers: int,
        out_dim: int | None = None,
        *,
        dropout: float = 0.0,
        activation: str = "selu",
        norm: str = "batch",
        plain_last: bool = False,
    ) -> None:
        super().__init__()
        _check_int(in_dim, "in_dim", 1)
        _check_int(hidden, "hidden", 1)
        _check_int(num_layers, "num_layers", 1)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        if norm not in ("batch", "group", "none"):
            raise ValueError(f"norm must be 'batch', 'group' or 'none', got {norm!r}")
        out_dim = hidden if out_dim is None else _check_int(out_dim, "out_dim", 1)
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.layers = nn.ModuleList()
        for i in range(num_layers):
            last = i == num_layers - 1
            block: list[nn.Module] = [nn.Linear(dims[i], dims[i + 1])]
            if not (last and plain_last):
                block.append(ACTIVATIONS[activation]())
                if norm == "batch":
                    block.append(nn.BatchNorm1d(dims[i + 1]))
                elif norm == "group":
                    block.append(nn.GroupNorm(1, dims[i + 1]))
                if dropout > 0:
                    block.append(nn.Dropout(dropout))
            self.layers.append(nn.Sequential(*block))
        self.out_dim = out_dim

    def forward(self, x: Tensor) -> Tensor:
        """The layers applied in order to ``x`` (``[N, in_dim]`` → ``[N, out_dim]``)."""
        for layer in self.layers:
            x = layer(x)
        return x


class StageModel(nn.Module):
    """ProGAP sub-model ``M_s``: ``head( L2norm( cat_k base_k(X̃^(k)) ) )`` for ``k = 0..s``
    (docs/papers/progap.md#architecture-and-training).

    ``bases`` are shared with earlier stages (Algorithm 2 keeps fine-tuning them; the layer-wise ablation freezes
    them). :meth:`embed` returns ``X^(s) = base_s(X̃^(s))``, the embedding the next stage aggregates.
    """

    def __init__(self, bases: Sequence[nn.Module], head: nn.Module, *, normalize_jk: bool = True) -> None:
        super().__init__()
        if not bases:
            raise ValueError("a stage needs at least one base MLP")
        self.bases = nn.ModuleList(bases)
        self.head = head
        self.normalize_jk = normalize_jk

    @property
    def stage(self) -> int:
        """The stage ``s`` of this sub-model: its number of bases minus one."""
        return len(self.bases) - 1

    def jk(self, xs: Sequence[Tensor]) -> Tensor:
        """Jumping knowledge: ``cat_k base_k(X̃^(k))`` over the stage's inputs, L2-normalised per row if asked."""
        if len(xs) != len(self.bases):
            raise ValueError(f"stage {self.stage} expects {len(self.bases)} inputs X̃^(0..{self.stage}), got {len(xs)}")
        h = torch.cat([base(x) for base, x in zip(self.bases, xs)], dim=-1)
        return F.normalize(h, p=2.0, dim=-1) if self.normalize_jk else h

    def forward(self, *xs: Tensor) -> Tensor:
        """The head's logits on the jumping-knowledge concatenation of the cached inputs ``X̃^(0..s)``."""
        return self.head(self.jk(xs))

    @torch.no_grad()
    def embed(self, x_last: Tensor) -> Tensor:
        """``X^(s)``: the last base's output on its input (the embedding aggregated by the next NAP query)."""
        return self.bases[-1](x_last)


def batchnorm_to_groupnorm(module: nn.Module) -> nn.Module:
    """Replace every ``BatchNorm1d`` in ``module`` (in place, returned) by ``GroupNorm(1, C)``
    (docs/papers/progap.md#node-level-privacy).

    BatchNorm mixes the samples of a batch, which breaks per-sample gradient clipping; one-group GroupNorm
    normalises each sample on its own (equivalent to a LayerNorm with an affine per channel).
    """
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm1d):
            setattr(module, name, nn.GroupNorm(1, child.num_features, affine=child.affine))
        else:
            batchnorm_to_groupnorm(child)
    return module


# ---------------------------------------------------------------------------------------------------------------
# ghost clipping: per-sample gradient norms of independent rows without per-sample gradients
# ---------------------------------------------------------------------------------------------------------------
def _leaves(module: nn.Module) -> list[nn.Module]:
    """The modules an :class:`MLP` / ``Sequential`` applies, in order (their forward is the chain of these)."""
    if isinstance(module, MLP):
        return [leaf for layer in module.layers for leaf in _leaves(layer)]
    if isinstance(module, nn.Sequential):
        return [leaf for child in module for leaf in _leaves(child)]
    return [module]


class GhostClipper:
    """``Σ_i c_i ∇_θ ℓ_i`` for a :class:`StageModel`, with ``c_i = min(1, C / (‖∇_θ ℓ_i‖ + 10⁻⁶))`` (opacus' flat
    per-sample clipping, the same formula) and ``ℓ_i`` the cross-entropy of row ``i``, without per-sample gradients.

    Rows are independent samples here (MLPs, one-group GroupNorm and the row-wise L2 normalisation act on each
    row alone; the graph only enters through the cached aggregates ``xs``), so with one backward pass of
    ``Σ_i ℓ_i`` the output gradient ``g_i`` of a layer is sample ``i``'s own and the per-sample gradients are
    exact products (Goodfellow 2015; the "ghost clipping" of Li et al. 2022, here with one row per sample):

    - ``Linear`` ``z = a Wᵀ + b``: ``∇_W ℓ_i = g_i a_iᵀ`` with ``‖g_i a_iᵀ‖ = ‖g_i‖·‖a_i‖``; ``∇_b ℓ_i = g_i``;
      the clipped weight sum is one product ``(c ⊙ g)ᵀ a``.
    - ``GroupNorm`` ``z = x̂ ⊙ γ + β``: ``∇_γ ℓ_i = g_i ⊙ x̂_i``, ``∇_β ℓ_i = g_i``.

    One forward and one backward of the batch (no parameter gradients) plus a few ``B × d`` products, instead of
    opacus' hooks materialising ``B`` gradients per parameter; the row-shaped gradients (biases, GroupNorm) are
    clipped and summed in one concatenated ``B × Σd`` block. The model's structure is read once here (trainable
    ``Linear`` and affine ``GroupNorm`` layers; parameter-free or frozen modules such as activations and dropout
    run as they are; anything else is refused), so a stage's steps reuse it; parameters must not be frozen or
    unfrozen afterwards. ``params`` (default: the trainable parameters of ``model``; those of the optimizer) are the
    parameters clipped together, in the output order.
    """

    def __init__(self, model: StageModel, params: Sequence[nn.Parameter] | None = None) -> None:
        if not isinstance(model, StageModel):
            raise ValueError(f"ghost clipping needs a StageModel, got {type(model).__name__}")
        self.model = model
        self.params = [p for p in model.parameters() if p.requires_grad] if params is None else list(params)
        self.bases = [self._plan(base) for base in model.bases]
        self.head = self._plan(model.head)
        self._ids = {id(p) for p in self.params}
        reached = {id(p) for _, m in self._recorded() for p in m.parameters()}
        missing = [i for i, p in enumerate(self.params) if id(p) not in reached]
        if missing or not self.params:
            raise ValueError(
                f"parameters {missing} are not trainable parameters of the model's Linear / GroupNorm layers"
                if missing
                else "the model has no trainable parameters"
            )

    def _recorded(self) -> list[tuple[str, nn.Module]]:
        return [(kind, m) for plan in (*self.bases, self.head) for kind, m in plan if kind != "plain"]

    @staticmethod
    def _plan(module: nn.Module) -> list[tuple[str, nn.Module]]:
        plan = []
        for leaf in _leaves(module):
            trainable = [p.requires_grad for p in leaf.parameters()]
            if not any(trainable):
                plan.append(("plain", leaf))  # activation, dropout, or frozen
            elif isinstance(leaf, nn.Linear):
                plan.append(("linear", leaf))
            elif isinstance(leaf, nn.GroupNorm) and leaf.affine:
                plan.append(("groupnorm", leaf))
            else:
                raise ValueError(
                    f"ghost clipping supports trainable Linear and GroupNorm layers, not "
                    f"{type(leaf).__name__} (BatchNorm mixes samples: see batchnorm_to_groupnorm; "
                    f"other layers: per_sample='opacus')"
                )
        return plan

    @staticmethod
    def _run(plan: list[tuple[str, nn.Module]], x: Tensor, records: list) -> Tensor:
        for kind, m in plan:
            if kind == "plain":
                x = m(x)
                continue
            if kind == "linear":
                if x.dim() != 2:
                    raise ValueError("ghost clipping needs one row per sample ([B, d] inputs)")
                stored, x = x, F.linear(x, m.weight, m.bias)
            else:
                stored = F.group_norm(x, m.num_groups, None, None, m.eps)
                x = torch.addcmul(m.bias, stored, m.weight)
            records.append((kind, m, stored, x))
        return x

    def __call__(self, xs: Sequence[Tensor], y: Tensor, max_norm: float) -> tuple[list[Tensor], Tensor]:
        """The clipped sums (in the order of ``params``) and the per-sample gradient norms ``‖∇_θ ℓ_i‖``."""
        model = self.model
        if len(xs) != len(self.bases):
            raise ValueError(f"stage {model.stage} expects {len(self.bases)} inputs, got {len(xs)}")
        records: list[tuple[str, nn.Module, Tensor, Tensor]] = []
        h = torch.cat([self._run(plan, x, records) for plan, x in zip(self.bases, xs)], dim=-1)
        if model.normalize_jk:
            h = F.normalize(h, p=2.0, dim=-1)
        logits = self._run(self.head, h, records)
        # autograd computes only what the recorded outputs need: no parameter gradients, no input gradients
        grads = torch.autograd.grad(F.cross_entropy(logits, y, reduction="sum"), [r[3] for r in records])
        with torch.no_grad():
            rows: list[tuple[nn.Parameter, Tensor]] = []  # per-sample gradients that are rows: [B, numel]
            outer: list[tuple[nn.Parameter, Tensor, Tensor]] = []  # Linear weights: (W, a, g)
            for (kind, m, stored, _), g in zip(records, grads):
                if id(m.weight) in self._ids:
                    if kind == "linear":
                        outer.append((m.weight, stored, g))
                    else:
                        rows.append((m.weight, g * stored))
                if m.bias is not None and id(m.bias) in self._ids:
                    rows.append((m.bias, g))
            sq = torch.zeros(y.numel(), dtype=logits.dtype, device=logits.device)
            if rows:
                block = torch.cat([u for _, u in rows], dim=1)
                sq += (block * block).sum(1)
            if outer:
                prod = torch.stack([row_norms(a) * torch.linalg.vector_norm(g, dim=1) for _, a, g in outer])
                sq += (prod * prod).sum(0)
            norms = sq.sqrt()
            c = (max_norm / (norms + 1e-6)).clamp(max=1.0)
            sums: dict[int, Tensor] = {}
            if rows:
                for (p, _), v in zip(rows, torch.split(c @ block, [u.size(1) for _, u in rows])):
                    sums[id(p)] = v
            cc = c.unsqueeze(1)
            for p, a, g in outer:
                sums[id(p)] = torch.mm((g * cc).T, a)
        return [sums[id(p)].view_as(p) for p in self.params], norms


def clipped_grad_sum(
    model: StageModel, xs: Sequence[Tensor], y: Tensor, max_norm: float, params: Sequence[nn.Parameter] | None = None
) -> tuple[list[Tensor], Tensor]:
    """One call of :class:`GhostClipper`: ``Σ_i clip_C(∇_θ ℓ_i)`` (in the order of ``params``) and the per-sample
    gradient norms ``‖∇_θ ℓ_i‖``, equal to opacus' per-sample clipping (tested)."""
    return GhostClipper(model, params)(xs, y, max_norm)


class SAGEClassifier(nn.Module):
    """GraphSAGE as the ProGAP/GAP repos use it (docs/papers/progap.md#baselines): base MLP → ``layers`` × ``SAGEConv``
    (mean aggregation by default, root weight, L2-normalised outputs, SELU) → jumping knowledge (concatenation of the
    base output and every layer) → head MLP. ``layers = 0`` is a plain MLP."""

    def __init__(
        self,
        in_dim: int,
        hidden: int,
        num_classes: int,
        *,
        layers: int = 2,
        base_layers: int = 2,
        head_layers: int = 1,
        aggr: str = "mean",
        activation: str = "selu",
        norm: str = "batch",
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        from torch_geometric.nn import SAGEConv

        _check_int(layers, "layers", 0)
        self.base = MLP(in_dim, hidden, base_layers, dropout=dropout, activation=activation, norm=norm)
        self.convs = nn.ModuleList(
            SAGEConv(hidden, hidden, aggr=aggr, normalize=True, root_weight=True) for _ in range(layers)
        )
        self.act = ACTIVATIONS[activation]()
        self.head = MLP(
            hidden * (layers + 1),
            hidden,
            head_layers,
            out_dim=num_classes,
            dropout=dropout,
            activation=activation,
            norm=norm,
            plain_last=True,
        )

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Logits of every node: base MLP, the SAGE layers on ``edge_index``, JK concatenation, head MLP."""
        h = self.base(x)
        hs = [h]
        for conv in self.convs:
            h = self.act(conv(h, edge_index))
            hs.append(h)
        return self.head(torch.cat(hs, dim=-1))
