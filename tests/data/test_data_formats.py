"""Loaders of the datasets too large to mirror, run on tiny files written in their real raw formats
(OGB zips, GraphSAINT Flickr, DGL Reddit/PPI zips, Kaggle/PyG Elliptic zips, Planetoid pickles) put in the cache."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from dpgnn.data import get_spec, load_dataset, seed_from_name
from dpgnn_data_testutils import undirected_ok


@pytest.fixture
def env(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path / "empty-mirror"))
    return tmp_path / "cache"


def raw_dir(name):
    d = get_spec(name).raw_dir()
    d.mkdir(parents=True, exist_ok=True)
    return d


def gz_csv(rows) -> bytes:
    text = "\n".join(",".join(str(v) for v in r) for r in rows) + "\n"
    return gzip.compress(text.encode())


def npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_ogbn_arxiv_zip(env):
    n = 6
    edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5)]  # directed citations
    with zipfile.ZipFile(raw_dir("ogbn-arxiv") / "arxiv.zip", "w") as zf:
        zf.writestr("arxiv/raw/edge.csv.gz", gz_csv(edges))
        zf.writestr("arxiv/raw/node-feat.csv.gz", gz_csv([[i, i + 0.5] for i in range(n)]))
        zf.writestr("arxiv/raw/node-label.csv.gz", gz_csv([[i % 3] for i in range(n)]))
        zf.writestr("arxiv/raw/node_year.csv.gz", gz_csv([[2015 + i] for i in range(n)]))
        zf.writestr("arxiv/raw/num-node-list.csv.gz", gz_csv([[n]]))
        zf.writestr("arxiv/raw/num-edge-list.csv.gz", gz_csv([[len(edges)]]))
        zf.writestr("arxiv/split/time/train.csv.gz", gz_csv([[0], [1], [2]]))
        zf.writestr("arxiv/split/time/valid.csv.gz", gz_csv([[3], [4]]))
        zf.writestr("arxiv/split/time/test.csv.gz", gz_csv([[5]]))
    d = load_dataset("arxiv")
    assert d.num_nodes == 6 and d.x.shape == (6, 2) and d.x.dtype == torch.float32
    assert d.y.tolist() == [0, 1, 2, 0, 1, 2] and d.node_year.tolist() == list(range(2015, 2021))
    assert d.edge_index.size(1) == 10 and undirected_ok(d)
    assert d.train_mask.tolist() == [True] * 3 + [False] * 3 and int(d.test_mask.sum()) == 1
    p = load_dataset("ogbn-arxiv", variant="privgnn")
    assert torch.equal(p.private_mask, d.train_mask) and torch.equal(p.public_test_mask, d.test_mask)


def test_flickr_graphsaint(env):
    r = raw_dir("flickr")
    adj = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=np.float32))
    (r / "adj_full.npz").write_bytes(npz_bytes(data=adj.data, indices=adj.indices, indptr=adj.indptr,
                                               shape=np.array(adj.shape)))
    np.save(r / "feats.npy", np.arange(8, dtype=np.float64).reshape(4, 2))
    (r / "class_map.json").write_text(json.dumps({"0": 1, "1": 0, "2": 6, "3": 2}))
    (r / "role.json").write_text(json.dumps({"tr": [0, 1], "va": [2], "te": [3]}))
    d = load_dataset("flickr", variant="lpgcn")
    assert d.y.tolist() == [1, 0, 6, 2] and d.edge_index.size(1) == 4 and undirected_ok(d)
    assert d.train_mask.tolist() == [True, True, False, False] and d.test_mask.tolist() == [False] * 3 + [True]


def test_reddit_dgl_zip_and_gap_filter(env):
    n = 12
    y = np.array([0] * 5 + [1] * 5 + [2, 2])
    rng = np.random.default_rng(0)
    rows, cols = np.nonzero(np.triu(rng.random((n, n)) < 0.5, 1))
    coo = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    g = io.BytesIO()
    sp.save_npz(g, coo)
    with zipfile.ZipFile(raw_dir("reddit") / "reddit.zip", "w") as zf:
        zf.writestr("reddit_data.npz", npz_bytes(feature=rng.random((n, 3)), label=y,
                                                 node_types=np.array([1] * 8 + [2] * 2 + [3] * 2)))
        zf.writestr("reddit_graph.npz", g.getvalue())
    d = load_dataset("reddit")
    assert d.num_nodes == n and undirected_ok(d) and d.edge_index.size(1) == 2 * len(rows)
    assert int(d.train_mask.sum()) == 8 and int(d.val_mask.sum()) == 2
    p = load_dataset("reddit", variant="gap", min_class_size=5)
    assert sorted(p.y.unique().tolist()) == [0, 1] and p.num_nodes <= 10  # class 2 (2 nodes) filtered out


def test_ppi_dgl_zip(env):
    def graph_json(n, links):
        return json.dumps({"directed": False, "multigraph": False, "graph": {},
                           "nodes": [{"id": i} for i in range(n)],
                           "links": [{"source": a, "target": b} for a, b in links]})

    with zipfile.ZipFile(raw_dir("ppi") / "ppi.zip", "w") as zf:
        for split, n, links, gid in (("train", 4, [(0, 1), (2, 3)], [1, 1, 2, 2]), ("valid", 2, [(0, 1)], [21, 21]),
                                     ("test", 3, [(0, 2)], [23, 23, 23])):
            zf.writestr(f"ppi/{split}_graph.json", graph_json(n, links))
            zf.writestr(f"ppi/{split}_feats.npy", _npy(np.ones((n, 5))))
            zf.writestr(f"ppi/{split}_labels.npy", _npy(np.eye(n, 3)))
            zf.writestr(f"ppi/{split}_graph_id.npy", _npy(np.array(gid)))
    d = load_dataset("ppi", variant="drw")
    assert d.num_nodes == 9 and d.y.shape == (9, 3) and d.y.dtype == torch.float32
    assert d.edge_index.size(1) == 8 and undirected_ok(d)
    assert d.train_mask.tolist() == [True] * 4 + [False] * 5 and int(d.test_mask.sum()) == 3
    assert d.graph_id.tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 3]
    # the validation graph's edge (0, 1) is offset by the 4 training nodes
    assert {(4, 5), (5, 4)} <= set(map(tuple, d.edge_index.t().tolist()))


def _npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def test_elliptic_zips_lpgcn_split(env):
    r = raw_dir("elliptic")
    n = 40
    tx = np.arange(1000, 1000 + n)
    feats = np.column_stack([tx, np.arange(n) % 5 + 1, np.random.default_rng(1).random((n, 3))])
    classes = ["1" if i % 4 == 0 else "2" if i % 4 == 1 else "unknown" for i in range(n)]
    files = {
        "elliptic_txs_features.csv": "\n".join(",".join(str(v) for v in row) for row in feats) + "\n",
        "elliptic_txs_classes.csv": "txId,class\n" + "\n".join(f"{t},{c}" for t, c in zip(tx, classes)) + "\n",
        "elliptic_txs_edgelist.csv": "txId1,txId2\n" + "\n".join(f"{tx[i]},{tx[(i + 1) % n]}" for i in range(n)) + "\n",
    }
    for name, text in files.items():
        with zipfile.ZipFile(r / f"{name}.zip", "w") as zf:
            zf.writestr(name, text)
    d = load_dataset("elliptic")
    assert d.x.shape == (n, 4)  # time step + 3 features
    assert d.y[:4].tolist() == [0, 1, -1, -1] and int(d.labeled_mask.sum()) == 20
    assert d.edge_index.size(1) == 2 * n and undirected_ok(d)
    v = load_dataset("elliptic", variant="lpgcn")
    assert v.num_nodes == n  # unlabelled nodes stay
    union = v.train_mask | v.val_mask | v.test_mask
    assert torch.equal(union, d.labeled_mask)
    assert [int(v[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [10, 5, 5]
    w = load_dataset("elliptic", variant="lpgcn", seed=seed_from_name("bitcoin"))
    assert torch.equal(w.train_mask, v.train_mask)


def test_planetoid_pubmed_format(env, monkeypatch):
    """A tiny Planetoid-format PubMed (pickled scipy/numpy objects); its known allx hash is bypassed."""
    import dpgnn.data.download as dl

    monkeypatch.setattr(dl, "verify", lambda path, raw, raw_dir=None: "skipped")
    r = raw_dir("pubmed")
    objs = {
        "x": sp.csr_matrix(np.eye(2, 3)), "y": np.eye(2, 3)[[0, 1]],
        "allx": sp.csr_matrix(np.eye(3, 3)), "ally": np.eye(3)[[0, 1, 2]],
        "tx": sp.csr_matrix(np.array([[1.0, 1, 0], [0, 1, 1]])), "ty": np.eye(3)[[2, 0]],
        "graph": {0: [1], 1: [0, 2], 2: [1, 4], 3: [4], 4: [2, 3, 4]},
    }
    for k, v in objs.items():
        (r / f"ind.pubmed.{k}").write_bytes(pickle.dumps(v))
    (r / "ind.pubmed.test.index").write_text("4\n3\n")
    d = load_dataset("pubmed")
    assert d.num_nodes == 5 and d.y.tolist() == [0, 1, 2, 0, 2]
    assert d.x[4].tolist() == [1.0, 1.0, 0.0] and d.x[3].tolist() == [0.0, 1.0, 1.0]
    assert d.edge_index.size(1) == 8 and undirected_ok(d)  # self-loop 4-4 dropped
    assert d.train_mask.tolist()[:2] == [True, True] and d.test_mask.tolist() == [False] * 3 + [True, True]
