"""Fixtures for dpgnn.data tests: isolated cache dirs, the offline mirror, a network-free downloader."""

from __future__ import annotations

import os
import urllib.error
from pathlib import Path

import pytest

import dpgnn.data.download as dl

MIRROR = os.environ.get("DPGNN_DATA_MIRROR")


class DownloadRecorder:
    """Stands in for the downloader: records calls and fails like an offline machine."""

    def __init__(self):
        self.calls: list[str] = []

    def __call__(self, url: str, dest: Path) -> None:
        self.calls.append(url)
        raise urllib.error.URLError("network disabled in tests")


@pytest.fixture
def no_network(monkeypatch) -> DownloadRecorder:
    rec = DownloadRecorder()
    monkeypatch.setattr(dl, "DOWNLOADER", rec)
    return rec


@pytest.fixture
def tmp_data_dir(tmp_path, monkeypatch) -> Path:
    """A fresh cache root for this test (never the repository's data/)."""
    d = tmp_path / "cache"
    monkeypatch.setenv("DPGNN_DATA_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """A cache root shared by the mirror tests of the session (each dataset is parsed once)."""
    return tmp_path_factory.mktemp("dpgnn-data-cache")


@pytest.fixture
def offline_cache(tmp_path, monkeypatch, no_network) -> Path:
    """A fresh cache root, an empty mirror and no network: only the raw files a test writes into the cache
    (``<cache>/<dataset>/raw/``, see :func:`dpgnn_data_testutils.raw_dir`) can be loaded."""
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path / "empty-mirror"))
    return tmp_path / "cache"


@pytest.fixture
def made_files(monkeypatch) -> set[str]:
    """Names of raw files a test wrote in the real format (so never the published bytes): add a name to exempt that
    file from the sha256 check; every other file is still verified."""
    names: set[str] = set()
    verify = dl.verify
    monkeypatch.setattr(
        dl,
        "verify",
        lambda path, raw, raw_dir=None: "made by the test" if raw.name in names else verify(path, raw, raw_dir),
    )
    return names


@pytest.fixture
def mirror_env(shared_cache, monkeypatch, no_network) -> Path:
    """Mirror from the environment + the shared tmp cache + no network."""
    monkeypatch.setenv("DPGNN_DATA_DIR", str(shared_cache))
    return Path(MIRROR) if MIRROR else Path()
