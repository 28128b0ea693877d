"""Elliptic Bitcoin transaction graph (Weber et al., "Anti-Money Laundering in Bitcoin", KDD-DLF 2019).

Raw files (Kaggle "elliptic_bitcoin_dataset", zipped one by one by PyG at data.pyg.org/datasets/elliptic):
``elliptic_txs_features.csv`` (no header: txId, time step, 165 features), ``elliptic_txs_classes.csv``
(``txId,class`` with "1" illicit, "2" licit, "unknown"), ``elliptic_txs_edgelist.csv`` (``txId1,txId2``).
Following LPGCN (docs/papers/lpgcn.md#data-and-splits): ``x`` = the 166 columns after txId (time step included), ``y`` =
raw class - 1 (0 illicit, 1 licit), -1 for unknown; ``labeled_mask``; ``time_step``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from dpgnn.data.loaders.archives import open_member
from dpgnn.data.transforms import undirected_edges


def _read(path: Path, member: str, **kw) -> pd.DataFrame:
    if str(path).endswith(".zip"):
        with open_member(path, member) as fh:
            return pd.read_csv(fh, **kw)
    return pd.read_csv(path, **kw)


def read_elliptic(paths: dict[str, Path]) -> Data:
    """The Elliptic graph from its three zipped csv files (``paths`` by raw name), nodes in the order of
    ``elliptic_txs_features.csv``: ``x`` (166 columns), ``y`` (0 illicit, 1 licit, -1 unknown), ``labeled_mask``,
    ``time_step`` (1..49) and the undirected transaction edges."""
    feats = _read(paths["elliptic_txs_features.csv.zip"], "elliptic_txs_features.csv", header=None)
    classes = _read(paths["elliptic_txs_classes.csv.zip"], "elliptic_txs_classes.csv")
    edges = _read(paths["elliptic_txs_edgelist.csv.zip"], "elliptic_txs_edgelist.csv")
    tx = feats[0].to_numpy()
    pos = pd.Series(np.arange(len(tx)), index=tx)
    x = torch.from_numpy(feats.iloc[:, 1:].to_numpy(dtype=np.float32))
    lab = classes.set_index("txId")["class"].astype(str).reindex(tx)
    y = torch.from_numpy(lab.map({"1": 0, "2": 1}).fillna(-1).to_numpy(dtype=np.int64))
    ei = np.stack([pos.loc[edges.iloc[:, 0].to_numpy()].to_numpy(), pos.loc[edges.iloc[:, 1].to_numpy()].to_numpy()])
    n = len(tx)
    return Data(
        x=x,
        y=y,
        edge_index=undirected_edges(torch.from_numpy(ei.astype(np.int64)), n),
        num_nodes=n,
        labeled_mask=y >= 0,
        time_step=torch.from_numpy(feats[1].to_numpy(dtype=np.int64)),
    )
