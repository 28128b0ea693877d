"""Raw-file retrieval: offline mirror, local cache, checksum-verified download.

Resolution order for every raw file of a dataset (see :class:`RawFile`):

1. ``$DPGNN_DATA_MIRROR/<mirror path>`` when the variable is set and the file exists there (used in place,
   never copied), verified against the registry's sha256;
2. ``<root>/<dataset>/raw/<name>`` (the download cache), verified against the registry's sha256 or, for files
   whose public hash is unknown, against the hash recorded on first download in ``raw/sha256.json``;
3. a download from the canonical URL (short connect timeout, progress bar) into the cache, then verified.

A file that none of these provides ends in ONE :class:`DatasetUnavailable` that lists every missing file, its URL
and the two places where it can be put by hand.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dpgnn.atomic import atomic_open
from dpgnn.utils import ROOT

log = logging.getLogger("dpgnn.data")

#: Connect/read timeout (seconds) for downloads: fail fast on machines without internet.
CONNECT_TIMEOUT = 5.0

MIRROR_ENV = "DPGNN_DATA_MIRROR"
DATA_DIR_ENV = "DPGNN_DATA_DIR"
HASH_RECORD = "sha256.json"


class DatasetUnavailable(RuntimeError):
    """A dataset's raw files are neither mirrored, cached nor downloadable here (or the data is not public)."""


class ChecksumError(RuntimeError):
    """A raw file's sha256 differs from the registry's (or from the hash recorded on its first download)."""


