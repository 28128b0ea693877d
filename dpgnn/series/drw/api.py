"""The DRW series API (:mod:`dpgnn.series.common`): :data:`ARTIFACTS`, :data:`CELLS` and the ``run``,
``side_by_side`` and ``plot`` the registry dispatches to."""

from __future__ import annotations

import pandas as pd

from dpgnn.fidelity import Fidelity
from dpgnn.results import ResultStore
from dpgnn.series.drw.bound import bound_side_by_side, plot_bound, run_bound
from dpgnn.series.drw.profiles import PAPER, DRWProfile
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
    table1_cells,
    table1_side_by_side,
)
from dpgnn.sweep import CellSpec, check_train

#: the grid of this series, cell by cell (:mod:`dpgnn.engine`; a DP configuration's seeds run as one task,
#: trained together by :func:`batch_run`); the sampling bound is pure computation
CELLS = {
    "table1": CellSpec(PAPER, "table1", "grid", table1_cells, run_cell, batch=batch_run, batch_key=seed_key),
    "table1_sound": CellSpec(PAPER, "table1_sound", "table1_sound", table1_sound_cells, run_sound_cell),
}


#: every artifact of this series: Table 1 and Fig. 2 of each fidelity, the sound-mode Table 1, the sampling bound
ARTIFACTS = tuple(a for f in Fidelity for a in artifacts(f)) + ("table1_sound", "bound")


def _artifact(artifact: str) -> tuple[str, Fidelity]:
    """``(kind, fidelity)`` of an artifact name: kind ``table1``/``fig2``/``table1_sound``/``bound``."""
    for fidelity in Fidelity:
        t1, f2 = artifacts(fidelity)
        if artifact in (t1, f2):
            return ("table1" if artifact == t1 else "fig2"), fidelity
    if artifact in ("table1_sound", "bound"):
        return artifact, Fidelity.PAPER
    raise ValueError(f"unknown DRW artifact {artifact!r}; valid: {list(ARTIFACTS)}")


def run(
    cfg: DRWProfile, store: ResultStore, artifact: str, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Compute ``artifact``'s missing cells and return its rows. Table 1 and Fig. 2 come from the same grid
    (:func:`run_table1`); their ``_authors_code`` versions need ``cfg`` built with ``fidelity="authors_code"``.
    ``train=False`` trains nothing and selects from the stored runs; ``bound`` is pure accounting."""
    kind, fidelity = _artifact(artifact)
    if kind in ("table1", "fig2"):
        if cfg.fidelity is not fidelity:
            raise ValueError(
                f"{artifact!r} is the {fidelity} fidelity's artifact but the settings have fidelity="
                f"{cfg.fidelity!r}; use settings('drw', profile, fidelity={fidelity!r})"
            )
        run_table1(cfg, store, device=device, force=force, train=train)
        return store.load(artifact)
    if kind == "table1_sound":
        return run_table1_sound(cfg, store, device=device, force=force, train=train)
    check_train(force, train)
    return run_bound(cfg, store)


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """Ours beside the paper: Table 1 (mean ± std over seeds, difference, status), Fig. 2 (ours at every integer
    ε beside the paper's one printed point, Table 1 at ε = 8), the sound-mode Table 1 beside the published
    pipeline, the sampling bound beside the paper's DRW − FDP gain."""
    kind, fidelity = _artifact(artifact)
    if kind == "table1":
        return table1_side_by_side(store, fidelity)
    if kind == "fig2":
        return fig2_side_by_side(store, fidelity)
    if kind == "table1_sound":
        return table1_both_ways(store)
    return bound_side_by_side(store)


def plot(store: ResultStore, artifact: str):
    """The artifact's figure, drawn from stored rows only."""
    kind, fidelity = _artifact(artifact)
    if kind == "table1":
        return plot_table1(store, fidelity)
    if kind == "fig2":
        return plot_fig2(store, fidelity)
    if kind == "bound":
        return plot_bound(store)
    raise ValueError("table1_sound has no figure of its own; side_by_side(store, 'table1_sound') is its table")
