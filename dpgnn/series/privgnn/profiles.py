"""PrivGNN's run profiles: one frozen :class:`Profile` per name (``smoke``, ``test``, ``paper``), with a nested part
per notebook: :class:`Budgets` (01), :class:`Figures` (03), :class:`Fidelity`, :class:`OfficialSplit` (04) and
:class:`B4Readings` (02's readings of B4).

:func:`dpgnn.profiles.settings` reads a profile as a mapping of its top-level fields, so notebooks read
``cfg.fidelity.k``, after :meth:`Profile.with_overrides`: it takes a top-level setting, or a nested part's field by
its flat name (:data:`FLAT_NAMES`: ``fidelity_k`` is ``fidelity.k``, as in ``dpgnn run privgnn --set
fidelity_k=[300]``), the names the stored cells and the docs use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpgnn import profiles
from dpgnn.methods.privgnn import LAMBDAS


@dataclass(frozen=True)
class Budgets:
    """Notebook 01's ε tables (pure computation)."""

    #: the λ grid of Tables 2, 3, 9
    lambdas: tuple[float, ...] = LAMBDAS
    #: |Q| values of Fig. 7's ε axis (λ 0.4)
    fig7_queries: tuple[int, ...] = (10, 100, 200, 300, 500, 1000)
    #: how many printed ε the δ finding inverts (of 6)
    delta_cells: int = 6


@dataclass(frozen=True)
class Figures:
    """Notebook 03's cells: Fig. 3 and App. D.6, Fig. 5 (App. D.1), Fig. 6 (App. D.2)."""

    #: noise variants (``log_softmax`` = the authors' code, rows ``*_code``)
    noise: tuple[str, ...] = ("posterior",)
    #: the λ grid of the figure and fidelity cells
    lambdas: tuple[float, ...] = LAMBDAS
    fig3_datasets: tuple[str, ...] = ("amazon",)
    #: |Q| of Fig. 3 (every λ)
    fig3_queries: tuple[int, ...] = (500, 1000)
    #: |Q| of App. D.6 / Fig. 7's accuracy axis, at ``d6_lambda``
    d6_queries: tuple[int, ...] = (10, 100, 200, 300, 500, 1000)
    d6_lambda: float = 0.4
    fig5_datasets: tuple[str, ...] = ("credit",)
    fig6_datasets: tuple[str, ...] = ("amazon",)
    #: |Q| of Fig. 5 and Fig. 6
    queries: int = 1000
    #: PATE teachers of Fig. 5 / 6 (``None``: the dataset's)
    pate_teachers: int | None = None


@dataclass(frozen=True)
class Fidelity:
    """Notebook 04's authors'-code teacher cells (:func:`dpgnn.methods.privgnn.authors_code_teacher_posteriors`,
    unsound)."""

    datasets: tuple[str, ...] = ("amazon",)
    queries: tuple[int, ...] = (500,)
    #: K values (``None``: the profile's, else the dataset's)
    k: tuple[int | None, ...] = (None,)
    runs: int = 1
    #: also train the paper's teachers in the cell (same seeds): the cell holds its own paired comparison
    pair: bool = True
    noise: tuple[str, ...] = ("log_softmax",)
    #: ``"authors_code"``: the students are the official code's too (they continue the teachers' Adam)
    student: str = "paper"
    #: epochs of the authors'-code teachers and of that student (``None``: the profile's; the official code: 500)
    epochs: int | None = None


@dataclass(frozen=True)
class OfficialSplit:
    """Notebook 04's cells on the official code's split: B1-B3 and PATE-G with untrained teachers, then PrivGNN's
    students (:func:`dpgnn.series.privgnn.authors_code.authors_baselines_cells`)."""

    datasets: tuple[str, ...] = ("amazon",)
    runs: int = 1
    #: K of the students (``None``: the profile's, with every |Q| of ``queries``; another K at the main |Q|)
    k: tuple[int | None, ...] = (None,)
    queries: tuple[int, ...] = (500,)
    noise: tuple[str, ...] = ("log_softmax",)


@dataclass(frozen=True)
class B4Readings:
    """The readings of B4 (Table 9, App. D.5; :func:`dpgnn.series.privgnn.b4_readings.b4_readings_cells`)."""

    datasets: tuple[str, ...] = ("credit",)
    runs: int = 1
    #: |Q| of the "λ fixed" readings
    queries: tuple[int, ...] = (50,)
    lambdas: tuple[float, ...] = (1.0,)


