"""Loaders of the graphs that cannot be had offline, run on tiny files written in their real raw formats and put in
the cache: LastFM Asia's Karate Club csv files, the ogbn-products zip (ProGAP's "amazon", PrivGNN's Amazon2M) and
Facebook100 ``.mat`` files (UIllinois20, ProGAP's and PrivGNN's "facebook"; all 100, ProGAP's FB-100)."""

from __future__ import annotations

import gzip
import zipfile

import numpy as np
import scipy.io
import scipy.sparse as sp
import torch
from dpgnn_data_testutils import needs_mirror, raw_dir, undirected_ok

from dpgnn.data import dataset_available, load_dataset
from dpgnn.data.loaders.facebook100 import UNIVERSITIES


def write_csv(path, header: str, rows) -> None:
    path.write_text(header + "\n" + "".join(",".join(str(v) for v in r) + "\n" for r in rows))


def gz_csv(rows) -> bytes:
    return gzip.compress("".join(",".join(str(v) for v in r) + "\n" for r in rows).encode())


def masks_partition(d, names=("train_mask", "val_mask", "test_mask")) -> bool:
    """The masks are disjoint and cover every node."""
    stacked = torch.stack([d[m] for m in names]).to(torch.int64)
    return bool((stacked.sum(0) == 1).all())


