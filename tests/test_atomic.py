"""dpgnn.atomic: a failed write leaves the old file intact and no temporary file behind; the CSV writer gives the
bytes pandas gives, and reproducible gzip archives."""

from __future__ import annotations

import gzip
import io
import os

import pandas as pd
import pytest

from dpgnn.atomic import atomic_open, write_bytes, write_csv, write_json, write_text


def test_a_failure_mid_write_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("old\n")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_open(path, "w") as f:
            f.write("new, half written")
            f.flush()
            raise RuntimeError("disk full")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["rows.csv"]  # the temporary file is gone


def test_a_failing_frame_writer_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "rows.csv"
    write_csv(pd.DataFrame({"a": [1]}), path)
    before = path.read_bytes()

    def no_space(fd):
        raise OSError("no space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="no space"):
        write_csv(pd.DataFrame({"a": [2, 3]}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["rows.csv"]


def test_writes_replace_the_file_and_if_changed_leaves_an_equal_one_alone(tmp_path):
    path = tmp_path / "a.txt"
    assert write_text(path, "one\n")
    assert path.read_text() == "one\n"
    os.utime(path, ns=(1, 1))
    assert not write_text(path, "one\n", if_changed=True)
    assert path.stat().st_mtime_ns == 1  # untouched
    assert write_bytes(path, b"two\n", if_changed=True)
    assert path.read_bytes() == b"two\n"
    write_json(tmp_path / "a.json", {"b": 1}, indent=2)
    assert (tmp_path / "a.json").read_text() == '{\n  "b": 1\n}\n'
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(path, "a"):
            pass


def test_csv_bytes_equal_pandas_and_gzip_archives_are_reproducible(tmp_path):
    df = pd.DataFrame({"x": [1.5, None], "s": ["a,b", 'q"t'], "n": [1, 2]})
    write_csv(df, tmp_path / "w.csv")
    df.to_csv(tmp_path / "p.csv", index=False)
    assert (tmp_path / "w.csv").read_bytes() == (tmp_path / "p.csv").read_bytes()
    write_csv(df, tmp_path / "w.csv.gz")
    first = (tmp_path / "w.csv.gz").read_bytes()
    assert gzip.decompress(first) == (tmp_path / "p.csv").read_bytes()
    os.utime(tmp_path / "w.csv.gz", ns=(1, 1))
    write_csv(df, tmp_path / "w.csv.gz")
    assert (tmp_path / "w.csv.gz").read_bytes() == first  # mtime 0 in the header: same data, same bytes
    pd.testing.assert_frame_equal(pd.read_csv(io.BytesIO(first), compression="gzip"), pd.read_csv(tmp_path / "p.csv"))
