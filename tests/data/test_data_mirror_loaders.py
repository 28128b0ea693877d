"""Loaders on the offline mirror: statistics exactly as the MANIFEST / the docs/papers pages state them."""

from __future__ import annotations

import time

import pytest
import torch
from dpgnn_data_testutils import needs_mirror, undirected_ok

from dpgnn.data import DatasetUnavailable, dataset_available, load_dataset, seed_from_name

CORA = [f"planetoid/ind.cora.{p}" for p in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")]
CITESEER = [p.replace("cora", "citeseer") for p in CORA]
TWITCH = [f"karateclub/twitch/{f}" for f in ("edges.csv", "features.csv", "target.csv")]


def stats(d):
    return (d.num_nodes, d.edge_index.size(1) // 2, d.x.size(1), int(d.y[d.y >= 0].unique().numel()))


def _check_basic(d):
    assert d.x.dtype == torch.float32 and d.y.dtype == torch.long
    assert undirected_ok(d)


@needs_mirror(*CORA)
def test_cora_public_split(mirror_env):
    d = load_dataset("cora")
    assert stats(d) == (2708, 5278, 1433, 7)
    _check_basic(d)
    assert [int(d[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [140, 500, 1000]
    assert bool(d.train_mask[:140].all()) and bool(d.val_mask[140:640].all())
    assert not bool((d.train_mask & d.test_mask).any())
    # the lpgcn variant is the public split
    v = load_dataset("cora", variant="lpgcn")
    assert torch.equal(v.train_mask, d.train_mask) and torch.equal(v.test_mask, d.test_mask)


@needs_mirror(*CITESEER)
def test_citeseer_public_split_and_isolated_fix(mirror_env):
    d = load_dataset("CiteSeer")
    assert stats(d) == (3327, 4552, 3703, 6)
    _check_basic(d)
    assert [int(d[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [120, 500, 1000]
    # 15 isolated test-range papers have zero features (the CiteSeer fix)
    zero_rows = int((d.x.sum(1) == 0).sum())
    assert zero_rows >= 15


@needs_mirror(*CORA, *CITESEER)
@pytest.mark.parametrize("name", ["cora", "citeseer"])
def test_planetoid_equals_pyg(mirror_env, name):
    """Same x, y, masks and edge set as PyG's own Planetoid reader on the same files."""
    from torch_geometric.io import read_planetoid_data

    ref = read_planetoid_data(str(mirror_env / "planetoid"), name)
    d = load_dataset(name)
    assert torch.equal(ref.x, d.x) and torch.equal(ref.y, d.y)
    for m in ("train_mask", "val_mask", "test_mask"):
        assert torch.equal(ref[m], d[m])
    key = lambda ei: torch.sort(ei[0] * 10**6 + ei[1]).values  # noqa: E731
    assert torch.equal(key(ref.edge_index), key(d.edge_index))


@needs_mirror(*TWITCH)
def test_twitch_lpgcn(mirror_env):
    d = load_dataset("twitch")
    assert stats(d) == (7126, 35324, 2545, 2)  # 2,545 occurring feature ids (LPGCN Table 1)
    _check_basic(d)
    assert set(d.x.unique().tolist()) <= {0.0, 1.0}
    assert bool((d.x != 0).any(0).all())  # no empty column
    assert int(d.feature_ids.max()) == 3169 and bool((d.feature_ids.diff() > 0).all())
    assert not hasattr(d, "train_mask") or d.train_mask is None
    v = load_dataset("twitch", variant="lpgcn")
    sizes = [int(v[m].sum()) for m in ("train_mask", "val_mask", "test_mask")]
    assert sizes == [7126 - 1782 - 1782, 1782, 1782]
    assert int((v.train_mask | v.val_mask | v.test_mask).sum()) == 7126
    again = load_dataset("twitch", variant="lpgcn", seed=seed_from_name("musae"))
    assert torch.equal(again.train_mask, v.train_mask)  # default seed is sum(ord("musae"))
    other = load_dataset("twitch", variant="lpgcn", seed=1)
    assert not torch.equal(other.train_mask, v.train_mask)


def _official_lpgnn_split(n: int) -> list[torch.Tensor]:
    """The LPGNN repository's final split rule (docs/papers/lpgnn.md#data-pipeline): torch.randperm(n) right after
    seeding 12345; the first floor(n/2) nodes train, the next floor(n/4) validate, the next floor(n/4) test."""
    with torch.random.fork_rng(devices=[]):  # the official code seeds torch's global generator; restored after
        torch.manual_seed(12345)
        perm = torch.randperm(n)
    cuts = [0, n // 2, n // 2 + n // 4, n // 2 + 2 * (n // 4)]
    masks = []
    for lo, hi in zip(cuts, cuts[1:]):
        m = torch.zeros(n, dtype=torch.bool)
        m[perm[lo:hi]] = True
        masks.append(m)
    return masks


@needs_mirror(*CORA)
def test_lpgnn_cora_split_is_the_official_one_node_for_node(mirror_env):
    v = load_dataset("cora", variant="lpgnn")
    ours = [v.train_mask, v.val_mask, v.test_mask]
    assert all(torch.equal(a, b) for a, b in zip(ours, _official_lpgnn_split(v.num_nodes)))


@needs_mirror("karateclub/facebook/edges.csv", "karateclub/facebook/target.csv", "musae_facebook/facebook.json")
def test_facebook_pagepage_and_lpgnn(mirror_env):
    d = load_dataset("facebook-pagepage")
    assert stats(d) == (22470, 170823, 4714, 4)
    _check_basic(d)
    v = load_dataset("facebook", variant="lpgnn")
    assert v.num_nodes == 22470
    assert float(v.x.min()) == 0.0 and float(v.x.max()) == 1.0
    assert bool((v.x.max(0).values > v.x.min(0).values).all())  # constant columns dropped
    assert [int(v[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [11234, 5618, 5618]
    # the official code truncates the sizes (11,235 / 5,617 / 5,617): one node differs in each mask
    official = _official_lpgnn_split(v.num_nodes)
    assert [int((a != b).sum()) for a, b in zip([v.train_mask, v.val_mask, v.test_mask], official)] == [1, 1, 1]


@needs_mirror("amazon_computers/amazon_electronics_computers.npz")
def test_amazon_computers(mirror_env):
    d = load_dataset("amazon-computers")
    assert stats(d) == (13752, 245861, 767, 10)
    assert d.edge_index.size(1) == 491722
    _check_basic(d)
    p = load_dataset("amazon", variant="privgnn")
    assert [int(p[m].sum()) for m in ("private_mask", "public_train_mask", "public_test_mask")] == [2500, 3000, 3000]
    assert torch.bincount(p.y[p.private_mask]).tolist() == [250] * 10
    assert not bool((p.private_mask & (p.public_train_mask | p.public_test_mask)).any())


@needs_mirror("nifty_credit/credit.csv", "nifty_credit/credit_edges.txt.zip")
def test_credit(mirror_env):
    d = load_dataset("credit")
    assert stats(d) == (30000, 137377, 13, 2)
    _check_basic(d)


@needs_mirror("facebook100/Caltech36.mat")
def test_fb100_caltech(mirror_env):
    d = load_dataset("fb100-caltech36")
    assert d.num_nodes == 769 and d.edge_index.size(1) == 33312
    _check_basic(d)
    # one-hot blocks: every node has at most one 1 per attribute (5 attributes)
    assert int(d.x.sum(1).max()) <= 5 and set(d.x.unique().tolist()) <= {0.0, 1.0}
    assert int(d.y.max()) == 5 and int(d.y.min()) == -1  # years 2004..2009 -> 0..5, missing -1
    p = load_dataset("FB100_Caltech36", variant="progap", min_class_size=100)
    assert bool((p.y >= 0).all()) and bool((torch.bincount(p.y) >= 100).all())
    deg = torch.bincount(p.edge_index[0], minlength=p.num_nodes)
    assert bool((deg > 0).all())
    q = load_dataset("fb100-caltech36", variant="privgnn")
    assert int(q.private_mask.sum()) == round(0.5 * q.num_nodes)
    assert int(q.y.max()) + 1 > 6  # all recorded years, not the 2004..2009 window


@needs_mirror("facebook100/Wisconsin87.mat")
def test_fb100_wisconsin_manifest_stats(mirror_env):
    d = load_dataset("fb100-wisconsin87")
    assert d.num_nodes == 23842 and d.edge_index.size(1) == 1671904


@needs_mirror("karateclub/lastfm/edges.csv", "karateclub/lastfm/target.csv")
def test_lastfm_features_missing_message(mirror_env, no_network):
    if (mirror_env / "karateclub/lastfm/features.csv").is_file():
        pytest.skip("the mirror has LastFM features; nothing missing to report")
    with pytest.raises(DatasetUnavailable) as err:
        load_dataset("lastfm", variant="lpgnn")
    msg = str(err.value)
    assert "features.csv" in msg and "karateclub/master/dataset/node_level/lastfm/features.csv" in msg
    assert "edges.csv:" not in msg  # only the missing file is listed
    assert not dataset_available("lastfm")


@needs_mirror(*CORA)
def test_processed_cache_makes_second_load_fast(tmp_data_dir, no_network):
    t0 = time.perf_counter()
    a = load_dataset("cora")
    t1 = time.perf_counter()
    b = load_dataset("cora")
    t2 = time.perf_counter()
    assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
    assert list((tmp_data_dir / "cora" / "processed").glob("base-v*.pt"))
    assert t2 - t1 < t1 - t0
    assert no_network.calls == []


@needs_mirror("facebook100/Caltech36.mat", "facebook100/Reed98.mat")
def test_fb100_union_of_present_universities(tmp_path, monkeypatch, no_network):
    import shutil

    from dpgnn_data_testutils import MIRROR

    mirror = tmp_path / "mirror" / "facebook100"
    mirror.mkdir(parents=True)
    for name in ("Caltech36", "Reed98"):
        shutil.copy(f"{MIRROR}/facebook100/{name}.mat", mirror / f"{name}.mat")
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    cal, reed = load_dataset("fb100-caltech36"), load_dataset("fb100-reed98")
    u = load_dataset("fb100-present")
    assert u.num_nodes == cal.num_nodes + reed.num_nodes
    assert u.edge_index.size(1) == cal.edge_index.size(1) + reed.edge_index.size(1)
    assert sorted(u.university.unique().tolist()) == [13, 50]  # indices of Caltech36 and Reed98
    # no edge crosses universities (disjoint union)
    assert bool((u.university[u.edge_index[0]] == u.university[u.edge_index[1]]).all())
    # three one-hot attributes (status, gender, major): at most 3 ones per node
    assert int(u.x.sum(1).max()) <= 3
    p = load_dataset("fb100-present", variant="progap", min_class_size=150)
    assert bool((torch.bincount(p.y) >= 150).all())
    # the strict FB-100 needs all 100 universities
    with pytest.raises(DatasetUnavailable):
        load_dataset("fb100")
    assert no_network.calls  # tried (and failed) to download the first missing university
