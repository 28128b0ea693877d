"""The series API that notebooks, the CLI and the engine call: ``run``, ``side_by_side``, ``plot`` and the grid
``CELLS`` of every artifact."""

from __future__ import annotations

import functools

import pandas as pd

from dpgnn.profiles import Settings
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.series.privgnn import common
from dpgnn.series.privgnn.accuracy import (
    accuracy_cells,
    accuracy_side_by_side,
    plot_accuracy,
    run_accuracy,
    run_cell,
)
from dpgnn.series.privgnn.authors_code import (
    authors_baselines_cells,
    authors_baselines_side_by_side,
    authors_code_cells,
    authors_code_side_by_side,
    plot_authors_baselines,
    plot_authors_code,
    run_authors_baselines_cell,
    run_authors_code_cell,
)
from dpgnn.series.privgnn.b4_readings import b4_readings_cells, b4_readings_table, run_b4_readings_cell
from dpgnn.series.privgnn.budget import _plot_fig2b, _plot_fig7_eps, epsilon_side_by_side, run_epsilon
from dpgnn.series.privgnn.common import (
    PAPER,
    _unknown,
)
from dpgnn.series.privgnn.figures import (
    fig3_cells,
    fig5_cells,
    fig6_cells,
    figure_side_by_side,
    plot_fig3,
    plot_methods,
    run_fig3_cell,
    run_fig5_cell,
    run_fig6_cell,
)
from dpgnn.sweep import CellSpec, check_train, run_grid
from dpgnn.utils import resolve_device

#: the ε artifacts (Tables 2, 3, 9 and Fig. 7's ε axis), computed together by :func:`run_epsilon`
EPSILON_ARTIFACTS = ("table2_eps", "table3_eps", "table9_eps", "fig7_eps")
#: the paper's accuracy tables, whose rows live in the one stored artifact ``"accuracy"`` (:func:`run_accuracy`)
ACCURACY_ARTIFACTS = ("table1", "table5", "table6", "table7", "table8", "table9")
#: the figure and fidelity cells of notebooks 03/04 (``CELLS`` names, run by :func:`run_figures`)
FIGURE_ARTIFACTS = ("fig3", "fig5", "fig6", "authors_code", "authors_baselines", "b4_readings")
#: the reference artifacts of those cells (App. D.6's accuracy axis, ``fig7``, is stored with Fig. 3's cells)
FIGURE_REFERENCES = ("fig3", "fig7", "fig5", "fig6")
_FIGURE_TITLES = {"fig5": "Fig. 5 (App. D.1)", "fig6": "Fig. 6 (App. D.2): flipped portions"}
#: the figures :func:`plot` draws
FIGURES = (
    "fig2a",
    "fig2b",
    "fig7_eps",
    "fig3",
    "fig7_accuracy",
    "fig5_accuracy",
    "fig5_epsilon",
    "fig6_accuracy",
    "fig6_epsilon",
    "authors_code",
    "authors_baselines",
)


def run(
    cfg: Settings, store: ResultStore, artifact: str, *, device: str = "auto", force: bool = False, train: bool = True
):
    """Compute and store ``artifact``'s rows and return them.

    ``"epsilon"``: every ε table (:func:`run_epsilon`; a dict artifact → rows), or one of
    :data:`EPSILON_ARTIFACTS` (all are computed, that one is returned); the accountant trains nothing, so ``device``,
    ``force`` and ``train`` do not apply. ``"accuracy"``: every accuracy cell (:func:`run_accuracy`, resumable;
    ``force`` retrains, ``train=False`` only reads what is stored), or one of :data:`ACCURACY_ARTIFACTS` (the same
    cells, that table's rows returned). One of :data:`FIGURE_ARTIFACTS` (``fig3``, ``fig5``, ``fig6``,
    ``authors_code``, ``authors_baselines``, ``b4_readings``): that grid's cells (:func:`run_figures`)."""
    check_train(force, train)
    if artifact == "epsilon" or artifact in EPSILON_ARTIFACTS:
        out = run_epsilon(cfg, store)
        return out if artifact == "epsilon" else out[artifact]
    if artifact == "accuracy" or artifact in ACCURACY_ARTIFACTS:
        rows = run_accuracy(cfg, store, device=device, force=force, train=train)
        if artifact == "accuracy" or rows.empty:
            return rows
        return rows[rows["artifact"] == artifact].reset_index(drop=True)
    if artifact in FIGURE_ARTIFACTS:
        return run_figures(cfg, store, (artifact,), device=device, force=force, train=train)[artifact]
    raise _unknown(
        "artifact", artifact, ["epsilon", *EPSILON_ARTIFACTS, "accuracy", *ACCURACY_ARTIFACTS, *FIGURE_ARTIFACTS]
    )


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """The paper's numbers beside ours: an ε table (:func:`epsilon_side_by_side`), ``"accuracy"`` (every accuracy
    table) or one accuracy table (:func:`accuracy_side_by_side`), a figure's cells (``fig3``, ``fig7`` = App. D.6,
    ``fig5``, ``fig6``: :func:`figure_side_by_side`), ``authors_code`` (:func:`authors_code_side_by_side`) or
    ``authors_baselines`` (:func:`authors_baselines_side_by_side`) or ``b4_readings`` (:func:`b4_readings_table`)."""
    if artifact in EPSILON_ARTIFACTS:
        return epsilon_side_by_side(store, artifact)
    if artifact == "accuracy":
        return accuracy_side_by_side(store)
    if artifact in ACCURACY_ARTIFACTS:
        return accuracy_side_by_side(store, [artifact])
    if artifact in FIGURE_REFERENCES:
        return figure_side_by_side(store, artifact)
    if artifact == "authors_code":
        return authors_code_side_by_side(store)
    if artifact == "authors_baselines":
        return authors_baselines_side_by_side(store)
    if artifact == "b4_readings":
        return b4_readings_table(store)
    raise _unknown(
        "artifact",
        artifact,
        [
            *EPSILON_ARTIFACTS,
            "accuracy",
            *ACCURACY_ARTIFACTS,
            *FIGURE_REFERENCES,
            "authors_code",
            "authors_baselines",
            "b4_readings",
        ],
    )


