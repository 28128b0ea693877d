"""Datasets of the five papers: a hashed registry with an offline mirror, loaders, transforms, splits, CSBM.

Typical use (notebooks and methods call exactly this)::

    from dpgnn.data import load_dataset
    data = load_dataset("cora")                      # Planetoid Cora with its public split
    data = load_dataset("twitch", variant="lpgcn")   # the split/preprocessing of that paper

Raw files come from ``$DPGNN_DATA_MIRROR`` (sha256-verified), the cache (``$DPGNN_DATA_DIR`` or ``<repo>/data``)
or the canonical URL; what cannot be obtained raises :class:`DatasetUnavailable` with one clear message.
"""

from dpgnn.utils import lazy_exports

#: public name -> the module that defines it. Names are imported on first use (PEP 562), so that
#: ``from dpgnn.data import DatasetUnavailable`` stays light (no torch, no torch_geometric): notebooks that read
#: stored rows start fast. The registry fills itself with every dataset on its first lookup (:mod:`.registry`).
_EXPORTS = {
    **dict.fromkeys(("ChecksumError", "DatasetUnavailable", "RawFile"), "download"),
    **dict.fromkeys(
        (
            "DatasetSpec",
            "Variant",
            "dataset_available",
            "describe",
            "get_spec",
            "list_datasets",
            "load_dataset",
            "normalize_name",
            "register",
        ),
        "registry",
    ),
    "csbm": "synthetic",
    **dict.fromkeys(
        (
            "filter_classes",
            "minmax_normalize",
            "private_public_split",
            "random_node_split",
            "remove_isolated_nodes",
            "seed_from_name",
            "split_edges",
            "subgraph_nodes",
        ),
        "transforms",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = list(_EXPORTS)
