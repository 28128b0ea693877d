"""Registrations: every dataset of the five papers, with canonical URLs, sha256 and paper variants.

sha256 values of mirrored files come from the offline mirror's MANIFEST (byte-for-byte copies of the public
files unless noted); ``()`` = public hash unknown (recorded on first download, then enforced). Every raw file also
has a mirror path (``RawFile.mirror``): the place a mirror that adds the file later must use.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

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

# the Sajadmanesh repos' global seed (docs/papers/cross-paper.md#conventions-shared-by-the-sajadmanesh-repositories)
GLOBAL_SEED = 12345


# ----------------------------------------------------------------------------------------------------------------
# Shared variant builders
# ----------------------------------------------------------------------------------------------------------------
def _identity(data: Data) -> Data:
    return data


def _lpgcn_random_split(data: Data, seed: int) -> Data:
    """LPGCN (docs/papers/lpgcn.md#data-and-splits): random 50/25/25 over all nodes with ``torch.Generator(seed)``."""
    return random_node_split(data, 0.5, 0.25, 0.25, seed=seed)


def _lpgnn(data: Data, seed: int = GLOBAL_SEED, top_classes: int | None = None) -> Data:
    """LPGNN pipeline (docs/papers/lpgnn.md#data-pipeline): [keep the ``top_classes`` largest classes] -> random
    50/25/25 split over all nodes -> per-column min-max to [0, 1] over all nodes with constant columns dropped."""
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
        for part in PARTS
    )


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

# ----------------------------------------------------------------------------------------------------------------
# Karate Club / MUSAE: Twitch ENGB, Facebook page-page, LastFM Asia
# ----------------------------------------------------------------------------------------------------------------
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


# ----------------------------------------------------------------------------------------------------------------
# ProGAP / GAP / PrivGNN shared variant builders
# ----------------------------------------------------------------------------------------------------------------
from dpgnn.data.loaders.credit import read_credit  # noqa: E402
from dpgnn.data.loaders.elliptic import read_elliptic  # noqa: E402
from dpgnn.data.loaders.facebook100 import (  # noqa: E402
    UNIVERSITIES,
    read_facebook100,
    read_facebook100_union,
    year_labels,
)
from dpgnn.data.loaders.npz import read_gnn_benchmark_npz  # noqa: E402
from dpgnn.data.loaders.ogb import read_ogbn  # noqa: E402
from dpgnn.data.loaders.saint import read_flickr, read_ppi, read_reddit  # noqa: E402
from dpgnn.data.transforms import (  # noqa: E402
    drop_self_loops,
    private_public_split,
    relabel_classes,
    remove_isolated_nodes,
)


def _progap(data: Data, min_class_size: int, seed: int = GLOBAL_SEED) -> Data:
    """ProGAP/GAP (docs/papers/progap.md#datasets), in the code's order: random 75/10/15 split over all nodes (seed
    option) -> keep classes with >= ``min_class_size`` nodes (unlabelled nodes dropped, induced subgraph, relabelled) ->
    remove self-loops -> remove isolated nodes."""
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


def _fb100_privgnn(
    data: Data, seed: int = GLOBAL_SEED, private_fraction: float = 0.5, public_test_share: float = 0.2
) -> Data:
    """PrivGNN's Facebook: target = every recorded class year (no 2004-2009 window, no class filter; 34 classes
    for UIUC), nodes with missing year dropped, self-loops removed; ``private_fraction`` of the nodes private,
    the rest public with ``public_test_share`` of them as public test."""
    out = Data(**{k: v for k, v in data.items()})
    out.y = year_labels(data.year.numpy(), None)
    out = filter_classes(out)
    out = drop_self_loops(out)
    return private_public_split(
        out, seed=seed, num_private=int(round(private_fraction * out.num_nodes)), public_test_share=public_test_share
    )


