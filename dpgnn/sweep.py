"""Resumable grids: a grid is diffed against stored results and only the missing cells run.

A *cell* is a JSON-able dict that fully determines one run (dataset, method, epsilon, run index, epochs, ...).
Its :func:`~dpgnn.utils.config_hash` identifies it in the store. Each finished cell is appended (and fsynced)
before the next starts, so a killed batch resumes where it stopped.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Mapping

import pandas as pd
from tqdm.auto import tqdm

from dpgnn.results import ResultStore
from dpgnn.utils import config_hash

log = logging.getLogger(__name__)

RunFn = Callable[[dict[str, Any]], "Mapping[str, Any] | list[Mapping[str, Any]]"]


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Cartesian product of named axes as a list of cells: ``grid(method=["lm","pm"], epsilon=[1, 5])``."""
    cells: list[dict[str, Any]] = [{}]
    for name, values in axes.items():
        values = list(values)
        if not values:
            raise ValueError(f"grid axis {name!r} is empty")
        cells = [{**c, name: v} for c in cells for v in values]
    return cells


def run_grid(store: ResultStore, artifact: str, cells: list[dict[str, Any]], fn: RunFn, *,
             desc: str | None = None, force: bool = False, reuse: Iterable[str] = ()) -> pd.DataFrame:
    """Run ``fn(cell)`` for every cell not yet stored under ``artifact`` and return all stored rows.

    ``fn`` returns one row (dict) or several (one per metric). Each row inherits the cell's keys it does not set
    itself, and the cell's config hash. ``force=True`` drops the stored rows of this artifact first.
    ``reuse`` names other artifacts of the same store whose grids share cells with this one (e.g. a table's runs
    that are also points of a sweep): a cell already stored there, by the same config hash, is copied instead of
    run again. Donors are read again before each cell, so one that another process is filling is seen as it grows.
    """
    if force:
        store.clear(artifact)
    hashes = [config_hash(c) for c in cells]
    if len(set(hashes)) != len(hashes):
        raise ValueError("grid has duplicate cells; add the distinguishing key (e.g. run index) to each cell")
    reuse = [a for a in reuse if a != artifact]
    done = store.done(artifact)
    todo = [(h, c) for h, c in zip(hashes, cells) if h not in done]
    if len(todo) < len(cells):
        log.info("%s: %d of %d cells already stored, running %d", artifact, len(cells) - len(todo), len(cells),
                 len(todo))
    cache: dict[str, tuple[Any, pd.DataFrame]] = {}
    for h, cell in tqdm(todo, desc=desc or artifact, mininterval=5.0, disable=not todo):
        donor = _stored_rows(store, reuse, h, cache)
        if donor is not None:
            store.append(artifact, donor)
            continue
        out = fn(dict(cell))
        rows = [out] if isinstance(out, Mapping) else list(out)
        if not rows:
            raise RuntimeError(f"run function returned no rows for cell {cell}")
        store.append(artifact, [{**cell, **row, "config_hash": h} for row in rows])
    return store.load(artifact)


def _stored_rows(store: ResultStore, artifacts: list[str], h: str,
                 cache: dict[str, tuple[Any, pd.DataFrame]]) -> list[dict[str, Any]] | None:
    """The rows stored for config hash ``h`` in the first of ``artifacts`` that has them (their bookkeeping columns
    dropped so that the receiving artifact fills its own), or None. ``cache`` keeps each donor until its files
    change (size and modification time)."""
    for a in artifacts:
        paths = (store.archive_path(a), store.path(a))
        stamp = tuple((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None for p in paths)
        if a not in cache or cache[a][0] != stamp:
            cache[a] = (stamp, store.load(a))
        df = cache[a][1]
        if len(df) and "config_hash" in df.columns:
            hit = df[df["config_hash"].astype(str) == h]
            if len(hit):
                hit = hit.drop(columns=[c for c in ("artifact", "timestamp") if c in hit.columns])
                return [{k: v for k, v in r.items() if not (isinstance(v, float) and v != v)}
                        for r in hit.to_dict("records")]
    return None
