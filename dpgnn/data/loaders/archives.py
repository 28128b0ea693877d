"""Helpers to read members of zip archives in place (no extraction into the cache)."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def find_member(zf: zipfile.ZipFile, suffix: str) -> str:
    """The unique member whose path ends with ``suffix`` (e.g. ``"raw/edge.csv.gz"``)."""
    hits = [m for m in zf.namelist() if m == suffix or m.endswith("/" + suffix)]
    if len(hits) != 1:
        raise FileNotFoundError(f"{zf.filename}: expected one member ending with {suffix!r}, found {hits}")
    return hits[0]


@contextmanager
def open_member(path: Path, suffix: str) -> Iterator[IO[bytes]]:
    """Context manager yielding the binary stream of the zip ``path``'s one member ending with ``suffix``.

    The member is read in place (nothing is extracted); see :func:`find_member` for the match and its error.
    """
    with zipfile.ZipFile(path) as zf, zf.open(find_member(zf, suffix)) as fh:
        yield fh
