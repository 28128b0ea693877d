"""The official code's split (``fidelity="authors_code"``; docs/papers/privgnn.md#data-and-splits): public train
and public test drawn from all nodes, so they overlap the private nodes and each other."""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data import load_dataset
from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.privgnn.data import PrivGNNData
from dpgnn.methods.privgnn.paper import dataset_info
from dpgnn.utils import check_features, make_generator, stable_seed

#: the official code's split sizes (``preprocess_datasets.get_inductive_spilt``): private nodes per class, public
#: train, public test; only the datasets whose split the official repository holds
AUTHORS_SPLITS: dict[str, tuple[int, int, int]] = {"amazon": (250, 3000, 3000), "reddit": (300, 15000, 15000)}


def authors_code_split_nodes(name: str, y: Tensor, *, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    """Node ids (private, public train, public test) of the official code's split (:func:`authors_code_split`)."""
    if name not in AUTHORS_SPLITS:
        raise ValueError(f"the official code's split is known for {sorted(AUTHORS_SPLITS)}, not {name!r}")
    per_class, n_tr, n_te = AUTHORS_SPLITS[name]
    n = y.numel()
    if n_tr > n or n_te > n:
        raise ValueError(f"{name}: {n_tr}/{n_te} public nodes asked for, the graph has {n}")
    gen = make_generator(stable_seed(seed, "authors-split"))
    priv = torch.cat(
        [
            (y == c).nonzero().view(-1)[torch.randperm(int((y == c).sum()), generator=gen)[:per_class]]
            for c in torch.unique(y[y >= 0]).tolist()
        ]
    )
    priv = priv[torch.randperm(priv.numel(), generator=gen)]
    return priv, torch.randperm(n, generator=gen)[:n_tr], torch.randperm(n, generator=gen)[:n_te]


def authors_code_graph(name: str, *, root=None) -> Data:
    """The whole graph of a PrivGNN dataset (our split's masks are ignored by the official code's split)."""
    info = dataset_info(name)
    return load_dataset(info.load[0], variant=info.load[1], **({} if root is None else {"root": root}))


def authors_code_split(name: str, *, seed: int, root=None, data: Data | None = None) -> PrivGNNData:
    """G† and G split as the official code splits them (``fidelity="authors_code"``;
    docs/papers/privgnn.md#data-and-splits).

    The private set is as ours (``AUTHORS_SPLITS`` nodes per class). The public sets are meant to come from the
    other nodes and to be disjoint, but the official code tests whether a Python ``int`` is in a set of 0-d tensors,
    which never holds (tensors hash by identity): public train and public test are two independent uniform samples
    of *all* nodes. A public-test node can therefore be a private node (B1 and B3 trained on its label) or a
    public-train node (B2, B3 and the queries). The public graph's rows are the concatenation [public train; public
    test] with both copies of a repeated node; its edges are induced on that list and attach to the later copy, as
    PyG's ``subgraph`` relabels by index assignment (the last write wins), so the earlier copy is isolated. One
    split per ``seed`` (the official code draws one per run); the public-train order is the sample order (queries =
    prefix). ``data``: the graph of :func:`authors_code_graph`, when the caller has already loaded it.
    """
    data = authors_code_graph(name, root=root) if data is None else data
    data, cleaning = with_clean_edges(data, owner="PrivGNN")  # repeated pairs merged, as prepare_from_data
    y = data.y.long()
    priv, tr, te = authors_code_split_nodes(name, y, seed=seed)
    x = check_features(data.x, "data.x (node features)").to(torch.float32)
    pub = torch.cat([tr, te])
    return PrivGNNData(
        name,
        x[priv],
        y[priv],
        _relabel_onto(data.edge_index, priv, data.num_nodes),
        x[pub],
        y[pub],
        _relabel_onto(data.edge_index, pub, data.num_nodes),
        torch.arange(tr.numel()),
        torch.arange(tr.numel(), pub.numel()),
        int(y.max()) + 1,
        edge_input=cleaning.describe(),
    )


def _relabel_onto(edge_index: Tensor, nodes: Tensor, n: int) -> Tensor:
    """Edges among ``nodes`` relabelled to positions in ``nodes``; a node listed twice takes its last position (the
    other copy keeps no edges), as PyG's ``subgraph(nodes, ..., relabel_nodes=True)`` does."""
    pos = torch.full((n,), -1, dtype=torch.long)
    pos.scatter_reduce_(0, nodes, torch.arange(nodes.numel()), reduce="amax")  # the last occurrence wins
    keep = (pos[edge_index[0]] >= 0) & (pos[edge_index[1]] >= 0)
    return pos[edge_index[:, keep]]


def split_overlap(priv: Tensor, train: Tensor, test: Tensor) -> dict[str, float]:
    """Shares of the public-test nodes that are also private nodes and that are also public-train nodes, and of the
    public-train nodes that are private (all 0 for a disjoint split such as ours)."""
    te = test.tolist()
    p, t = set(priv.tolist()), set(train.tolist())
    return {
        "test_in_private": sum(v in p for v in te) / len(te),
        "test_in_train": sum(v in t for v in te) / len(te),
        "train_in_private": sum(v in p for v in train.tolist()) / train.numel(),
    }
