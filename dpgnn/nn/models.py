"""Graph neural network models shared by the method modules.

Every model takes ``(x, edge_index)`` in ``forward`` so that the full-batch loops of :mod:`dpgnn.methods.lpgcn`
can drive any of them. New architectures (SAGE, GAT, MLP, ...) are added here and registered with
:func:`register_model`; :func:`get_model` resolves a name to an instance and lists the valid names when it does
not know one.
"""

from __future__ import annotations

from collections.abc import Callable

import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GCNConv

__all__ = ["GCN", "VGAEEncoder", "MODELS", "register_model", "get_model", "count_parameters"]


class GCN(nn.Module):
    """Two-layer graph convolutional network (Kipf & Welling, ICLR 2017) for node classification.

    ``GCNConv(in → hidden)`` → ReLU → dropout → ``GCNConv(hidden → out)`` → log-softmax. Both convolutions add
    self-loops and use the symmetric normalisation D^{-1/2}(A+I)D^{-1/2}, i.e. the first layer computes exactly the
    graph convolution GC(v) of LPGCN eq. (1) followed by the weight matrix.

    Args:
        in_channels: input feature dimension.
        hidden_channels: width of the hidden layer.
        out_channels: number of classes.
        dropout: dropout probability applied to the hidden representation (between the layers only).
        cached: cache the normalised adjacency after the first call (as the LPGCN authors do). Only valid when
            the model instance always sees the same graph, which is the case in LPGCN's loops
            (:mod:`dpgnn.methods.lpgcn`).
    """

    def __init__(
        self, in_channels: int, hidden_channels: int, out_channels: int, dropout: float = 0.5, cached: bool = False
    ) -> None:
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        self.conv1 = GCNConv(in_channels, hidden_channels, cached=cached)
        self.conv2 = GCNConv(hidden_channels, out_channels, cached=cached)

    @property
    def train_mode_is_eval(self) -> bool:
        """True when training-mode outputs equal eval-mode outputs (no dropout); lets loops share forwards."""
        return self.dropout == 0.0

    def reset_parameters(self) -> None:
        """Re-initialise both convolutions."""
        self.conv1.reset_parameters()
        self.conv2.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Log-probabilities ``(N, out)`` of the nodes ``x`` on the graph ``edge_index``."""
        h = F.relu(self.conv1(x, edge_index))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return F.log_softmax(self.conv2(h, edge_index), dim=-1)


class VGAEEncoder(nn.Module):
    """Encoder of the variational graph auto-encoder used by LPGCN for link prediction
    (docs/papers/lpgcn.md#models-and-training).

    ``GCNConv(in → hidden)`` → BatchNorm → ReLU → dropout, then two ``GCNConv(hidden → out)`` heads giving μ and
    log σ. Returns ``(mu, logstd)`` as :class:`torch_geometric.nn.VGAE` expects.
    """

    def __init__(
        self, in_channels: int, hidden: int = 32, out: int = 16, dropout: float = 0.0, cached: bool = False
    ) -> None:
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        self.conv1 = GCNConv(in_channels, hidden, cached=cached)
        self.bn = nn.BatchNorm1d(hidden)
        self.conv_mu = GCNConv(hidden, out, cached=cached)
        self.conv_logstd = GCNConv(hidden, out, cached=cached)

    def reset_parameters(self) -> None:
        """Re-initialise the convolutions and the batch norm."""
        for m in (self.conv1, self.bn, self.conv_mu, self.conv_logstd):
            m.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """``(μ, log σ)`` of every node's latent vector, each ``(N, out)``."""
        h = F.relu(self.bn(self.conv1(x, edge_index)))
        h = F.dropout(h, p=self.dropout, training=self.training)
        return self.conv_mu(h, edge_index), self.conv_logstd(h, edge_index)


#: name → model factory (a class or any callable returning an ``nn.Module``).
MODELS: dict[str, Callable[..., nn.Module]] = {}


def register_model(name: str, factory: Callable[..., nn.Module]) -> None:
    """Register ``factory`` under ``name`` (lower-case); re-registering a name with another factory is an error."""
    key = name.lower()
    if key in MODELS and MODELS[key] is not factory:
        raise ValueError(f"model name {name!r} is already registered to {MODELS[key]!r}")
    MODELS[key] = factory


def get_model(name: str, **kwargs) -> nn.Module:
    """Instantiate the model registered as ``name`` with ``kwargs``."""
    try:
        factory = MODELS[name.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown model {name!r}; valid names: {sorted(MODELS)}") from None
    return factory(**kwargs)


register_model("gcn", GCN)
register_model("vgae_encoder", VGAEEncoder)


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
