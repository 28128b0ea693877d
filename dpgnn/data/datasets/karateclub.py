"""Karate Club / MUSAE registrations: Twitch ENGB, Facebook page-page, LastFM Asia."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dpgnn.data.datasets.variants import (
    _lpgcn_random_split,
    _lpgnn_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.registry import DatasetSpec, LazyFunction, Variant, register
from dpgnn.utils import seed_from_name

if TYPE_CHECKING:
    from torch_geometric.data import Data

# the loaders import torch: named here, imported when called
read_facebook_pagepage = LazyFunction("dpgnn.data.loaders.karateclub.read_facebook_pagepage")
read_karateclub = LazyFunction("dpgnn.data.loaders.karateclub.read_karateclub")

KC_URL = "https://raw.githubusercontent.com/benedekrozemberczki/karateclub/master/dataset/node_level/{name}/{file}"


def _kc(name: str, file: str, sha: str | None) -> RawFile:
    return RawFile(
        name=file,
        url=KC_URL.format(name=name, file=file),
        sha256=(sha,) if sha else (),
        mirror=f"karateclub/{name}/{file}",
    )


def _read_kc(paths: dict[str, Path]) -> Data:
    return read_karateclub(paths["edges.csv"], paths["target.csv"], paths["features.csv"])


register(
    DatasetSpec(
        name="twitch",
        title="Twitch ENGB (Karate Club 'twitch')",
        group="karateclub",
        aliases=("twitch-engb",),
        doc="""Twitch user-user network of English streamers (ENGB); target: explicit-content streamer.

Source: Rozemberczki, Allen & Sarkar, "Multi-scale Attributed Node Embedding" (MUSAE), J. Complex Networks 2021;
files from the Karate Club library (benedekrozemberczki/karateclub, dataset/node_level/twitch).
Statistics: 7,126 nodes, 35,324 undirected edges, 2,545 binary features, 2 classes. features.csv uses ids
0..3169 but only 2,545 of them occur in ENGB; like the authors' pandas pivot, one column per occurring id (the
LPGCN paper's 2,545; raw ids kept in ``feature_ids``).""",
        papers=("lpgcn",),
        raw_files=(
            _kc("twitch", "edges.csv", "90ab33e0426913171302dee0bdac35322596f07bee7431aeabaca648bdda7245"),
            _kc("twitch", "features.csv", "904426f583b2636b2a4343606dea35e44bd06cf1baa3c4aa46b7c8cec86f2820"),
            _kc("twitch", "target.csv", "635c3aedd9865b48baa27aae4f5bc54b913100aee026589ec3a7bb4dcfcc8b44"),
        ),
        loader=_read_kc,
        stats={"nodes": 7126, "edges": 35324, "features": 2545, "classes": 2},
        variants={
            "lpgcn": Variant(
                "lpgcn",
                ("lpgcn",),
                "LPGCN (docs/papers/lpgcn.md#data-and-splits): random 50/25/25 over all nodes, "
                'torch.Generator seed = sum(ord("musae"))',
                build=_lpgcn_random_split,
                options={"seed": seed_from_name("musae")},
            ),
        },
    )
)

register(
    DatasetSpec(
        name="facebook-pagepage",
        title="Facebook page-page (MUSAE / Karate Club 'facebook')",
        group="karateclub",
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
            RawFile(
                name="facebook.json",
                url="https://raw.githubusercontent.com/benedekrozemberczki/MUSAE/master/input/features/facebook.json",
                sha256=("ea870537646a93642a0008d38aa9bfeff02018070ba97b1f3f469d9622626436",),
                mirror="musae_facebook/facebook.json",
            ),
        ),
        loader=lambda p: read_facebook_pagepage(p["edges.csv"], p["target.csv"], p["facebook.json"]),
        stats={"nodes": 22470, "edges": 170823, "features": 4714, "classes": 4},
        variants={"lpgnn": _lpgnn_variant()},
    )
)

register(
    DatasetSpec(
        name="lastfm",
        title="LastFM Asia (Karate Club 'lastfm')",
        group="karateclub",
        aliases=("lastfm-asia",),
        doc="""LastFM Asia social network of users; target: the user's country.

Source: Rozemberczki & Sarkar, "Characteristic Functions on Graphs", CIKM 2020; files from Karate Club
(dataset/node_level/lastfm).
Statistics: 7,624 nodes, 27,806 undirected edges, 7,842 features, 18 classes; LPGNN keeps the 10 largest classes
(7,083 nodes, 25,814 edges).""",
        papers=("lpgnn",),
        raw_files=(
            _kc("lastfm", "edges.csv", "4a6f555d2ccbbbaf1aa4f46b10b0e612aa515730a513d3e1ac951e1e4dcd733c"),
            _kc("lastfm", "features.csv", None),
            _kc("lastfm", "target.csv", "91f19215f6eca8321feec038bd32900cf13fd4f7e041a9976cf202807c72ac16"),
        ),
        loader=_read_kc,
        stats={"nodes": 7624, "edges": 27806, "features": 7842, "classes": 18},
        note="features.csv is not in the offline mirror (edges/target are).",
        variants={"lpgnn": _lpgnn_variant(top_classes=10)},
    )
)