#: the flat setting names of the nested parts: part -> (prefix of its names, {field: flat name} where it differs)
_PARTS: dict[str, tuple[str, dict[str, str]]] = {
    "budgets": ("", {"lambdas": "eps_lambdas", "fig7_queries": "fig7_queries", "delta_cells": "delta_cells"}),
    "figures": (
        "",
        {
            "noise": "figure_noise",
            "lambdas": "figure_lambdas",
            "queries": "figure_queries",
            "pate_teachers": "figure_pate_teachers",
        },
    ),
    "fidelity": ("fidelity_", {}),
    "official_split": (
        "",
        {
            "datasets": "fidelity_baselines_datasets",
            "runs": "fidelity_baselines_runs",
            "k": "fidelity_split_k",
            "queries": "fidelity_split_queries",
            "noise": "fidelity_split_noise",
        },
    ),
    "b4": ("b4_", {"queries": "b4_reading_queries", "lambdas": "b4_reading_lambdas"}),
}


def _flat_names(part: str, cls: type) -> dict[str, str]:
    prefix, renamed = _PARTS[part]
    return {f.name: renamed.get(f.name, prefix + f.name) for f in dataclasses.fields(cls)}


@dataclass(frozen=True)
class Profile(profiles.Profile, Mapping):
    """One PrivGNN run profile (the accuracy grid's settings at the top, a nested part per other notebook)."""

    #: datasets of the accuracy grid
    datasets: tuple[str, ...]
    #: datasets that get every table (the others only Table 5's PrivGNN rows)
    full_datasets: tuple[str, ...]
    #: the λ grid of the accuracy grid
    lambdas: tuple[float, ...]
    #: |Q| values (Table 6)
    queries: tuple[int, ...]
    #: |Q| of Table 5 and the baselines
    main_queries: int
    #: K (``None``: the dataset's, :data:`dpgnn.methods.privgnn.DATASETS`)
    k: int | None
    #: K values of Table 1 beside the dataset's
    table1_k: tuple[int, ...]
    #: γ, the Poisson sampling rate (``None``: the dataset's)
    gamma: float | None
    teacher_epochs: int
    student_epochs: int
    runs: int
    #: PATE teachers (``None``: the dataset's)
    pate_teachers: int | None
    noise_variants: tuple[str, ...]
    baselines: tuple[str, ...]
    #: Table 5's PATE rows
    pate: bool
    seed: int
    #: the teachers of the figure cells: ``"paper"`` (Algorithm 1) or ``"authors_code"`` (unsound)
    teacher: str = "paper"
    budgets: Budgets = field(default_factory=Budgets)
    figures: Figures = field(default_factory=Figures)
    fidelity: Fidelity = field(default_factory=Fidelity)
    official_split: OfficialSplit = field(default_factory=OfficialSplit)
    b4: B4Readings = field(default_factory=B4Readings)

    def with_overrides(self, **overrides: Any) -> Profile:
        """A copy with ``overrides`` applied: top-level settings by name, the nested parts' fields by their flat
        names (:data:`FLAT_NAMES`); lists become tuples. An unknown name is a ``ValueError`` listing the valid
        ones."""
        flat = _flat_index()
        top = {f.name for f in dataclasses.fields(self)} - set(_PARTS)
        unknown = sorted(k for k in overrides if k not in top and k not in flat)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown} for privgnn; valid: {sorted(top | set(flat))}")
        fields: dict[str, Any] = {}
        parts: dict[str, dict[str, Any]] = {}
        for key, value in overrides.items():
            value = tuple(value) if isinstance(value, list) else value
            if key in top:
                fields[key] = value
            else:
                part, name = flat[key]
                parts.setdefault(part, {})[name] = value
        for part, changes in parts.items():
            fields[part] = dataclasses.replace(getattr(self, part), **changes)
        return dataclasses.replace(self, **fields)

    def __getitem__(self, key: str) -> Any:
        if key not in _top_names():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_top_names())

    def __len__(self) -> int:
        return len(_top_names())


def _top_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Profile))


def _flat_index() -> dict[str, tuple[str, str]]:
    """Flat name -> (part, field) for every field of the nested parts."""
    parts = {"budgets": Budgets, "figures": Figures, "fidelity": Fidelity, "official_split": OfficialSplit}
    parts["b4"] = B4Readings
    return {flat: (part, name) for part, cls in parts.items() for name, flat in _flat_names(part, cls).items()}


