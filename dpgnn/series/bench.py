"""The benchmark as a series: every method of each privacy unit under one protocol (:mod:`dpgnn.bench`).

One grid per unit (artifact = unit, rows in ``results/<profile>/bench/<unit>.csv``), the same cells and rows as
``dpgnn bench`` (same config hashes: either command resumes the other's run). Profiles: ``test`` and ``smoke``
are :data:`dpgnn.bench.profiles.PROFILES`' of the same names; the series' ``paper`` profile is the ``bench``
profile (``dpgnn bench --profile bench`` and ``dpgnn run bench --profile paper`` fill the same store)::

    dpgnn run bench --profile smoke          # on the engine (Dask), each finished cell stored at once
    dpgnn bench --profile bench              # the same cells in one process

The figures and tables are :mod:`dpgnn.bench.report`'s, drawn from the stored rows only.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from dpgnn.bench.profiles import PROFILES as BENCH_PROFILES
from dpgnn.bench.profiles import BenchProfile
from dpgnn.bench.units import UNITS
from dpgnn.series import Series, register
from dpgnn.series.ledgers import bench_guarantees
from dpgnn.sweep import CellSpec

PAPER = "bench"

#: the series' profiles (:data:`dpgnn.profiles.PROFILE_NAMES`) -> the bench profiles
PROFILES: dict[str, BenchProfile] = {
    "smoke": BENCH_PROFILES["smoke"],
    "test": BENCH_PROFILES["test"],
    "paper": BENCH_PROFILES["bench"],
}


def unit_cells(unit: str, cfg: BenchProfile) -> list[dict[str, Any]]:
    """The cells of ``unit`` in profile ``cfg`` (none when the profile does not run the unit)."""
    from dpgnn.bench.runner import cells

    return cells(cfg, units=[unit])[unit] if unit in cfg.units else []


def run_unit_cell(cfg: BenchProfile, cell: dict[str, Any], device: str) -> list[dict[str, Any]]:
    """One cell's row (:func:`dpgnn.bench.protocol.run_cell`; the bench trains on the CPU, so its specs are
    ``cpu_only`` and ``device`` is always ``cpu``)."""
    from dpgnn.bench.protocol import run_cell

    return [run_cell(cell, fixed=json.loads(cell["fixed"]), grid_limit=cell["grid_limit"] or None)]


#: one grid per unit, stored under the unit's name
CELLS: dict[str, CellSpec] = {
    unit: CellSpec(PAPER, unit, unit, functools.partial(unit_cells, unit), run_unit_cell, cpu_only=True)
    for unit in UNITS
}

__all__ = ["PAPER", "PROFILES", "CELLS", "unit_cells", "run_unit_cell", "SERIES"]

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title="The benchmark: every method of a privacy unit under one protocol",
        kind="study",
        order=8,
        docs="docs/bench.md",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=tuple(UNITS),
        guarantees=bench_guarantees,
    )
)
