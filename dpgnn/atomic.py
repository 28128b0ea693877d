"""Atomic file writes: a reader sees the old file or the new one, never a partial one.

Every write goes to a temporary file in the destination's folder (same file system, so the rename is atomic),
is flushed and fsynced, and only then renamed over the destination with :func:`os.replace`. A failure before the
rename (an exception in the writer, a full disk) removes the temporary file and leaves the old file as it was.

Standard library only (no ``dpgnn`` imports), so that any module may use it::

    write_text(path, text)                   # str
    write_bytes(path, data, if_changed=True)  # bytes; an identical file is not touched
    write_csv(df, path)                      # a pandas frame, ``.csv`` or gzip-compressed ``.csv.gz``
    write_json(path, obj, indent=2)
    with atomic_open(path, "wb") as f:       # anything that writes to a file object (torch.save, csv.writer)
        ...
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_open", "write_bytes", "write_text", "write_csv", "write_json"]


def _temporary(path: Path) -> Path:
    """A fresh name beside ``path``: hidden, unique to this process and call, ending in ``.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", **kwargs: Any) -> Iterator[IO]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it is fsynced and replaces ``path``.

    Args:
        path: the destination; its folder must exist.
        mode: ``"wb"`` (bytes) or ``"w"`` (text); ``kwargs`` go to :func:`open` (``encoding``, ``newline``).

    Returns:
        a context manager yielding the open file. An exception inside the block deletes the temporary file and
        leaves ``path`` untouched.
    """
    if "w" not in mode or any(c in mode for c in "ra+x"):
        raise ValueError(f"atomic_open writes a new file: mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    tmp = _temporary(path)
    try:
        with open(tmp, mode.replace("w", "x"), **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def write_bytes(path: str | os.PathLike, data: bytes, *, if_changed: bool = False) -> bool:
    """Atomically make ``data`` the content of ``path``.

    Args:
        path: the destination; its folder must exist.
        data: the new content.
        if_changed: leave a file that already holds exactly ``data`` untouched (its modification time too).

    Returns:
        True if the file was written.
    """
    path = Path(path)
    if if_changed and path.exists() and path.read_bytes() == data:
        return False
    with atomic_open(path, "wb") as f:
        f.write(data)
    return True


def write_text(path: str | os.PathLike, text: str, *, if_changed: bool = False, encoding: str = "utf-8") -> bool:
    """:func:`write_bytes` of ``text`` encoded with ``encoding`` (newlines written as they are in ``text``)."""
    return write_bytes(path, text.encode(encoding), if_changed=if_changed)


def write_json(path: str | os.PathLike, obj: Any, **dumps: Any) -> bool:
    """Atomically write ``json.dumps(obj, **dumps)`` and a final newline to ``path``; True (it is written)."""
    return write_text(path, json.dumps(obj, **dumps) + "\n")


def gzip_bytes(data: bytes, name: str) -> bytes:
    """``data`` gzip-compressed reproducibly: modification time 0 and ``name`` (the archive's file name; the
    header keeps it without ``.gz``, as the ``gzip`` tool does), so the same data always gives the same bytes."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=buf, mtime=0) as f:
        f.write(data)
    return buf.getvalue()


def write_csv(df: Any, path: str | os.PathLike, *, if_changed: bool = False, **to_csv: Any) -> bool:
    """Atomically write the pandas frame ``df`` as CSV to ``path`` (``index=False`` unless given).

    A path ending in ``.gz`` gets a reproducible gzip archive (:func:`gzip_bytes`).

    Args:
        df: the frame.
        path: the destination; its folder must exist.
        if_changed: leave a file that already holds exactly these bytes untouched.
        to_csv: further arguments of ``DataFrame.to_csv`` (``lineterminator``, ``columns``, ...).

    Returns:
        True if the file was written.
    """
    path = Path(path)
    to_csv.setdefault("index", False)
    buf = io.StringIO(newline="")
    df.to_csv(buf, **to_csv)
    data = buf.getvalue().encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip_bytes(data, path.name)
    return write_bytes(path, data, if_changed=if_changed)
