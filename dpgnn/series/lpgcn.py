"""LPGCN series ("When Differential Privacy Meets Graph Neural Networks"): Fig. 1-5, Tables 2 and 3.

The series API (:mod:`dpgnn.series.common`): :func:`run` computes what is missing of an artifact, stores tidy rows
under ``results/<profile>/lpgcn/`` and returns them; :func:`side_by_side` and :func:`plot` read only stored rows.
``run_variance`` / ``run_estimation_error`` / ``run_table2`` and ``plot_fig1`` ... ``plot_table2`` are what they
dispatch to. Table 2's runs resolve their method through :func:`dpgnn.methods.get`
(:func:`dpgnn.methods.lpgcn.method_key`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dpgnn.profiles import Profile
from dpgnn.report import paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series import Series, register
from dpgnn.series.common import fmt
from dpgnn.series.ledgers import lpgcn_guarantees
from dpgnn.series.lpgcn_artifacts import (
    CELLS,
    PAPER,
    plot_fig1,
    plot_fig2,
    plot_fig3,
    plot_fig4,
    plot_fig5,
    plot_table2,
    run_estimation_error,
    run_table2,
    run_variance,
)
from dpgnn.series.lpgcn_artifacts import (
    LEDGER_KEYS as LEDGER_KEYS,
)
from dpgnn.series.lpgcn_artifacts import (
    _data as _data,
)
from dpgnn.series.lpgcn_artifacts import (
    _lp_split as _lp_split,
)
from dpgnn.series.lpgcn_artifacts import (
    _setting as _setting,
)
from dpgnn.series.lpgcn_artifacts import (
    _tidy as _tidy,
)
from dpgnn.series.lpgcn_artifacts import (
    batch_run as batch_run,
)
from dpgnn.series.lpgcn_artifacts import (
    fig2_cell as fig2_cell,
)
from dpgnn.series.lpgcn_artifacts import (
    fig2_cells as fig2_cells,
)
from dpgnn.series.lpgcn_artifacts import (
    fig3_cell as fig3_cell,
)
from dpgnn.series.lpgcn_artifacts import (
    fig3_cells as fig3_cells,
)
from dpgnn.series.lpgcn_artifacts import (
    repeats_runner as repeats_runner,
)
from dpgnn.series.lpgcn_artifacts import (
    seed_key as seed_key,
)
from dpgnn.series.lpgcn_artifacts import (
    table2_cell as table2_cell,
)
from dpgnn.series.lpgcn_artifacts import (
    table2_cells as table2_cells,
)
from dpgnn.sweep import check_train


@dataclass(frozen=True)
class Training:
    """Early stopping of one task's Table 2 runs (docs/papers/lpgcn.md#models-and-training)."""

    max_epochs: int
    """most training epochs of one run"""
    min_epochs: int
    """epochs before early stopping may stop a run"""
    patience: int
    """validation checks without improvement before stopping"""
    check_every: int | None = None
    """epochs between validation checks (link prediction only; node classification checks every epoch)"""


@dataclass(frozen=True)
class LPGCNProfile(Profile):
    """The settings of the LPGCN notebooks and grids (``dpgnn.profiles.settings("lpgcn", profile)``)."""

    datasets: list[str]
    """datasets of Fig. 2-5 and Table 3"""
    table2_datasets: list[str]
    """datasets of Table 2 (the training runs)"""
    variance_epsilons: list[float]
    """ε grid of the analytic variance curves (Fig. 1, 4, 5)"""
    mae_epsilons: list[float]
    """ε grid of the estimation error of Fig. 2"""
    table2_epsilons: list[float]
    """ε columns of Table 2"""
    methods: list[str]
    """feature mechanisms (``lm``, ``pm``, ``pgc``) and ``raw`` (non-private, ε = ∞)"""
    runs: int
    """runs per Table 2 cell (the paper: 10)"""
    nc: Training
    """node classification runs of Table 2 (GCN, micro-F1)"""
    lp: Training
    """link prediction runs of Table 2 (VGAE, AUC)"""
    seed: int
    """base seed of every cell"""


_LPGCN_DATASETS = ["citeseer", "cora", "elliptic", "flickr", "twitch"]

#: run profiles (read by dpgnn.profiles.settings("lpgcn", profile))
PROFILES: dict[str, LPGCNProfile] = {
    "smoke": LPGCNProfile(
        datasets=["cora", "citeseer", "twitch"],
        table2_datasets=["cora"],
        variance_epsilons=[1.0 + 0.25 * i for i in range(17)],  # eps in [1, 5]
        # smoke keeps every notebook <= 60 s on 2 idle CPU cores: Fig. 2 at the ends of the paper's ε range
        # (ε = 1 is the point compared with the paper), Table 2 with one run at ε = 1 and 9
        mae_epsilons=[1.0, 9.0],
        table2_epsilons=[1.0, 9.0],
        methods=["lm", "pm", "pgc", "raw"],
        runs=1,
        nc=Training(max_epochs=100, min_epochs=10, patience=20),
        lp=Training(max_epochs=100, min_epochs=20, patience=10, check_every=10),
        seed=12345,
    ),
    # "test": the smallest end-to-end execution, used by the test suite to run every notebook with papermill
    "test": LPGCNProfile(
        datasets=["cora"],
        table2_datasets=["cora"],
        variance_epsilons=[1.0, 3.0, 5.0],
        mae_epsilons=[1.0, 9.0],
        table2_epsilons=[1.0],
        methods=["pgc", "raw"],
        runs=1,
        nc=Training(max_epochs=5, min_epochs=1, patience=2),
        lp=Training(max_epochs=10, min_epochs=2, patience=1, check_every=5),
        seed=0,
    ),
    "paper": LPGCNProfile(
        datasets=_LPGCN_DATASETS,
        table2_datasets=_LPGCN_DATASETS,
        variance_epsilons=[1.0 + 0.1 * i for i in range(41)],
        mae_epsilons=[1.0, 3.0, 5.0, 7.0, 9.0],
        table2_epsilons=[1.0, 5.0, 9.0],
        methods=["lm", "pm", "pgc", "raw"],
        runs=10,
        nc=Training(max_epochs=500, min_epochs=10, patience=20),
        lp=Training(max_epochs=500, min_epochs=100, patience=10, check_every=10),
        seed=12345,
    ),
}