# ----------------------------------------------------------------------------------------------------------------
# Facebook100 (one entry per university, the strict 100-university union, and a stand-in union of those present)
# ----------------------------------------------------------------------------------------------------------------
FB100_URL = "https://github.com/sisaman/pyg-datasets/raw/main/datasets/facebook100/{name}.mat"
FB100_SHA256 = {
    "American75": "3536214d56ce3680d16c959bc7648c233d72f2b6094c53724c69e413c1147612",
    "Amherst41": "3108e4b2edb01be05c5a61147583a40e61012820fff7eebe621dd26018caaf00",
    "Bowdoin47": "6b63fc44365719b51bee41a9907728b79986ab035df14c68ddc79e8d7e94c4cd",
    "Brandeis99": "428b04687900c5c3501126f8c193905662738fce0e48ca8925dd9703009d668c",
    "Bucknell39": "aac1f8d9f625735a70d94b951a3ca8371050e09062d127f1744d1b49a2bc2c0b",
    "Caltech36": "597d8307f9aaaaf50343e12a22893c203c52b92e1dd5b3fb35e13f19871d6ffa",
    "Colgate88": "b468c3360277accfe9288b4a36875d9a170098ae5a4b48b0249df66e5441d140",
    "Cornell5": "d9ff76ae34e855cb77b0779a3a320f7f73f848901cb13352e2734c17804c4aec",
    "Hamilton46": "0ecf04e8f149fd98bcca55d4e13c22cdc24085a488a83730a9555f05355788b4",
    "Haverford76": "2a00dccab9651531e7f3e0928eb5197450d36dbf9549782fe7d79998cd5f5bbb",
    "Howard90": "74bccae3d1fff2af79bee45aab36633d80c1903fa228ad1dce16bd88a69e89c0",
    "JohnsHopkins55": "fc7243bf257155df03afbc397ab34b5f8eb8e75f40cd1603398e207a033ef50f",
    "Lehigh96": "2f844f4ae997bbfb86bd558cb866c8b52f164865f67ff986556d4570f9165685",
    "MIT8": "ad4a4614ba42c6f85bcc6025331dd7b0059d4eab3cdd8ec6d86ded07aaa0b63b",
    "Mich67": "50ab378024d27c9f064da23e57f2049e9e673ea031241cabe460cf417fe729fd",
    "Middlebury45": "726435e8f59371ed118003b38c3f02901838e3a84454795e1275c6d4319fa756",
    "Oberlin44": "52aefa253d9181bafee414de6f1b115f0b13d0621c4977786976b1a6904d2642",
    "Pepperdine86": "20221d5792563140efa7c2944a7d8fb564dd23badeab13b3a90a214afbb2b5b7",
    "Reed98": "d12ec74dc8c6e237385975b976c3709555a83629a1260be693fb688e3446070e",
    "Rice31": "ec7e4b35c6db6a23ca55e5a30bfe1b899c0b5c97e1b5a9abf16f3b8aa08c2537",
    "Rochester38": "06d9aa5c70eea7e1077424f78638abc1e7f993ce48c955d644682cd061994ed0",
    "Santa74": "a445d55e5866d82ac6dd9ac8e74c08793f5fb2b8eb585baeea334848b2ac2d69",
    "Simmons81": "c4abbe3ab631c83d9775893d207984e9e9ae989364965560637ffdd7ca7fd677",
    "Smith60": "4b227502d331f0ba3b7efe15b43465704d6dd90bc2b6d25cf6a2ea8f18fe34b2",
    "Swarthmore42": "302e2c50822e527a63b8ccb9427911f582f272291b1d5a5c3a1d235d047e9870",
    "Trinity100": "6479f33386b93aabd2df7f71d778deac2f8b59e0ca33c9d6315e1a1b042ad96f",
    "UC64": "c2f10d79ed2f956e70e9484ce68d7e62f40a5aebe2a82e7767095e6f8b07bb0a",
    "UCSC68": "eb52990f39573ba69917ae059330f987ebe052ed859eab2df9487deecbc0f528",
    "UChicago30": "936f253c4fc2a024388ecdf9f1cdfc5a8ec82199390ac5ae30ac08724c419750",
    "USFCA72": "01c0fb559abfd36078501082369a8db6eec5abd2bcf7f25068e36f0e89b64c5d",
    "Vassar85": "f0a67186ca1bf73ac198a72c76a36477b656288c61e82f3787db77b80099c87c",
    "Vermont70": "cba936eebd3c4cfd33877040cd2445cd6590e8360c2ff4b7ad247cee4e21f322",
    "Wellesley22": "6a460711431cb7abf7b46d799c7ad542fca579b075257ec7ebd6a29b3bc73d16",
    "Wesleyan43": "954ac8353856c3fe772212adab34212c0d17922552e94c12574c08866a088f18",
    "Williams40": "0bf90837120b2ca27bf1e33fc2248922041d4f2b9f09da36989adcc1b1f9650a",
    "Wisconsin87": "9e1bc77dd1486cf1b41a1aa38c80a41510c944085d8b8b84ac50f724f9c84e86",
}
#: statistics stated by the mirror's MANIFEST / Traud et al. (2012) (nodes, undirected edges)
FB100_STATS = {"Caltech36": (769, None), "Cornell5": (18660, None), "Wisconsin87": (23842, 835952)}


