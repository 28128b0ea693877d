"""Resumable grids: a grid is diffed against stored results and only the missing cells run.

A *cell* is a JSON-able dict that fully determines one run (dataset, method, epsilon, run index, epochs, ...).
Its :func:`~dpgnn.utils.config_hash` identifies it in the store. Each finished cell is appended (and fsynced)
before the next starts, so a killed batch resumes where it stopped.

Every series declares its grids as :class:`CellSpec` entries (``dpgnn.series.<paper>.CELLS``): how to enumerate
a profile's cells, which store artifact their rows go to, and a module-level ``run(cfg, cell, device) -> rows``.
:func:`run_grid` (sequential, what a notebook calls) and :mod:`dpgnn.engine` (cells fanned out on Dask) call the
same functions, so a cell gives the same rows wherever it runs; both decide which cells to compute with one
:func:`plan` and copy a cell another artifact already holds with one :class:`SharedRuns`. Each stored row
carries the cell's wall time (``cell_seconds``) and device (``cell_device``); ``dpgnn run --dry-run`` estimates the
cost of missing cells from them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from dpgnn.results import ResultStore
from dpgnn.utils import code_version, config_hash

log = logging.getLogger(__name__)

RunFn = Callable[[dict[str, Any]], "Mapping[str, Any] | list[Mapping[str, Any]]"]
#: ``batch(cells) -> [rows of each cell]``: sibling cells (one configuration's runs or seeds) computed in one call
BatchFn = Callable[[list[dict[str, Any]]], list[list[dict[str, Any]]]]
#: bookkeeping columns the runner adds to every row of a cell
TIMING_COLUMNS = ("cell_seconds", "cell_device")
STALE_CHOICES = ("keep", "rerun")


@dataclass(frozen=True)
class CellSpec:
    """One grid of a series, computable cell by cell in any process.

    ``name`` is what users select (``dpgnn run lpgnn --artifact fig_a``); ``store`` the store artifact the rows go
    to (several specs may share one, e.g. every LPGNN figure's cells go to ``runs``); ``cells(cfg)`` enumerates
    the profile's cells (every dataset of the profile: one whose files are missing is recorded ``not_run`` when
    its first cell runs); ``run(cfg, cell, device)`` is a module-level function (picklable, no closure over loaded
    data: it loads through the series' per-process cache) returning the cell's rows. ``share`` names other store
    artifacts of the same paper whose rows for the same config hash are the same run (ProGAP's Table 2 / Fig. 2 /
    Fig. 4 runs): such a cell runs once and is copied (:class:`SharedRuns`; ``run_grid(..., share=...)`` for a
    notebook's loop).
    """

    paper: str
    name: str
    store: str
    cells: Callable[[Any], list[dict[str, Any]]]
    run: Callable[[Any, dict[str, Any], str], list[dict[str, Any]]]
    share: tuple[str, ...] = ()
    #: ``available(cfg, dataset) -> bool``: a cheap check (file existence) the engine makes before submitting a
    #: dataset's cells; None: the first cell that runs finds out (``DatasetUnavailable``)
    available: Callable[[Any, str], bool] | None = None
    #: the artifact under which an unavailable dataset is recorded ``not_run`` (default: ``name``)
    skip_as: str | None = None
    #: ``batch(cfg, cells, device) -> [rows of each cell]``: computes cells that share ``batch_key`` (e.g. the
    #: seeds of one configuration) together, each cell's rows equal to its ``run`` up to float rounding; the engine
    #: submits such cells as one task. None: one task per cell.
    batch: Callable[[Any, list[dict[str, Any]], str], list[list[dict[str, Any]]]] | None = None
    batch_key: Callable[[dict[str, Any]], str] | None = None
    #: the cells compute on the CPU whatever device the engine offers (the bench's protocol): the engine runs them
    #: with ``device="cpu"``, so their rows say ``cell_device = cpu`` on a GPU machine too
    cpu_only: bool = False


def check_train(force: bool, train: bool) -> None:
    """A series' ``force``/``train`` options: ``force=True`` retrains cells, which ``train=False`` forbids."""
    if force and not train:
        raise ValueError("force=True retrains cells, which train=False forbids; pass one of them")


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Cartesian product of named axes as a list of cells: ``grid(method=["lm","pm"], epsilon=[1, 5])``."""
    cells: list[dict[str, Any]] = [{}]
    for name, values in axes.items():
        values = list(values)
        if not values:
            raise ValueError(f"grid axis {name!r} is empty")
        cells = [{**c, name: v} for c in cells for v in values]
    return cells


# ---------------------------------------------------------------------------------------------------------------
# one cell -> rows (shared by the sequential loop and the Dask engine)
# ---------------------------------------------------------------------------------------------------------------
def cell_rows(
    out: Any, cell: dict[str, Any], h: str, *, seconds: float | None = None, device: str | None = None
) -> list[dict[str, Any]]:
    """The stored rows of one cell: each of ``out``'s rows (a dict or a list of dicts) inherits the cell's keys it
    does not set itself, the cell's config hash, and the cell's wall time and device."""
    rows = [out] if isinstance(out, Mapping) else list(out)
    if not rows:
        raise RuntimeError(f"run function returned no rows for cell {cell}")
    extra = {}
    if seconds is not None:
        extra["cell_seconds"] = round(float(seconds), 3)
    if device is not None:
        extra["cell_device"] = str(device)
    return [{**cell, **row, "config_hash": h, **extra} for row in rows]


def run_one(fn: RunFn, cell: dict[str, Any]) -> tuple[Any, float]:
    """``fn(cell)`` and its wall time in seconds."""
    t0 = time.perf_counter()
    out = fn(dict(cell))
    return out, time.perf_counter() - t0


# ---------------------------------------------------------------------------------------------------------------
# code versions of stored rows
# ---------------------------------------------------------------------------------------------------------------
def _dpgnn_version(versions: Any) -> str:
    for part in str(versions).split(";"):
        if part.startswith("dpgnn="):
            return part.removeprefix("dpgnn=")
    return "?"


def stale_hashes(df: pd.DataFrame) -> set[str]:
    """Config hashes whose stored rows were computed by other code (``versions``' ``dpgnn=`` differs from
    :func:`dpgnn.utils.code_version`)."""
    if df.empty or "versions" not in df.columns:
        return set()
    now = code_version()
    other = df["versions"].map(_dpgnn_version) != now
    return set(df.loc[other, "config_hash"].astype(str))


def stored_line(artifact: str, n_cells: int, n_stored: int, n_stale: int, stale: str) -> str:
    """The visible "N of M cells stored" line (printed, so it shows in a kernel and in papermill output)."""
    line = f"{artifact}: {n_stored} of {n_cells} cells already stored"
    if n_stale:
        what = "rerunning them" if stale == "rerun" else "kept (pass stale='rerun' / --stale rerun to recompute)"
        line += f", {n_stale} of them from other code than {code_version()}: {what}"
    return line


# ---------------------------------------------------------------------------------------------------------------
# --force / --stale rerun: recompute into a staging store, swap only when the whole set is complete
# ---------------------------------------------------------------------------------------------------------------
def resume_staging(store: ResultStore, artifact: str, redo: set[str]) -> tuple[ResultStore, set[str]]:
    """The staging store for recomputing the cells ``redo`` of ``store``'s ``artifact``, and the cells of ``redo``
    it already holds from this code (:func:`stale_hashes`): an interrupted ``--force`` / ``--stale rerun``
    resumes where it stopped instead of starting over. Staged rows of other cells or other code are dropped.
    A cell's rows are staged by one append, so a staged cell is complete."""
    staging = store.staging()
    df = staging.load(artifact)
    if df.empty:
        return staging, set()
    h = df["config_hash"].astype(str)
    keep = h.isin(redo) & ~h.isin(stale_hashes(df))
    if not keep.all():
        staging.replace(artifact, df[keep].to_dict("records"))  # atomic; no rows left: the staged file goes
    return staging, set(h[keep])


def staged_line(label: str, n_staged: int, n_redo: int) -> str:
    """The line saying that an interrupted recomputation's staged cells are kept (engine and :func:`run_grid`)."""
    return (
        f"{label}: {n_staged} of the {n_redo} cells to recompute already staged by this code (an interrupted run): kept"
    )


# ---------------------------------------------------------------------------------------------------------------
# the plan: which cells of a grid are stored, from other code, to compute (shared by run_grid and the engine)
# ---------------------------------------------------------------------------------------------------------------
def grid_hashes(cells: Iterable[dict[str, Any]], name: str | None = None) -> list[str]:
    """The config hashes of ``cells`` in grid order; a ``ValueError`` (prefixed with ``name``) if two are equal."""
    hashes = [config_hash(c) for c in cells]
    if len(set(hashes)) != len(hashes):
        where = f"{name}: " if name else ""
        raise ValueError(f"{where}grid has duplicate cells; add the distinguishing key (e.g. run index) to each cell")
    return hashes


@dataclass
class Plan:
    """What a grid needs of one store artifact: made by :func:`plan`, read by :func:`run_grid` and the engine."""

    store: ResultStore
    artifact: str
    #: config hash -> cell, in grid order
    cells: dict[str, dict[str, Any]]
    #: the artifact's stored rows when planned
    stored: pd.DataFrame
    #: every config hash stored (in the grid or not)
    done: set[str]
    #: stored config hashes computed by other code (:func:`stale_hashes`)
    stale: set[str]
    #: hashes of the grid to recompute into the staging store (``force``: all; ``stale="rerun"``: the stale ones)
    redo: set[str]

    def missing(self) -> list[str]:
        """The grid's hashes to compute, in grid order: not stored, or to recompute."""
        return [h for h in self.cells if h not in self.done or h in self.redo]


def plan(
    store: ResultStore,
    artifact: str,
    cells: Mapping[str, dict[str, Any]] | list[dict[str, Any]],
    *,
    force: bool = False,
    stale: str = "keep",
) -> Plan:
    """Diff a grid against ``store``'s ``artifact``.

    Args:
        store: the result store.
        artifact: the store artifact the grid's rows go to.
        cells: the grid (a list of cells, or config hash -> cell when the caller merged several grids).
        force: recompute every cell of the grid.
        stale: ``"keep"`` the cells stored by other code, or ``"rerun"`` them.

    Returns:
        the :class:`Plan`.
    """
    if stale not in STALE_CHOICES:
        raise ValueError(f"stale must be one of {STALE_CHOICES}, got {stale!r}")
    if not isinstance(cells, Mapping):
        cells = dict(zip(grid_hashes(cells), cells))
    stored = store.load(artifact)
    done = set(stored["config_hash"].astype(str)) if len(stored) else set()
    old = stale_hashes(stored)
    redo = set(cells) if force else (old & set(cells) if stale == "rerun" else set())
    return Plan(store, artifact, dict(cells), stored, done, old, redo)


class SharedRuns:
    """The rows stored for a config hash under other artifacts of the same store that hold the same runs
    (:attr:`CellSpec.share`): such a cell is copied instead of run again. Each donor is read again when its files
    change (size and modification time), so one that another process is filling is seen as it grows."""

    def __init__(self, store: ResultStore, artifact: str, share: Iterable[str]):
        self.store = store
        self.donors = [a for a in share if a != artifact]
        self._cache: dict[str, tuple[Any, pd.DataFrame]] = {}

    def find(self, h: str) -> tuple[int, list[dict[str, Any]]] | None:
        """``(index of the donor in share order, its rows)`` for config hash ``h`` from the first donor that has it
        (bookkeeping columns dropped: :func:`donor_rows`), or None."""
        for i, a in enumerate(self.donors):
            df = self._load(a)
            if len(df) and "config_hash" in df.columns:
                hit = df[df["config_hash"].astype(str) == h]
                if len(hit):
                    return i, donor_rows(hit)
        return None

    def _load(self, artifact: str) -> pd.DataFrame:
        paths = (self.store.archive_path(artifact), self.store.path(artifact))
        stamp = tuple((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None for p in paths)
        if artifact not in self._cache or self._cache[artifact][0] != stamp:
            self._cache[artifact] = (stamp, self.store.load(artifact))
        return self._cache[artifact][1]


# ---------------------------------------------------------------------------------------------------------------
# the sequential loop (notebooks)
# ---------------------------------------------------------------------------------------------------------------
def run_grid(
    store: ResultStore,
    artifact: str,
    cells: list[dict[str, Any]],
    fn: RunFn,
    *,
    desc: str | None = None,
    force: bool = False,
    share: Iterable[str] = (),
    device: str | None = None,
    stale: str = "keep",
) -> pd.DataFrame:
    """Run ``fn(cell)`` for every cell not yet stored under ``artifact`` and return all stored rows.

    ``fn`` returns one row (dict) or several (one per metric). Each row inherits the cell's keys it does not set
    itself, the cell's config hash, its wall time (``cell_seconds``) and ``device`` (``cell_device``, when given).
    ``force=True`` recomputes every cell of the grid into a staging store and replaces their stored rows only
    once all of them are done (an interrupted force keeps the old rows, and the next one resumes from the cells it
    staged: :func:`resume_staging`; rows of cells outside the grid are kept).
    ``stale="rerun"`` does the same for the cells stored by other code (``versions``), ``"keep"`` keeps them.
    ``share`` names other artifacts of the same store whose grids share cells with this one (as
    :attr:`CellSpec.share`): a missing cell already stored there, by the same config hash, is copied instead of
    run (:class:`SharedRuns`); cells being recomputed are always run.
    """
    p = plan(store, artifact, cells, force=force, stale=stale)
    old_code = p.stale & set(p.cells)
    print(stored_line(artifact, len(p.cells), len(p.done & set(p.cells)), len(old_code), stale))
    staging, staged = resume_staging(store, artifact, p.redo) if p.redo else (None, set())
    if staged:
        print(staged_line(artifact, len(staged), len(p.redo)))
    todo = [h for h in p.missing() if h not in staged]
    shared = SharedRuns(store, artifact, share)
    for h in tqdm(todo, desc=desc or artifact, mininterval=5.0, disable=not todo):
        cell, target = p.cells[h], staging if h in p.redo else store
        donor = None if h in p.redo else shared.find(h)
        if donor is not None:
            target.append(artifact, donor[1])
            continue
        out, seconds = run_one(fn, cell)
        target.append(artifact, cell_rows(out, cell, h, seconds=seconds, device=device))
    if staging is not None:
        store.swap_in(artifact, p.redo)
    return store.load(artifact)


def donor_rows(hit: pd.DataFrame) -> list[dict[str, Any]]:
    """Stored rows of one cell, ready to be appended under another artifact (bookkeeping columns dropped, NaN
    cells left out so that the receiving artifact writes them empty as the donor did)."""
    hit = hit.drop(columns=[c for c in ("artifact", "timestamp") if c in hit.columns])
    return [{k: v for k, v in r.items() if not (isinstance(v, float) and v != v)} for r in hit.to_dict("records")]


class SiblingRunner:
    """A cell function for :func:`run_grid` that computes a cell together with its siblings still to compute.

    ``key(cell)`` names the siblings one ``batch(cells)`` call computes together (the runs or seeds of one
    configuration, which a method with batched repeats trains at once); ``todo`` holds the cells the grid still has
    to compute. Called with a cell, the runner returns the rows an earlier batch computed for it, else computes the
    cell and each sibling of it in ``todo`` not computed yet in one batch and keeps the siblings' rows until
    run_grid asks for them (it asks in grid order, where siblings follow each other). So a cell's rows are its own
    run's whichever call computed them; the first cell of a batch carries the batch's wall time (``cell_seconds``),
    the others almost none.
    """

    def __init__(self, batch: BatchFn, key: Callable[[dict[str, Any]], str], todo: Iterable[dict[str, Any]]) -> None:
        self.batch, self.key = batch, key
        self.pending: dict[str, dict[str, dict[str, Any]]] = {}  # sibling key -> {config hash: cell}
        for c in todo:
            self.pending.setdefault(key(c), {})[config_hash(c)] = c
        self.ready: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, cell: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows of ``cell``: from the batch already computed with it, else from a new batch of it and its
        pending siblings."""
        h = config_hash(cell)
        if h in self.ready:
            return self.ready.pop(h)
        group = self.pending.get(self.key(cell), {})
        group.pop(h, None)
        siblings = [cell, *group.values()]
        group.clear()
        rows = self.batch(siblings)
        for c, r in zip(siblings[1:], rows[1:]):
            self.ready[config_hash(c)] = r
        return rows[0]
