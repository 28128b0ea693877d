"""PrivGNN series ("Releasing Graph Neural Networks with Differential Privacy Guarantees", TMLR 2023).

One module per notebook: :mod:`~dpgnn.series.privgnn.budget` (01: every ε table -- Tables 2, 3, 9; Fig. 2b;
Fig. 7's ε axis -- computed by the accountant, the δ finding, Theorem 7 beside it),
:mod:`~dpgnn.series.privgnn.accuracy` and :mod:`~dpgnn.series.privgnn.b4_readings` (02: RQ1 Table 5 / Fig. 2a, RQ2
Table 1, RQ3 Table 6, baselines Tables 7-9 on the datasets available offline, and B4's readings),
:mod:`~dpgnn.series.privgnn.figures` (03: Fig. 3 / App. D.6, Fig. 5, Fig. 6),
:mod:`~dpgnn.series.privgnn.authors_code` (04: ``fidelity="authors_code"``); :mod:`~dpgnn.series.privgnn.common`
holds what their cells share, :mod:`~dpgnn.series.privgnn.profiles` the typed profiles and
:mod:`~dpgnn.series.privgnn.api` the entry points.

The series API (:mod:`dpgnn.series.common`): ``run(cfg, store, artifact)`` computes and stores the rows of an
artifact under ``results/<profile>/privgnn/`` (the ε tables -- ``"epsilon"`` or one of :data:`EPSILON_ARTIFACTS`,
pure computation, replaced whole -- or the accuracy cells -- ``"accuracy"`` or one of :data:`ACCURACY_ARTIFACTS`,
resumable, one cell per dataset and run, or one of :data:`FIGURE_ARTIFACTS`); ``side_by_side(store, artifact)``
puts the paper's numbers beside ours and ``plot(store, figure)`` draws Fig. 2a/2b/7 from stored rows only. PrivGNN
searches no hyper-parameter grid (K, γ, λ are the paper's), so there is no ``select_best``. The methods are
resolved through :func:`dpgnn.methods.get` (``("privgnn", method, level)``); ``run_epsilon``/``run_accuracy``,
``epsilon_side_by_side``/``accuracy_side_by_side`` and ``plot_epsilon``/``plot_accuracy`` are what the API
dispatches to.
"""

from __future__ import annotations

from dpgnn.methods.privgnn import LAMBDAS
from dpgnn.series import Series, register
from dpgnn.series.ledgers import privgnn_guarantees
from dpgnn.series.privgnn.accuracy import (
    BASELINE_ARTIFACTS,
    REPEATS_TABLE5,
    accuracy_cells,
    accuracy_side_by_side,
    plot_accuracy,
    repeated_rows,
    run_accuracy,
    run_cell,
)
from dpgnn.series.privgnn.api import (
    ACCURACY_ARTIFACTS,
    CELLS,
    EPSILON_ARTIFACTS,
    FIGURE_ARTIFACTS,
    FIGURE_REFERENCES,
    FIGURES,
    plot,
    run,
    run_figures,
    side_by_side,
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
from dpgnn.series.privgnn.b4_readings import (
    b4_readings_cells,
    b4_readings_table,
    run_b4_readings_cell,
)
from dpgnn.series.privgnn.budget import (
    delta_finding,
    epsilon_side_by_side,
    plot_epsilon,
    run_epsilon,
)
from dpgnn.series.privgnn.common import (
    METHOD_NAMES,
    OFFICIAL_NAMES,
    PAPER,
    log_softmax_ledger,
    mirrored_cell,
)
from dpgnn.series.privgnn.common import (
    _privgnn_students as _privgnn_students,
)
from dpgnn.series.privgnn.figures import (
    fig3_cells,
    fig5_cells,
    fig6_cells,
    figure_side_by_side,
    ours_table,
    plot_fig3,
    plot_methods,
    run_fig3_cell,
    run_fig5_cell,
    run_fig6_cell,
)
from dpgnn.series.privgnn.profiles import (
    FLAT_NAMES,
    PROFILES,
    B4Readings,
    Budgets,
    Fidelity,
    Figures,
    OfficialSplit,
    Profile,
)

__all__ = [
    "BASELINE_ARTIFACTS",
    "REPEATS_TABLE5",
    "accuracy_cells",
    "accuracy_side_by_side",
    "plot_accuracy",
    "repeated_rows",
    "run_accuracy",
    "run_cell",
    "ACCURACY_ARTIFACTS",
    "CELLS",
    "EPSILON_ARTIFACTS",
    "FIGURE_ARTIFACTS",
    "FIGURE_REFERENCES",
    "FIGURES",
    "plot",
    "run",
    "run_figures",
    "side_by_side",
    "authors_baselines_cells",
    "authors_baselines_side_by_side",
    "authors_code_cells",
    "authors_code_side_by_side",
    "plot_authors_baselines",
    "plot_authors_code",
    "run_authors_baselines_cell",
    "run_authors_code_cell",
    "b4_readings_cells",
    "b4_readings_table",
    "run_b4_readings_cell",
    "delta_finding",
    "epsilon_side_by_side",
    "plot_epsilon",
    "run_epsilon",
    "LAMBDAS",
    "METHOD_NAMES",
    "OFFICIAL_NAMES",
    "PAPER",
    "log_softmax_ledger",
    "mirrored_cell",
    "fig3_cells",
    "fig5_cells",
    "fig6_cells",
    "figure_side_by_side",
    "ours_table",
    "plot_fig3",
    "plot_methods",
    "run_fig3_cell",
    "run_fig5_cell",
    "run_fig6_cell",
    "FLAT_NAMES",
    "PROFILES",
    "B4Readings",
    "Budgets",
    "Fidelity",
    "Figures",
    "OfficialSplit",
    "Profile",
]


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='PrivGNN: "Releasing Graph Neural Networks with Differential Privacy Guarantees"',
        kind="paper",
        order=3,
        citation="Olatunji, Funke & Khosla, TMLR (06/2023)",
        docs="docs/papers/privgnn.md",
        reference="privgnn.csv",
        profiles=PROFILES,
        cells=CELLS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
        guarantees=privgnn_guarantees,
    )
)
