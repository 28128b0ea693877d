"""Planetoid registrations: Cora, CiteSeer, PubMed."""

from __future__ import annotations

from functools import partial

from dpgnn.data.datasets.variants import (
    _identity,
    _lpgnn_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.loaders.raw_names import PLANETOID_PARTS
from dpgnn.data.registry import DatasetSpec, LazyFunction, Variant, register

PLANETOID_URL = "https://github.com/kimiyoung/planetoid/raw/master/data/ind.{prefix}.{part}"

PLANETOID_SHA256 = {
    "cora": {
        "x": "23cfa55d91c6f624233f5eb7b6e3f141f1bd2b2ae39608a63cf5d084bb27baab",
        "tx": "b9afbaa4a400df991f6f02ef677e1e44da55ffc04801fd02f9e673987829226a",
        "allx": "9419ba2f26f5c35243db64aba110e0f35a04851609e0dc5433450676ca6b8543",
        "y": "94465c14eb53e04ca262198dcbb2521ee8af60fb3f3d546cd6ca24a511b0e7d1",
        "ty": "41f5ac76596a1699cc33f53084a2419e92961c42bb75f36fc38e616d348532ad",
        "ally": "2b998f5cc7fedc86e7f97ca2498f47a1ffc1462c29e2d578b23bf3f62b6e7d71",
        "graph": "58f13302f39dde8852dad6fe6d15b89b077b6d7f837626bce671ef80344b383d",
        "test.index": "297ce89af2b51a6a194181c7dbe1796c6a1cf9cd9349a88383b1b1e227867875",
    },
    "citeseer": {
        "x": "d20de19150741e555de0ed037195630fc194114ebc7fd72ced62810148aa22f6",
        "tx": "539a8906a2da97628d212f2fdd668c109a8b3f0d36574b59e5d3fd5b5303da21",
        "allx": "2ac30345d95c9ec933a817ee0bdd6a5f077f8c184a20e696910192d534414668",
        "y": "8ba87e515d8e3ee3cf52f6d2c5b86aa73f11ecad825a808455209ec26cd54924",
        "ty": "55e5bd1ba1e733a04598753ad1a8d57957f4b8f89e74519f41f4f4938767e4ce",
        "ally": "f704b2d986dde6c2669934de1f3ae5696a6cf9455c0f6b2646a2d135ea0a1c95",
        "graph": "d79a4ef9d3e7169aee8946145f6b7306e35bc79bffad26346cfb94e10e9912a7",
        "test.index": "2af990671580b6b2df5d158d1038f8292e30c9cd821b5453f399659b25b723d4",
    },
    # the mirror has 7 of PubMed's 8 files (byte-identical to kimiyoung/planetoid); allx could not be obtained
    "pubmed": {
        "x": "fbe9cb5c47200d1b7769a26e579be3b7130b556831f9d850e77c4c74f2599b33",
        "tx": "4eb5f5d0f30f26497eb0ac6ac9719d09c67e284f1ed0385c93f3ef27a671da3d",
        "allx": "508e538e2abdccdd54c4d3e9f49d638b4af7107d85845f66ddea5a5152658b7e",
        "y": "e6c807633307a07ed659249006536a147c7999c797f11a2560752990181b41b3",
        "ty": "ee2e0d4819d9fbcc403689c3bf2e49face401b605932f093bc58ab6461130fdd",
        "ally": "0c37bbe3b5014ec365e9d393cf4791925e5ed94fb194305d74f064a8d7b50f0e",
        "graph": "5b89f0036ca22909471f1e6558eb42fa06e0c730a577bde5b058b40638f81dc9",
        "test.index": "b101d421688bbaecbd82e8a18f1e282378d6830f3a37666f28ebc47f844341b5",
    },
}


def _planetoid_files(prefix: str) -> tuple[RawFile, ...]:
    hashes = PLANETOID_SHA256[prefix]
    return tuple(
        RawFile(
            name=f"ind.{prefix}.{part}",
            url=PLANETOID_URL.format(prefix=prefix, part=part),
            sha256=(hashes[part],) if part in hashes else (),
            mirror=f"planetoid/ind.{prefix}.{part}",
        )
        for part in PLANETOID_PARTS
    )


# the loader imports torch: named here, imported when called
read_planetoid = LazyFunction("dpgnn.data.loaders.planetoid.read_planetoid")

_PUBLIC_SPLIT_DOC = (
    "Planetoid public split masks as in the raw files (train = first labelled nodes, val 500, test 1000)"
)

register(
    DatasetSpec(
        name="cora",
        title="Cora (Planetoid)",
        group="planetoid",
        doc="""Cora citation network, Planetoid version.

Source: Yang, Cohen & Salakhutdinov, "Revisiting Semi-Supervised Learning with Graph Embeddings", ICML 2016
(kimiyoung/planetoid); parsed exactly like PyG's ``Planetoid('Cora')``.
Statistics: 2,708 nodes, 5,278 undirected edges (10,556 directed), 1,433 binary bag-of-words features,
7 classes; public split 140 / 500 / 1,000.""",
        papers=("lpgcn", "lpgnn", "drw"),
        raw_files=_planetoid_files("cora"),
        loader=partial(read_planetoid, prefix="cora"),
        stats={"nodes": 2708, "edges": 5278, "features": 1433, "classes": 7},
        variants={
            "lpgcn": Variant(
                "lpgcn",
                ("lpgcn",),
                "LPGCN (docs/papers/lpgcn.md#data-and-splits): " + _PUBLIC_SPLIT_DOC + " (140/500/1000)",
                build=_identity,
            ),
            "lpgnn": _lpgnn_variant(),
            "drw": Variant(
                "drw", ("drw",), "DRW (docs/papers/drw.md#data): transductive, " + _PUBLIC_SPLIT_DOC, build=_identity
            ),
        },
    )
)

register(
    DatasetSpec(
        name="citeseer",
        title="CiteSeer (Planetoid)",
        group="planetoid",
        doc="""CiteSeer citation network, Planetoid version (15 isolated test papers get zero features, label 0).

Source: Yang, Cohen & Salakhutdinov, ICML 2016 (kimiyoung/planetoid); parsed like PyG's ``Planetoid('CiteSeer')``.
Statistics: 3,327 nodes, 4,552 undirected edges (9,104 directed), 3,703 features, 6 classes; public split
120 / 500 / 1,000.""",
        papers=("lpgcn", "drw"),
        raw_files=_planetoid_files("citeseer"),
        loader=partial(read_planetoid, prefix="citeseer"),
        stats={"nodes": 3327, "edges": 4552, "features": 3703, "classes": 6},
        variants={
            "lpgcn": Variant(
                "lpgcn",
                ("lpgcn",),
                "LPGCN (docs/papers/lpgcn.md#data-and-splits): " + _PUBLIC_SPLIT_DOC + " (120/500/1000)",
                build=_identity,
            ),
            "drw": Variant(
                "drw", ("drw",), "DRW (docs/papers/drw.md#data): transductive, " + _PUBLIC_SPLIT_DOC, build=_identity
            ),
        },
    )
)

register(
    DatasetSpec(
        name="pubmed",
        title="PubMed (Planetoid)",
        group="planetoid",
        doc="""PubMed diabetes citation network, Planetoid version.

Source: Yang, Cohen & Salakhutdinov, ICML 2016 (kimiyoung/planetoid); parsed like PyG's ``Planetoid('PubMed')``.
Statistics: 19,717 nodes, 44,324 undirected edges, 500 TF-IDF features, 3 classes; public split 60 / 500 / 1,000.""",
        papers=("lpgnn", "drw"),
        raw_files=_planetoid_files("pubmed"),
        loader=partial(read_planetoid, prefix="pubmed"),
        stats={"nodes": 19717, "edges": 44324, "features": 500, "classes": 3},
        note="ind.pubmed.allx is not in the offline mirror (the other seven files are).",
        variants={
            "lpgnn": _lpgnn_variant(),
            "drw": Variant(
                "drw",
                ("drw",),
                "DRW (docs/papers/drw.md#data): transductive, " + _PUBLIC_SPLIT_DOC + " (60/500/1000)",
                build=_identity,
            ),
        },
    )
)
