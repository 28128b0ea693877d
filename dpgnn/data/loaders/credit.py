"""Credit defaulter graph (Agarwal, Lakkaraju & Zitnik, "Towards a Unified Framework for Fair and Stable Graph
Representation Learning" (NIFTY), UAI 2021; data of Yeh & Lien 2009).

``credit.csv``: one row per client, label column ``NoDefaultNextMonth``; features = every other column except
``Single`` (as the NIFTY loader does) -> 13 features. ``credit_edges.txt.zip`` holds ``credit_edges.txt``, two
float-formatted node ids per line (directed pairs); the graph is symmetrised (NIFTY adds self-loops, we don't).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch_geometric.data import Data

from dpgnn.data.transforms import undirected_edges

LABEL = "NoDefaultNextMonth"
DROPPED = ("Single",)
SENSITIVE = "Age"


def read_credit(csv: Path, edges_zip: Path) -> Data:
    """The credit graph: ``x`` = the 13 feature columns (float32), ``y`` = ``NoDefaultNextMonth`` (0/1), the
    symmetrised edges of ``credit_edges.txt`` without self-loops, and ``sensitive`` = the ``Age`` column (NIFTY's
    sensitive attribute)."""
    df = pd.read_csv(csv)
    feats = [c for c in df.columns if c != LABEL and c not in DROPPED]
    x = torch.tensor(df[feats].to_numpy(dtype=np.float32))
    y = torch.tensor(df[LABEL].to_numpy(dtype=np.int64))
    with zipfile.ZipFile(edges_zip) as zf:
        member = next(m for m in zf.namelist() if m.endswith("credit_edges.txt"))
        with zf.open(member) as fh:
            pairs = np.loadtxt(fh, dtype=np.float64).astype(np.int64).reshape(-1, 2)
    n = len(df)
    data = Data(x=x, y=y, edge_index=undirected_edges(torch.from_numpy(pairs.T.copy()), n), num_nodes=n)
    data.sensitive = torch.tensor(df[SENSITIVE].to_numpy(dtype=np.int64))
    return data