# ----------------------------------------------------------------------------------------------------------------
# LastFM Asia (Karate Club: edges.csv id_1,id_2; target.csv id,target; features.csv node_id,feature_id,value)
# ----------------------------------------------------------------------------------------------------------------
def test_lastfm_karateclub_csv(offline_cache, made_files):
    made_files.update({"edges.csv", "target.csv"})  # their published sha256 is known; features.csv's is not
    r = raw_dir("lastfm")
    n = 12
    y = [0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]  # class 2 is the smallest
    write_csv(r / "target.csv", "id,target", list(enumerate(y))[::-1])  # any row order: sorted by id
    write_csv(r / "edges.csv", "id_1,id_2", [(i, i + 1) for i in range(n - 1)] + [(3, 2), (0, 11)])
    # sparse rows; feature ids 5 and 900 only occur (one column each, raw ids kept); node 4 has no row
    feats = [(i, 5, 1) for i in range(n) if i != 4 and i % 2 == 0] + [(i, 900, 1) for i in range(1, n, 3)]
    write_csv(r / "features.csv", "node_id,feature_id,value", feats)
    d = load_dataset("lastfm-asia")
    assert d.num_nodes == n and d.x.shape == (n, 2) and d.x.dtype == torch.float32 and d.y.dtype == torch.long
    assert d.feature_ids.tolist() == [5, 900] and d.y.tolist() == y
    assert d.x[:, 0].tolist() == [float(i != 4 and i % 2 == 0) for i in range(n)]
    assert d.x[4].tolist() == [0.0, 1.0] and d.x[3].tolist() == [0.0, 0.0]
    assert d.edge_index.size(1) == 2 * 12 and undirected_ok(d)  # (3, 2) repeats (2, 3)
    v = load_dataset("lastfm", variant="lpgnn", top_classes=2)
    assert v.num_nodes == 9 and sorted(v.y.unique().tolist()) == [0, 1]  # class 2 dropped, the rest relabelled
    assert masks_partition(v) and [int(v[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [5, 2, 2]
    assert float(v.x.min()) == 0.0 and float(v.x.max()) == 1.0


@needs_mirror("karateclub/lastfm/edges.csv", "karateclub/lastfm/target.csv")
def test_lastfm_mirrored_graph_with_made_features(tmp_path, monkeypatch, no_network):
    """The mirror's real edges and targets (sha256-verified) with a features.csv in the Karate Club format: the graph
    and LPGNN's 10 largest classes have the registry's statistics."""
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    write_csv(
        raw_dir("lastfm") / "features.csv",
        "node_id,feature_id,value",
        [(i, i % 7, 1) for i in range(0, 7624, 5)] + [(7623, 7841, 1)],
    )
    d = load_dataset("lastfm")
    assert (d.num_nodes, d.edge_index.size(1) // 2, int(d.y.max()) + 1) == (7624, 27806, 18) and undirected_ok(d)
    assert d.x.shape == (7624, 8) and d.feature_ids.tolist() == [0, 1, 2, 3, 4, 5, 6, 7841]
    v = load_dataset("lastfm", variant="lpgnn")
    assert (v.num_nodes, v.edge_index.size(1) // 2, int(v.y.max()) + 1) == (7083, 25814, 10)
    assert no_network.calls == []


# ----------------------------------------------------------------------------------------------------------------
# ogbn-products (products.zip: products/raw/*.csv.gz without header, each undirected edge once; split/sales_ranking)
# ----------------------------------------------------------------------------------------------------------------
def _products_zip(path, n: int, y: list[int], edges, split: dict[str, list[int]]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("products/raw/edge.csv.gz", gz_csv(edges))
        zf.writestr("products/raw/node-feat.csv.gz", gz_csv([[i * 0.5, -i, 1.25] for i in range(n)]))
        zf.writestr("products/raw/node-label.csv.gz", gz_csv([[c] for c in y]))
        zf.writestr("products/raw/num-node-list.csv.gz", gz_csv([[n]]))
        zf.writestr("products/raw/num-edge-list.csv.gz", gz_csv([[len(edges)]]))
        for part, idx in split.items():
            zf.writestr(f"products/split/sales_ranking/{part}.csv.gz", gz_csv([[i] for i in idx]))
        zf.writestr("products/mapping/labelidx2productcategory.csv.gz", gz_csv([["label idx", "product category"]]))
        zf.writestr("products/RELEASE_v1.txt", "fixture\n")


def test_ogbn_products_zip_and_its_paper_variants(offline_cache):
    n = 16
    y = [0] * 6 + [1] * 6 + [2] * 3 + [3]
    edges = [(i, (i + 1) % n) for i in range(n)] + [(0, 8), (4, 12)]
    split = {"train": [0, 1, 2, 3], "valid": [4, 5], "test": list(range(6, n))}
    _products_zip(raw_dir("ogbn-products") / "products.zip", n, y, edges, split)
    assert dataset_available("ogbn-products") and dataset_available("amazon", "progap")
    d = load_dataset("products")
    assert d.num_nodes == n and d.x.shape == (n, 3) and d.x.dtype == torch.float32
    assert d.y.tolist() == y and d.y.dtype == torch.long
    assert d.edge_index.size(1) == 2 * len(edges) and undirected_ok(d)
    assert d.train_mask.nonzero().view(-1).tolist() == split["train"] and masks_partition(d)
    # ProGAP's "amazon": classes with >= min_class_size nodes (100,000 at paper scale), 75/10/15 split
    p = load_dataset("amazon", variant="progap", min_class_size=4)
    assert p.num_nodes == 12 and sorted(p.y.unique().tolist()) == [0, 1] and masks_partition(p) and undirected_ok(p)
    # PrivGNN's Amazon2M: all classes, num_private random nodes (1,000,000 at paper scale), the rest public, half test
    a = load_dataset("amazon2m", num_private=6)
    assert a.num_nodes == n and sorted(a.y.unique().tolist()) == [0, 1, 2, 3]
    assert [int(a[m].sum()) for m in ("private_mask", "public_train_mask", "public_test_mask")] == [6, 5, 5]
    assert masks_partition(a, ("private_mask", "public_train_mask", "public_test_mask"))


# ----------------------------------------------------------------------------------------------------------------
# Facebook100 (<Name>.mat, MAT-file v5: A sparse double symmetric, local_info double n x 7:
# status, gender, major, minor, housing, year, high school; 0 = missing)
# ----------------------------------------------------------------------------------------------------------------
def write_fb100_mat(path, local_info: np.ndarray, edges) -> None:
    n = local_info.shape[0]
    rows, cols = zip(*edges)
    a = sp.coo_matrix((np.ones(len(edges)), (rows, cols)), shape=(n, n)).tocsc()
    scipy.io.savemat(
        str(path), {"A": ((a + a.T) > 0).astype(np.float64).tocsc(), "local_info": local_info.astype(np.float64)}
    )


def _uiuc_info() -> np.ndarray:
    status = [1, 1, 2, 2, 1, 0, 1, 2, 1, 1, 6, 1, 1, 2]
    gender = [1, 2, 2, 1, 0, 1, 2, 1, 1, 2, 1, 2, 1, 1]
    major = [199, 201, 199, 0, 210, 201, 199, 199, 201, 210, 0, 199, 201, 199]
    minor = [0] * 14
    housing = [50, 51, 50, 52, 0, 50, 51, 52, 50, 50, 51, 0, 50, 51]
    year = [2008, 2008, 2008, 2008, 2009, 2009, 2009, 2009, 2007, 2007, 0, 2002, 2010, 2007]
    school = [3387] * 14
    return np.array([status, gender, major, minor, housing, year, school]).T


UIUC_EDGES = [(i, (i + 1) % 14) for i in range(14)] + [(0, 5), (2, 9), (3, 12)]


def test_fb100_uillinois20_mat_and_the_papers_facebook(offline_cache):
    info = _uiuc_info()
    write_fb100_mat(raw_dir("fb100-uillinois20") / "UIllinois20.mat", info, UIUC_EDGES)
    assert scipy.io.whosmat(str(raw_dir("uiuc") / "UIllinois20.mat")) == [
        ("A", (14, 14), "sparse"),
        ("local_info", (14, 7), "double"),
    ]
    d = load_dataset("fb100-uillinois20")
    # one-hot status (1, 2, 6), gender (1, 2), major (199, 201, 210), minor (none), housing (50, 51, 52)
    assert d.num_nodes == 14 and d.x.shape == (14, 11) and d.x.dtype == torch.float32
    assert d.x[5, :3].tolist() == [0.0, 0.0, 0.0] and d.x[0].tolist() == [1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0]
    # class year 2004..2009 as 0..C-1 in increasing order (2007, 2008, 2009 -> 0, 1, 2); 0 and out of range -> -1
    assert d.y.tolist() == [1, 1, 1, 1, 2, 2, 2, 2, 0, 0, -1, -1, -1, 0] and d.y.dtype == torch.long
    assert d.year.tolist() == info[:, 5].tolist()
    assert d.edge_index.size(1) == 2 * len(UIUC_EDGES) and undirected_ok(d)
    # ProGAP's "facebook": classes >= min_class_size (1,000 at paper scale), isolated nodes removed, 75/10/15
    p = load_dataset("facebook", variant="progap", min_class_size=4)
    assert torch.equal(p.x, load_dataset("fb100-uillinois20", variant="progap", min_class_size=4).x)
    assert p.num_nodes == 8 and sorted(p.y.unique().tolist()) == [0, 1] and masks_partition(p) and undirected_ok(p)
    # PrivGNN's "facebook": every recorded year a class (2002 and 2010 too), missing years dropped, private half
    v = load_dataset("facebook", variant="privgnn")
    assert v.num_nodes == 13 and v.y.max().item() + 1 == 5  # 2002, 2007, 2008, 2009, 2010
    assert [int(v[m].sum()) for m in ("private_mask", "public_train_mask", "public_test_mask")] == [6, 6, 1]
    assert masks_partition(v, ("private_mask", "public_train_mask", "public_test_mask"))


def _tiny_university(i: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """University ``i`` of the 100: 3 to 5 students with a few attribute values and a path of friendships."""
    rng = np.random.default_rng(i)
    n = 3 + i % 3
    info = np.column_stack(
        [
            rng.integers(1, 3, n),
            rng.integers(0, 3, n),
            rng.integers(0, 4, n) + 100 * (i % 2),
            rng.integers(0, 2, n),
            rng.integers(0, 3, n),
            2004 + (np.arange(n) + i) % 6,
            rng.integers(0, 9, n),
        ]
    )
    return info, [(k, k + 1) for k in range(n - 1)]


def test_fb100_all_100_universities_union(offline_cache, made_files):
    """ProGAP's FB-100: the disjoint union of the 100 universities (status, gender, major one-hot over the union)."""
    made_files.update(f"{name}.mat" for name in UNIVERSITIES)  # 36 have a published sha256
    r = raw_dir("fb100")
    unis = [_tiny_university(i) for i in range(len(UNIVERSITIES))]
    for name, (info, edges) in zip(UNIVERSITIES[:-1], unis):
        write_fb100_mat(r / f"{name}.mat", info, edges)
    assert not dataset_available("fb100") and dataset_available("fb100-present")  # one file short
    write_fb100_mat(r / f"{UNIVERSITIES[-1]}.mat", *unis[-1])
    assert dataset_available("fb100") and len(UNIVERSITIES) == 100
    d = load_dataset("facebook-100")
    info = np.concatenate([u[0] for u in unis])
    sizes = [len(u[0]) for u in unis]
    assert d.num_nodes == sum(sizes) and d.university.tolist() == np.repeat(np.arange(100), sizes).tolist()
    n_values = sum(len(np.unique(info[:, c][info[:, c] != 0])) for c in (0, 1, 2))  # status, gender, major
    assert d.x.shape == (sum(sizes), n_values) and d.x.dtype == torch.float32
    assert torch.equal(d.x.sum(1), torch.from_numpy((info[:, :3] != 0).sum(1).astype(np.float32)))
    assert d.y.tolist() == (info[:, 5] - 2004).tolist()  # years 2004..2009, all present
    assert d.edge_index.size(1) == 2 * sum(s - 1 for s in sizes) and undirected_ok(d)
    src, dst = d.edge_index
    assert torch.equal(d.university[src], d.university[dst])  # no edge between universities
    p = load_dataset("fb100", variant="progap", min_class_size=1)  # 100,000 at paper scale
    assert p.num_nodes == d.num_nodes and masks_partition(p) and undirected_ok(p)  # no class and no node dropped
