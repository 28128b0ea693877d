"""OGB registrations: ogbn-products, ogbn-arxiv."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpgnn.data.datasets.variants import (
    _identity,
    _privgnn_variant,
    _progap_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.registry import DatasetSpec, LazyFunction, Variant, register

if TYPE_CHECKING:
    from torch_geometric.data import Data

# the loader imports torch: named here, imported when called
read_ogbn = LazyFunction("dpgnn.data.loaders.ogb.read_ogbn")

OGB_URL = "http://snap.stanford.edu/ogb/data/nodeproppred/{name}.zip"

register(
    DatasetSpec(
        name="ogbn-products",
        title="ogbn-products (OGB)",
        aliases=("products",),
        doc="""Amazon product co-purchasing network (OGB).

Source: Hu et al., "Open Graph Benchmark", NeurIPS 2020 (Chiang et al. 2019's Amazon2M). Official zip, read in
place; OGB sales-ranking split as masks.
Statistics: 2,449,029 nodes, 61,859,140 undirected edges, 100 features, 47 classes. ProGAP's "amazon" keeps
classes >= 100,000 nodes (1,790,731 nodes, 10 classes); PrivGNN's "Amazon2M" uses all 47 classes.""",
        papers=("progap", "privgnn"),
        raw_files=(RawFile("products.zip", OGB_URL.format(name="products"), mirror="ogb/products.zip"),),
        loader=lambda p: read_ogbn(p["products.zip"], "products", "sales_ranking"),
        stats={"nodes": 2449029, "edges": 61859140, "features": 100, "classes": 47},
        note="Too large to mirror here.",
        variants={
            "progap": _progap_variant(100_000),
            "privgnn": _privgnn_variant(
                "Amazon2M: private 1,000,000 random nodes, the rest public with 50% test",
                num_private=1_000_000,
                public_test_share=0.5,
            ),
        },
    )
)


def _arxiv_privgnn(data: Data) -> Data:
    """PrivGNN's ArXiv (docs/papers/privgnn.md#data-and-splits): OGB time split, private = train (<= 2017), public train
    = valid (2018), public test = test (>= 2019)."""
    from torch_geometric.data import Data

    out = Data(**{k: v for k, v in data.items()})
    out.private_mask, out.public_train_mask, out.public_test_mask = data.train_mask, data.val_mask, data.test_mask
    return out


register(
    DatasetSpec(
        name="ogbn-arxiv",
        title="ogbn-arxiv (OGB)",
        aliases=("arxiv",),
        doc="""arXiv CS citation network (OGB); features: averaged word2vec of title/abstract; target: subject area.

Source: Hu et al., "Open Graph Benchmark", NeurIPS 2020. Official zip, read in place; OGB time split as masks
(train <= 2017: 90,941; valid 2018: 29,799; test >= 2019: 48,603); edges made undirected.
Statistics: 169,343 nodes, 1,166,243 directed citations, 128 features, 40 classes.""",
        papers=("drw", "privgnn"),
        raw_files=(RawFile("arxiv.zip", OGB_URL.format(name="arxiv"), mirror="ogb/arxiv.zip"),),
        loader=lambda p: read_ogbn(p["arxiv.zip"], "arxiv", "time"),
        stats={"nodes": 169343, "edges": None, "features": 128, "classes": 40},
        note="Too large to mirror here.",
        variants={
            "drw": Variant(
                "drw",
                ("drw",),
                "DRW (docs/papers/drw.md#data): undirected graph, OGB time split (inductive)",
                build=_identity,
            ),
            "privgnn": Variant(
                "privgnn",
                ("privgnn",),
                "PrivGNN (docs/papers/privgnn.md#data-and-splits): OGB time split as private / public "
                "train / public test",
                build=_arxiv_privgnn,
            ),
        },
    )
)
