"""Tidy, append-only results store: one row per run and metric, kept per profile and paper.

Layout: ``results/<profile>/<paper>/<artifact>.csv`` (+ ``skipped.csv`` for datasets that could not run here,
git-ignored unless it explains committed results); the writers' lock files live outside (:func:`lock_path`).
Rows are appended and flushed as soon as a run finishes, so a killed batch loses at most the run in flight;
:func:`dpgnn.sweep.run_grid` diffs a grid against the stored ``config_hash`` values and runs only what is missing.
Smoke and paper profiles live in different folders, so a smoke run never overwrites paper results.
:meth:`ResultStore.compact` moves an artifact's rows into ``<artifact>.csv.gz`` (large grids with repetitive
ledgers shrink ~20x); reads see the archive and the live ``.csv`` together, and new rows still go to the plain
``.csv``, so an interrupted append can only ever lose the run in flight. A recomputation (``--force``,
``--stale rerun``) appends to :meth:`ResultStore.staging` and :meth:`ResultStore.swap_in` makes its rows the stored
ones under the artifact's lock. Every rewrite is atomic (:mod:`dpgnn.atomic`).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import io
import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from dpgnn.atomic import write_csv, write_text
from dpgnn.utils import output_root, versions

#: Columns every row has (others, e.g. ``epochs``, may follow). ``ledger`` is a JSON privacy ledger:
#: level, neighbouring relation, mechanism, noise, sampling rate, steps, epsilon, delta, accountant.
CORE_COLUMNS = [
    "paper",
    "artifact",
    "profile",
    "dataset",
    "method",
    "setting",
    "metric",
    "value",
    "run",
    "seed",
    "level",
    "epsilon",
    "delta",
    "config_hash",
    "ledger",
    "versions",
    "timestamp",
]


def results_dir(profile: str, paper: str, root: Path | None = None) -> Path:
    """``<root>/<profile>/<paper>`` (default root: ``results/`` of the output root); a profile with ``/`` is refused."""
    if not profile or "/" in profile:
        raise ValueError(f"profile must be a plain name such as 'smoke' or 'paper', got {profile!r}")
    return Path(root or output_root() / "results") / profile / paper


def lock_path(path: Path) -> Path:
    """The lock file that guards ``path``: in a per-user folder of the system's temporary directory, named by a hash
    of the resolved path, so that ``results/`` holds only results (a lock file is never deleted: deleting one that
    another process waits on would let a third take a second lock on a new file of the same name)."""
    try:
        user = str(os.getuid())
    except AttributeError:  # Windows
        import getpass

        user = getpass.getuser()
    key = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:32]
    return Path(tempfile.gettempdir()) / f"dpgnn-locks-{user}" / f"{key}.lock"


@contextlib.contextmanager
def _locked(path: Path):
    """Hold an exclusive lock on :func:`lock_path` of ``path`` (``filelock``: POSIX and Windows), so that the
    processes of one machine appending to the same store (sharded grids, parallel notebooks) never interleave rows
    or race on a rewrite. (The engine's Dask workers return rows to the one driver process that writes them.)"""
    from filelock import FileLock

    lock = lock_path(path)
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with FileLock(str(lock)):
        yield


#: Bookkeeping columns that say when and by which code a row was made, not what it holds.
_PROVENANCE = ("versions", "timestamp")


def _csv_text(fields: list[str], rows: list[dict[str, Any]]) -> str:
    """``rows`` as CSV text, formatted exactly as :meth:`ResultStore.append` writes them."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, extrasaction="raise", lineterminator="\r\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: r.get(k, "") for k in fields})
    return buf.getvalue()


class ResultStore:
    """Append-only CSV store for one (profile, paper). Safe to reopen: existing rows are kept."""

    def __init__(self, paper: str, profile: str, root: Path | str | None = None):
        self.paper = paper
        self.profile = profile
        self.dir = results_dir(profile, paper, Path(root) if root else None)
        self._versions = versions()

    # -- paths -------------------------------------------------------------------------------------------
    def path(self, artifact: str) -> Path:
        """The CSV file of ``artifact`` (a plain name: ``ValueError`` otherwise)."""
        if not artifact or "/" in artifact:
            raise ValueError(f"artifact must be a plain name such as 'table2', got {artifact!r}")
        return self.dir / f"{artifact}.csv"

    def archive_path(self, artifact: str) -> Path:
        """The compressed archive of ``artifact``'s older rows (see :meth:`compact`)."""
        return self.path(artifact).with_suffix(".csv.gz")

    def artifacts(self) -> list[str]:
        """The artifacts stored here (plain or gzipped CSV files, ``skipped`` left out), sorted."""
        if not self.dir.exists():
            return []
        names = {
            p.name.removesuffix(".gz").removesuffix(".csv")
            for p in self.dir.glob("*.csv*")
            if p.name.endswith((".csv", ".csv.gz"))
        }
        return sorted(names - {"skipped"})

    # -- reading -----------------------------------------------------------------------------------------
    @staticmethod
    def _read(paths: Iterable[Path]) -> list[pd.DataFrame]:
        return [
            pd.read_csv(p, dtype={"setting": str, "dataset": str, "method": str, "config_hash": str})
            for p in paths
            if p.exists() and p.stat().st_size > 0
        ]

    def load(self, artifact: str | None = None) -> pd.DataFrame:
        """All rows of one artifact (or of every artifact), archive first; empty frame with the core columns if
        none."""
        names = [artifact] if artifact else self.artifacts()
        frames = self._read(p for a in names for p in (self.archive_path(a), self.path(a)))
        if not frames:
            return pd.DataFrame(columns=CORE_COLUMNS)
        return pd.concat(frames, ignore_index=True)

    def done(self, artifact: str) -> set[str]:
        """Config hashes already stored for ``artifact``."""
        df = self.load(artifact)
        return set(df["config_hash"].astype(str)) if len(df) else set()

    # -- writing -----------------------------------------------------------------------------------------
    def append(self, artifact: str, rows: Iterable[dict[str, Any]]) -> None:
        """Append rows (dicts) to ``artifact``; fills paper/artifact/profile/versions/timestamp; fsyncs."""
        rows = self._fill(artifact, rows)
        if not rows:
            return
        path = self.path(artifact)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            self._append_locked(path, rows)

    def _fill(self, artifact: str, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Copies of ``rows`` with paper/artifact/profile/versions/timestamp filled and the ledger as JSON."""
        rows = [dict(r) for r in rows]
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        for r in rows:
            r.setdefault("paper", self.paper)
            r.setdefault("artifact", artifact)
            r.setdefault("profile", self.profile)
            r.setdefault("versions", self._versions)
            r.setdefault("timestamp", now)
            if isinstance(r.get("ledger"), (dict, list)):
                r["ledger"] = json.dumps(r["ledger"], sort_keys=True, default=str)
        return rows

    def _append_locked(self, path: Path, rows: list[dict[str, Any]]) -> None:
        existing_header = None
        if path.exists() and path.stat().st_size > 0:
            with open(path, newline="") as f:
                existing_header = next(csv.reader(f), None)
        extra = sorted({k for r in rows for k in r} - set(CORE_COLUMNS))
        fields = existing_header or (CORE_COLUMNS + extra)
        new_cols = [k for k in CORE_COLUMNS + extra if k not in fields]
        if new_cols:  # a later run brought new columns: rewrite the live file once with the wider header
            old = pd.concat(self._read([path]), ignore_index=True)
            fields = list(fields) + new_cols
            write_csv(old.reindex(columns=fields), path)
        with open(path, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields, extrasaction="raise")
            if f.tell() == 0:
                writer.writeheader()
            for r in rows:
                writer.writerow({k: r.get(k, "") for k in fields})
            f.flush()
            os.fsync(f.fileno())

    def merge_from(self, other: ResultStore, artifact: str) -> int:
        """Append the rows of ``other``'s ``artifact`` whose cells (``config_hash``) this store lacks, as stored
        there (their text, versions and timestamps unchanged); returns the number of rows appended. Lands rows
        computed elsewhere (a background worktree, a GPU machine) that may have started from an older copy. Rows
        without a config hash (an artifact computed whole and stored with :meth:`replace`, e.g. a table of ε) are
        not cells: never merged, their artifact is recomputed from the merged rows instead."""
        done = self.done(artifact)
        rows = []
        for p in (other.archive_path(artifact), other.path(artifact)):
            if p.exists() and p.stat().st_size > 0:
                with gzip.open(p, "rt", newline="") if p.suffix == ".gz" else open(p, newline="") as f:
                    rows += [r for r in csv.DictReader(f) if r.get("config_hash") and r["config_hash"] not in done]
        if rows:
            path = self.path(artifact)
            path.parent.mkdir(parents=True, exist_ok=True)
            with _locked(path):
                self._append_locked(path, rows)
        return len(rows)

    def replace(self, artifact: str, rows: Iterable[dict[str, Any]]) -> None:
        """Make ``rows`` the whole content of ``artifact`` (for pure computations that are recomputed whole).

        A new row equal to a stored one in everything but its provenance (``versions``, ``timestamp``) keeps the
        stored provenance, and a file whose bytes would not change is not rewritten: recomputing identical results
        leaves the committed files byte-identical (``git status`` clean). The write is atomic; the archive, if
        any, is folded into the new live file.
        """
        rows = self._fill(artifact, rows)
        path = self.path(artifact)
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            arc = self.archive_path(artifact)
            if not rows:
                for p in (path, arc):
                    if p.exists():
                        p.unlink()
                return
            fields = CORE_COLUMNS + sorted({k for r in rows for k in r} - set(CORE_COLUMNS))
            if path.exists() and path.stat().st_size > 0:  # keep a stored header whose columns are the same
                with open(path, newline="") as f:
                    header = next(csv.reader(f), None)
                if header and sorted(header) == sorted(fields):
                    fields = header
            new = list(csv.DictReader(io.StringIO(_csv_text(fields, rows))))
            stored: dict[tuple, list[dict[str, str]]] = {}
            for p in (arc, path):
                if p.exists() and p.stat().st_size > 0:
                    text = gzip.open(p, "rt", newline="") if p.suffix == ".gz" else open(p, newline="")
                    with text as f:
                        for old in csv.DictReader(f):
                            key = tuple(old.get(k) or "" for k in fields if k not in _PROVENANCE)
                            stored.setdefault(key, []).append(old)
            for r in new:
                hits = stored.get(tuple(r[k] for k in fields if k not in _PROVENANCE))
                if hits:
                    old = hits.pop(0)
                    r.update({k: old.get(k) or "" for k in _PROVENANCE})
            write_text(path, _csv_text(fields, new), if_changed=True)
            if arc.exists():
                arc.unlink()

    def clear(self, artifact: str) -> None:
        """Delete one artifact's rows, archive included (used by ``force=True``)."""
        for p in (self.path(artifact), self.archive_path(artifact)):
            if p.exists():
                p.unlink()

    def compact(self, artifact: str) -> Path:
        """Move every row of ``artifact`` into its gzip archive (atomic replace) and empty the live ``.csv``.
        Rows, columns and values are unchanged: ``load`` returns the same frame before and after."""
        df = self.load(artifact)
        if df.empty:
            raise ValueError(f"artifact {artifact!r} has no rows to compact")
        arc = self.archive_path(artifact)
        write_csv(df, arc)
        if self.path(artifact).exists():
            self.path(artifact).unlink()
        return arc

    # -- recomputation: stage rows beside the store, swap them in once complete ---------------------------------
    def staging(self) -> ResultStore:
        """The store beside this one (``<store>/.staging/``) that receives recomputed rows (``--force``,
        ``--stale rerun``) until :meth:`swap_in` makes them the stored ones."""
        st = ResultStore(self.paper, self.profile)
        st.dir = self.dir / ".staging"
        return st

    def swap_in(self, artifact: str, hashes: set[str]) -> None:
        """Replace the rows of the config hashes ``hashes`` in ``artifact`` by their staged ones (:meth:`staging`;
        other rows kept), then clear the staged artifact. Holds the artifact's lock, so no append interleaves; the
        rewrite is atomic. With an archive, the merged rows become the archive and the live file goes. Call it only
        once every hash is staged, so that an interrupted recomputation leaves the old rows in place."""
        staging = self.staging()
        live, arc = self.path(artifact), self.archive_path(artifact)
        live.parent.mkdir(parents=True, exist_ok=True)
        with _locked(live):
            old, new = self.load(artifact), staging.load(artifact)
            new = new[new["config_hash"].astype(str).isin(hashes)] if len(new) else new
            keep = old[~old["config_hash"].astype(str).isin(hashes)] if len(old) else old
            frames = [f for f in (keep, new) if len(f)]
            merged = pd.concat(frames, ignore_index=True) if frames else new
            if arc.exists():  # the live file would only repeat the archive's rows: removed
                write_csv(merged, arc)
                if live.exists():
                    live.unlink()
            else:
                write_csv(merged, live)
        staging.clear(artifact)

    # -- datasets that could not run ---------------------------------------------------------------------
    def record_skip(self, dataset: str, reason: str, artifact: str = "*") -> None:
        """Remember that ``dataset`` was not run (e.g. raw files unavailable); the report shows it as not_run."""
        path = self.dir / "skipped.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            prev = self.skipped()
            prev = prev[~((prev["artifact"] == artifact) & (prev["dataset"] == dataset))]
            row = pd.DataFrame([{"artifact": artifact, "dataset": dataset, "reason": reason.strip().splitlines()[0]}])
            write_csv(_sorted_skips(pd.concat([prev, row], ignore_index=True)), path, **_SKIPS_CSV)

    def clear_skip(self, dataset: str, artifact: str = "*") -> None:
        """Forget that ``dataset`` was not run for ``artifact`` (it ran after all)."""
        path = self.dir / "skipped.csv"
        if path.exists():
            with _locked(path):
                prev = self.skipped()
                kept = prev[~((prev["artifact"] == artifact) & (prev["dataset"] == dataset))]
                write_csv(_sorted_skips(kept), path, **_SKIPS_CSV)

    def skipped(self) -> pd.DataFrame:
        """The datasets recorded not run (``skipped.csv``): ``artifact``, ``dataset``, ``reason``, as strings."""
        path = self.dir / "skipped.csv"
        if path.exists() and path.stat().st_size > 0:
            return pd.read_csv(path, dtype=str, keep_default_na=False)
        return pd.DataFrame(columns=["artifact", "dataset", "reason"])


#: ``skipped.csv`` is rewritten only when its bytes change (a rerun that skips the same datasets leaves it as it was)
_SKIPS_CSV = {"if_changed": True, "lineterminator": "\n"}


def _sorted_skips(df: pd.DataFrame) -> pd.DataFrame:
    """``skipped.csv`` rows in a stable order (artifact, dataset), whatever order the notebooks recorded them in."""
    return df.sort_values(["artifact", "dataset"], kind="stable").reset_index(drop=True)
