"""PrivGNN's data: the private graph G† and the public graph G of one dataset (docs/papers/privgnn.md#data-and-splits),
the query order, and the flipped split of App. D.2; the datasets' settings are in :mod:`.paper`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data import load_dataset
from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.privgnn.paper import GLOBAL_SEED, STANDARDIZED, dataset_info
from dpgnn.nn.privgnn import mean_neighbours
from dpgnn.utils import check_features, make_generator, stable_seed


# the two graphs
@dataclass
class PrivGNNData:
    """The private graph (``x_priv``, ``y_priv``, ``edge_priv`` relabelled 0..|V†|-1) and the public graph
    (``x_pub``, ``y_pub``, ``edge_pub``; ``pub_train`` in a random order -- queries are its prefix -- and
    ``pub_test``), plus shared preprocessing of the public graph (neighbour means, CSR of in-neighbours)."""

    name: str
    x_priv: Tensor
    y_priv: Tensor
    edge_priv: Tensor
    x_pub: Tensor
    y_pub: Tensor
    edge_pub: Tensor
    pub_train: Tensor
    pub_test: Tensor
    num_classes: int
    #: feature columns z-scored with statistics of all nodes, private ones included (Credit): a preprocessing
    #: statistic the ε does not cover
    standardized: bool = False
    #: what :func:`dpgnn.data.transforms.clean_edges` merged in the input graph (repeated pairs counted once)
    edge_input: str = "edge_index as given"
    agg_pub: Tensor = field(init=False)
    csr_ptr: Tensor = field(init=False)
    csr_idx: Tensor = field(init=False)

    def __post_init__(self) -> None:
        n = self.x_pub.size(0)
        self.agg_pub = mean_neighbours(self.x_pub, self.edge_pub, n)
        src, dst = self.edge_pub
        order = torch.argsort(dst, stable=True)
        self.csr_idx = src[order]
        self.csr_ptr = torch.zeros(n + 1, dtype=torch.long)
        self.csr_ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)

    @property
    def num_private(self) -> int:
        """|V†|: the number of private nodes."""
        return int(self.x_priv.size(0))

    @property
    def num_features(self) -> int:
        """d: the dimension of the node features."""
        return int(self.x_priv.size(1))

    def stats(self) -> dict[str, Any]:
        """Table 11 statistics: |V†|, |E†|, |V|, |E| (directed edge_index entries), public train/test sizes."""
        return {
            "dataset": self.name,
            "private_nodes": self.num_private,
            "private_edges": int(self.edge_priv.size(1)),
            "public_nodes": int(self.x_pub.size(0)),
            "public_edges": int(self.edge_pub.size(1)),
            "public_train": int(self.pub_train.numel()),
            "public_test": int(self.pub_test.numel()),
            "features": self.num_features,
            "classes": self.num_classes,
        }


def _induced(edge_index: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Edges among ``mask`` nodes, relabelled; also returns the old → new index map."""
    idx = torch.full((mask.numel(),), -1, dtype=torch.long)
    idx[mask] = torch.arange(int(mask.sum()))
    keep = mask[edge_index[0]] & mask[edge_index[1]]
    return idx[edge_index[:, keep]], idx


def _standardize(x: Tensor) -> Tensor:
    mu, sd = x.mean(0), x.std(0)
    return (x - mu) / torch.where(sd > 0, sd, torch.ones_like(sd))


def prepare_from_data(
    data: Data, name: str, *, order_seed: int = GLOBAL_SEED, standardize: bool = False
) -> PrivGNNData:
    """Split a graph carrying ``private_mask``/``public_train_mask``/``public_test_mask`` into G† and G
    (docs/papers/privgnn.md#data-and-splits).

    ``order_seed`` orders the public-train nodes randomly (the query set is its first |Q| entries).
    ``standardize`` z-scores the feature columns (used for Credit, whose raw columns span 0..10^6).
    Both graphs are induced on the simple graph of ``data.edge_index`` (repeated pairs merged: a repeated pair
    would weigh twice in the neighbour means; directions as given; :func:`dpgnn.data.transforms.clean_edges`).
    """
    data, cleaning = with_clean_edges(data, owner="PrivGNN")
    x = check_features(data.x, "data.x (node features)").to(torch.float32)
    if standardize:
        x = _standardize(x)
    y = data.y.long()
    edge_priv, _ = _induced(data.edge_index, data.private_mask)
    pub_mask = data.public_train_mask | data.public_test_mask
    edge_pub, pub_map = _induced(data.edge_index, pub_mask)
    tr = pub_map[data.public_train_mask.nonzero().view(-1)]
    te = pub_map[data.public_test_mask.nonzero().view(-1)]
    tr = tr[torch.randperm(tr.numel(), generator=make_generator(order_seed))]
    classes = int(y.max()) + 1
    return PrivGNNData(
        name,
        x[data.private_mask],
        y[data.private_mask],
        edge_priv,
        x[pub_mask],
        y[pub_mask],
        edge_pub,
        tr,
        te,
        classes,
        standardized=bool(standardize),
        edge_input=cleaning.describe(),
    )


def prepare(name: str, *, order_seed: int = GLOBAL_SEED, root=None) -> PrivGNNData:
    """Load a PrivGNN dataset (``DATASETS`` key) with its private/public split; raises ``DatasetUnavailable``."""
    info = dataset_info(name)
    kwargs = {} if root is None else {"root": root}
    data = load_dataset(info.load[0], variant=info.load[1], **kwargs)
    return prepare_from_data(data, name, order_seed=order_seed, standardize=name in STANDARDIZED)


def query_nodes(graphs: PrivGNNData, num_queries: int) -> Tensor:
    """The first ``num_queries`` public-train nodes (indices into the public graph)."""
    n_tr = int(graphs.pub_train.numel())
    if isinstance(num_queries, bool) or not isinstance(num_queries, (int, np.integer)) or num_queries < 1:
        raise ValueError(f"num_queries must be an integer >= 1, got {num_queries!r}")
    if num_queries > n_tr:
        raise ValueError(
            f"num_queries={num_queries} is larger than the public train set ({n_tr} nodes); |Q| must lie in [1, {n_tr}]"
        )
    return graphs.pub_train[:num_queries]


def flip(graphs: PrivGNNData, *, order_seed: int = GLOBAL_SEED) -> PrivGNNData:
    """The private and public portions exchanged (App. D.2 / Fig. 6): the public graph becomes the private one and
    the private graph the public one. The new public nodes are split into train/test in the original public
    graph's train fraction (Amazon: 3000/6000, so 2500 → 1250 train in a random order from ``order_seed``, whose
    prefix is the query set, and 1250 test). Neighbour-mean caches are rebuilt for the new public graph."""
    n = graphs.num_private
    frac = graphs.pub_train.numel() / (graphs.pub_train.numel() + graphs.pub_test.numel())
    n_tr = int(round(n * frac))
    if not 1 <= n_tr < n:
        raise ValueError(f"cannot split the {n} flipped public nodes into train/test with fraction {frac:g}")
    perm = torch.randperm(n, generator=make_generator(stable_seed(order_seed, "flip")))
    return PrivGNNData(
        f"{graphs.name} (flipped)",
        graphs.x_pub,
        graphs.y_pub,
        graphs.edge_pub,
        graphs.x_priv,
        graphs.y_priv,
        graphs.edge_priv,
        perm[:n_tr],
        torch.sort(perm[n_tr:]).values,
        graphs.num_classes,
        standardized=graphs.standardized,
    )