# ---------------------------------------------------------------------------------------------------------------
# The series API (:mod:`dpgnn.series.common`)
# ---------------------------------------------------------------------------------------------------------------
#: every artifact of the paper this series reproduces, in notebook order
ARTIFACTS = ("table3", "fig1", "fig4", "fig5", "fig2", "fig3", "table2")
_VARIANCE = ("table3", "fig1", "fig4", "fig5")  # notebook 01: recomputed together in seconds
_MAE = ("fig2", "fig3")  # notebook 02
_PLOTS = {
    "fig1": plot_fig1,
    "fig4": plot_fig4,
    "fig5": plot_fig5,
    "fig2": plot_fig2,
    "fig3": plot_fig3,
    "table2": plot_table2,
}
#: decimals of the side-by-side cells (Table 2 in %, the rest are small numbers: x̄, variances, MAE)
_DECIMALS = {"table2": 1}


def _artifacts(artifact: str | list[str] | tuple[str, ...]) -> list[str]:
    names = [artifact] if isinstance(artifact, str) else list(artifact)
    unknown = [a for a in names if a not in ARTIFACTS]
    if unknown or not names:
        raise ValueError(f"unknown LPGCN artifact(s) {unknown or names}; valid: {list(ARTIFACTS)}")
    return names


def run(
    cfg: LPGCNProfile,
    store: ResultStore,
    artifact: str | list[str],
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Compute what is missing of ``artifact`` (a name of :data:`ARTIFACTS`, or a list of them) and return its
    stored rows (a dict by artifact for a list).

    Table 3 and Fig. 1/4/5 are pure computation, recomputed together whatever ``force``/``train`` say; Fig. 2/3
    (:func:`run_estimation_error`) and Table 2 (:func:`run_table2`) resume their grids, ``force`` recomputes them,
    ``train=False`` computes nothing and returns the stored rows.
    """
    names = _artifacts(artifact)
    check_train(force, train)
    out: dict[str, pd.DataFrame] = {}
    if any(a in _VARIANCE for a in names):
        out.update(run_variance(cfg, store))
    if any(a in _MAE for a in names):
        out.update(run_estimation_error(cfg, store, force=force, train=train))
    if "table2" in names:
        out["table2"] = run_table2(cfg, store, device=device, force=force, train=train)
    return out[artifact] if isinstance(artifact, str) else {a: out[a] for a in names}


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """Ours beside the paper for every reported cell of ``artifact``: ``paper``/``ours`` as ``mean ± spread``,
    the difference and the status (``paper_value``/``ours_value`` keep the unrounded numbers)."""
    (artifact,) = _artifacts(artifact)
    rep = paper_vs_ours(PAPER, artifact, store.profile)
    nd = _DECIMALS.get(artifact, 4)
    rep["ours"] = [fmt(v, s, nd) for v, s in zip(rep["ours_value"], rep["ours_spread"])]
    rep["paper"] = [fmt(v, s, nd) for v, s in zip(rep["paper_value"], rep["paper_spread"])]
    rep["diff"] = rep["diff"].round(nd)
    cols = [
        "dataset",
        "method",
        "metric",
        "setting",
        "paper",
        "ours",
        "diff",
        "n_runs",
        "status",
        "note",
        "paper_value",
        "ours_value",
    ]
    return rep[cols].sort_values(
        ["metric", "dataset", "method", "setting"], ascending=[False, True, True, True], ignore_index=True
    )


def plot(store: ResultStore, artifact: str, *, datasets: list[str] | None = None):
    """The paper's figure ``artifact`` (Table 2 drawn as a figure) from stored rows; ``datasets`` restricts Fig. 2/3
    to those datasets (default: every stored one). Table 3 is a table: see :func:`side_by_side`."""
    (artifact,) = _artifacts(artifact)
    if artifact not in _PLOTS:
        raise ValueError(f"{artifact} is a table with no figure; use side_by_side(store, {artifact!r})")
    if artifact in _MAE:
        return _PLOTS[artifact](store, datasets)
    return _PLOTS[artifact](store)


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='LPGCN: "When Differential Privacy Meets Graph Neural Networks"',
        kind="paper",
        order=1,
        citation="Sajadmanesh & Gatica-Perez, arXiv 2006.05535 v1 (June 2020)",
        docs="docs/papers/lpgcn.md",
        reference="lpgcn.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
        guarantees=lpgcn_guarantees,
    )
)
