"""Karate Club node-level datasets (twitch, facebook, lastfm) and the MUSAE Facebook page-page files.

Format (benedekrozemberczki/karateclub ``dataset/node_level/<name>/``): ``edges.csv`` (``id_1,id_2``),
``target.csv`` (``id,target``), ``features.csv`` sparse rows (``node_id,feature_id,value``). MUSAE's
``facebook.json`` maps a node id (string) to its list of feature ids (binary features).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from dpgnn.data.transforms import undirected_edges


def _targets(path: Path, column: str = "target") -> torch.Tensor:
    df = pd.read_csv(path)
    idcol = "id" if "id" in df.columns else df.columns[0]
    df = df.sort_values(idcol)
    if not np.array_equal(df[idcol].to_numpy(), np.arange(len(df))):
        raise ValueError(f"{path}: node ids are not 0..{len(df) - 1}")
    return torch.from_numpy(df[column].to_numpy().copy()).long()


def _edges(path: Path, n: int) -> torch.Tensor:
    df = pd.read_csv(path)
    ei = torch.from_numpy(df.iloc[:, :2].to_numpy().T.astype(np.int64))
    return undirected_edges(ei, n)


def sparse_rows_to_dense(
    node: np.ndarray, feat: np.ndarray, value: np.ndarray | None, n: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pivot (node, feature, value) rows to a dense float32 matrix, as the LPGCN/LPGNN code does with pandas:
    duplicate rows dropped (first kept), one column per feature id that occurs (ascending), missing entries 0,
    rows for every node 0..n-1. Returns ``(x, feature_ids)`` with ``feature_ids[j]`` = raw id of column ``j``."""
    df = pd.DataFrame({"n": node, "f": feat, "v": np.ones(len(node)) if value is None else value})
    df = df.drop_duplicates(subset=["n", "f"], keep="first")
    ids = np.unique(df["f"].to_numpy(np.int64))
    col = np.searchsorted(ids, df["f"].to_numpy(np.int64))
    x = torch.zeros(n, len(ids), dtype=torch.float32)
    x[torch.tensor(df["n"].to_numpy(np.int64)), torch.tensor(col)] = torch.tensor(df["v"].to_numpy(np.float32))
    return x, torch.from_numpy(ids)


def read_karateclub(edges: Path, target: Path, features: Path) -> Data:
    """A karateclub node-level dataset: ``features.csv`` pivoted to a dense matrix (missing = 0, one column per
    occurring feature id, raw ids in ``feature_ids``)."""
    y = _targets(target)
    n = y.numel()
    f = pd.read_csv(features)
    x, ids = sparse_rows_to_dense(
        f["node_id"].to_numpy(), f["feature_id"].to_numpy(), f["value"].to_numpy() if "value" in f.columns else None, n
    )
    return Data(x=x, y=y, edge_index=_edges(edges, n), feature_ids=ids, num_nodes=n)


def read_musae_json_features(path: Path, n: int) -> torch.Tensor:
    """Binary features from MUSAE's ``{node id: [feature ids]}`` json (one column per occurring id)."""
    obj = json.loads(Path(path).read_text())
    node, feat = [], []
    for k, fs in obj.items():
        node.extend([int(k)] * len(fs))
        feat.extend(int(v) for v in fs)
    return sparse_rows_to_dense(np.asarray(node), np.asarray(feat), None, n)[0]


def read_facebook_pagepage(edges: Path, target: Path, features_json: Path) -> Data:
    """MUSAE Facebook page-page: binary features from ``facebook.json`` (one column per occurring feature id),
    ``y`` = page category from ``target.csv``, undirected edges without self-loops."""
    y = _targets(target)
    n = y.numel()
    return Data(x=read_musae_json_features(features_json, n), y=y, edge_index=_edges(edges, n), num_nodes=n)
