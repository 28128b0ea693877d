"""DRW's data: :class:`DRWData`, :func:`prepare`, :func:`scale_features` and the full graph's
:func:`normalized_adjacency` (docs/papers/drw.md#data); the paper's constants are in :mod:`.paper`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor
from torch_geometric.utils import subgraph

from dpgnn.data import load_dataset
from dpgnn.data.transforms import clean_edges
from dpgnn.methods.drw.paper import _LOAD, INDUCTIVE, _dataset_key
from dpgnn.nn.lpgnn import normalized_adjacency as gcn_adjacency
from dpgnn.utils import check_features


# ---------------------------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class DRWData:
    """A dataset as the DRW code uses it (docs/papers/drw.md#data)."""

    name: str
    x: Tensor  # standardised with training-node statistics
    y: Tensor  # [N] classes or [N, C] multi-label {0, 1}
    num_classes: int
    multilabel: bool
    train: np.ndarray
    val: Tensor
    test: Tensor
    edge_index: Tensor  # full graph, no self-loops (evaluation)
    train_edge_index: Tensor  # training graph (= full graph when transductive; induced on train nodes else)
    adj_full: Tensor = field(repr=False)  # sparse Â of the full graph
    inductive: bool = False
    scaling: str = "train_zscore"  # see SCALINGS
    edge_input: str = "edge_index as given"  # what prepare's clean_edges did (repeated pairs, self-loops)

    @property
    def num_nodes(self) -> int:
        """The number of nodes of the full graph."""
        return int(self.x.shape[0])

    @property
    def num_train(self) -> int:
        """The number of training nodes."""
        return int(len(self.train))


def normalized_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Sparse (CSR tensor) ``D^{-1/2}(A+I)D^{-1/2}``: :func:`dpgnn.nn.lpgnn.normalized_adjacency` with self-loops
    (the one implementation; on DRW's undirected, loop-free graphs the same CSR entries, bit for bit, as the
    formula this module computed itself before)."""
    return gcn_adjacency(edge_index, num_nodes, self_loops=True).csr


#: feature scalings: the paper's z-score with training-node statistics (reads private data), or none (raw)
SCALINGS = ("train_zscore", "none")


def scale_features(x: Tensor, train: Tensor, scaling: str = "train_zscore") -> Tensor:
    """``train_zscore``: ``(x − μ_train)/σ_train`` per column (σ = 0 → 1), the authors' preprocessing, which reads
    every training node's features; ``none``: ``x`` unchanged (reads no statistic: row ``i`` depends on node ``i``
    alone)."""
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    x = check_features(x, "data.x (node features)").to(torch.float32)
    if scaling == "none":
        return x.clone()
    mu = x[train].mean(0)
    sd = x[train].std(0, unbiased=False)
    sd = torch.where(sd > 0, sd, torch.ones_like(sd))
    return (x - mu) / sd


def prepare(name: str, data=None, *, scaling: str = "train_zscore") -> DRWData:
    """Load ``name`` (variant ``drw``), drop self-loops, scale features (:func:`scale_features`; the paper's
    z-score with training-node statistics by default, ``scaling="none"`` for the sound mode).

    The graph (public in DRW's feature-level setting) is the simple graph of ``data.edge_index``: self-loops
    removed and repeated pairs merged (:func:`dpgnn.data.transforms.clean_edges`; a repeated pair would double a
    neighbour's chance in the walks), directions as given; ``edge_input`` records what was done."""
    key = _dataset_key(name) if data is None else str(name).lower()
    if data is None:
        data = load_dataset(_LOAD.get(key, key), variant="drw")
    n = int(data.num_nodes)
    ei, cleaning = clean_edges(data.edge_index, n, self_loops="remove", owner="DRW")
    ei = ei.long()
    train = torch.nonzero(data.train_mask).view(-1)
    x = scale_features(data.x, train, scaling)
    y = data.y
    multilabel = y.dim() == 2
    num_classes = int(y.shape[1]) if multilabel else int(y.max()) + 1
    inductive = key in INDUCTIVE
    train_ei = subgraph(train, ei, num_nodes=n)[0] if inductive else ei
    return DRWData(
        name=key,
        x=x,
        y=y.float() if multilabel else y.long(),
        num_classes=num_classes,
        multilabel=multilabel,
        train=train.numpy(),
        val=torch.nonzero(data.val_mask).view(-1),
        test=torch.nonzero(data.test_mask).view(-1),
        edge_index=ei,
        train_edge_index=train_ei,
        adj_full=normalized_adjacency(ei, n),
        inductive=inductive,
        scaling=scaling,
        edge_input=cleaning.describe(),
    )