def _fb100_file(name: str) -> RawFile:
    sha = FB100_SHA256.get(name)
    return RawFile(
        name=f"{name}.mat",
        url=FB100_URL.format(name=name),
        sha256=(sha,) if sha else (),
        mirror=f"facebook100/{name}.mat",
    )


FB100_FILES = tuple(_fb100_file(u) for u in UNIVERSITIES)
_FB_DOC = """Source: Traud, Mucha & Porter, "Social Structure of Facebook Networks", Physica A 2012 (Sept. 2005
snapshot, intra-school links); .mat files from sisaman/pyg-datasets. ``x`` = one-hot of status, gender, major,
minor, housing (0 = missing -> all-zero block); ``y`` = class year 2004..2009 as 0..5 (-1 = missing or outside the
window, as sisaman/pyg-datasets does); ``year`` = raw year; all nodes kept in the base graph."""

for _uni in UNIVERSITIES:
    _n, _m = FB100_STATS.get(_uni, (None, None))
    _is_uiuc = _uni == "UIllinois20"
    register(
        DatasetSpec(
            name=f"fb100-{_uni.lower()}",
            title=f"Facebook100 {_uni}",
            group="facebook100",
            raw_folder="facebook100",
            aliases=("uiuc", "fb100-uiuc") if _is_uiuc else (),
            doc=f"Facebook100 network of {_uni}.\n\n"
            + _FB_DOC
            + (
                "\nUIllinois20 is ProGAP's and PrivGNN's 'facebook' (see ``facebook``): ProGAP keeps the 6 "
                "year-classes with >= 1,000 nodes (26,406 nodes, 2,117,924 directed edges, 501 features); "
                "PrivGNN uses all 34 recorded years."
                if _is_uiuc
                else "\nA stand-in for UIllinois20 must be loaded under this name, never as 'facebook'."
            ),
            papers=("progap", "privgnn") if _is_uiuc else (),
            raw_files=(_fb100_file(_uni),),
            loader=partial(read_facebook100, name=_uni),
            stats={"nodes": _n, "edges": _m, "features": 501 if _is_uiuc else None, "classes": 6 if _is_uiuc else None},
            note=("Not in the offline mirror." if _uni not in FB100_SHA256 else "")
            + (" Paper graph of ProGAP/PrivGNN 'facebook'." if _is_uiuc else ""),
            variants={
                "progap": _progap_variant(1000),
                "privgnn": Variant(
                    "privgnn",
                    ("privgnn",),
                    "PrivGNN (docs/papers/privgnn.md#data-and-splits): all recorded years as classes, "
                    "missing dropped, private half / public half with 20% public test",
                    build=_fb100_privgnn,
                    options={"seed": GLOBAL_SEED, "private_fraction": 0.5, "public_test_share": 0.2},
                ),
            },
        )
    )

_FB_UNION_DOC = """Disjoint union of Facebook100 universities (ProGAP's "FB-100"): features one-hot of status, gender,
major over the union (minor, housing dropped), target class year (2004..2009), ``university`` = index of each
node's university in the canonical list."""

register(
    DatasetSpec(
        name="fb100",
        title="FB-100 (all 100 Facebook100 universities)",
        group="facebook100",
        raw_folder="facebook100",
        aliases=("fb-100", "facebook-100", "facebook100"),
        doc=_FB_UNION_DOC + "\n\nSource: Traud et al. 2012; ProGAP (Sajadmanesh & Gatica-Perez, WSDM 2024). ProGAP "
        "statistics after its preprocessing (classes >= 100,000): 1,120,280 nodes, 86,304,478 directed edges, 537 "
        "features, 6 classes. Needs all 100 files.",
        papers=("progap",),
        raw_files=FB100_FILES,
        loader=read_facebook100_union,
        stats={"nodes": None, "edges": None, "features": 537, "classes": 6},
        note="Needs all 100 .mat files (only 36 are mirrored); fb100-present is the labelled stand-in.",
        variants={"progap": _progap_variant(100_000)},
    )
)

