"""Paper scale: every grid cell of every series computed as a unit of work on Dask (``dpgnn run``).

A cell (one entry of a series' :data:`CELLS` grid, see :class:`dpgnn.sweep.CellSpec`) is computed from
``(paper, artifact, cell)`` alone, in any process: the worker calls the series' module-level cell function, which
loads its dataset through the series' per-process cache (each worker prepares a dataset once and reuses it for
every cell it runs). Cells that share work keep sharing it because the shared unit *is* the cell: PrivGNN's
teachers serve every λ and |Q| of one (dataset, run) cell, LPGNN batches its repeats inside a cell, and a ProGAP run
that Table 2, Fig. 2 and Fig. 4 all need runs once and is stored under each of them.

One writer: rows stream back to this (driver) process and are appended to the tidy store as futures complete, so
a killed driver resumes with only the missing cells, and a cell whose worker was killed is retried by the
scheduler without duplicate rows. Seeds come from the cell, so with the same threads per worker the rows equal those
of the sequential loop (:func:`dpgnn.sweep.run_grid`, what a notebook calls).

Entry point for other code (``dpgnn reproduce`` runs it before executing the notebooks, which then only read
stored rows)::

    from dpgnn.engine import compute
    summary = compute(["lpgnn", "drw"], profile="paper", workers=None, threads_per_worker=1)

``summary`` has one row per (paper, artifact): cells, stored, from_other_code, missing, copied, computed, failed,
skipped (datasets), est_seconds (missing × mean stored cell time) and the devices of the stored cells.
:func:`coverage` gives the same frame for a profile's grids without computing anything (the report shows it).

The package, by responsibility: :mod:`~dpgnn.engine.planning` (papers, grids, the cells each store artifact needs,
jobs and their estimated cost), :mod:`~dpgnn.engine.summary` (the printed lines and the summary frame),
:mod:`~dpgnn.engine.jobs` (the worker side), :mod:`~dpgnn.engine.cluster` (local and SLURM clusters) and
:mod:`~dpgnn.engine.driver` (:func:`compute`, :func:`run_specs`: the Dask driver, the one writer).
"""

from __future__ import annotations

from dpgnn.engine.cluster import cluster_size, local_cluster, slurm_cluster, worker_env
from dpgnn.engine.driver import compute, coverage, run_specs
from dpgnn.engine.jobs import execute, execute_job
from dpgnn.engine.planning import grid_papers, select, specs
from dpgnn.engine.summary import comparable

__all__ = [
    "grid_papers",
    "compute",
    "coverage",
    "comparable",
    "run_specs",
    "select",
    "specs",
    "execute",
    "execute_job",
    "cluster_size",
    "local_cluster",
    "slurm_cluster",
    "worker_env",
]
