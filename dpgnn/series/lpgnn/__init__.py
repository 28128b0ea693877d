"""LPGNN series ("Locally Private Graph Neural Networks", CCS 2021): figures A, D, E and tables B, C, F of
docs/papers/lpgnn.md#figures-and-tables.

Every training cell (dataset, feature method, ε_x, ε_y, K_x, K_y, backbone, label method, repeats, epochs, seed)
runs once into the shared artifact ``runs`` (resumable: :func:`dpgnn.sweep.run_grid`), whatever notebook asks for
it; each artifact (``fig_a``, ``table_b``, ...) is then a labelled view of those rows (method, setting), so a cell
shared by two artifacts (e.g. SAGE at ε_x = 1, ε_y = 1 in Fig. A, Table B, Fig. D/E and Table F) trains once.
KProp steps and lr / weight decay / dropout are the authors' published selections (``steps="published"``,
:data:`dpgnn.methods.lpgnn.BEST_STEPS`); :func:`dpgnn.methods.lpgnn.tune` redoes the selection on noisy
validation data.

The series API (:mod:`dpgnn.series.common`): :func:`run`, :func:`side_by_side`, :func:`plot`. Each cell resolves
its method through :func:`dpgnn.methods.get` (``("lpgnn", feature method, level)``, the level from ε_x / ε_y).
No grid is searched here (the published selections are used), so there is no ``select_best``.

One module per part: :mod:`~dpgnn.series.lpgnn.profiles` (the typed profiles), :mod:`~dpgnn.series.lpgnn.cells`
(the training cells of every notebook, 01-05, and :func:`run`), :mod:`~dpgnn.series.lpgnn.figures` (their tables
and figures) and :mod:`~dpgnn.series.lpgnn.seeds` (the seed spread of the reported points).
"""

from __future__ import annotations

import functools

from dpgnn.series import Series, register
from dpgnn.series.ledgers import lpgnn_guarantees
from dpgnn.series.lpgnn.cells import _data as _data
from dpgnn.series.lpgnn.cells import artifact_cells, run, run_cell, setting
from dpgnn.series.lpgnn.figures import ledger_summary, plot, plot_fig_a, plot_k, plot_table, side_by_side
from dpgnn.series.lpgnn.profiles import ARTIFACTS, PAPER, PROFILES, LPGNNProfile
from dpgnn.series.lpgnn.profiles import INF as INF
from dpgnn.series.lpgnn.seeds import (
    parse_point,
    plot_seed_spread,
    point_cell,
    run_seeds,
    sampling_check,
    seed_cells,
    seed_spread,
)
from dpgnn.sweep import CellSpec

#: the grids of this series, cell by cell (:mod:`dpgnn.engine`): every artifact's cells go to ``runs``, where a
#: cell shared by several artifacts is stored once; ``seeds`` (the seed spread) to its own artifact
CELLS = {a: CellSpec(PAPER, a, "runs", functools.partial(artifact_cells, artifact=a), run_cell) for a in ARTIFACTS}
CELLS["seeds"] = CellSpec(PAPER, "seeds", "seeds", seed_cells, run_cell)


__all__ = [
    "PAPER",
    "PROFILES",
    "LPGNNProfile",
    "ARTIFACTS",
    "setting",
    "run",
    "side_by_side",
    "plot",
    "plot_fig_a",
    "plot_k",
    "plot_table",
    "ledger_summary",
    "CELLS",
    "run_cell",
    "artifact_cells",
    "parse_point",
    "point_cell",
    "seed_cells",
    "run_seeds",
    "seed_spread",
    "plot_seed_spread",
    "sampling_check",
]


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='LPGNN: "Locally Private Graph Neural Networks"',
        kind="paper",
        order=2,
        citation="Sajadmanesh & Gatica-Perez, ACM CCS 2021",
        docs="docs/papers/lpgnn.md",
        reference="lpgnn.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
        guarantees=lpgnn_guarantees,
    )
)