register(
    DatasetSpec(
        name="fb100-present",
        title="Facebook100 union of the universities present here (stand-in)",
        group="facebook100",
        raw_folder="facebook100",
        doc=_FB_UNION_DOC + "\n\nStand-in for FB-100 built from whichever .mat files are mirrored/cached here (never "
        "downloads the rest). Its statistics depend on the files present; report it under this name. With few "
        "universities no class reaches ProGAP's 100,000 threshold: pass ``min_class_size=`` to the progap variant.",
        papers=(),
        raw_files=FB100_FILES,
        loader=read_facebook100_union,
        partial_ok=True,
        stats={"nodes": None, "edges": None, "features": None, "classes": None},
        note="Stand-in for fb100: the union over the universities present (not cached; depends on files present).",
        variants={"progap": _progap_variant(100_000)},
    )
)

# ----------------------------------------------------------------------------------------------------------------
# Amazon Computers (Shchur), Credit (NIFTY)
# ----------------------------------------------------------------------------------------------------------------
register(
    DatasetSpec(
        name="amazon-computers",
        title="Amazon Computers (Shchur et al.)",
        aliases=("computers", "amazon-computer"),
        doc="""Amazon co-purchase graph of computer products; features: bag-of-words of reviews; target: category.

Source: McAuley et al., SIGIR 2015; Shchur et al., "Pitfalls of Graph Neural Network Evaluation", 2018
(shchur/gnn-benchmark). Parsed like PyG's ``Amazon('Computers')``.
Statistics: 13,752 nodes, 245,861 undirected edges (491,722 directed), 767 binary features, 10 classes.
PrivGNN's "Amazon" (ProGAP's "amazon" is ogbn-products, see ``amazon``).""",
        papers=("privgnn",),
        raw_files=(
            RawFile(
                name="amazon_electronics_computers.npz",
                url="https://github.com/shchur/gnn-benchmark/raw/master/data/npz/amazon_electronics_computers.npz",
                # mirror copy (repacked, same arrays) and the public file (see the mirror MANIFEST)
                sha256=(
                    "8553eeb570349de56d0cfc21f24fa6cbff483ad63d72f55f106adb26063365ee",
                    "736ba1d9fd85eac2da83a5ad25c463f04b0031a6ca01563f90a7099d9e8ffb2c",
                ),
                mirror="amazon_computers/amazon_electronics_computers.npz",
                size=31921488,
            ),
        ),
        loader=lambda p: read_gnn_benchmark_npz(p["amazon_electronics_computers.npz"]),
        stats={"nodes": 13752, "edges": 245861, "features": 767, "classes": 10},
        variants={
            "privgnn": _privgnn_variant(
                "private 250 nodes/class (2,500), public 3,000 train + 3,000 test",
                private_per_class=250,
                num_public_train=3000,
                num_public_test=3000,
            )
        },
    )
)

NIFTY_URL = "https://raw.githubusercontent.com/chirag126/nifty/main/dataset/credit/{file}"
register(
    DatasetSpec(
        name="credit",
        title="Credit defaulter (NIFTY)",
        aliases=("credit-defaulter",),
        doc="""Credit card clients (Taiwan, 2005) linked by attribute similarity; target: no default next month.

Source: Yeh & Lien 2009; graph by Agarwal, Lakkaraju & Zitnik, "Towards a Unified Framework for Fair and Stable
Graph Representation Learning" (NIFTY), UAI 2021 (chirag126/nifty). Features: all columns except the label and
``Single`` (as NIFTY's loader); ``sensitive`` = Age.
Statistics: 30,000 nodes, 137,377 undirected edges (200,526 directed pairs), 13 features, 2 classes.""",
        papers=("privgnn",),
        raw_files=(
            RawFile(
                "credit.csv",
                NIFTY_URL.format(file="credit.csv"),
                ("5d7a93f25a09dd1648c78b5e0c6a883ca832ee88259d89dfe1062e8c848bfe5d",),
                "nifty_credit/credit.csv",
            ),
            # the mirror's zip is regenerated with the authors' rule (same edge set); the public zip's hash is unknown,
            # so a downloaded copy is checked against the hash recorded at its first download
            RawFile(
                "credit_edges.txt.zip",
                NIFTY_URL.format(file="credit_edges.txt.zip"),
                ("85aad74bd4c36271823dc45f7d64f4fd79ed91b4b771702b1a9d9bb0486b317c",),
                "nifty_credit/credit_edges.txt.zip",
            ),
        ),
        loader=lambda p: read_credit(p["credit.csv"], p["credit_edges.txt.zip"]),
        stats={"nodes": 30000, "edges": 137377, "features": 13, "classes": 2},
        note="The mirror's credit_edges.txt.zip is regenerated from credit.csv (same edge set as published).",
        variants={
            "privgnn": _privgnn_variant(
                "private 10,000 random nodes (paper text; Table: 10,818), public 7,500 train + 7,500 test",
                num_private=10_000,
                num_public_train=7500,
                num_public_test=7500,
            )
        },
    )
)

