"""Variant builders shared by the registrations: each paper's split and preprocessing of a base graph.

The builders import :mod:`dpgnn.data.transforms` (torch) when they run, so that registering them does not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgnn.data.registry import Variant

if TYPE_CHECKING:
    from torch_geometric.data import Data

# the Sajadmanesh repos' global seed (docs/papers/cross-paper.md#conventions-shared-by-the-sajadmanesh-repositories)
GLOBAL_SEED = 12345


# ----------------------------------------------------------------------------------------------------------------
# Shared variant builders
# ----------------------------------------------------------------------------------------------------------------
def _identity(data: Data) -> Data:
    return data


def _lpgcn_random_split(data: Data, seed: int) -> Data:
    """LPGCN (docs/papers/lpgcn.md#data-and-splits): random 50/25/25 over all nodes with ``torch.Generator(seed)``."""
    from dpgnn.data.transforms import random_node_split

    return random_node_split(data, 0.5, 0.25, 0.25, seed=seed)


def _lpgnn(data: Data, seed: int = GLOBAL_SEED, top_classes: int | None = None) -> Data:
    """LPGNN pipeline (docs/papers/lpgnn.md#data-pipeline): [keep the ``top_classes`` largest classes] -> random
    50/25/25 split over all nodes -> per-column min-max to [0, 1] over all nodes with constant columns dropped."""
    from dpgnn.data.transforms import filter_classes, minmax_normalize, random_node_split

    if top_classes is not None:
        data = filter_classes(data, top_k=top_classes)
    data = random_node_split(data, 0.5, 0.25, 0.25, seed=seed)
    return minmax_normalize(data, drop_constant=True)


def _lpgnn_variant(top_classes: int | None = None) -> Variant:
    opts = {"seed": GLOBAL_SEED}
    if top_classes is not None:
        opts["top_classes"] = top_classes
    doc = (
        "LPGNN (docs/papers/lpgnn.md#data-pipeline): "
        + (f"keep the {top_classes} largest classes (induced subgraph, relabelled), " if top_classes else "")
        + "random 50/25/25 split over ALL nodes (seed option), min-max to [0,1], constant columns dropped"
    )
    return Variant("lpgnn", ("lpgnn",), doc, build=_lpgnn, options=opts)


def _progap(data: Data, min_class_size: int, seed: int = GLOBAL_SEED) -> Data:
    """ProGAP/GAP (docs/papers/progap.md#datasets), in the code's order: random 75/10/15 split over all nodes (seed
    option) -> keep classes with >= ``min_class_size`` nodes (unlabelled nodes dropped, induced subgraph, relabelled) ->
    remove self-loops -> remove isolated nodes."""
    from dpgnn.data.transforms import drop_self_loops, filter_classes, random_node_split, remove_isolated_nodes

    data = random_node_split(data, 0.75, 0.10, 0.15, seed=seed)
    data = filter_classes(data, min_count=min_class_size)
    data = drop_self_loops(data)
    return remove_isolated_nodes(data)


def _progap_variant(min_class_size: int, papers=("progap",), name: str = "progap") -> Variant:
    return Variant(
        name,
        papers,
        f"ProGAP/GAP (docs/papers/progap.md#datasets): random 75/10/15 split, classes with >= "
        f"{min_class_size:,} nodes, self-loops and isolated nodes removed",
        build=_progap,
        options={"min_class_size": min_class_size, "seed": GLOBAL_SEED},
    )


def _privgnn(data: Data, seed: int = GLOBAL_SEED, **split) -> Data:
    """PrivGNN (docs/papers/privgnn.md#data-and-splits): drop unlabelled nodes, then private/public node partition
    (masks)."""
    from dpgnn.data.transforms import filter_classes, private_public_split, relabel_classes

    if data.y.dim() == 1 and bool((data.y < 0).any()):
        data = relabel_classes(filter_classes(data))
    return private_public_split(data, seed=seed, **split)


def _privgnn_variant(doc: str, **split) -> Variant:
    return Variant(
        "privgnn",
        ("privgnn",),
        "PrivGNN (docs/papers/privgnn.md#data-and-splits): " + doc,
        build=_privgnn,
        options={"seed": GLOBAL_SEED, **split},
    )
