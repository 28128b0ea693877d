"""OGB node-property-prediction datasets (Hu et al., "Open Graph Benchmark", NeurIPS 2020) from their official
zips (``http://snap.stanford.edu/ogb/data/nodeproppred/<name>.zip``), read in place.

Layout: ``<name>/raw/{edge,node-feat,node-label,num-node-list,num-edge-list}.csv.gz`` (no header;
``node_year.csv.gz`` for arxiv) and ``<name>/split/<split>/{train,valid,test}.csv.gz`` (node ids).
Edges are returned undirected (ogbn-arxiv's raw edges are directed citations; ogbn-products' list each
undirected edge once, OGB's ``add_inverse_edge``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from dpgnn.data.loaders.archives import open_member
from dpgnn.data.transforms import index_to_mask, undirected_edges


def _csv(zip_path: Path, suffix: str, dtype) -> np.ndarray:
    with open_member(zip_path, suffix) as fh:
        return np.array(pd.read_csv(fh, compression="gzip", header=None, dtype=dtype).to_numpy(), copy=True)


def read_ogbn(zip_path: Path, name: str, split: str) -> Data:
    """``ogbn-<name>`` from its official zip: ``x``, ``y`` (-1 where OGB's label is NaN), undirected edges,
    ``train/val/test_mask`` from ``split/<split>/`` (e.g. ``"time"`` for arxiv, ``"sales_ranking"`` for products)
    and, for arxiv, ``node_year``."""
    edge = _csv(zip_path, f"{name}/raw/edge.csv.gz", np.int64).T
    x = torch.from_numpy(_csv(zip_path, f"{name}/raw/node-feat.csv.gz", np.float32))
    y = torch.from_numpy(_csv(zip_path, f"{name}/raw/node-label.csv.gz", np.float64)).view(-1)
    y = torch.where(torch.isnan(y), torch.full_like(y, -1), y).long()
    n = x.size(0)
    data = Data(x=x, y=y, edge_index=undirected_edges(torch.from_numpy(np.ascontiguousarray(edge)), n), num_nodes=n)
    for part, key in (("train", "train_mask"), ("valid", "val_mask"), ("test", "test_mask")):
        idx = torch.from_numpy(_csv(zip_path, f"{name}/split/{split}/{part}.csv.gz", np.int64).reshape(-1))
        data[key] = index_to_mask(idx, n)
    if name == "arxiv":
        data.node_year = torch.from_numpy(_csv(zip_path, f"{name}/raw/node_year.csv.gz", np.int64).reshape(-1))
    return data
