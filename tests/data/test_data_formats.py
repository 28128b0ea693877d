"""Loaders of the datasets too large to mirror, run on tiny files written in their real raw formats
(OGB zips, GraphSAINT Flickr, DGL Reddit/PPI zips, Kaggle/PyG Elliptic zips) put in the cache; PubMed on its seven
mirrored Planetoid files and an ``allx`` made in their pickle format. More in ``test_data_formats_graphs.py``."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import struct
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import torch
from dpgnn_data_testutils import MIRROR, needs_mirror, raw_dir, undirected_ok

from dpgnn.data import get_spec, load_dataset, seed_from_name


def gz_csv(rows) -> bytes:
    text = "\n".join(",".join(str(v) for v in r) for r in rows) + "\n"
    return gzip.compress(text.encode())


def npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_ogbn_arxiv_zip(offline_cache):
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


def test_flickr_graphsaint(offline_cache):
    r = raw_dir("flickr")
    adj = sp.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=np.float32))
    (r / "adj_full.npz").write_bytes(
        npz_bytes(data=adj.data, indices=adj.indices, indptr=adj.indptr, shape=np.array(adj.shape))
    )
    np.save(r / "feats.npy", np.arange(8, dtype=np.float64).reshape(4, 2))
    (r / "class_map.json").write_text(json.dumps({"0": 1, "1": 0, "2": 6, "3": 2}))
    (r / "role.json").write_text(json.dumps({"tr": [0, 1], "va": [2], "te": [3]}))
    d = load_dataset("flickr", variant="lpgcn")
    assert d.y.tolist() == [1, 0, 6, 2] and d.edge_index.size(1) == 4 and undirected_ok(d)
    assert d.train_mask.tolist() == [True, True, False, False] and d.test_mask.tolist() == [False] * 3 + [True]


def test_reddit_dgl_zip_and_gap_filter(offline_cache):
    n = 12
    y = np.array([0] * 5 + [1] * 5 + [2, 2])
    rng = np.random.default_rng(0)
    rows, cols = np.nonzero(np.triu(rng.random((n, n)) < 0.5, 1))
    coo = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    g = io.BytesIO()
    sp.save_npz(g, coo)
    with zipfile.ZipFile(raw_dir("reddit") / "reddit.zip", "w") as zf:
        zf.writestr(
            "reddit_data.npz",
            npz_bytes(feature=rng.random((n, 3)), label=y, node_types=np.array([1] * 8 + [2] * 2 + [3] * 2)),
        )
        zf.writestr("reddit_graph.npz", g.getvalue())
    d = load_dataset("reddit")
    assert d.num_nodes == n and undirected_ok(d) and d.edge_index.size(1) == 2 * len(rows)
    assert int(d.train_mask.sum()) == 8 and int(d.val_mask.sum()) == 2
    p = load_dataset("reddit", variant="gap", min_class_size=5)
    assert sorted(p.y.unique().tolist()) == [0, 1] and p.num_nodes <= 10  # class 2 (2 nodes) filtered out


def test_ppi_dgl_zip(offline_cache):
    def graph_json(n, links):
        return json.dumps(
            {
                "directed": False,
                "multigraph": False,
                "graph": {},
                "nodes": [{"id": i} for i in range(n)],
                "links": [{"source": a, "target": b} for a, b in links],
            }
        )

    with zipfile.ZipFile(raw_dir("ppi") / "ppi.zip", "w") as zf:
        for split, n, links, gid in (
            ("train", 4, [(0, 1), (2, 3)], [1, 1, 2, 2]),
            ("valid", 2, [(0, 1)], [21, 21]),
            ("test", 3, [(0, 2)], [23, 23, 23]),
        ):
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


def test_elliptic_zips_lpgcn_split(offline_cache):
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


PUBMED_MIRRORED = [f"planetoid/ind.pubmed.{p}" for p in ("x", "tx", "y", "ty", "ally", "graph", "test.index")]


def _py2_int(v: int) -> bytes:
    """An int as Python 2's cPickle wrote it (BININT1 / BININT2 / BININT)."""
    if 0 <= v < 256:
        return b"K" + struct.pack("<B", v)
    if 0 <= v < 65536:
        return b"M" + struct.pack("<H", v)
    return b"J" + struct.pack("<i", v)


def _py2_str(s: bytes) -> bytes:
    """A Python 2 ``str`` (SHORT_BINSTRING / BINSTRING)."""
    return (b"U" + struct.pack("<B", len(s)) if len(s) < 256 else b"T" + struct.pack("<i", len(s))) + s


