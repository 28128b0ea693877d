"""DRW series ("Training DP GNNs with Random Walk Sampling"): Table 1, Fig. 2 and the sampling-bound figure.

``run_table1`` runs the resumable grid (every method × architecture × DP hyper-parameters × seed) into the
``grid`` artifact and derives ``table1`` (best mean validation F1 over seeds per dataset/method/architecture, the
selected configuration's per-seed test F1 in %) and ``fig2`` (test F1 of the best-validation model at every integer
ε of the selected DP runs). ``run_bound`` is pure accounting from the paper's Tables 3-4 (no data needed).

One module per notebook or artifact: :mod:`~dpgnn.series.drw.table1` (01 and 02: the grid, the selection, Table 1
and Fig. 2 of each fidelity), :mod:`~dpgnn.series.drw.sound` (01: ``table1_sound``),
:mod:`~dpgnn.series.drw.diagnostics` (01: ``table1_diagnostics`` and ``table1_seeds``),
:mod:`~dpgnn.series.drw.bound` (03: ``bound``); :mod:`~dpgnn.series.drw.profiles` holds the typed profiles and
:mod:`~dpgnn.series.drw.api` the series API (``run``, ``side_by_side``, ``plot``), registered here as
:data:`SERIES`.
"""

from __future__ import annotations

from dpgnn.fidelity import FIDELITIES
from dpgnn.series import Series, register
from dpgnn.series.drw.api import ARTIFACTS, CELLS, plot, run, side_by_side
from dpgnn.series.drw.bound import bound_side_by_side, plot_bound, run_bound
from dpgnn.series.drw.diagnostics import (
    DIAGNOSTICS,
    EXTRA_SEEDS,
    diagnostic_cells,
    diagnostics_summary,
    run_diagnostic_cell,
    run_diagnostics,
    run_seeds,
    seed_cells,
    seed_spread,
)
from dpgnn.series.drw.profiles import PAPER, PROFILES, DPGrid, DRWProfile, SoundMode
from dpgnn.series.drw.sound import run_sound_cell, run_table1_sound, table1_both_ways, table1_sound_cells
from dpgnn.series.drw.table1 import (
    artifacts,
    batch_run,
    fig2_side_by_side,
    plot_fig2,
    plot_table1,
    run_cell,
    run_table1,
    seed_key,
    select,
    select_best,
    table1_cells,
    table1_side_by_side,
)
from dpgnn.series.ledgers import drw_guarantees

__all__ = [
    "PAPER",
    "FIDELITIES",
    "DPGrid",
    "SoundMode",
    "DRWProfile",
    "PROFILES",
    "table1_cells",
    "run_cell",
    "seed_key",
    "batch_run",
    "run_table1",
    "artifacts",
    "select_best",
    "select",
    "table1_sound_cells",
    "run_sound_cell",
    "run_table1_sound",
    "table1_both_ways",
    "DIAGNOSTICS",
    "diagnostic_cells",
    "run_diagnostic_cell",
    "run_diagnostics",
    "diagnostics_summary",
    "EXTRA_SEEDS",
    "seed_cells",
    "run_seeds",
    "seed_spread",
    "table1_side_by_side",
    "plot_table1",
    "plot_fig2",
    "fig2_side_by_side",
    "run_bound",
    "plot_bound",
    "bound_side_by_side",
    "CELLS",
    "ARTIFACTS",
    "run",
    "side_by_side",
    "plot",
    "SERIES",
]

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='DRW: "Training Differentially Private Graph Neural Networks with Random Walk Sampling"',
        kind="paper",
        order=4,
        citation="Ayle et al., arXiv 2301.00738",
        docs="docs/papers/drw.md",
        reference="drw.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
        guarantees=drw_guarantees,
    )
)
