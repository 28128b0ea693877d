"""Mirror / cache / download resolution: checksums, one clear unavailability message, no network in tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dpgnn_data_testutils import MIRROR, needs_mirror

import dpgnn.data.download as dl
from dpgnn.data import ChecksumError, DatasetUnavailable, dataset_available, describe, get_spec, load_dataset
from dpgnn.data.download import RawFile, fetch, sha256sum
from dpgnn.data.registry import PROCESS_VERSION

CORA = [f"planetoid/ind.cora.{p}" for p in ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")]


@needs_mirror(*CORA)
def test_checksum_mismatch_in_mirror(tmp_path, monkeypatch, no_network):
    mirror = tmp_path / "mirror"
    (mirror / "planetoid").mkdir(parents=True)
    for rel in CORA:
        shutil.copy(Path(MIRROR) / rel, mirror / rel)
    bad = mirror / "planetoid/ind.cora.test.index"
    raw = bytearray(bad.read_bytes())
    raw[0] = ord("9") if raw[0] != ord("9") else ord("8")
    bad.write_bytes(bytes(raw))
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    with pytest.raises(ChecksumError) as err:
        load_dataset("cora")
    msg = str(err.value)
    expected = next(r.sha256[0] for r in get_spec("cora").raw_files if r.name == "ind.cora.test.index")
    assert "ind.cora.test.index" in msg and expected in msg and sha256sum(bad) in msg
    assert no_network.calls == []


def test_unavailable_single_clear_message(tmp_path, monkeypatch, no_network):
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    cache = tmp_path / "cache"
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(empty))
    monkeypatch.setenv("DPGNN_DATA_DIR", str(cache))
    with pytest.raises(DatasetUnavailable) as err:
        load_dataset("cora")
    msg = str(err.value)
    spec = get_spec("cora")
    for raw in spec.raw_files:
        assert raw.name in msg and raw.url in msg
        assert str(empty / raw.mirror) in msg  # where to put it in the mirror
        assert str(cache / "cora" / "raw" / raw.name) in msg  # ... or in the cache
    assert msg.count("not available here") == 1
    # the first network failure stops further attempts (fail fast offline)
    assert len(no_network.calls) == 1
    assert isinstance(err.value, RuntimeError)


def test_download_false_never_touches_network(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path))
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    with pytest.raises(DatasetUnavailable):
        load_dataset("twitch", download=False)
    assert not dataset_available("twitch")
    assert no_network.calls == []


@pytest.mark.parametrize(
    "name",
    ["pubmed", "ogbn-arxiv", "ogbn-products", "flickr", "reddit", "ppi", "elliptic", "fb100-uillinois20", "fb100"],
)
def test_unmirrored_datasets_raise_unavailable(tmp_path, monkeypatch, no_network, name):
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    if MIRROR is None:
        monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path))
    spec = get_spec(name)
    missing = [r for r in spec.raw_files if dl.locate(r, spec.raw_dir()) is None]
    with pytest.raises(DatasetUnavailable) as err:
        load_dataset(name)
    msg = str(err.value)
    assert missing and all(r.url in msg for r in missing)
    assert not dataset_available(name)


@needs_mirror(*CORA)
def test_data_dir_with_the_raw_files_needs_no_network(tmp_path, monkeypatch, no_network):
    """Without a mirror, raw files put where the message says (``$DPGNN_DATA_DIR/<dataset>/raw/<file>``) are used:
    sha256-verified, nothing downloaded, the parsed copy cached beside them."""
    monkeypatch.delenv("DPGNN_DATA_MIRROR", raising=False)
    own = tmp_path / "my-datasets"
    monkeypatch.setenv("DPGNN_DATA_DIR", str(own))
    assert not dataset_available("cora")
    with pytest.raises(DatasetUnavailable) as err:
        load_dataset("cora", download=False)
    for rel in CORA:
        target = own / "cora" / "raw" / Path(rel).name
        assert str(target) in str(err.value)  # the message names the place
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(MIRROR) / rel, target)
    assert dataset_available("cora") and f"present here: {own / 'cora' / 'raw' / 'ind.cora.x'}" in describe("cora")
    d = load_dataset("cora", variant="lpgcn")
    assert (d.num_nodes, d.edge_index.size(1) // 2, int(d.train_mask.sum())) == (2708, 5278, 140)
    assert {p.name for p in (own / "cora" / "processed").iterdir()} == {
        f"base-v{PROCESS_VERSION}.pt",
        f"lpgcn-v{PROCESS_VERSION}.pt",
    }
    assert no_network.calls == []


def test_real_downloader_fails_fast_offline(tmp_path, monkeypatch):
    """The real urllib downloader against a closed local port: URLError -> DatasetUnavailable, quickly."""
    raw = RawFile("f.bin", "http://127.0.0.1:9/f.bin")
    monkeypatch.setenv("DPGNN_DATA_MIRROR", "")
    with pytest.raises(DatasetUnavailable) as err:
        fetch("toy", [raw], tmp_path / "raw")
    assert "http://127.0.0.1:9/f.bin" in str(err.value)
    assert not (tmp_path / "raw" / "f.bin").exists()


def test_wenet_not_public(tmp_data_dir, no_network):
    with pytest.raises(DatasetUnavailable, match="not public") as err:
        load_dataset("WeNet")
    assert "ProGAP" in str(err.value)
    assert not dataset_available("wenet")
    assert no_network.calls == []


class _FakeServer:
    def __init__(self, payload: bytes):
        self.payload = payload
        self.calls = 0

    def __call__(self, url: str, dest: Path) -> None:
        self.calls += 1
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(self.payload)


def test_unknown_hash_recorded_on_first_download_then_enforced(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_DATA_MIRROR", "")
    server = _FakeServer(b"hello graph")
    monkeypatch.setattr(dl, "DOWNLOADER", server)
    raw = RawFile("a.csv", "https://example.org/a.csv")  # public hash unknown
    raw_dir = tmp_path / "raw"
    paths = fetch("toy", [raw], raw_dir)
    assert paths["a.csv"].read_bytes() == b"hello graph" and server.calls == 1
    import json

    record = json.loads((raw_dir / "sha256.json").read_text())
    assert record["a.csv"] == sha256sum(raw_dir / "a.csv")
    fetch("toy", [raw], raw_dir)  # cached: verified against the record, no second download
    assert server.calls == 1
    (raw_dir / "a.csv").write_bytes(b"tampered")
    with pytest.raises(ChecksumError, match="recorded at first download"):
        fetch("toy", [raw], raw_dir)


def test_download_with_wrong_known_hash_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_DATA_MIRROR", "")
    monkeypatch.setattr(dl, "DOWNLOADER", _FakeServer(b"not the file"))
    raw = RawFile("b.bin", "https://example.org/b.bin", sha256=("0" * 64,))
    with pytest.raises(ChecksumError) as err:
        fetch("toy", [raw], tmp_path / "raw")
    assert "0" * 64 in str(err.value) and "b.bin" in str(err.value)
    assert not (tmp_path / "raw" / "b.bin").exists()  # moved aside, never used


def test_amazon_accepts_mirror_and_public_hash():
    (raw,) = get_spec("amazon-computers").raw_files
    assert set(raw.sha256) == {
        "8553eeb570349de56d0cfc21f24fa6cbff483ad63d72f55f106adb26063365ee",
        "736ba1d9fd85eac2da83a5ad25c463f04b0031a6ca01563f90a7099d9e8ffb2c",
    }


def test_dataset_available_with_and_without_mirror(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path / "nothing"))
    assert not dataset_available("cora")
    if MIRROR and all((Path(MIRROR) / p).is_file() for p in CORA):
        monkeypatch.setenv("DPGNN_DATA_MIRROR", MIRROR)
        assert dataset_available("cora") and dataset_available("cora", "lpgcn")
    assert no_network.calls == []


def test_real_downloader_against_local_http_server(tmp_path, monkeypatch):
    """urlretrieve + fetch end to end on a local HTTP server: file saved, hash recorded, second fetch cached."""
    import functools
    import http.server
    import threading

    served = tmp_path / "www"
    served.mkdir()
    (served / "edges.csv").write_bytes(b"id_1,id_2\n0,1\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("DPGNN_DATA_MIRROR", "")
        raw = RawFile("edges.csv", f"http://127.0.0.1:{server.server_address[1]}/edges.csv")
        raw_dir = tmp_path / "cache" / "toy" / "raw"
        paths = fetch("toy", [raw], raw_dir)
        assert paths["edges.csv"].read_bytes() == b"id_1,id_2\n0,1\n"
        assert not [p for p in raw_dir.iterdir() if p.name.endswith((".part", ".tmp"))]
        import json

        assert json.loads((raw_dir / "sha256.json").read_text())["edges.csv"] == sha256sum(raw_dir / "edges.csv")
    finally:
        server.shutdown()
        server.server_close()
