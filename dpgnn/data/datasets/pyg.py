"""Registrations of Flickr, Reddit, PPI (as PyG downloads them) and Elliptic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgnn.data.datasets.variants import (
    _identity,
    _privgnn_variant,
    _progap_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.registry import DatasetSpec, LazyFunction, Variant, register
from dpgnn.utils import seed_from_name

if TYPE_CHECKING:
    from torch_geometric.data import Data

# the loaders import torch: named here, imported when called
read_elliptic = LazyFunction("dpgnn.data.loaders.elliptic.read_elliptic")
read_flickr = LazyFunction("dpgnn.data.loaders.saint.read_flickr")
read_ppi = LazyFunction("dpgnn.data.loaders.saint.read_ppi")
read_reddit = LazyFunction("dpgnn.data.loaders.saint.read_reddit")

GDRIVE = "https://drive.usercontent.google.com/download?id={id}&confirm=t"
register(
    DatasetSpec(
        name="flickr",
        title="Flickr (GraphSAINT)",
        doc="""Flickr images linked by shared properties; features: bag-of-words of descriptions; target: tag class.

Source: Zeng et al., "GraphSAINT: Graph Sampling Based Inductive Learning Method", ICLR 2020; the Google Drive
files PyG's ``Flickr`` downloads. Own split 50/25/25 (role.json).
Statistics: 89,250 nodes, 449,878 undirected edges, 500 features, 7 classes.""",
        papers=("lpgcn", "drw"),
        raw_files=(
            RawFile(
                "adj_full.npz", GDRIVE.format(id="1crmsTbd1-2sEXsGwa2IKnIB7Zd3TmUsy"), mirror="flickr/adj_full.npz"
            ),
            RawFile("feats.npy", GDRIVE.format(id="1join-XdvX3anJU_MLVtick7MgeAQiWIZ"), mirror="flickr/feats.npy"),
            RawFile(
                "class_map.json", GDRIVE.format(id="1uxIkbtg5drHTsKt-PAsZZ4_yJmgFmle9"), mirror="flickr/class_map.json"
            ),
            RawFile("role.json", GDRIVE.format(id="1htXCtuktuCW8TR8KiKfrFDAxUgekQoV7"), mirror="flickr/role.json"),
        ),
        loader=read_flickr,
        stats={"nodes": 89250, "edges": 449878, "features": 500, "classes": 7},
        note="Too large to mirror here.",
        variants={
            "lpgcn": Variant(
                "lpgcn",
                ("lpgcn",),
                "LPGCN (docs/papers/lpgcn.md#data-and-splits): the dataset's own 50/25/25 split",
                build=_identity,
            ),
            "drw": Variant("drw", ("drw",), "DRW (docs/papers/drw.md#data): own split, inductive", build=_identity),
        },
    )
)

register(
    DatasetSpec(
        name="reddit",
        title="Reddit (GraphSAGE, PyG)",
        doc="""Reddit posts (Sept. 2014) linked when commented by the same user; target: subreddit.

Source: Hamilton, Ying & Leskovec, "Inductive Representation Learning on Large Graphs", NeurIPS 2017; DGL's
reddit.zip as PyG's ``Reddit`` downloads it. Own split (node_types).
Statistics: 232,965 nodes, 57,307,946 undirected edges (114,615,892 directed), 602 features, 41 classes.
GAP/ProGAP keep the 8 classes with >= 10,000 nodes (116,713 nodes, 46,233,380 directed edges).""",
        papers=("progap", "drw", "privgnn"),
        raw_files=(RawFile("reddit.zip", "https://data.dgl.ai/dataset/reddit.zip", mirror="reddit/reddit.zip"),),
        loader=read_reddit,
        stats={"nodes": 232965, "edges": 57307946, "features": 602, "classes": 41},
        note="Too large to mirror here.",
        variants={
            "progap": _progap_variant(10_000),
            "gap": _progap_variant(10_000, papers=("progap",), name="gap"),
            "drw": Variant("drw", ("drw",), "DRW (docs/papers/drw.md#data): own split, inductive", build=_identity),
            "privgnn": _privgnn_variant(
                "private 300 nodes/class, public 15,000 train + 15,000 test",
                private_per_class=300,
                num_public_train=15000,
                num_public_test=15000,
            ),
        },
    )
)

register(
    DatasetSpec(
        name="ppi",
        title="PPI (protein-protein interaction, PyG)",
        doc="""Protein-protein interaction graphs of 24 human tissues; 121 binary (multi-label) targets.

Source: Zitnik & Leskovec, "Predicting multicellular function through multi-layer tissue networks", 2017;
Hamilton et al., NeurIPS 2017; DGL's ppi.zip as PyG's ``PPI`` downloads it. The 20/2/2 train/val/test graphs are
returned as one disjoint union with masks and ``graph_id``; ``y`` is float (N x 121).
Statistics (PyG): 56,944 nodes in 24 graphs, 50 features, 121 labels. DRW's table lists 14,755 nodes /
9,716 train nodes (the GraphSAINT-format PPI of its code).""",
        papers=("drw",),
        raw_files=(RawFile("ppi.zip", "https://data.dgl.ai/dataset/ppi.zip", mirror="ppi/ppi.zip"),),
        loader=read_ppi,
        stats={"nodes": 56944, "edges": None, "features": 50, "classes": 121},
        note="Too large to mirror here; DRW's PPI (14,755 nodes) is the GraphSAINT subset, not PyG's 56,944 nodes.",
        variants={
            "drw": Variant("drw", ("drw",), "DRW (docs/papers/drw.md#data): inductive, own split", build=_identity)
        },
    )
)


def _elliptic_lpgcn(data: Data, seed: int) -> Data:
    """LPGCN (docs/papers/lpgcn.md#data-and-splits): only labelled nodes split 50/25/25 (unlabelled nodes stay in the
    graph, in no mask)."""
    from dpgnn.data.transforms import random_node_split

    return random_node_split(data, 0.5, 0.25, 0.25, seed=seed, among=data.y >= 0)


ELLIPTIC_URL = "https://data.pyg.org/datasets/elliptic/{file}.zip"
register(
    DatasetSpec(
        name="elliptic",
        title="Elliptic Bitcoin transactions",
        aliases=("elliptic-bitcoin", "bitcoin"),
        doc="""Bitcoin transaction graph; target: illicit (0) / licit (1), ~77% unlabelled (y = -1).

Source: Weber et al., "Anti-Money Laundering in Bitcoin: Experimenting with Graph Convolutional Networks for
Financial Forensics", KDD workshop 2019 (Kaggle); files as PyG's ``EllipticBitcoinDataset`` downloads them.
Statistics: 203,769 nodes, 234,355 edges, 166 features (time step included, as LPGCN), 2 classes.""",
        papers=("lpgcn",),
        raw_files=tuple(
            RawFile(f"{f}.zip", ELLIPTIC_URL.format(file=f), mirror=f"elliptic/{f}.zip")
            for f in ("elliptic_txs_features.csv", "elliptic_txs_edgelist.csv", "elliptic_txs_classes.csv")
        ),
        loader=read_elliptic,
        stats={"nodes": 203769, "edges": 234355, "features": 166, "classes": 2},
        note="Too large to mirror here.",
        variants={
            "lpgcn": Variant(
                "lpgcn",
                ("lpgcn",),
                "LPGCN (docs/papers/lpgcn.md#data-and-splits): labelled nodes split 50/25/25 with seed "
                'sum(ord("bitcoin")); unlabelled nodes stay',
                build=_elliptic_lpgcn,
                options={"seed": seed_from_name("bitcoin")},
            )
        },
    )
)
