"""The cells of a profile and their resumable run: rows in ``results/<folder>/bench/<unit>.csv`` (the profile's
:attr:`~dpgnn.bench.profiles.BenchProfile.folder`: its name, ``paper`` for the ``bench`` profile).

The store is :class:`dpgnn.results.ResultStore` (paper ``bench``, one artifact per unit) and the loop
:func:`dpgnn.sweep.run_grid`: a cell already stored (same config hash) is not run again, each finished cell is
appended at once, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from dpgnn.bench.profiles import BenchProfile
from dpgnn.bench.protocol import TUNINGS, run_cell
from dpgnn.bench.units import UNITS, get_unit

__all__ = ["cells", "run", "plan"]


def _check(values: list[str] | None, valid: tuple[str, ...] | list[str], what: str) -> None:
    for v in values or []:
        if v not in valid:
            raise ValueError(f"unknown {what}: {v!r}; valid: {', '.join(valid)}")


def cells(
    profile: BenchProfile,
    *,
    units: list[str] | None = None,
    datasets: list[str] | None = None,
    tunings: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Per unit, the cells of ``profile`` (restricted to ``units``, ``datasets``, ``tunings`` when given).

    Every method of a unit gets the same datasets, seeds, ε grid and tunings; a reference method runs once per
    dataset, seed and tuning at ε = ∞ (non-private) or ε = 0 (trivially private).
    """
    _check(units, tuple(UNITS), "unit")
    _check(units, profile.units, f"unit of profile {profile.name!r}")
    _check(datasets, profile.datasets, "dataset of this profile")
    _check(tunings, TUNINGS, "tuning")
    out: dict[str, list[dict[str, Any]]] = {}
    for name in units or profile.units:
        unit = get_unit(name)
        rows = []
        for method in profile.methods_of(name):
            if method in unit.references:
                grid = (math.inf,)
            elif method in unit.trivial:
                grid = (0.0,)
            else:
                grid = profile.epsilons_of(name)
            fixed = json.dumps(profile.fixed.get(method, {}), sort_keys=True)
            for dataset in datasets or profile.datasets:
                for eps in grid:
                    for seed in profile.seeds:
                        for tuning in tunings or TUNINGS:
                            rows.append(
                                {
                                    "unit": name,
                                    "method": method,
                                    "dataset": dataset,
                                    "epsilon": eps,
                                    "seed": seed,
                                    "tuning": tuning,
                                    "setting": f"{tuning}/eps={eps:g}",
                                    "fixed": fixed,
                                    "grid_limit": profile.grid_limit or 0,
                                }
                            )
        out[name] = rows
    return out


def plan(profile: BenchProfile, **filters: Any) -> pd.DataFrame:
    """Per unit, the numbers of cells and of those stored (``dpgnn bench --dry-run``)."""
    from dpgnn.results import ResultStore
    from dpgnn.utils import config_hash

    store = ResultStore("bench", profile.folder)
    rows = []
    for unit, cs in cells(profile, **filters).items():
        done = store.done(unit)
        stored = sum(config_hash(c) in done for c in cs)
        rows.append({"unit": unit, "cells": len(cs), "stored": stored, "missing": len(cs) - stored})
    return pd.DataFrame(rows)


def run(profile: BenchProfile, *, force: bool = False, train: bool = True, **filters: Any) -> pd.DataFrame:
    """Run every missing cell of ``profile`` (filters as :func:`cells`; ``force``: every cell again; ``train=False``:
    none, e.g. to draw a long profile's stored rows while ``dpgnn run bench`` computes the rest); returns the stored
    rows of its units."""
    import torch

    from dpgnn.results import ResultStore
    from dpgnn.sweep import check_train, run_grid

    check_train(force, train)
    store = ResultStore("bench", profile.folder)
    todo = cells(profile, **filters)
    if not train:
        frames = [store.load(unit) for unit in todo]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    frames = []

    def one(cell: dict[str, Any]) -> dict[str, Any]:
        return run_cell(cell, fixed=json.loads(cell["fixed"]), grid_limit=cell["grid_limit"] or None)

    threads = torch.get_num_threads()
    try:
        if profile.threads:
            torch.set_num_threads(profile.threads)
        for unit, cs in todo.items():
            frames.append(run_grid(store, unit, cs, one, desc=f"bench {unit}", device="cpu", force=force))
    finally:
        torch.set_num_threads(threads)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
