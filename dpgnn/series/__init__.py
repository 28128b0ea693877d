"""Notebook-facing experiment series, one module per series, and the series registry.

A series function turns a profile's settings into a resumable grid of runs (:mod:`dpgnn.sweep`), stores tidy rows
(:mod:`dpgnn.results`), and draws figures only from the stored rows (:mod:`dpgnn.plotting`). Methods themselves
live in :mod:`dpgnn.methods`; this layer only orchestrates them.

The registry: every series module describes itself once with a :class:`Series` record passed to :func:`register`
(as methods register with :func:`dpgnn.methods.register`), and every list of series in the package reads it::

    series = dpgnn.series.get("lpgcn")        # the record: title, profiles, cells, notebooks, reference, run, ...
    dpgnn.series.names()                      # every series, in the canonical order
    dpgnn.series.names(kind="paper")          # the reproduced papers only

:func:`get` imports ``dpgnn.series.<name>`` when asked for it; :func:`names` and :func:`all_series` import every
module of this package once (a module that registers nothing, such as :mod:`dpgnn.series.common`, is a helper).
Adding a series is adding its modules: nothing else lists it.

**Canonical order** (:attr:`Series.order`): the five papers in the order ``dpgnn run`` computes them (LPGCN,
LPGNN, PrivGNN, DRW, ProGAP), then the project's own studies (audit, privacy), then the course and the
cross-paper comparison. Places that printed a sorted list (the report, the notebook runner) still sort by name.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpgnn.data import DatasetUnavailable
from dpgnn.results import ResultStore
from dpgnn.utils import config_hash

log = logging.getLogger(__name__)

#: what a series is: ``paper`` reproduces a paper's tables and figures; ``study`` is the project's own
#: measurement (audits, tight accounting); ``course`` holds notebooks that teach or compare (no store of its own)
KINDS = ("paper", "study", "course")


@dataclass(frozen=True)
class Series:
    """One notebook series, as every part of the package that lists series sees it.

    Attributes:
        name: the series' key: ``dpgnn.series.<name>``, ``results/<profile>/<name>/``, ``dpgnn run <name>``.
        title: the paper's title as its docs page's first heading (``LPGCN: "When ..."``), or the series' title.
        kind: one of :data:`KINDS`.
        order: position in the canonical order (module docstring); smaller first.
        citation: authors, venue and year of the paper reproduced ("" for the project's own series).
        docs: the series' docs page, relative to the repository root (``None``: no page).
        notebooks: the folder of its notebooks, relative to the repository root (``notebooks/<name>``).
        reference: the file under ``dpgnn/reference/`` with the paper's reported numbers (``None``: nothing to
            compare with; the report covers exactly the series that have one).
        profiles: profile name -> the profile's settings (:mod:`dpgnn.profiles`; frozen dataclass instances).
        cells: the grids ``dpgnn run`` computes cell by cell, by artifact name (:class:`dpgnn.sweep.CellSpec`).
        artifacts: every artifact name of the paper this series reproduces, in notebook order.
        run: ``run(cfg, store, artifact, *, device, force)`` (:mod:`dpgnn.series.common`), where the series has one.
        side_by_side: ``side_by_side(store, artifact)``, ours beside the paper, where the series has one.
        plot: ``plot(store, artifact)``, the figure from stored rows, where the series has one.
        guarantees: ``guarantees(row, ledger)``, the guarantee fields of a stored row derived from its configuration
            (:mod:`dpgnn.series.ledgers`), where the series' rows can be backfilled.
    """

    name: str
    title: str
    kind: str
    order: int
    citation: str = ""
    docs: str | None = None
    notebooks: str = ""
    reference: str | None = None
    profiles: Mapping[str, Any] = field(default_factory=dict)
    cells: Mapping[str, Any] = field(default_factory=dict)
    artifacts: tuple[str, ...] = ()
    run: Callable[..., Any] | None = None
    side_by_side: Callable[..., Any] | None = None
    plot: Callable[..., Any] | None = None
    guarantees: Callable[..., Any] | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"series {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.notebooks:
            object.__setattr__(self, "notebooks", f"notebooks/{self.name}")


_REGISTRY: dict[str, Series] = {}
_DISCOVERED = False


def register(series: Series) -> Series:
    """Add ``series`` to the registry (called once by its module, at import); a name registered twice by
    different records is an error (re-importing a module re-registers an equal record, which is allowed)."""
    old = _REGISTRY.get(series.name)
    if old is not None and (old.title, old.order, old.kind) != (series.title, series.order, series.kind):
        raise ValueError(f"series {series.name!r} is already registered")
    taken = {s.order: s.name for s in _REGISTRY.values() if s.name != series.name}
    if series.order in taken:
        raise ValueError(f"series {series.name!r}: order {series.order} is taken by {taken[series.order]!r}")
    _REGISTRY[series.name] = series
    return series


def _discover() -> None:
    """Import every module of this package once (each series module registers its record)."""
    global _DISCOVERED
    if not _DISCOVERED:
        for module in pkgutil.iter_modules(__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{__name__}.{module.name}")
        _DISCOVERED = True


def all_series(kind: str | None = None) -> list[Series]:
    """Every registered series (of one ``kind`` of :data:`KINDS`), in the canonical order."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    _discover()
    return sorted((s for s in _REGISTRY.values() if kind in (None, s.kind)), key=lambda s: s.order)


def names(kind: str | None = None) -> list[str]:
    """The names of :func:`all_series`, in the canonical order."""
    return [s.name for s in all_series(kind)]


def get(name: str) -> Series:
    """The registered series ``name``; a ``ValueError`` listing the valid names when there is none."""
    if name not in _REGISTRY:
        if any(m.name == name for m in pkgutil.iter_modules(__path__)):
            importlib.import_module(f"{__name__}.{name}")
        if name not in _REGISTRY:
            raise ValueError(f"unknown series {name!r}; valid: {names()}")
    return _REGISTRY[name]


def load_or_skip(store: ResultStore, dataset: str, loader, *, artifact: str = "*"):
    """``loader(dataset)`` or ``None`` when its files are unavailable.

    A skipped dataset is announced with one visible line and recorded in the store, so the report marks its
    cells ``not_run`` with the reason; a later successful load clears the record.
    """
    try:
        data = loader(dataset)
    except DatasetUnavailable as exc:
        first = str(exc).strip().splitlines()[0]
        print(f"not_run: {dataset} -- {first}")
        store.record_skip(dataset, str(exc), artifact=artifact)
        return None
    store.clear_skip(dataset, artifact=artifact)
    return data


def datasets_to_run(
    store: ResultStore,
    names: list[str],
    loader,
    *,
    artifact: str,
    cells: Callable[[list[str]], list[dict[str, Any]]],
    stored: set[str],
) -> list[str]:
    """The datasets of ``names`` whose grid a series runs: one whose every cell (``cells([name])``) is ``stored``
    (config hashes) is kept without loading it (its rows are there, and reading them needs neither its files nor
    torch: a notebook over stored results starts fast); any other is loaded by :func:`load_or_skip` (unavailable:
    recorded not_run for ``artifact``). Pass ``stored`` empty to load every one (``force``)."""
    out = []
    for name in names:
        mine = cells([name])
        if mine and all(config_hash(c) in stored for c in mine):
            out.append(name)
        elif load_or_skip(store, name, loader, artifact=artifact) is not None:
            out.append(name)
    return out


__all__ = ["KINDS", "Series", "all_series", "datasets_to_run", "get", "load_or_skip", "names", "register"]
