"""Reading a user's graph from files (:func:`load_graph`): three formats, each refused with one line when malformed.

- ``*.pt`` / ``*.pth``: a :class:`torch_geometric.data.Data` saved with ``torch.save(data, path)`` (unpickled:
  load only files you trust).
- ``*.npz``: arrays ``edge_index`` (integers, shape ``[2, E]``), ``x`` (``[N, F]``), ``y`` (``[N]``) and, optionally,
  ``train_mask``, ``val_mask``, ``test_mask`` (booleans ``[N]``), e.g. ``np.savez(path, edge_index=..., x=..., y=...)``.
- a folder with three CSV files, each with a header row (example: ``examples/own_graph/``):
  ``edges.csv`` with columns ``source,target`` (node ids 0..N-1; one row per directed edge, or per undirected edge
  listed in both directions); ``features.csv`` with ``node`` then one column per feature; ``labels.csv`` with
  ``node,label`` (integer classes 0..C-1) and an optional ``split`` column (``train``/``val``/``test``; empty = none).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data

CSV_FILES = ("edges.csv", "features.csv", "labels.csv")
SPLITS = ("train", "val", "test")


def _npz(path: Path) -> Data:
    with np.load(path, allow_pickle=False) as arrays:
        missing = [k for k in ("edge_index", "x", "y") if k not in arrays.files]
        if missing:
            raise ValueError(
                f"{path} lacks array(s) {missing}: save edge_index [2, E], x [N, F] and y [N] "
                "(np.savez(path, edge_index=..., x=..., y=...))"
            )
        data = Data(
            edge_index=torch.from_numpy(np.asarray(arrays["edge_index"])),
            x=torch.from_numpy(np.asarray(arrays["x"])),
            y=torch.from_numpy(np.asarray(arrays["y"])),
        )
        for m in ("train_mask", "val_mask", "test_mask"):
            if m in arrays.files:
                data[m] = torch.from_numpy(np.asarray(arrays[m])).bool()
    data.num_nodes = data.x.size(0) if data.x.dim() >= 1 else None
    return data


def _read_csv(folder: Path, name: str, columns: tuple[str, ...]):
    import pandas as pd

    try:
        frame = pd.read_csv(folder / name)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ValueError(
            f"{folder / name} is not a readable CSV file ({type(err).__name__}): see dpgnn.api.io for the format"
        ) from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{folder / name} lacks column(s) {missing} in its header row (has {list(frame.columns)})")
    return frame


def _node_order(frame, name: str):
    """``frame`` sorted by its ``node`` column, which must hold each id 0..N-1 once."""
    nodes = frame["node"].to_numpy()
    if (
        not np.issubdtype(nodes.dtype, np.integer)
        or len(np.unique(nodes)) != len(nodes)
        or (len(nodes) and (nodes.min() != 0 or nodes.max() != len(nodes) - 1))
    ):
        raise ValueError(f"{name}: the node column must hold each id 0..N-1 exactly once (N = {len(nodes)} rows)")
    return frame.sort_values("node").reset_index(drop=True)


def _csv_folder(folder: Path) -> Data:
    missing = [f for f in CSV_FILES if not (folder / f).is_file()]
    if missing:
        raise ValueError(f"{folder} lacks {missing}: a graph folder holds edges.csv, features.csv and labels.csv")
    edges = _read_csv(folder, "edges.csv", ("source", "target"))
    feats = _node_order(_read_csv(folder, "features.csv", ("node",)), "features.csv")
    labels = _node_order(_read_csv(folder, "labels.csv", ("node", "label")), "labels.csv")
    values = feats.drop(columns="node")
    if values.shape[1] == 0:
        raise ValueError("features.csv has no feature column after 'node'")
    non_numeric = [c for c in values.columns if not np.issubdtype(values[c].dtype, np.number)]
    if non_numeric:
        raise ValueError(f"features.csv column(s) {non_numeric[:5]} are not numeric: encode them as numbers")
    ei = edges[["source", "target"]].to_numpy()
    if len(ei) and not np.issubdtype(ei.dtype, np.integer):
        raise ValueError("edges.csv: source and target must be integer node ids 0..N-1")
    data = Data(
        x=torch.tensor(values.to_numpy(dtype=np.float32)),
        y=torch.tensor(labels["label"].to_numpy()),
        edge_index=torch.tensor(ei.T.astype(np.int64)).reshape(2, -1),
        num_nodes=len(feats),
    )
    if "split" in labels.columns:
        split = labels["split"].fillna("").astype(str).str.strip().str.lower()
        bad = sorted(set(split) - set(SPLITS) - {""})
        if bad:
            raise ValueError(f"labels.csv: split values must be train, val, test or empty, got {bad[:5]}")
        for s in SPLITS:
            data[f"{s}_mask"] = torch.tensor((split == s).to_numpy())
    return data


def load_graph(path: str | os.PathLike) -> Data:
    """A graph from ``path`` (a ``.pt``/``.pth`` Data, an ``.npz`` or a CSV folder; see the module docstring).

    Args:
        path: the file or folder.

    Returns:
        a :class:`torch_geometric.data.Data` (not yet checked: :func:`dpgnn.fit` checks it).
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"--data {path}: no such file or folder")
    if p.is_dir():
        return _csv_folder(p)
    suffix = p.suffix.lower()
    if suffix == ".npz":
        return _npz(p)
    if suffix in (".pt", ".pth"):
        data = torch.load(p, weights_only=False)
        if not isinstance(data, Data):
            raise ValueError(
                f"{path} holds a {type(data).__name__}, not a torch_geometric.data.Data: save the "
                "graph with torch.save(data, path)"
            )
        return data
    raise ValueError(
        f"--data {path}: expected a .pt/.pth file (torch.save of a Data), an .npz file or a folder "
        "with edges.csv, features.csv, labels.csv"
    )
