"""Registrations: every dataset of the five papers, with canonical URLs, sha256 and paper variants.

sha256 values of mirrored files come from the offline mirror's MANIFEST (byte-for-byte copies of the public
files unless noted); ``()`` = public hash unknown (recorded on first download, then enforced).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import torch
from torch_geometric.data import Data

from dpgnn.data.download import RawFile
from dpgnn.data.loaders.karateclub import read_facebook_pagepage, read_karateclub
from dpgnn.data.loaders.planetoid import PARTS, read_planetoid
from dpgnn.data.registry import DatasetSpec, Variant, register
from dpgnn.data.transforms import (
    filter_classes,
    minmax_normalize,
    random_node_split,
    seed_from_name,
)

GLOBAL_SEED = 12345  # the Sajadmanesh repos' global seed (spec, general conventions)


# ----------------------------------------------------------------------------------------------------------------
# Shared variant builders
# ----------------------------------------------------------------------------------------------------------------
def _identity(data: Data) -> Data:
    return data


def _lpgcn_random_split(data: Data, seed: int) -> Data:
    """LPGCN (spec 1.2): random 50/25/25 over all nodes with ``torch.Generator(seed)``."""
    return random_node_split(data, 0.5, 0.25, 0.25, seed=seed)


def _lpgnn(data: Data, seed: int = GLOBAL_SEED, top_classes: int | None = None) -> Data:
    """LPGNN pipeline (spec 2.2): [keep the ``top_classes`` largest classes] -> random 50/25/25 split over all
    nodes -> per-column min-max to [0, 1] over all nodes with constant columns dropped."""
    if top_classes is not None:
        data = filter_classes(data, top_k=top_classes)
    data = random_node_split(data, 0.5, 0.25, 0.25, seed=seed)
    return minmax_normalize(data, drop_constant=True)


def _lpgnn_variant(top_classes: int | None = None) -> Variant:
    opts = {"seed": GLOBAL_SEED}
    if top_classes is not None:
        opts["top_classes"] = top_classes
    doc = ("LPGNN (spec 2.2): " + (f"keep the {top_classes} largest classes (induced subgraph, relabelled), "
                                   if top_classes else "")
           + "random 50/25/25 split over ALL nodes (seed option), min-max to [0,1], constant columns dropped")
    return Variant("lpgnn", ("lpgnn",), doc, build=_lpgnn, options=opts)


# ----------------------------------------------------------------------------------------------------------------
# Planetoid: Cora, CiteSeer, PubMed
# ----------------------------------------------------------------------------------------------------------------
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
    # PubMed is not mirrored; only the allx hash is documented (MANIFEST "not available offline").
    "pubmed": {"allx": "508e538e2abdccdd54c4d3e9f49d638b4af7107d85845f66ddea5a5152658b7e"},
}


def _planetoid_files(prefix: str) -> tuple[RawFile, ...]:
    hashes = PLANETOID_SHA256[prefix]
    mirrored = prefix in ("cora", "citeseer")
    return tuple(
        RawFile(name=f"ind.{prefix}.{part}", url=PLANETOID_URL.format(prefix=prefix, part=part),
                sha256=(hashes[part],) if part in hashes else (),
                mirror=f"planetoid/ind.{prefix}.{part}" if mirrored else None)
        for part in PARTS
    )


_PUBLIC_SPLIT_DOC = "Planetoid public split masks as in the raw files (train = first labelled nodes, val 500, test 1000)"

register(DatasetSpec(
    name="cora", title="Cora (Planetoid)", group="planetoid",
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
        "lpgcn": Variant("lpgcn", ("lpgcn",), "LPGCN (spec 1.2): " + _PUBLIC_SPLIT_DOC + " (140/500/1000)",
                         build=_identity),
        "lpgnn": _lpgnn_variant(),
        "drw": Variant("drw", ("drw",), "DRW (spec 4.2): transductive, " + _PUBLIC_SPLIT_DOC, build=_identity),
    },
))

register(DatasetSpec(
    name="citeseer", title="CiteSeer (Planetoid)", group="planetoid",
    doc="""CiteSeer citation network, Planetoid version (15 isolated test papers get zero features, label 0).

Source: Yang, Cohen & Salakhutdinov, ICML 2016 (kimiyoung/planetoid); parsed like PyG's ``Planetoid('CiteSeer')``.
Statistics: 3,327 nodes, 4,552 undirected edges (9,104 directed), 3,703 features, 6 classes; public split
120 / 500 / 1,000.""",
    papers=("lpgcn", "drw"),
    raw_files=_planetoid_files("citeseer"),
    loader=partial(read_planetoid, prefix="citeseer"),
    stats={"nodes": 3327, "edges": 4552, "features": 3703, "classes": 6},
    variants={
        "lpgcn": Variant("lpgcn", ("lpgcn",), "LPGCN (spec 1.2): " + _PUBLIC_SPLIT_DOC + " (120/500/1000)",
                         build=_identity),
        "drw": Variant("drw", ("drw",), "DRW (spec 4.2): transductive, " + _PUBLIC_SPLIT_DOC, build=_identity),
    },
))

register(DatasetSpec(
    name="pubmed", title="PubMed (Planetoid)", group="planetoid",
    doc="""PubMed diabetes citation network, Planetoid version.