SMOKE = Profile(
    datasets=("credit", "amazon"),
    full_datasets=("credit",),
    lambdas=(0.2, 1.0),
    queries=(200,),
    main_queries=200,
    k=100,
    table1_k=(),
    gamma=0.3,
    teacher_epochs=20,
    student_epochs=15,
    runs=1,
    pate_teachers=10,
    noise_variants=("posterior", "log_softmax"),
    baselines=("b1", "b2", "b3", "mlp", "b4"),
    # Table 5's PATE rows are Amazon's, which smoke keeps light; PATE runs in the paper profile
    pate=False,
    seed=12345,
    # one λ (= D.6's, so the |Q| = 50 student serves Fig. 3 and D.6) keeps notebook 03 near 20 s of CPU
    figures=Figures(
        lambdas=(0.4,),
        fig3_queries=(25, 50),
        d6_queries=(25, 50),
        fig5_datasets=("credit",),
        queries=40,
        pate_teachers=3,
    ),
    fidelity=Fidelity(datasets=("credit",), queries=(20,), k=(50,), runs=1, pair=True, noise=("log_softmax",)),
    # the baseline cells load Amazon twice (~18 s): not in the smoke budget; the test profile runs them
    official_split=OfficialSplit(datasets=(), runs=1, k=(), queries=(), noise=()),
    b4=B4Readings(datasets=("credit",), runs=1, queries=(50,), lambdas=(1.0,)),
)

TEST = Profile(
    datasets=("credit",),
    full_datasets=("credit",),
    lambdas=(1.0,),
    queries=(20,),
    main_queries=20,
    k=20,
    table1_k=(),
    gamma=0.3,
    teacher_epochs=3,
    student_epochs=3,
    runs=1,
    pate_teachers=4,
    noise_variants=("posterior",),
    baselines=("b1",),
    pate=False,
    seed=0,
    budgets=Budgets(lambdas=(0.1, 1.0), fig7_queries=(100, 1000), delta_cells=1),
    figures=Figures(
        lambdas=(1.0,),
        fig3_datasets=("credit",),
        fig3_queries=(10, 20),
        d6_queries=(5, 20),
        fig6_datasets=("credit",),
        queries=20,
        pate_teachers=3,
    ),
    fidelity=Fidelity(datasets=("credit",), queries=(10,), k=(20,), runs=1, pair=True, noise=("posterior",)),
    official_split=OfficialSplit(datasets=("amazon",), runs=1, k=(None,), queries=(20,), noise=("log_softmax",)),
    b4=B4Readings(datasets=("credit",), runs=1, queries=(10,), lambdas=(1.0,)),
)

PAPER_PROFILE = Profile(
    datasets=("amazon", "credit", "fb100-cornell5 (stand-in for facebook)"),
    full_datasets=("amazon", "credit", "fb100-cornell5 (stand-in for facebook)"),
    lambdas=LAMBDAS,
    queries=(500, 1000),
    main_queries=1000,
    k=None,
    table1_k=(300,),
    gamma=None,
    teacher_epochs=200,
    student_epochs=200,
    runs=3,
    pate_teachers=None,
    noise_variants=("posterior", "log_softmax"),
    baselines=("b1", "b2", "b3", "mlp", "b4"),
    pate=True,
    seed=12345,
    figures=Figures(noise=("posterior", "log_softmax")),
    # the official code end to end at Table 6's |Q| 500 (its teachers and student, 500 epochs, noise on
    # log-softmax); the authors'-code teachers are sequential: 31 min of this 2-core CPU per run alone
    # (78 min while sharing it). The paper-mode rows of the same runs are the accuracy grid's (no pairing
    # needed). Table 1's K 300 was run the same way: --set 'fidelity_k=[300]' --set 'fidelity_queries=[1000]'
    fidelity=Fidelity(
        datasets=("amazon",),
        queries=(500,),
        k=(None,),
        runs=2,
        pair=False,
        noise=("log_softmax",),
        student="authors_code",
        epochs=500,
    ),
    # PrivGNN's authors'-code students on the official split, at Table 6's |Q| 500 and Table 1's K 300 (the
    # teachers cost ~13 min of this CPU per run: 500 at K 750 and 1000 at K 300)
    official_split=OfficialSplit(datasets=("amazon",), runs=3, k=(None, 300), queries=(500,), noise=("log_softmax",)),
    # B4's readings on Table 9's datasets with the accuracy grid's runs (seeds): hard labels at every λ,
    # and λ 1 / 0.5 with |Q| 100 ... 500 (Table 9's ε row read as |Q|·λ)
    b4=B4Readings(datasets=("credit", "amazon"), runs=3, queries=(100, 200, 300, 400, 500), lambdas=(1.0, 0.5)),
)

#: the profiles by name (read by :func:`dpgnn.profiles.settings` as mappings of their top-level fields)
PROFILES: dict[str, Profile] = {"smoke": SMOKE, "test": TEST, "paper": PAPER_PROFILE}
#: the flat names of the nested parts' fields (the names ``settings(..., **overrides)`` and ``--set`` take)
FLAT_NAMES: tuple[str, ...] = tuple(_flat_index())
