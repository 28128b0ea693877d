"""ProGAP series (WSDM 2024): σ calibration tables, Table 2, Fig. 2 (accuracy vs ε), Fig. 3 (convergence),
Fig. 4 (accuracy vs depth) and the progressive vs layer-wise comparison.

None of the paper's datasets (Facebook UIUC, Reddit, ogbn-products, FB-100, WeNet) is mirrored offline: they run
where their files exist and are otherwise recorded as ``not_run``. Stand-ins are Facebook100 universities with
the same preprocessing (target year, one-hot features, classes filtered by size, 75/10/15 split), reported under
their own names (``fb100-…``), never the paper's.

Hyper-parameter selection follows docs/papers/progap.md#hyper-parameter-search-and-reporting: every configuration of the
profile's grid runs ``runs`` times, and for each (dataset, method, level, ε) the configuration with the highest MEAN
validation accuracy is reported with its test accuracy (%). All runs are stored in ``<artifact>_runs``; the selected
rows in ``<artifact>``.

One module per responsibility: :mod:`~dpgnn.series.progap.profiles` (constants and typed profiles),
:mod:`~dpgnn.series.progap.cells` (datasets, one cell's run, the grids, batched repeats, selection),
:mod:`~dpgnn.series.progap.calibration` (notebook 01), :mod:`~dpgnn.series.progap.table2` (02),
:mod:`~dpgnn.series.progap.figures` (03-05) and :mod:`~dpgnn.series.progap.api` (the entry points and cells).
"""

from __future__ import annotations

from dpgnn import methods  # noqa: F401  (the registry the cells resolve methods in)
from dpgnn.report import paper_vs_ours
from dpgnn.series import Series, register
from dpgnn.series.ledgers import progap_guarantees
from dpgnn.series.progap.api import ARTIFACTS, CELLS, plot, run, side_by_side
from dpgnn.series.progap.calibration import (
    SPEC_NODE,
    calibration_fidelities,
    calibration_table,
    plot_calibration,
    run_calibration,
)
from dpgnn.series.progap.cells import (
    BOOKKEEPING,
    SHARED_RUNS,
    available,
    batch_run,
    cell_run,
    config_label,
    coverage,
    repeats_runner,
    run_cell,
    run_rows,
    select_best,
    summary,
)
from dpgnn.series.progap.figures import (
    claim_progap_ge_gap,
    depth_tradeoff,
    plot_fig2,
    plot_fig3,
    plot_fig4,
    run_fig2,
    run_fig3,
    run_fig4,
    stage_jumps,
)
from dpgnn.series.progap.profiles import (
    FIDELITIES,
    FIDELITY_METHODS,
    ORDER,
    PAPER,
    PAPER_DATASETS,
    PAPER_NODE,
    PROFILES,
    TABLE2_EPS,
    TABLE2_METHODS,
    Calibration,
    Convergence,
    Fig4,
    ProGAPProfile,
    setting,
)
from dpgnn.series.progap.table2 import (
    AUTHORS_CODE_MEASURED,
    fidelity_comparison,
    plot_table2,
    run_table2,
    table2_side_by_side,
)

__all__ = [
    "PROFILES",
    "coverage",
    "run_calibration",
    "calibration_table",
    "calibration_fidelities",
    "plot_calibration",
    "run_table2",
    "table2_side_by_side",
    "plot_table2",
    "fidelity_comparison",
    "AUTHORS_CODE_MEASURED",
    "FIDELITIES",
    "run",
    "side_by_side",
    "plot",
    "ARTIFACTS",
    "config_label",
    "run_fig2",
    "plot_fig2",
    "claim_progap_ge_gap",
    "run_fig3",
    "plot_fig3",
    "stage_jumps",
    "run_fig4",
    "plot_fig4",
    "depth_tradeoff",
    "select_best",
    "summary",
    "run_cell",
    "cell_run",
    "repeats_runner",
    "CELLS",
    "paper_vs_ours",
    "batch_run",
    "run_rows",
    "available",
    "setting",
    "BOOKKEEPING",
    "SHARED_RUNS",
    "SPEC_NODE",
    "FIDELITY_METHODS",
    "ORDER",
    "PAPER",
    "PAPER_DATASETS",
    "PAPER_NODE",
    "TABLE2_EPS",
    "TABLE2_METHODS",
    "Calibration",
    "Convergence",
    "Fig4",
    "ProGAPProfile",
]

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='ProGAP: "Progressive Graph Neural Networks with Differential Privacy Guarantees"',
        kind="paper",
        order=5,
        citation="Sajadmanesh & Gatica-Perez, WSDM 2024",
        docs="docs/papers/progap.md",
        reference="progap.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
        guarantees=progap_guarantees,
    )
)
