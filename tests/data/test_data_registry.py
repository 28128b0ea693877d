"""The registry: every dataset of the five papers, name resolution, variants, hashes vs the MANIFEST."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dpgnn_data_testutils import MIRROR

from dpgnn import series
from dpgnn.data import get_spec, list_datasets, load_dataset
from dpgnn.data.registry import all_specs, normalize_name

EXPECTED = [
    "cora",
    "citeseer",
    "pubmed",
    "twitch",
    "flickr",
    "elliptic",
    "facebook-pagepage",
    "lastfm",
    "fb100-caltech36",
    "fb100-uillinois20",
    "fb100",
    "fb100-present",
    "amazon-computers",
    "ogbn-products",
    "ogbn-arxiv",
    "reddit",
    "ppi",
    "credit",
    "wenet",
    "facebook",
    "amazon",
    "amazon2m",
]


def test_list_covers_every_dataset():
    df = list_datasets()
    for name in EXPECTED:
        assert name in set(df["name"]), name
    assert set(df.columns) >= {
        "name",
        "variants",
        "papers",
        "nodes",
        "edges",
        "features",
        "classes",
        "url",
        "available",
        "note",
    }
    assert int(df["name"].str.startswith("fb100-").sum()) >= 100
    # every paper has datasets
    for paper in series.names(kind="paper"):
        assert df["papers"].str.contains(paper).any(), paper


def test_every_spec_is_documented_with_urls_and_stats():
    for spec in all_specs():
        assert spec.doc.strip(), spec.name
        if spec.public and spec.loader is not None:
            assert spec.raw_files, spec.name
            for raw in spec.raw_files:
                assert raw.url.startswith(("http://", "https://")), (spec.name, raw)
                assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in raw.sha256)
                assert raw.mirror, f"{spec.name}/{raw.name} needs a mirror path"
        for v in spec.variants.values():
            assert v.papers and v.doc
            assert (v.build is None) != (v.redirect is None)
            if v.redirect:
                get_spec(v.redirect[0])


@pytest.mark.parametrize(
    "name,url",
    [
        ("cora", "https://github.com/kimiyoung/planetoid/raw/master/data/ind.cora.x"),
        (
            "twitch",
            "https://raw.githubusercontent.com/benedekrozemberczki/karateclub/master/dataset/node_level/twitch/edges.csv",
        ),
        ("fb100-uillinois20", "https://github.com/sisaman/pyg-datasets/raw/main/datasets/facebook100/UIllinois20.mat"),
        (
            "amazon-computers",
            "https://github.com/shchur/gnn-benchmark/raw/master/data/npz/amazon_electronics_computers.npz",
        ),
        ("credit", "https://raw.githubusercontent.com/chirag126/nifty/main/dataset/credit/credit_edges.txt.zip"),
        ("ogbn-arxiv", "http://snap.stanford.edu/ogb/data/nodeproppred/arxiv.zip"),
        ("ogbn-products", "http://snap.stanford.edu/ogb/data/nodeproppred/products.zip"),
        ("reddit", "https://data.dgl.ai/dataset/reddit.zip"),
        ("ppi", "https://data.dgl.ai/dataset/ppi.zip"),
        ("elliptic", "https://data.pyg.org/datasets/elliptic/elliptic_txs_classes.csv.zip"),
    ],
)
def test_canonical_urls(name, url):
    assert url in [r.url for r in get_spec(name).raw_files]


@pytest.mark.skipif(
    not MIRROR or not (Path(MIRROR) / "MANIFEST.md").is_file(),
    reason="needs the mirror's MANIFEST.md (DPGNN_DATA_MIRROR)",
)
@pytest.mark.mirror
def test_hashes_match_manifest():
    rows = {}
    for line in (Path(MIRROR) / "MANIFEST.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and re.fullmatch(r"[0-9a-f]{64}", cells[3]):
            rows[cells[1]] = cells[3]
    registry = {raw.mirror: raw for spec in all_specs() for raw in spec.raw_files}
    # every file of the MANIFEST is in the registry with the MANIFEST's hash, except source copies that no loader
    # reads (GraphGallery's amazon_cs.npz; MUSAE's edges/targets, identical in content to Karate Club's)
    unused = {
        "amazon_computers/amazon_cs.npz",
        "musae_facebook/facebook_edges.csv",
        "musae_facebook/facebook_target.csv",
    }
    for path, digest in rows.items():
        if path in unused:
            continue
        assert path in registry, path
        assert digest in registry[path].sha256, path
    assert len(rows) >= 60


@pytest.mark.parametrize(
    "alias,canonical",
    [
        ("Cora", "cora"),
        ("CORA", "cora"),
        ("cite_seer", "citeseer"),
        ("CiteSeer", "citeseer"),
        ("ogbn_arxiv", "ogbn-arxiv"),
        ("arxiv", "ogbn-arxiv"),
        ("FB-100", "fb100"),
        ("facebook-100", "fb100"),
        ("fb100_Caltech36", "fb100-caltech36"),
        ("Twitch-ENGB", "twitch"),
        ("ogbn products", "ogbn-products"),
    ],
)
def test_name_normalisation(alias, canonical):
    """Case, ``-``, ``_``, spaces and dots do not matter; every spelling resolves to its one canonical spec."""
    assert normalize_name(alias) == normalize_name(canonical) or normalize_name(alias) in {
        normalize_name(a) for a in get_spec(canonical).aliases
    }
    assert get_spec(alias).name == canonical
    assert get_spec(alias) is get_spec(canonical)


def test_aliases_resolve_to_canonical():
    assert get_spec("arxiv").name == "ogbn-arxiv"
    assert get_spec("facebook-100").name == "fb100"
    assert get_spec("FB100_Caltech36").name == "fb100-caltech36"
    assert get_spec("products").name == "ogbn-products"


def test_unknown_name_lists_valid_and_suggests():
    with pytest.raises(ValueError) as err:
        get_spec("corra")
    msg = str(err.value)
    assert "Did you mean 'cora'" in msg and "citeseer" in msg and "fb100-<university>" in msg


def test_unknown_variant():
    with pytest.raises(ValueError, match="valid variants"):
        load_dataset("cora", variant="nope")


def test_unknown_option_rejected():
    with pytest.raises(TypeError, match="no option"):
        load_dataset("twitch", variant="lpgcn", sed=3)


def test_collisions_need_explicit_variant():
    with pytest.raises(ValueError, match="different graphs"):
        load_dataset("facebook")
    with pytest.raises(ValueError, match="different graphs"):
        load_dataset("amazon")
    fb = get_spec("facebook").variants
    assert fb["lpgnn"].redirect == ("facebook-pagepage", "lpgnn")
    assert fb["progap"].redirect == ("fb100-uillinois20", "progap")
    assert fb["privgnn"].redirect == ("fb100-uillinois20", "privgnn")
    am = get_spec("amazon").variants
    assert am["progap"].redirect[0] == "ogbn-products" and am["privgnn"].redirect[0] == "amazon-computers"
    assert get_spec("amazon2m").variants["privgnn"].redirect == ("ogbn-products", "privgnn")
    assert get_spec("fb100-uillinois20").variants["progap"].options["min_class_size"] == 1000
    assert get_spec("fb100").variants["progap"].options["min_class_size"] == 100_000
    assert get_spec("reddit").variants["gap"].options["min_class_size"] == 10_000


def test_standins_carry_their_own_names():
    assert "facebook" not in [a for s in all_specs() if s.name.startswith("fb100-") for a in s.aliases]
    assert get_spec("fb100-present").partial_ok and not get_spec("fb100").partial_ok