@dataclass(frozen=True)
class RawFile:
    """One raw file of a dataset.

    Attributes:
        name: file name inside the dataset's cache folder ``<root>/<dataset>/raw/``.
        url: canonical public download URL (the one PyG/OGB/the authors use).
        sha256: accepted sha256 digests (several when e.g. a mirror copy is repacked); empty = unknown.
        mirror: path relative to ``$DPGNN_DATA_MIRROR`` (as in the mirror's MANIFEST), ``None`` = not mirrored.
        size: size in bytes when known (informative only).
    """

    name: str
    url: str
    sha256: tuple[str, ...] = ()
    mirror: str | None = None
    size: int | None = None


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Cache root: ``root`` if given, else ``$DPGNN_DATA_DIR``, else ``<repo>/data``."""
    if root is not None:
        return Path(root)
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else ROOT / "data"


def mirror_root() -> Path | None:
    """The offline mirror folder from ``$DPGNN_DATA_MIRROR`` (``None`` when unset or empty)."""
    env = os.environ.get(MIRROR_ENV)
    return Path(env) if env else None


def sha256sum(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex sha256 digest of the file at ``path``, read in blocks of ``chunk`` bytes (1 MiB by default)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _mirror_path(raw: RawFile) -> Path | None:
    m = mirror_root()
    if m is None or raw.mirror is None:
        return None
    return m / raw.mirror


def _cache_path(raw: RawFile, raw_dir: Path) -> Path:
    return raw_dir / raw.name


def locate(raw: RawFile, raw_dir: Path) -> Path | None:
    """Where ``raw`` already lies here (mirror first, then cache), without hashing or downloading."""
    mp = _mirror_path(raw)
    if mp is not None and mp.is_file():
        return mp
    cp = _cache_path(raw, raw_dir)
    return cp if cp.is_file() else None


def _read_record(raw_dir: Path) -> dict[str, str]:
    p = raw_dir / HASH_RECORD
    if p.is_file():
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return {}
    return {}


def _write_record(raw_dir: Path, name: str, digest: str) -> None:
    rec = _read_record(raw_dir)
    rec[name] = digest
    raw_dir.mkdir(parents=True, exist_ok=True)
    (raw_dir / HASH_RECORD).write_text(json.dumps(rec, indent=1, sort_keys=True))


def verify(path: Path, raw: RawFile, raw_dir: Path | None = None) -> str:
    """Check ``path`` against the registry's sha256 (or the recorded first-download hash); return the digest.

    Raises :class:`ChecksumError` naming the file, the expected and the actual hash.
    """
    actual = sha256sum(path)
    expected: tuple[str, ...] = raw.sha256
    source = "registry"
    if not expected and raw_dir is not None:
        recorded = _read_record(raw_dir).get(raw.name)
        if recorded:
            expected, source = (recorded,), f"hash recorded at first download in {raw_dir / HASH_RECORD}"
    if expected and actual not in expected:
        raise ChecksumError(
            f"sha256 mismatch for {path} ({raw.name}): expected {' or '.join(expected)} ({source}), "
            f"got {actual}. The file is corrupt or not the published one; delete it or fix the mirror."
        )
    return actual


def _progress(total: int | None, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, mininterval=1.0, leave=False)


def urlretrieve(url: str, dest: Path, timeout: float = CONNECT_TIMEOUT) -> None:
    """Download ``url`` to ``dest`` (atomically: :func:`dpgnn.atomic.atomic_open`) with a progress bar.

    Network failures surface as ``urllib.error.URLError``/``OSError``; callers turn them into
    :class:`DatasetUnavailable`.
    """
    req = urllib.request.Request(url, headers={"User-Agent": "dpgnn-data/0.1"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        dest.parent.mkdir(parents=True, exist_ok=True)  # only once the server answered
        total = resp.headers.get("Content-Length")
        with atomic_open(dest, "wb") as out, _progress(int(total) if total else None, dest.name) as bar:
            while True:
                block = resp.read(1 << 16)
                if not block:
                    break
                out.write(block)
                bar.update(len(block))


#: The downloader used by :func:`fetch`; tests monkeypatch it so that no network is ever attempted.
DOWNLOADER: Callable[[str, Path], None] = urlretrieve


def unavailable_message(dataset: str, missing: Sequence[tuple[RawFile, str]], raw_dir: Path, extra: str = "") -> str:
    """One readable message: which files are missing, from which URLs, and where to put them."""
    m = mirror_root()
    lines = [f"Dataset {dataset!r} is not available here: {len(missing)} raw file(s) missing."]
    for raw, why in missing:
        where = [f"cache {raw_dir / raw.name}"]
        if raw.mirror is not None:
            where.insert(0, f"mirror {(m / raw.mirror) if m else '$' + MIRROR_ENV + '/' + raw.mirror}")
        lines.append(
            f"  - {raw.name}: {raw.url}\n      put it at: {' or '.join(where)}" + (f"\n      ({why})" if why else "")
        )
    lines.append(
        f"Mirror: {MIRROR_ENV}={m if m else '(unset)'}; cache root: {raw_dir.parent.parent}"
        f" (set {DATA_DIR_ENV} to change it)."
    )
    if extra:
        lines.append(extra)
    return "\n".join(lines)


def fetch(
    dataset: str,
    files: Iterable[RawFile],
    raw_dir: Path,
    download: bool = True,
    allow_missing: bool = False,
    extra: str = "",
) -> dict[str, Path]:
    """Return ``{file name: path}`` for every raw file, verified; download what is missing when allowed.

    With ``allow_missing`` the files that cannot be obtained are silently left out (used by unions over
    "whatever is present"); otherwise they raise one :class:`DatasetUnavailable`.
    """
    out: dict[str, Path] = {}
    missing: list[tuple[RawFile, str]] = []
    offline: str | None = None  # after one network failure, do not try (and wait for) the other files
    for raw in files:
        mp = _mirror_path(raw)
        if mp is not None and mp.is_file():
            verify(mp, raw)
            if not raw.sha256:
                log.warning("%s: no published sha256 to check the mirror copy %s against", raw.name, mp)
            out[raw.name] = mp
            continue
        cp = _cache_path(raw, raw_dir)
        if cp.is_file():
            verify(cp, raw, raw_dir)
            out[raw.name] = cp
            continue
        if not download:
            missing.append((raw, "not mirrored/cached; download=False"))
            continue
        if allow_missing:
            # unions over "what is present" never trigger downloads of the rest
            continue
        if offline is not None:
            missing.append((raw, f"not downloaded: {offline}"))
            continue
        try:
            log.info("downloading %s -> %s", raw.url, cp)
            DOWNLOADER(raw.url, cp)
        except (TimeoutError, urllib.error.URLError, OSError, ValueError) as exc:
            missing.append((raw, f"download failed: {exc}"))
            if isinstance(exc, (urllib.error.URLError, socket.timeout, ConnectionError)) and not isinstance(
                exc, urllib.error.HTTPError
            ):
                offline = f"an earlier download failed ({exc})"
            continue
        try:
            digest = verify(cp, raw, raw_dir)
        except ChecksumError:
            bad = cp.with_name(cp.name + ".bad")
            shutil.move(cp, bad)
            raise
        if not raw.sha256:
            _write_record(raw_dir, raw.name, digest)
            log.info("recorded sha256 %s for %s (public hash unknown)", digest, raw.name)
        out[raw.name] = cp
    if missing and not allow_missing:
        raise DatasetUnavailable(unavailable_message(dataset, missing, raw_dir, extra))
    return out
