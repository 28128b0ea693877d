"""The ProGAP series API (:mod:`dpgnn.series.common`): ``run`` / ``side_by_side`` / ``plot`` per artifact, and the
grids cell by cell for :mod:`dpgnn.engine`."""

from __future__ import annotations

import pandas as pd

from dpgnn.results import ResultStore
from dpgnn.series.progap.calibration import calibration_table, plot_calibration, run_calibration
from dpgnn.series.progap.cells import (
    SHARED_RUNS,
    _available,
    _fig2_cells,
    _fig3_cells,
    _fig4_cells,
    _sibling_key,
    _table2_cells,
    batch_run,
    cell_run,
)
from dpgnn.series.progap.figures import plot_fig2, plot_fig3, plot_fig4, run_fig2, run_fig3, run_fig4
from dpgnn.series.progap.profiles import PAPER, ProGAPProfile
from dpgnn.series.progap.table2 import plot_table2, run_table2, table2_side_by_side
from dpgnn.sweep import CellSpec

__all__ = ["ARTIFACTS", "run", "side_by_side", "plot", "CELLS"]


ARTIFACTS = ("calibration", "table2", "layerwise", "fig2", "fig3", "fig4")


def _artifact(artifact: str) -> str:
    if artifact not in ARTIFACTS:
        raise ValueError(f"unknown ProGAP artifact {artifact!r}; valid: {list(ARTIFACTS)}")
    return artifact


def run(
    cfg: ProGAPProfile,
    store: ResultStore,
    artifact: str,
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> pd.DataFrame:
    """Compute ``artifact``'s missing cells and return its stored rows (``calibration``: pure computation, always
    recomputed; ``table2`` and ``layerwise`` come from the same runs). ``train=False`` trains nothing and selects
    from the stored runs only."""
    artifact = _artifact(artifact)
    if artifact == "calibration":
        return run_calibration(cfg, store)
    if artifact in ("table2", "layerwise"):
        run_table2(cfg, store, device=device, force=force, train=train)
        return store.load(artifact)
    fn = {"fig2": run_fig2, "fig3": run_fig3, "fig4": run_fig4}[artifact]
    return fn(cfg, store, device=device, force=force, train=train)


def side_by_side(store: ResultStore, artifact: str = "table2") -> pd.DataFrame:
    """The paper's cells beside ours: ``calibration`` the σ / z tables of both levels (ours, the reference value,
    the difference); the other artifacts the paper's columns beside ours (:func:`table2_side_by_side`)."""
    artifact = _artifact(artifact)
    if artifact == "calibration":
        return pd.concat({lv: calibration_table(store, lv) for lv in ("edge", "node")}, names=["level", "setting"])
    return table2_side_by_side(store, artifact)


def plot(store: ResultStore, artifact: str):
    """The artifact's figure drawn from stored rows only."""
    artifact = _artifact(artifact)
    if artifact in ("table2", "layerwise"):
        return plot_table2(store, artifact)
    return {"calibration": plot_calibration, "fig2": plot_fig2, "fig3": plot_fig3, "fig4": plot_fig4}[artifact](store)


#: the grids of this series, cell by cell (:mod:`dpgnn.engine`); a cell of Table 2, Fig. 2 or Fig. 4 runs once and
#: is stored under each of their run artifacts that has it. The calibration tables are pure computation.
CELLS = {
    name: CellSpec(
        PAPER,
        name,
        store,
        fn,
        cell_run,
        share=SHARED_RUNS if store in SHARED_RUNS else (),
        available=_available,
        batch=batch_run,
        batch_key=_sibling_key,
    )
    for name, store, fn in (
        ("table2", "table2_runs", _table2_cells),
        ("fig2", "fig2_runs", _fig2_cells),
        ("fig3", "fig3", _fig3_cells),
        ("fig4", "fig4_runs", _fig4_cells),
    )
}
