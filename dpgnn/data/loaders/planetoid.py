"""Planetoid citation graphs (Cora, CiteSeer, PubMed) from the ``ind.<name>.*`` files of kimiyoung/planetoid.

Reproduces PyG's ``Planetoid`` parsing: ``x``/``tx``/``allx`` are pickled scipy sparse matrices, ``y``/``ty``/
``ally`` one-hot numpy arrays, ``graph`` an adjacency dict, ``test.index`` the test node ids (one per line).
Nodes are ordered ``allx`` then ``tx``, with the test rows put back at their ids; CiteSeer's test ids are not
contiguous (15 isolated papers without features), so zero rows (label 0) fill the gaps. The public split is
train = the first ``len(y)`` nodes, val = the next 500, test = the 1,000 ``test.index`` nodes.
"""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

from dpgnn.data.loaders.raw_names import PLANETOID_PARTS
from dpgnn.data.transforms import index_to_mask, undirected_edges


def _unpickle(path: Path):
    with open(path, "rb") as f, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pickle.load(f, encoding="latin1")


def _dense(obj) -> np.ndarray:
    arr = obj.toarray() if hasattr(obj, "toarray") else np.asarray(obj)
    return np.asarray(arr, dtype=np.float32)


def read_planetoid(paths: dict[str, Path], prefix: str) -> Data:
    """The Planetoid graph ``prefix`` (``"cora"``, ``"citeseer"`` or ``"pubmed"``) from its eight ``ind.<prefix>.*``
    files (``paths`` by raw name), with the public split as ``train/val/test_mask`` (see the module docstring)."""
    get = {p: paths[f"ind.{prefix}.{p}"] for p in PLANETOID_PARTS}
    x, tx, allx = (_dense(_unpickle(get[k])) for k in ("x", "tx", "allx"))
    y, ty, ally = (_dense(_unpickle(get[k])) for k in ("y", "ty", "ally"))
    graph = _unpickle(get["graph"])
    test_index = torch.tensor([int(line) for line in get["test.index"].read_text().split()], dtype=torch.long)
    sorted_test = test_index.sort().values

    if prefix == "citeseer":
        lo, hi = int(test_index.min()), int(test_index.max())
        tx_ext = np.zeros((hi - lo + 1, tx.shape[1]), dtype=np.float32)
        ty_ext = np.zeros((hi - lo + 1, ty.shape[1]), dtype=np.float32)
        tx_ext[(sorted_test - lo).numpy()] = tx
        ty_ext[(sorted_test - lo).numpy()] = ty
        tx, ty = tx_ext, ty_ext

    feats = torch.from_numpy(np.concatenate([allx, tx], axis=0))
    feats[test_index] = feats[sorted_test].clone()
    onehot = torch.from_numpy(np.concatenate([ally, ty], axis=0))
    labels = onehot.argmax(dim=1)
    labels[test_index] = labels[sorted_test].clone()
    n = labels.numel()

    rows, cols = [], []
    for src, nbrs in graph.items():
        rows.extend([int(src)] * len(nbrs))
        cols.extend(int(v) for v in nbrs)
    edge_index = undirected_edges(torch.tensor([rows, cols], dtype=torch.long), n)

    n_train = y.shape[0]
    n_val_end = min(n_train + 500, allx.shape[0])  # always n_train + 500 on the real files
    return Data(
        x=feats.contiguous(),
        y=labels.long(),
        edge_index=edge_index,
        train_mask=index_to_mask(torch.arange(n_train), n),
        val_mask=index_to_mask(torch.arange(n_train, n_val_end), n),
        test_mask=index_to_mask(test_index, n),
        num_nodes=n,
    )
