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


def sparse_rows_to_dense(node: np.ndarray, feat: np.ndarray, value: np.ndarray | None, n: int,
                         d: int | None = None) -> torch.Tensor:
    """Dense ``n x d`` float32 matrix from (node, feature, value) rows; duplicate rows are dropped (first kept),
    missing entries are 0. ``d`` defaults to ``max(feature id) + 1``."""
    df = pd.DataFrame({"n": node, "f": feat, "v": np.ones(len(node)) if value is None else value})
    df = df.drop_duplicates(subset=["n", "f"], keep="first")
    d = int(df["f"].max()) + 1 if d is None else d
    x = torch.zeros(n, d, dtype=torch.float32)
    x[torch.tensor(df["n"].to_numpy(np.int64)), torch.tensor(df["f"].to_numpy(np.int64))] = torch.tensor(
        df["v"].to_numpy(np.float32))
    return x


def read_karateclub(edges: Path, target: Path, features: Path) -> Data:
    """A karateclub node-level dataset: ``features.csv`` pivoted to a dense matrix (missing = 0)."""
    y = _targets(target)
    n = y.numel()
    f = pd.read_csv(features)
    x = sparse_rows_to_dense(f["node_id"].to_numpy(), f["feature_id"].to_numpy(),
                             f["value"].to_numpy() if "value" in f.columns else None, n)
    return Data(x=x, y=y, edge_index=_edges(edges, n), num_nodes=n)


def read_musae_json_features(path: Path, n: int) -> torch.Tensor:
    """Binary features from MUSAE's ``{node id: [feature ids]}`` json (``max id + 1`` columns)."""
    obj = json.loads(Path(path).read_text())
    node, feat = [], []
    for k, fs in obj.items():
        node.extend([int(k)] * len(fs))
        feat.extend(int(v) for v in fs)
    return sparse_rows_to_dense(np.asarray(node), np.asarray(feat), None, n)


def read_facebook_pagepage(edges: Path, target: Path, features_json: Path) -> Data:
    y = _targets(target)
    n = y.numel()
    return Data(x=read_musae_json_features(features_json, n), y=y, edge_index=_edges(edges, n), num_nodes=n)