# ----------------------------------------------------------------------------------------------------------------
# OGB: ogbn-products, ogbn-arxiv
# ----------------------------------------------------------------------------------------------------------------
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

# ----------------------------------------------------------------------------------------------------------------
# Flickr, Reddit, PPI (PyG), Elliptic
# ----------------------------------------------------------------------------------------------------------------
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

# ----------------------------------------------------------------------------------------------------------------
# WeNet (not public) and the paper names that collide across papers
# ----------------------------------------------------------------------------------------------------------------
register(
    DatasetSpec(
        name="wenet",
        title="WeNet (private mobile-sensing data)",
        doc="""WeNet: mobile-sensing data of university students (ProGAP Table 1: 37,576 nodes, 22,684,206 directed
edges, 44 features, 4 classes). Loaded by ProGAP's code from a local data.pt.""",
        papers=("progap",),
        public=False,
        stats={"nodes": 37576, "edges": None, "features": 44, "classes": 4},
        note="WeNet was never released publicly (ProGAP read it from a private local data.pt); its results cannot be "
        "reproduced and notebooks must report it as not_run.",
    )
)

register(
    DatasetSpec(
        name="facebook",
        title="'facebook' as each paper means it",
        doc="""The name "facebook" denotes different graphs in different papers; pick the paper's variant:
- lpgnn  -> facebook-pagepage (Karate Club Facebook page-page, 22,470 nodes, 4 classes), LPGNN preprocessing;
- progap -> fb100-uillinois20 (Facebook100 UIUC, year target, classes >= 1,000: 6 classes), ProGAP preprocessing;
- privgnn -> fb100-uillinois20 (the same UIUC graph, 34 year-classes, private/public halves).""",
        papers=("lpgnn", "progap", "privgnn"),
        require_variant=True,
        note="Ambiguous name: pass variant='lpgnn' (page-page), 'progap' or 'privgnn' (Facebook100 UIllinois20).",
        variants={
            "lpgnn": Variant(
                "lpgnn", ("lpgnn",), "facebook-pagepage, LPGNN pipeline", redirect=("facebook-pagepage", "lpgnn")
            ),
            "progap": Variant(
                "progap",
                ("progap",),
                "fb100-uillinois20, ProGAP preprocessing",
                redirect=("fb100-uillinois20", "progap"),
            ),
            "privgnn": Variant(
                "privgnn", ("privgnn",), "fb100-uillinois20, PrivGNN split", redirect=("fb100-uillinois20", "privgnn")
            ),
        },
    )
)

register(
    DatasetSpec(
        name="amazon",
        title="'amazon' as each paper means it",
        doc="""The name "amazon" denotes different graphs in different papers; pick the paper's variant:
- progap (and GAP) -> ogbn-products with classes >= 100,000 nodes (10 classes);
- privgnn -> amazon-computers (Shchur et al., 13,752 nodes, 10 classes). PrivGNN's Amazon2M is ``amazon2m``.""",
        papers=("progap", "privgnn"),
        require_variant=True,
        note="Ambiguous name: pass variant='progap' (ogbn-products, top classes) or 'privgnn' (Amazon Computers).",
        variants={
            "progap": Variant(
                "progap", ("progap",), "ogbn-products, ProGAP preprocessing", redirect=("ogbn-products", "progap")
            ),
            "gap": Variant(
                "gap",
                ("progap",),
                "ogbn-products, GAP preprocessing (same as ProGAP)",
                redirect=("ogbn-products", "progap"),
            ),
            "privgnn": Variant(
                "privgnn", ("privgnn",), "amazon-computers, PrivGNN split", redirect=("amazon-computers", "privgnn")
            ),
        },
    )
)

register(
    DatasetSpec(
        name="amazon2m",
        title="Amazon2M (PrivGNN) = ogbn-products, 47 classes",
        doc="PrivGNN's Amazon2M: ogbn-products with all 47 classes and PrivGNN's private/public split.",
        papers=("privgnn",),
        default_variant="privgnn",
        variants={
            "privgnn": Variant(
                "privgnn",
                ("privgnn",),
                "ogbn-products, PrivGNN split (all 47 classes)",
                redirect=("ogbn-products", "privgnn"),
            )
        },
    )
)
