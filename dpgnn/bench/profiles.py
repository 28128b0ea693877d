"""The benchmark's profiles: which units, methods, datasets, ε, seeds and trial sizes a run covers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dpgnn.bench.units import UNITS
from dpgnn.profiles import Profile

__all__ = ["BenchProfile", "PROFILES", "get_profile"]

#: fewer epochs for the test and smoke profiles (every trial of every method; the bench profile keeps the defaults)
_SHORT: dict[str, dict[str, Any]] = {
    "progap": {"epochs": 5},
    "gap": {"epochs": 5},
    "dp-gnn": {"epochs": 3},
    "dp-mlp": {"epochs": 5},
    "edgerand": {"epochs": 5},
    "mlp": {"epochs": 5},
    "graphsage": {"epochs": 5},
    "drw": {"max_steps": 5, "hidden": 16},
    "fdp": {"max_steps": 5, "hidden": 16},
    "mbm": {"epochs": 10},
    "rr": {"epochs": 10},
    "lm": {"max_epochs": 10},
    "pm": {"max_epochs": 10},
    "pgc": {"max_epochs": 10},
}


@dataclass(frozen=True)
class BenchProfile(Profile):
    """One profile of ``dpgnn bench``.

    Attributes:
        name: the profile's name (results go to ``results/<name>/bench/``).
        datasets: dataset names (:data:`dpgnn.bench.protocol.DATASETS`).
        seeds: repeats; each seed draws its own shared split.
        units: the units run.
        methods: per unit, the methods run (default: every method of the unit, its references and trivial ones).
        epsilons: per unit, the ε grid (default: the unit's).
        fixed: per method, config overrides of every trial (e.g. fewer epochs).
        grid_limit: use only the first points of each search space (``None``: all).
        threads: torch CPU threads while the profile runs (``None``: torch's default). One thread is much faster
            for the toy graphs on a busy machine (no contention between threads for tiny kernels).
        results: the profile folder of its rows, ``results/<results>/bench/`` (default: ``name``); the ``bench``
            profile is the series' ``paper`` profile (:mod:`dpgnn.series.bench`), so both commands share its rows.
        paper, profile: the series (``bench``) and its profile name (``smoke``, ``test`` or ``paper``), filled in by
            :func:`dpgnn.profiles.settings` as for every series (:class:`dpgnn.profiles.Profile`).
    """

    name: str
    datasets: tuple[str, ...]
    seeds: tuple[int, ...]
    units: tuple[str, ...] = tuple(UNITS)
    methods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    epsilons: dict[str, tuple[float, ...]] = field(default_factory=dict)
    fixed: dict[str, dict[str, Any]] = field(default_factory=dict)
    grid_limit: int | None = None
    threads: int | None = None
    results: str = ""

    @property
    def folder(self) -> str:
        """The profile folder of its rows: ``results/<folder>/bench/<unit>.csv``."""
        return self.results or self.name

    def methods_of(self, unit: str) -> tuple[str, ...]:
        """The methods this profile runs in ``unit``: its own choice, else every method of the unit, its trivial
        ones and its references."""
        u = UNITS[unit]
        return self.methods.get(unit, u.methods + u.trivial + u.references)

    def epsilons_of(self, unit: str) -> tuple[float, ...]:
        """The ε grid this profile runs in ``unit``: its own choice, else the unit's."""
        return self.epsilons.get(unit, UNITS[unit].epsilons)


PROFILES: dict[str, BenchProfile] = {
    p.name: p
    for p in (
        BenchProfile(
            "test",
            datasets=("toy",),
            seeds=(0,),
            units=("edge", "node", "ldp-labels"),
            methods={"edge": ("gap", "mlp"), "node": ("dp-mlp",), "ldp-labels": ("rr",)},
            epsilons={"edge": (2.0,), "node": (4.0,), "ldp-labels": (2.0,)},
            fixed=_SHORT,
            grid_limit=2,
            threads=1,
        ),
        BenchProfile(
            "smoke",
            datasets=("toy",),
            seeds=(0,),
            methods={
                "edge": ("progap", "edgerand", "mlp"),
                "node": ("gap", "dp-mlp"),
                "node-data": ("fdp",),  # DRW computes its full step schedule with autodp: seconds per run
                "ldp-features": ("mbm",),
                "ldp-labels": ("rr",),
                "ldp-both": ("mbm",),
            },
            epsilons={u: (UNITS[u].epsilons[-2],) for u in UNITS},
            fixed=_SHORT,
            grid_limit=2,
            threads=1,
        ),
        BenchProfile(
            "bench",
            datasets=("cora", "citeseer", "facebook-pagepage", "amazon-computers", "credit", "fb100-amherst41"),
            seeds=(0, 1, 2, 3, 4),
            results="paper",
        ),
    )
}


def get_profile(name: str) -> BenchProfile:
    """The profile ``name``; an unknown name lists the valid ones."""
    if name not in PROFILES:
        raise ValueError(f"unknown bench profile {name!r}; valid: {', '.join(PROFILES)}")
    return PROFILES[name]
