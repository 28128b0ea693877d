"""Building blocks of ProGAP (Sajadmanesh & Gatica-Perez, WSDM 2024) and of its MLP-based baselines.

- :class:`MLP`: ``Linear → activation → norm → dropout`` per layer (norm AFTER the activation, as the authors'
  code); ``plain_last=True`` leaves the last layer a bare ``Linear`` (heads), ``False`` keeps activation + norm on
  it too (base MLPs).
- :class:`StageModel`: stage ``s`` of the progressive model: base MLPs ``0..s`` (one per cached input
  ``X̃^(k)``), jumping knowledge by concatenation, row-wise L2 normalisation of the JK output (present in the
  authors' code, not in the paper; spec 3.2) and a head MLP producing logits.
- :func:`batchnorm_to_groupnorm`: replaces every ``BatchNorm1d`` by ``GroupNorm`` with ONE group (the authors'
  opacus fixer): per-sample normalisation, so per-sample gradients stay those of independent samples.

Every module here takes tensors of independent rows (no message passing): the graph only enters through the
cached, already privatised aggregates, which is what makes DP-SGD through opacus valid (spec 3.4).
"""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["MLP", "StageModel", "SAGEClassifier", "batchnorm_to_groupnorm", "ACTIVATIONS"]

ACTIVATIONS = {"selu": nn.SELU, "relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU}


def _check_int(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


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

    def __init__(self, in_dim: int, hidden: int, num_layers: int, out_dim: int | None = None, *, dropout: float = 0.0,
                 activation: str = "selu", norm: str = "batch", plain_last: bool = False) -> None:
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
        for layer in self.layers:
            x = layer(x)
        return x


class StageModel(nn.Module):
    """ProGAP sub-model ``M_s``: ``head( L2norm( cat_k base_k(X̃^(k)) ) )`` for ``k = 0..s`` (spec 3.2).

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
        return len(self.bases) - 1

    def jk(self, xs: Sequence[Tensor]) -> Tensor:
        if len(xs) != len(self.bases):
            raise ValueError(f"stage {self.stage} expects {len(self.bases)} inputs X̃^(0..{self.stage}), "
                             f"got {len(xs)}")
        h = torch.cat([base(x) for base, x in zip(self.bases, xs)], dim=-1)
        return F.normalize(h, p=2.0, dim=-1) if self.normalize_jk else h

    def forward(self, *xs: Tensor) -> Tensor:
        return self.head(self.jk(xs))

    @torch.no_grad()
    def embed(self, x_last: Tensor) -> Tensor:
        """``X^(s)``: the last base's output on its input (the embedding aggregated by the next NAP query)."""
        return self.bases[-1](x_last)


def batchnorm_to_groupnorm(module: nn.Module) -> nn.Module:
    """Replace every ``BatchNorm1d`` in ``module`` (in place, returned) by ``GroupNorm(1, C)`` (spec 3.4).

    BatchNorm mixes the samples of a batch, which breaks per-sample gradient clipping; one-group GroupNorm
    normalises each sample on its own (equivalent to a LayerNorm with an affine per channel).
    """
    for name, child in list(module.named_children()):
        if isinstance(child, nn.BatchNorm1d):
            setattr(module, name, nn.GroupNorm(1, child.num_features, affine=child.affine))
        else:
            batchnorm_to_groupnorm(child)
    return module


class SAGEClassifier(nn.Module):
    """GraphSAGE as the ProGAP/GAP repos use it (spec 3.6): base MLP → ``layers`` × ``SAGEConv`` (mean
    aggregation by default, root weight, L2-normalised outputs, SELU) → jumping knowledge (concatenation of the base
    output and every layer) → head MLP. ``layers = 0`` is a plain MLP."""

    def __init__(self, in_dim: int, hidden: int, num_classes: int, *, layers: int = 2, base_layers: int = 2,
                 head_layers: int = 1, aggr: str = "mean", activation: str = "selu", norm: str = "batch",
                 dropout: float = 0.0) -> None:
        super().__init__()
        from torch_geometric.nn import SAGEConv

        _check_int(layers, "layers", 0)
        self.base = MLP(in_dim, hidden, base_layers, dropout=dropout, activation=activation, norm=norm)
        self.convs = nn.ModuleList(SAGEConv(hidden, hidden, aggr=aggr, normalize=True, root_weight=True)
                                   for _ in range(layers))
        self.act = ACTIVATIONS[activation]()
        self.head = MLP(hidden * (layers + 1), hidden, head_layers, out_dim=num_classes, dropout=dropout,
                        activation=activation, norm=norm, plain_last=True)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        h = self.base(x)
        hs = [h]
        for conv in self.convs:
            h = self.act(conv(h, edge_index))
            hs.append(h)
        return self.head(torch.cat(hs, dim=-1))