Source: Yang, Cohen & Salakhutdinov, ICML 2016 (kimiyoung/planetoid); parsed like PyG's ``Planetoid('PubMed')``.
Statistics: 19,717 nodes, 44,324 undirected edges, 500 TF-IDF features, 3 classes; public split 60 / 500 / 1,000.""",
    papers=("lpgnn", "drw"),
    raw_files=_planetoid_files("pubmed"),
    loader=partial(read_planetoid, prefix="pubmed"),
    stats={"nodes": 19717, "edges": 44324, "features": 500, "classes": 3},
    note="Not in the offline mirror (ind.pubmed.allx could not be obtained).",
    variants={
        "lpgnn": _lpgnn_variant(),
        "drw": Variant("drw", ("drw",), "DRW (spec 4.2): transductive, " + _PUBLIC_SPLIT_DOC + " (60/500/1000)",
                       build=_identity),
    },
))

# ----------------------------------------------------------------------------------------------------------------
# Karate Club / MUSAE: Twitch ENGB, Facebook page-page, LastFM Asia
# ----------------------------------------------------------------------------------------------------------------
KC_URL = "https://raw.githubusercontent.com/benedekrozemberczki/karateclub/master/dataset/node_level/{name}/{file}"


def _kc(name: str, file: str, sha: str | None, mirrored: bool = True) -> RawFile:
    return RawFile(name=file, url=KC_URL.format(name=name, file=file), sha256=(sha,) if sha else (),
                   mirror=f"karateclub/{name}/{file}" if mirrored else None)


def _read_kc(paths: dict[str, Path]) -> Data:
    return read_karateclub(paths["edges.csv"], paths["target.csv"], paths["features.csv"])


register(DatasetSpec(
    name="twitch", title="Twitch ENGB (Karate Club 'twitch')", group="karateclub", aliases=("twitch-engb",),
    doc="""Twitch user-user network of English streamers (ENGB); target: explicit-content streamer.

Source: Rozemberczki, Allen & Sarkar, "Multi-scale Attributed Node Embedding" (MUSAE), J. Complex Networks 2021;
files from the Karate Club library (benedekrozemberczki/karateclub, dataset/node_level/twitch).
Statistics: 7,126 nodes, 35,324 undirected edges, 3,170 binary features (ids 0..3169; the LPGCN paper's table
says 2,545), 2 classes.""",
    papers=("lpgcn",),
    raw_files=(
        _kc("twitch", "edges.csv", "90ab33e0426913171302dee0bdac35322596f07bee7431aeabaca648bdda7245"),
        _kc("twitch", "features.csv", "904426f583b2636b2a4343606dea35e44bd06cf1baa3c4aa46b7c8cec86f2820"),
        _kc("twitch", "target.csv", "635c3aedd9865b48baa27aae4f5bc54b913100aee026589ec3a7bb4dcfcc8b44"),
    ),
    loader=_read_kc,
    stats={"nodes": 7126, "edges": 35324, "features": 3170, "classes": 2},
    variants={
        "lpgcn": Variant("lpgcn", ("lpgcn",),
                         'LPGCN (spec 1.2): random 50/25/25 over all nodes, torch.Generator seed = sum(ord("musae"))',
                         build=_lpgcn_random_split, options={"seed": seed_from_name("musae")}),
    },
))

register(DatasetSpec(
    name="facebook-pagepage", title="Facebook page-page (MUSAE / Karate Club 'facebook')", group="karateclub",
    aliases=("musae-facebook", "facebook-page-page"),
    doc="""Facebook page-page network of verified pages; target: page category (politician, governmental
organisation, TV show, company).

Source: Rozemberczki, Allen & Sarkar, "Multi-scale Attributed Node Embedding" (MUSAE), J. Complex Networks 2021;
edges/targets from Karate Club (dataset/node_level/facebook), binary features from MUSAE's facebook.json.
Statistics: 22,470 nodes, 170,823 undirected edges (171,002 edge rows incl. 179 self-loops, removed), 4,714
features, 4 classes. This is LPGNN's "facebook" (not ProGAP's/PrivGNN's, see ``facebook``).""",
    papers=("lpgnn",),
    raw_files=(
        _kc("facebook", "edges.csv", "7c50d8f02a75cc0829577814a1fc14535164daa38d79c3612340c9e9cdbd4022"),
        _kc("facebook", "target.csv", "95987f6c9246f461511673041c88aa20cbd8596bc52b9688fdaab7bd5a720000"),
        RawFile(name="facebook.json",
                url="https://raw.githubusercontent.com/benedekrozemberczki/MUSAE/master/input/features/facebook.json",
                sha256=("ea870537646a93642a0008d38aa9bfeff02018070ba97b1f3f469d9622626436",),
                mirror="musae_facebook/facebook.json"),
    ),
    loader=lambda p: read_facebook_pagepage(p["edges.csv"], p["target.csv"], p["facebook.json"]),
    stats={"nodes": 22470, "edges": 170823, "features": 4714, "classes": 4},
    variants={"lpgnn": _lpgnn_variant()},
))

register(DatasetSpec(
    name="lastfm", title="LastFM Asia (Karate Club 'lastfm')", group="karateclub", aliases=("lastfm-asia",),
    doc="""LastFM Asia social network of users; target: the user's country.

Source: Rozemberczki & Sarkar, "Characteristic Functions on Graphs", CIKM 2020; files from Karate Club
(dataset/node_level/lastfm).
Statistics: 7,624 nodes, 27,806 undirected edges, 7,842 features, 18 classes; LPGNN keeps the 10 largest classes
(7,083 nodes, 25,814 edges).""",
    papers=("lpgnn",),
    raw_files=(
        _kc("lastfm", "edges.csv", "4a6f555d2ccbbbaf1aa4f46b10b0e612aa515730a513d3e1ac951e1e4dcd733c"),
        _kc("lastfm", "features.csv", None, mirrored=False),
        _kc("lastfm", "target.csv", "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"),
    ),
    loader=_read_kc,
    stats={"nodes": 7624, "edges": 27806, "features": 7842, "classes": 18},
    note="features.csv is not in the offline mirror (edges/target are).",
    variants={"lpgnn": _lpgnn_variant(top_classes=10)},
))