def plot(store: ResultStore, artifact: str):
    """A figure from stored rows: ``"fig2a"`` (accuracy vs λ, Table 5), ``"fig2b"`` (ε vs λ), ``"fig7_eps"`` (ε vs
    |Q|), ``"fig3"``/``"fig7_accuracy"`` (:func:`plot_fig3`), ``"fig5_accuracy"``/``"fig5_epsilon"``/
    ``"fig6_accuracy"``/``"fig6_epsilon"`` (:func:`plot_methods`), ``"authors_code"`` (:func:`plot_authors_code`),
    ``"authors_baselines"`` (:func:`plot_authors_baselines`); a figure whose rows are not stored yet is an error."""
    if artifact == "fig2a":
        return plot_accuracy(store)
    if artifact == "fig2b":
        return _plot_fig2b(store)
    if artifact == "fig7_eps":
        return _plot_fig7_eps(store)
    if artifact not in FIGURES:
        raise _unknown("figure", artifact, FIGURES)
    if artifact in ("fig3", "fig7_accuracy"):
        figs = plot_fig3(store)
    elif artifact == "authors_code":
        figs = plot_authors_code(store)
    elif artifact == "authors_baselines":
        figs = plot_authors_baselines(store)
    else:
        figs = plot_methods(store, artifact[:4], _FIGURE_TITLES[artifact[:4]])
    if artifact not in figs:
        raise ValueError(f"nothing stored to draw {artifact!r} from yet (run its cells first)")
    return figs[artifact]


#: the grid of this series, cell by cell (:mod:`dpgnn.engine`); the ε tables are pure computation
CELLS = {
    "accuracy": CellSpec(PAPER, "accuracy", "accuracy", accuracy_cells, run_cell, skip_as="*"),
    "fig3": CellSpec(PAPER, "fig3", "fig3", fig3_cells, run_fig3_cell),
    "fig5": CellSpec(PAPER, "fig5", "fig5", fig5_cells, run_fig5_cell),
    "fig6": CellSpec(PAPER, "fig6", "fig6", fig6_cells, run_fig6_cell),
    "authors_code": CellSpec(PAPER, "authors_code", "authors_code", authors_code_cells, run_authors_code_cell),
    "authors_baselines": CellSpec(
        PAPER, "authors_baselines", "authors_baselines", authors_baselines_cells, run_authors_baselines_cell
    ),
    "b4_readings": CellSpec(PAPER, "b4_readings", "b4_readings", b4_readings_cells, run_b4_readings_cell),
}


def run_figures(
    cfg: Settings,
    store: ResultStore,
    which: tuple[str, ...] = ("fig3", "fig5", "fig6"),
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> dict[str, pd.DataFrame]:
    """The cells of ``which`` (``CELLS`` names, incl. ``authors_code``), resumable; ``train=False`` only loads."""
    check_train(force, train)
    out = {}
    for name in which:
        spec = CELLS[name]
        if train:
            cells = [
                c for c in spec.cells(cfg) if load_or_skip(store, c["dataset"], common._data, artifact=name) is not None
            ]
            if cells:
                run_grid(
                    store,
                    spec.store,
                    cells,
                    functools.partial(spec.run, cfg, device=device),
                    desc=name,
                    force=force,
                    device=str(resolve_device(device)),
                )
        out[name] = store.load(spec.store)
    return out
