"""Facebook100 registrations: one entry per university, the strict 100-university union, and a stand-in
union of the universities present."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from dpgnn.data.datasets.variants import (
    GLOBAL_SEED,
    _progap_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.loaders.raw_names import UNIVERSITIES
from dpgnn.data.registry import DatasetSpec, LazyFunction, Variant, register

if TYPE_CHECKING:
    from torch_geometric.data import Data

# the loaders import torch: named here, imported when called
read_facebook100 = LazyFunction("dpgnn.data.loaders.facebook100.read_facebook100")
read_facebook100_union = LazyFunction("dpgnn.data.loaders.facebook100.read_facebook100_union")


def _fb100_privgnn(
    data: Data, seed: int = GLOBAL_SEED, private_fraction: float = 0.5, public_test_share: float = 0.2
) -> Data:
    """PrivGNN's Facebook: target = every recorded class year (no 2004-2009 window, no class filter; 34 classes
    for UIUC), nodes with missing year dropped, self-loops removed; ``private_fraction`` of the nodes private,
    the rest public with ``public_test_share`` of them as public test."""
    from torch_geometric.data import Data

    from dpgnn.data.loaders.facebook100 import year_labels
    from dpgnn.data.transforms import drop_self_loops, filter_classes, private_public_split

    out = Data(**{k: v for k, v in data.items()})
    out.y = year_labels(data.year.numpy(), None)
    out = filter_classes(out)
    out = drop_self_loops(out)
    return private_public_split(
        out, seed=seed, num_private=int(round(private_fraction * out.num_nodes)), public_test_share=public_test_share
    )


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
