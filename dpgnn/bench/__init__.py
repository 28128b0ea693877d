"""A fair benchmark of every method per privacy unit, with the hyper-parameter search inside the budget.

One protocol for every method of a unit (:mod:`dpgnn.bench.units`): the same datasets, the same split per dataset
and seed, the same ε grid, repeats and tuning budget (:mod:`dpgnn.bench.profiles`), each method's search space
documented beside it (:mod:`dpgnn.bench.spaces`). Two tunings, both stored (:mod:`dpgnn.bench.protocol`):
``as_published`` (grid search on validation, ε excludes the search, as in the papers) and ``private`` (random search
with a random number of trials, Papernot & Steinke 2022; ε includes the search, :mod:`dpgnn.bench.accounting`).

::

    from dpgnn.bench import get_profile, run, plan
    plan(get_profile("smoke"))            # cells per unit, stored and missing
    rows = run(get_profile("smoke"))      # results/smoke/bench/<unit>.csv, resumable

``dpgnn bench --profile smoke`` does the same from the shell; the bench is also the registered series ``bench``
(:mod:`dpgnn.series.bench`: ``dpgnn run bench --profile smoke`` computes the same cells on the engine). What the
stored rows show -- accuracy vs ε with intervals, which method at which ε, the cost of private tuning, what is
missing -- is :mod:`dpgnn.bench.report`'s, drawn by ``notebooks/bench/01_which_method.ipynb``.
"""

from __future__ import annotations

from dpgnn.bench.profiles import PROFILES, BenchProfile, get_profile
from dpgnn.bench.protocol import DATASETS, TUNINGS, run_cell, shared_split
from dpgnn.bench.runner import cells, plan, run
from dpgnn.bench.spaces import SPACES, SearchSpace, space_of
from dpgnn.bench.units import UNITS, Unit, get_unit

__all__ = [
    "PROFILES",
    "BenchProfile",
    "get_profile",
    "DATASETS",
    "TUNINGS",
    "run_cell",
    "shared_split",
    "cells",
    "plan",
    "run",
    "SPACES",
    "SearchSpace",
    "space_of",
    "UNITS",
    "Unit",
    "get_unit",
]
