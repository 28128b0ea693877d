"""Helpers shared by the dpgnn.data tests (imported by name; distinct from other folders' helpers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MIRROR = os.environ.get("DPGNN_DATA_MIRROR")


def mirror_has(*relpaths: str) -> bool:
    return bool(MIRROR) and all((Path(MIRROR) / p).is_file() for p in relpaths)


def needs_mirror(*relpaths: str):
    """Decorator: ``mirror`` marker + skip with a clear reason when the mirror (or one of its files) is absent."""
    if not MIRROR:
        reason = "DPGNN_DATA_MIRROR is not set (point it at the offline dataset mirror to run this test)"
    else:
        absent = [p for p in relpaths if not (Path(MIRROR) / p).is_file()]
        reason = f"the mirror {MIRROR} lacks {', '.join(absent)}"

    def deco(fn):
        fn = pytest.mark.skipif(not mirror_has(*relpaths), reason=reason)(fn)
        return pytest.mark.mirror(fn)

    return deco


def raw_dir(name: str) -> Path:
    """The cache folder where ``name``'s raw files are looked up (created): ``$DPGNN_DATA_DIR/<dataset>/raw``."""
    from dpgnn.data import get_spec

    d = get_spec(name).raw_dir()
    d.mkdir(parents=True, exist_ok=True)
    return d


def undirected_ok(data) -> bool:
    """edge_index holds both directions of every edge, no duplicates, no self-loops."""
    import torch

    ei = data.edge_index
    n = data.num_nodes
    key = ei[0] * n + ei[1]
    rev = ei[1] * n + ei[0]
    return bool(torch.isin(rev, key).all()) and key.unique().numel() == key.numel() and not bool((ei[0] == ei[1]).any())