def _py2_array(arr: np.ndarray, memo: dict[str, int], put) -> bytes:
    """One 1-D numpy array as numpy's ``__reduce__`` under Python 2 (``numpy.core.multiarray._reconstruct``)."""
    out = b""
    for name in ("numpy.core.multiarray\n_reconstruct\n", "numpy\nndarray\n"):
        out += b"h" + bytes([memo[name]]) if name in memo else b"c" + name.encode() + put(name)
    out += _py2_int(0) + b"\x85" + _py2_str(b"b") + b"\x87R" + put(None)
    out += b"(" + _py2_int(1) + _py2_int(len(arr)) + b"\x85"
    code = arr.dtype.str[1:]  # "i4", "f4"
    if code in memo:
        out += b"h" + bytes([memo[code]])
    else:
        glob = "numpy\ndtype\n"
        out += b"h" + bytes([memo[glob]]) if glob in memo else b"c" + glob.encode() + put(glob)
        out += _py2_str(code.encode()) + _py2_int(0) + _py2_int(1) + b"\x87R" + put(code)
        out += b"(" + _py2_int(3) + _py2_str(b"<") + b"NNN" + b"J\xff\xff\xff\xff" * 2 + _py2_int(0) + b"tb"
    return out + b"\x89" + _py2_str(arr.astype(arr.dtype.newbyteorder("<")).tobytes()) + b"tb"


def py2_csr_pickle(m: sp.csr_matrix) -> bytes:
    """``cPickle.dump(m, f, 2)`` under Python 2 with scipy < 1.8, as the Planetoid ``x``/``tx``/``allx`` files were
    written (int32 indices, float32 values): checked below to reproduce the mirrored files byte for byte."""
    memo: dict[str, int] = {}
    count = [0]

    def put(key: str | None) -> bytes:  # BINPUT of the next memo slot (named when it is reused later)
        count[0] += 1
        if key is not None:
            memo[key] = count[0]
        return b"q" + bytes([count[0]])

    out = b"\x80\x02c" + b"scipy.sparse.csr\ncsr_matrix\n" + put(None) + b")\x81" + put(None) + b"}" + put(None)
    out += b"(" + _py2_str(b"format") + put(None) + _py2_str(b"csr")
    out += _py2_str(b"_shape") + put(None) + _py2_int(m.shape[0]) + _py2_int(m.shape[1]) + b"\x86"
    out += _py2_str(b"indptr") + put(None) + _py2_array(m.indptr.astype(np.int32), memo, put)
    out += _py2_str(b"_cs_matrix__has_sorted_indices") + put(None) + b"\x88"
    out += _py2_str(b"indices") + put(None) + _py2_array(m.indices.astype(np.int32), memo, put)
    out += _py2_str(b"maxprint") + put(None) + _py2_int(50)
    out += _py2_str(b"data") + put(None) + _py2_array(m.data.astype(np.float32), memo, put)
    return out + b"ub."


@needs_mirror(*PUBMED_MIRRORED)
def test_pubmed_real_files_with_a_made_allx(tmp_path, monkeypatch, no_network, made_files):
    """PubMed's seven mirrored Planetoid files (read in place, sha256-verified) and an ``allx`` written in their
    pickle format (its first rows are ``x``, as in Planetoid; the rest made up): the loader's parse on real bytes."""

    mirror = Path(MIRROR) / "planetoid"
    real = {p: pickle.loads((mirror / f"ind.pubmed.{p}").read_bytes(), encoding="latin1") for p in ("x", "tx", "ally")}
    for p in ("x", "tx"):  # the writer reproduces the real files byte for byte: the made allx has their format
        assert py2_csr_pickle(real[p]) == (mirror / f"ind.pubmed.{p}").read_bytes()
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    n_all, n_feat = real["ally"].shape[0], real["x"].shape[1]
    rest = sp.random(n_all - real["x"].shape[0], n_feat, 0.02, "csr", np.float32, np.random.default_rng(0))
    allx = sp.vstack([real["x"], rest], format="csr")
    allx.sort_indices()
    (raw_dir("pubmed") / "ind.pubmed.allx").write_bytes(py2_csr_pickle(allx))
    made_files.add("ind.pubmed.allx")  # cannot match the published file's sha256; the seven real ones are checked

    d = load_dataset("pubmed")
    stats = get_spec("pubmed").stats
    assert d.num_nodes == stats["nodes"] == 19717 and d.x.shape == (19717, stats["features"])
    assert d.x.dtype == torch.float32 and d.y.dtype == torch.long
    assert d.edge_index.size(1) == 2 * stats["edges"] and undirected_ok(d)
    assert torch.bincount(d.y).tolist() == [4103, 7739, 7875]  # the mirror MANIFEST's class counts over ally + ty
    test_index = torch.tensor([int(v) for v in (mirror / "ind.pubmed.test.index").read_text().split()])
    assert torch.equal(d.x[test_index], torch.from_numpy(real["tx"].toarray()))  # tx row j is node test_index[j]
    assert torch.equal(d.x[:60], torch.from_numpy(real["x"].toarray()))
    assert [int(d[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [60, 500, 1000]
    assert (
        d.train_mask[:60].all()
        and d.val_mask[60:560].all()
        and torch.equal(d.test_mask.nonzero().view(-1), test_index.sort().values)
    )
    assert not (d.train_mask & d.test_mask).any() and not (d.val_mask & d.test_mask).any()
    assert no_network.calls == []
