"""DRW's constants: the paper's datasets, methods, architectures (Table 1), δ and training nodes (Table 3) and batch
sizes (Table 4), docs/papers/drw.md#data.

A module without torch: the series build their grids and read stored rows from these without loading the training
code.
"""

from __future__ import annotations

PAPER = "drw"
DATASETS = ("cora", "citeseer", "ppi", "pubmed", "flickr", "arxiv", "reddit")
METHODS = ("gcn", "mlp", "fdp", "drw", "drw-d", "drw-r")
DP_METHODS = ("fdp", "drw", "drw-d", "drw-r")
#: Table 1 architectures: setting label -> (layers, hidden width)
ARCHS = {"1-layer": (1, 256), "2x256": (2, 256), "2x512": (2, 512)}
#: δ per dataset (paper Table 3 / docs/papers/drw.md#data)
DELTA = {"cora": 1e-5, "citeseer": 1e-5, "ppi": 1e-5, "pubmed": 1e-6, "flickr": 1e-6, "arxiv": 1e-7, "reddit": 1e-7}
#: training nodes (paper Table 3)
NUM_TRAIN = {"cora": 140, "citeseer": 120, "ppi": 9716, "pubmed": 60, "flickr": 44625, "arxiv": 90941, "reddit": 153932}
INDUCTIVE = {"ppi", "flickr", "arxiv", "reddit"}
SEEDS = (1234, 2345, 3456)
TARGET_EPSILON = 8.0
#: batch sizes ("number of roots", paper Table 4), depth 1 / depth 2
_B_DRW = {
    "cora": (70, 46),
    "citeseer": (60, 40),
    "ppi": (2000, 2000),
    "pubmed": (30, 20),
    "flickr": (10000, 10000),
    "arxiv": (20000, 20000),
    "reddit": (30000, 30000),
}
_B_DRWR = {
    "cora": (46, 28),
    "citeseer": (40, 24),
    "ppi": (2000, 1800),
    "pubmed": (20, 12),
    "flickr": (10000, 8000),
    "arxiv": (20000, 18000),
    "reddit": (30000, 30000),
}
_LOAD = {"arxiv": "ogbn-arxiv"}


def batch_size(dataset: str, method: str, num_layers: int) -> int:
    """Paper Table 4: roots per batch (DRW-R has its own row; FDP uses the DRW row, docs/papers/drw.md#open-questions
    [AMBIG])."""
    key = _dataset_key(dataset)
    if num_layers not in (1, 2):
        raise ValueError(f"num_layers must be 1 or 2 (Table 4), got {num_layers!r}")
    table = _B_DRWR if _method_key(method) == "drw-r" else _B_DRW
    return table[key][num_layers - 1]


def _dataset_key(name: str) -> str:
    key = str(name).strip().lower()
    if key == "ogbn-arxiv":
        key = "arxiv"
    if key not in DATASETS:
        raise ValueError(f"unknown DRW dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _method_key(method: str) -> str:
    key = str(method).strip().lower()
    if key not in METHODS:
        raise ValueError(f"unknown DRW method {method!r}; valid methods: {list(METHODS)}")
    return key
