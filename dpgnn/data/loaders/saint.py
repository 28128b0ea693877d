"""Flickr (GraphSAINT), Reddit (DGL) and PPI (DGL/GraphSAGE) raw formats, as PyG reads them.

* Flickr (Zeng et al., "GraphSAINT", ICLR 2020): ``adj_full.npz`` (CSR ``data/indices/indptr/shape``),
  ``feats.npy``, ``class_map.json`` (node -> class), ``role.json`` (``tr``/``va``/``te`` node lists).
* Reddit (Hamilton et al., "Inductive Representation Learning on Large Graphs", NeurIPS 2017), DGL's
  ``reddit.zip``: ``reddit_data.npz`` (``feature``, ``label``, ``node_types`` 1/2/3 = train/val/test) and
  ``reddit_graph.npz`` (scipy COO saved with ``save_npz``).
* PPI (Hamilton et al. 2017; Zitnik & Leskovec 2017), DGL's ``ppi.zip``: per split ``{split}_graph.json``
  (networkx node-link), ``{split}_feats.npy``, ``{split}_labels.npy`` (121 binary labels), ``{split}_graph_id.npy``.
  The 24 graphs become one disjoint union with train/val/test masks (20/2/2 graphs) and ``graph_id``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from dpgnn.data.loaders.archives import open_member
from dpgnn.data.transforms import index_to_mask, undirected_edges


def read_flickr(paths: dict[str, Path]) -> Data:
    """Flickr: ``x`` from ``feats.npy``, ``y`` from ``class_map.json`` (-1 for nodes it omits), undirected edges of
    ``adj_full.npz`` and ``train/val/test_mask`` from ``role.json``."""
    with np.load(paths["adj_full.npz"]) as f:
        adj = sp.csr_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"])).tocoo()
    x = torch.from_numpy(np.load(paths["feats.npy"]).astype(np.float32))
    n = x.size(0)
    y = torch.full((n,), -1, dtype=torch.long)
    for k, c in json.loads(Path(paths["class_map.json"]).read_text()).items():
        y[int(k)] = int(c) if not isinstance(c, list) else int(np.argmax(c))
    role = json.loads(Path(paths["role.json"]).read_text())
    ei = torch.from_numpy(np.stack([adj.row, adj.col]).astype(np.int64))
    return Data(
        x=x,
        y=y,
        edge_index=undirected_edges(ei, n),
        num_nodes=n,
        train_mask=index_to_mask(torch.tensor(role["tr"]), n),
        val_mask=index_to_mask(torch.tensor(role["va"]), n),
        test_mask=index_to_mask(torch.tensor(role["te"]), n),
    )


def _npz_member(zip_path: Path, suffix: str):
    with open_member(zip_path, suffix) as fh:
        return io.BytesIO(fh.read())


def read_reddit(paths: dict[str, Path]) -> Data:
    """Reddit from DGL's ``reddit.zip`` (read in place): ``x``, ``y``, undirected edges and
    ``train/val/test_mask`` from ``node_types`` 1/2/3."""
    z = paths["reddit.zip"]
    with np.load(_npz_member(z, "reddit_data.npz")) as f:
        x = torch.from_numpy(f["feature"].astype(np.float32))
        y = torch.from_numpy(f["label"].astype(np.int64))
        role = torch.from_numpy(f["node_types"].astype(np.int64))
    adj = sp.load_npz(_npz_member(z, "reddit_graph.npz")).tocoo()
    n = x.size(0)
    ei = torch.from_numpy(np.stack([adj.row, adj.col]).astype(np.int64))
    return Data(
        x=x,
        y=y,
        edge_index=undirected_edges(ei, n),
        num_nodes=n,
        train_mask=role == 1,
        val_mask=role == 2,
        test_mask=role == 3,
    )


def read_ppi(paths: dict[str, Path]) -> Data:
    """PPI from DGL's ``ppi.zip``: the 24 graphs as one disjoint union (train, then valid, then test graphs) with
    multi-label ``y`` (``[n, 121]`` float32 0/1), ``graph_id`` (0..23) and ``train/val/test_mask``."""
    z = paths["ppi.zip"]
    xs, ys, eis, gids, splits = [], [], [], [], []
    offset, gid_offset = 0, 0
    for s, split in enumerate(("train", "valid", "test")):
        x = np.load(_npz_member(z, f"{split}_feats.npy"))
        y = np.load(_npz_member(z, f"{split}_labels.npy"))
        gid = np.load(_npz_member(z, f"{split}_graph_id.npy")).astype(np.int64)
        with open_member(z, f"{split}_graph.json") as fh:
            g = json.load(fh)
        links = g.get("links", g.get("edges", []))
        ei = np.array([[int(e["source"]), int(e["target"])] for e in links], dtype=np.int64).reshape(-1, 2).T
        # node ids in the json index the split's arrays (GraphSAGE convention)
        xs.append(torch.from_numpy(x.astype(np.float32)))
        ys.append(torch.from_numpy(y.astype(np.float32)))
        eis.append(torch.from_numpy(ei) + offset)
        gids.append(torch.from_numpy(gid - gid.min()) + gid_offset)
        splits.append(torch.full((x.shape[0],), s, dtype=torch.long))
        offset += x.shape[0]
        gid_offset = int(gids[-1].max()) + 1
    n = offset
    role = torch.cat(splits)
    return Data(
        x=torch.cat(xs),
        y=torch.cat(ys),
        edge_index=undirected_edges(torch.cat(eis, dim=1), n),
        graph_id=torch.cat(gids),
        num_nodes=n,
        train_mask=role == 0,
        val_mask=role == 1,
        test_mask=role == 2,
    )
