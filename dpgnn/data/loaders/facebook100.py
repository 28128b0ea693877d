"""Facebook100 university networks (Traud, Mucha & Porter, "Social Structure of Facebook Networks", 2012).

Raw format (sisaman/pyg-datasets ``datasets/facebook100/<Name>.mat``, read with ``scipy.io.loadmat``): ``A`` sparse
symmetric adjacency; ``local_info`` (n x 7, uint) columns status, gender, major, minor, housing, year, high school,
with 0 = missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from dpgnn.data.loaders.raw_names import UNIVERSITIES
from dpgnn.data.transforms import undirected_edges

COLUMNS = ("status", "gender", "major", "minor", "housing", "year", "high_school")
FEATURES = ("status", "gender", "major", "minor", "housing")
YEAR_RANGE = (2004, 2009)  # sisaman/pyg-datasets: years outside [2004, 2009] are treated as missing


def read_mat(path: Path) -> tuple[np.ndarray, object]:
    """One university's ``.mat`` file: ``(local_info, A)`` -- the ``[n, 7]`` int64 attributes (:data:`COLUMNS`,
    0 = missing) and the scipy sparse adjacency as stored."""
    from scipy.io import loadmat

    mat = loadmat(str(path))
    return np.asarray(mat["local_info"]).astype(np.int64), mat["A"]


def one_hot_missing(df: pd.DataFrame) -> np.ndarray:
    """One-hot of every column, 0 = missing (all-zero block for that column), values in increasing order."""
    blocks = []
    for col in df.columns:
        v = df[col].to_numpy()
        cats = np.unique(v[v != 0])
        block = (v[:, None] == cats[None, :]).astype(np.float32)
        blocks.append(block)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(df), 0), np.float32)


def year_labels(year: np.ndarray, window: tuple[int, int] | None) -> torch.Tensor:
    """Class ids of years in increasing order (-1 = missing, i.e. 0, or outside ``window`` when given)."""
    year = year.copy()
    if window is not None:
        year[(year < window[0]) | (year > window[1])] = 0
    cats = np.unique(year[year != 0])
    y = np.full(len(year), -1, dtype=np.int64)
    ok = year != 0
    y[ok] = np.searchsorted(cats, year[ok])
    return torch.from_numpy(y)


def read_facebook100(paths: dict[str, Path], name: str) -> Data:
    """One university: ``x`` = one-hot(status, gender, major, minor, housing; 0 = missing), ``y`` = class year in
    2004..2009 as 0..C-1 (-1 = missing/out of range, as in sisaman/pyg-datasets), ``year`` = raw year (0 =
    missing), all nodes kept (self-loops dropped)."""
    info, A = read_mat(paths[f"{name}.mat"])
    df = pd.DataFrame(info[:, :6], columns=COLUMNS[:6])
    x = torch.from_numpy(one_hot_missing(df[list(FEATURES)]))
    A = A.tocoo()
    ei = torch.from_numpy(np.stack([A.row, A.col]).astype(np.int64))
    n = info.shape[0]
    return Data(
        x=x,
        y=year_labels(df["year"].to_numpy(), YEAR_RANGE),
        edge_index=undirected_edges(ei, n),
        year=torch.from_numpy(df["year"].to_numpy().copy()),
        num_nodes=n,
    )


def read_facebook100_union(paths: dict[str, Path], features: Sequence[str] = ("status", "gender", "major")) -> Data:
    """Disjoint union of the universities whose files are given (in the canonical order): raw attributes are
    stacked first, then one-hot encoded over the union (ProGAP's FB-100: status, gender, major); ``university``
    holds each node's index into :data:`UNIVERSITIES`."""
    frames, edges, uni = [], [], []
    offset = 0
    for i, name in enumerate(UNIVERSITIES):
        p = paths.get(f"{name}.mat")
        if p is None:
            continue
        info, A = read_mat(p)
        frames.append(pd.DataFrame(info[:, :6], columns=COLUMNS[:6]))
        A = A.tocoo()
        edges.append(torch.from_numpy(np.stack([A.row, A.col]).astype(np.int64)) + offset)
        uni.append(torch.full((info.shape[0],), i, dtype=torch.long))
        offset += info.shape[0]
    if not frames:
        raise ValueError("no Facebook100 file given")
    df = pd.concat(frames, ignore_index=True)
    x = torch.from_numpy(one_hot_missing(df[list(features)]))
    return Data(
        x=x,
        y=year_labels(df["year"].to_numpy(), YEAR_RANGE),
        edge_index=undirected_edges(torch.cat(edges, dim=1), offset),
        year=torch.from_numpy(df["year"].to_numpy().copy()),
        university=torch.cat(uni),
        num_nodes=offset,
    )
