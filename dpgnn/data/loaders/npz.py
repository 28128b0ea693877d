"""gnn-benchmark ``.npz`` graphs (Shchur et al., "Pitfalls of Graph Neural Network Evaluation", 2018), e.g.
Amazon Computers: CSR arrays ``adj_data/adj_indices/adj_indptr/adj_shape``, ``attr_*`` and ``labels``.
Parsed like PyG's ``Amazon``: binarised features, self-loops removed, edges made undirected."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from torch_geometric.data import Data

from dpgnn.data.transforms import undirected_edges


def read_gnn_benchmark_npz(path: Path) -> Data:
    """One gnn-benchmark ``.npz`` graph: ``x`` = binarised attributes (float32 0/1), ``y`` = ``labels``, the CSR
    adjacency as undirected edges without self-loops."""
    with np.load(path, allow_pickle=False) as f:
        attr = sp.csr_matrix((f["attr_data"], f["attr_indices"], f["attr_indptr"]), shape=tuple(f["attr_shape"]))
        adj = sp.csr_matrix((f["adj_data"], f["adj_indices"], f["adj_indptr"]), shape=tuple(f["adj_shape"])).tocoo()
        labels = np.asarray(f["labels"]).astype(np.int64)
    x = torch.from_numpy(np.asarray(attr.todense(), dtype=np.float32))
    x = (x > 0).to(torch.float32)
    n = x.size(0)
    ei = torch.from_numpy(np.stack([adj.row, adj.col]).astype(np.int64))
    return Data(x=x, y=torch.from_numpy(labels), edge_index=undirected_edges(ei, n), num_nodes=n)
