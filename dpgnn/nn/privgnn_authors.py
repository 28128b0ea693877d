"""The teacher network of PrivGNN's official code (iyempissy/privGnn), kept apart from the paper's model.

The paper (Olatunji et al., TMLR 2023, Sec. 4.1 / App. G.1) describes a 2-layer GraphSAGE (d→64→c). The official
code's ``SAGE`` class is built with ``num_layers = 4``: ``num_layers − 2 = 2`` hidden SAGE layers, each followed by
BatchNorm → ReLU → dropout, then the output SAGE layer, i.e. d→64→64→c; it also creates a "feature" SAGE head
64→d that the logit path never uses (it only adds parameters, which an optimiser over ``model.parameters()``
holds without ever updating: they receive no gradient). :class:`AuthorsCodeSAGE` is that network, used only by
:func:`dpgnn.methods.privgnn.authors_code_teacher_posteriors` (``fidelity="authors_code"``).
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import SAGEConv

__all__ = ["AuthorsCodeSAGE"]


class AuthorsCodeSAGE(nn.Module):
    """d→64→64→c GraphSAGE (mean) with BatchNorm → ReLU → dropout after each hidden layer, log-softmax output, and
    the official code's unused 64→d ``feature`` head."""

    def __init__(
        self, in_channels: int, hidden_channels: int, out_channels: int, dropout: float = 0.5, num_layers: int = 4
    ) -> None:
        super().__init__()
        if num_layers < 3:
            raise ValueError(
                f"num_layers must be >= 3 (the official code's count, = hidden layers + 2), got {num_layers}"
            )
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout}")
        self.dropout = float(dropout)
        dims = [in_channels] + [hidden_channels] * (num_layers - 2)
        self.convs = nn.ModuleList(SAGEConv(a, b, aggr="mean") for a, b in zip(dims[:-1], dims[1:]))
        self.bns = nn.ModuleList(nn.BatchNorm1d(hidden_channels) for _ in range(num_layers - 2))
        self.out = SAGEConv(hidden_channels, out_channels, aggr="mean")
        # the official code's "feature" head: unused by forward
        self.feature = SAGEConv(hidden_channels, in_channels, aggr="mean")

    def reset_parameters(self) -> None:
        """Re-initialise every convolution, BatchNorm (running statistics included) and the unused feature head."""
        for m in [*self.convs, *self.bns, self.out, self.feature]:
            m.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Log-probabilities [N, c] of every node of the graph ``(x, edge_index)``."""
        for conv, bn in zip(self.convs, self.bns):
            x = F.dropout(F.relu(bn(conv(x, edge_index))), p=self.dropout, training=self.training)
        return F.log_softmax(self.out(x, edge_index), dim=-1)
