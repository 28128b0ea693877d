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
"""

from __future__ import annotations

import math
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dpgnn import series
from dpgnn.results import ResultStore
from dpgnn.sweep import (
    STALE_CHOICES,
    CellSpec,
    SharedRuns,
    cell_rows,
    grid_hashes,
    plan,
    resume_staging,
    staged_line,
)


def grid_papers() -> list[str]:
    """The series with grid cells (the five papers and the bench), in the registry's canonical order
    (:mod:`dpgnn.series`)."""
    return [s.name for s in series.all_series() if s.cells]


def specs(paper: str) -> dict[str, CellSpec]:
    """The cell grids of ``paper`` (its :attr:`dpgnn.series.Series.cells`), by artifact name."""
    valid = grid_papers()
    if paper not in valid:
        raise ValueError(f"unknown paper {paper!r}; valid: {valid}")
    return dict(series.get(paper).cells)


def select(papers: Iterable[str] | None = None, artifacts: Iterable[str] | None = None) -> list[CellSpec]:
    """The specs of ``papers`` (default: the five papers; a study such as ``bench`` when named) restricted to
    ``artifacts`` (names such as ``fig_a``, ``table1``; each must belong to at least one of the papers). Unknown
    names raise ``ValueError`` listing the valid ones."""
    valid = grid_papers()
    papers = list(papers or series.names(kind="paper"))
    unknown = [p for p in papers if p not in valid]
    if unknown:
        raise ValueError(f"unknown paper(s) {unknown}; valid: {valid}")
    chosen = [s for p in papers for s in specs(p).values()]
    if artifacts:
        names = list(artifacts)
        valid = sorted({s.name for s in chosen})
        bad = [a for a in names if a not in valid]
        if bad:
            raise ValueError(f"unknown artifact(s) {bad} for {papers}; valid: {valid}")
        chosen = [s for s in chosen if s.name in names]
    return chosen


# ---------------------------------------------------------------------------------------------------------------
# the plan: which cells each store artifact needs
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class _Target:
    """One store artifact of one paper, fed by one or more specs (LPGNN: every figure's cells go to ``runs``)."""

    store: ResultStore
    artifact: str
    share: tuple[str, ...]
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    stale: set[str] = field(default_factory=set)
    redo: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    staged: set[str] = field(default_factory=set)
    staging: ResultStore | None = None
    durations: dict[str, tuple[float, str]] = field(default_factory=dict)
    computed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)


@dataclass
class _Task:
    key: str
    paper: str
    cell: dict[str, Any]
    spec: CellSpec
    cfg: Any  #: the profile's settings (a frozen dataclass, or a dict for hand-made grids)
    targets: list[tuple[_Target, str]] = field(default_factory=list)


def _group(spec: CellSpec) -> str:
    """Cells of specs in one share group with equal hashes are the same run."""
    return "+".join(sorted(set(spec.share) | {spec.store})) if spec.share else spec.store


def _plan(pairs: list[tuple[CellSpec, Any]], profile: str, *, force: bool, stale: str):
    """One :class:`_Target` per (paper, store artifact), planned by :func:`dpgnn.sweep.plan` over the union of the
    grids of the specs that feed it, and per spec ``(spec, cfg, hashes, cells by hash)``."""
    grids: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    shares: dict[tuple[str, str], tuple[str, ...]] = {}
    per_spec: list[tuple[CellSpec, Any, list[str], dict[str, dict]]] = []
    for spec, cfg in pairs:
        cells = spec.cells(cfg)
        hashes = grid_hashes(cells, f"{spec.paper}/{spec.name}")
        grids.setdefault((spec.paper, spec.store), {}).update(zip(hashes, cells))
        shares.setdefault((spec.paper, spec.store), tuple(spec.share))
        per_spec.append((spec, cfg, hashes, dict(zip(hashes, cells))))
    targets: dict[tuple[str, str], _Target] = {}
    for (paper, artifact), cells in grids.items():
        p = plan(ResultStore(paper, profile), artifact, cells, force=force, stale=stale)
        targets[(paper, artifact)] = _Target(
            store=p.store,
            artifact=artifact,
            share=shares[(paper, artifact)],
            cells=p.cells,
            done=set(p.done),
            stale=p.stale,
            redo=p.redo,
            durations=_durations(p.stored),
        )
    return targets, per_spec


def _copy_shared(t: _Target) -> int:
    """Append to ``t`` the missing cells stored under another artifact of its share group (:class:`SharedRuns`),
    donor by donor in share order, each in grid order; returns how many were copied."""
    shared = SharedRuns(t.store, t.artifact, t.share)
    hits = []
    for i, h in enumerate(t.cells):
        found = shared.find(h) if h not in t.done and h not in t.redo else None
        if found is not None:
            hits.append((found[0], i, h, found[1]))
    for _, _, h, rows in sorted(hits, key=lambda hit: hit[:2]):
        t.store.append(t.artifact, rows)
        t.done.add(h)
    return len(hits)


def _durations(df: pd.DataFrame) -> dict[str, tuple[float, str]]:
    """Per stored config hash: its cell's wall time (s) and device. Rows stored before ``cell_seconds`` existed
    fall back to the run time the series recorded (``seconds`` / ``duration_s`` per run, or LPGNN's
    ``train_time_s`` summed over a cell's repeats), device ``?``."""
    if df.empty:
        return {}
    out: dict[str, tuple[float, str]] = {}
    h = df["config_hash"].astype(str)
    for col in ("seconds", "duration_s"):
        if col in df.columns:
            d = df.assign(_h=h).dropna(subset=[col]).drop_duplicates("_h")
            out.update({k: (float(v), "?") for k, v in zip(d["_h"], d[col])})
            break
    else:
        if "train_time_s" in df.columns and "metric" in df.columns:
            first = df.assign(_h=h).dropna(subset=["train_time_s"])
            first = first[first["metric"] == first["metric"].iloc[0]] if len(first) else first
            out.update({k: (float(v), "?") for k, v in first.groupby("_h")["train_time_s"].sum().items()})
    if "cell_seconds" in df.columns:
        d = df.assign(_h=h).dropna(subset=["cell_seconds"]).drop_duplicates("_h")
        dev = d["cell_device"].astype(str) if "cell_device" in d.columns else pd.Series("?", index=d.index)
        out.update({k: (float(v), dv) for k, v, dv in zip(d["_h"], d["cell_seconds"], dev)})
    return out


def _unavailable(t: _Target, spec: CellSpec, cfg: Any, cells: dict[str, dict]) -> set[str]:
    """Hashes whose dataset is recorded ``not_run`` in the store or fails the spec's cheap availability check (the
    data registry's, for the paper's own graph, where the spec has none)."""
    from dpgnn.data.registry import paper_dataset_available

    sk = t.store.skipped()
    names = set(sk.loc[sk["artifact"].isin([spec.skip_as or spec.name, "*"]), "dataset"].astype(str))

    def here(n: str) -> bool:
        if spec.available is not None:
            return bool(spec.available(cfg, n))
        return paper_dataset_available(n, spec.paper) is not False

    bad = {n for n in {str(c.get("dataset")) for c in cells.values()} if n in names or not here(n)}
    return {h for h, c in cells.items() if str(c.get("dataset")) in bad}


def _fmt_seconds(s: float) -> str:
    if s != s:
        return "unknown (no stored cell times)"
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


# ---------------------------------------------------------------------------------------------------------------
# the worker side
# ---------------------------------------------------------------------------------------------------------------
def _worker_device(device: str, workers_per_gpu: int) -> str:
    """The device of this worker: with CUDA, the GPU of its group (LocalCluster worker ``i`` of ``G`` per GPU uses
    GPU ``i // G``; workers started elsewhere see the GPU their ``CUDA_VISIBLE_DEVICES`` gives them)."""
    import torch

    if device == "cpu" or (device == "auto" and not torch.cuda.is_available()):
        return "cpu"
    if not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but CUDA is not available on this worker")
    if device not in ("auto", "cuda"):
        return device  # an explicit cuda:N
    idx = 0
    try:
        from distributed import get_worker

        name = get_worker().name
        if isinstance(name, int) or str(name).isdigit():
            idx = (int(name) // max(1, workers_per_gpu)) % torch.cuda.device_count()
    except (ImportError, ValueError):
        pass
    torch.cuda.set_device(idx)
    return f"cuda:{idx}"


def execute(
    spec: CellSpec,
    cfg: Any,
    cell: dict[str, Any],
    device: str = "auto",
    threads: int = 1,
    workers_per_gpu: int = 1,
) -> dict[str, Any]:
    """Compute one cell in this process: ``{"rows", "seconds", "device"}``, or ``{"skip": reason}`` when its
    dataset's files are unavailable. Runs in a Dask worker (or anywhere: it needs nothing but its arguments)."""
    import torch

    from dpgnn.data import DatasetUnavailable
    from dpgnn.profiles import Settings

    torch.set_num_threads(int(threads))
    dev = _worker_device(device, workers_per_gpu)
    t0 = time.perf_counter()
    try:
        rows = spec.run(Settings(cfg) if isinstance(cfg, Mapping) else cfg, dict(cell), dev)
    except DatasetUnavailable as exc:
        return {"skip": str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}
    return {"rows": rows, "seconds": time.perf_counter() - t0, "device": dev}


def execute_job(
    spec: CellSpec,
    cfg: Any,
    cells: list[dict[str, Any]],
    device: str = "auto",
    threads: int = 1,
    workers_per_gpu: int = 1,
) -> list[dict[str, Any]]:
    """:func:`execute` for cells that the spec computes together (``spec.batch``: the seeds of one configuration),
    one result per cell; the batch's wall time is shared equally among its cells (``seconds``). One cell, or a
    spec without ``batch``: exactly :func:`execute`."""
    if len(cells) == 1 or spec.batch is None:
        return [execute(spec, cfg, c, device, threads, workers_per_gpu) for c in cells]
    import torch

    from dpgnn.data import DatasetUnavailable
    from dpgnn.profiles import Settings

    torch.set_num_threads(int(threads))
    dev = _worker_device(device, workers_per_gpu)
    t0 = time.perf_counter()
    try:
        rows = spec.batch(Settings(cfg) if isinstance(cfg, Mapping) else cfg, [dict(c) for c in cells], dev)
    except DatasetUnavailable as exc:
        skip = {"skip": str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}
        return [skip for _ in cells]
    seconds = (time.perf_counter() - t0) / len(cells)
    return [{"rows": r, "seconds": seconds, "device": dev} for r in rows]


def _jobs(tasks: dict[str, _Task], max_batch: int = 10) -> list[list[_Task]]:
    """The tasks grouped into what one worker computes at once: the cells of a spec with ``batch`` that share its
    ``batch_key`` (at most ``max_batch`` together), every other cell alone; in plan order."""
    open_groups: dict[tuple[str, str, str], list[_Task]] = {}
    jobs: list[list[_Task]] = []
    for task in tasks.values():
        spec = task.spec
        if spec.batch is None or spec.batch_key is None:
            jobs.append([task])
            continue
        k = (spec.paper, _group(spec), spec.batch_key(task.cell))
        if k not in open_groups or len(open_groups[k]) >= max_batch:
            open_groups[k] = []
            jobs.append(open_groups[k])
        open_groups[k].append(task)
    return jobs


def _estimates(targets: Mapping[tuple[str, str], _Target]) -> dict[tuple[str, str], dict[tuple[str, str], float]]:
    """Per target, the mean stored wall time of a cell per (dataset, method), ``("", "")`` holding the mean over
    all its stored cells: what :func:`_cost` ranks missing cells by."""
    out = {}
    for key, t in targets.items():
        by: dict[tuple[str, str], list[float]] = {}
        for h, (secs, _) in t.durations.items():
            cell = t.cells.get(h)
            if cell is None or secs != secs:
                continue
            by.setdefault((str(cell.get("dataset")), str(cell.get("method"))), []).append(secs)
            by.setdefault(("", ""), []).append(secs)
        out[key] = {k: sum(v) / len(v) for k, v in by.items()}
    return out


def _cost(job: list[_Task], estimates) -> float:
    """Estimated wall time of a job: its cells' stored means (by dataset and method, else the artifact's, else 1 s)."""
    total = 0.0
    for task in job:
        t, _ = task.targets[0]
        est = estimates.get((t.store.paper, t.artifact), {})
        total += est.get((str(task.cell.get("dataset")), str(task.cell.get("method"))), est.get(("", ""), 1.0))
    return total


# ---------------------------------------------------------------------------------------------------------------
# the cluster
# ---------------------------------------------------------------------------------------------------------------
def cluster_size(
    workers: int | None,
    threads_per_worker: int,
    workers_per_gpu: int,
    device: str,
    cores: int | None = None,
    gpus: int | None = None,
) -> int:
    """Number of local workers: given, or ``G`` per GPU on a GPU machine, else one per ``T`` cores; never more
    threads in all than cores (``workers × threads ≤ cores``, else ``ValueError``)."""
    if threads_per_worker < 1 or workers_per_gpu < 1 or (workers is not None and workers < 1):
        raise ValueError("workers, threads per worker and workers per GPU must be >= 1")
    cores = cores or os.cpu_count() or 1
    if gpus is None:
        import torch

        gpus = torch.cuda.device_count() if device != "cpu" else 0
    if workers is None:
        workers = gpus * workers_per_gpu if gpus else max(1, cores // threads_per_worker)
        workers = max(1, min(workers, cores // threads_per_worker))
    if workers * threads_per_worker > cores:
        raise ValueError(
            f"{workers} workers x {threads_per_worker} threads oversubscribe this machine's {cores} "
            f"cores; lower --workers or --threads-per-worker"
        )
    return workers


def local_cluster(workers: int, threads_per_worker: int = 1):
    """A ``LocalCluster`` of ``workers`` processes with ``threads_per_worker`` threads each (BLAS/OpenMP pools of
    the same size, so a worker never oversubscribes its share of the cores)."""
    import logging

    from dask.distributed import LocalCluster

    # the scheduler runs in this process: its INFO chatter (and the closed-comm traceback it logs at INFO when the
    # cluster shuts down) is not ours to show (the engine prints the dashboard link); warnings and errors still are.
    # Set after the import, which applies dask's own logging configuration.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=threads_per_worker,
        processes=True,
        silence_logs=logging.ERROR,
        env=worker_env(threads_per_worker),
    )


def worker_env(threads: int) -> dict[str, str]:
    """Environment of a worker process: thread pools of ``threads`` and MKL's conditional numerical
    reproducibility (``MKL_CBWR=AUTO,STRICT``, unless set): without it MKL's results may depend on memory
    alignment, so the same cell could differ in the last bits between two processes (and a training run amplifies
    that). Set it for a sequential run too when comparing the two bit for bit."""
    t = str(int(threads))
    return {
        "OMP_NUM_THREADS": t,
        "MKL_NUM_THREADS": t,
        "OPENBLAS_NUM_THREADS": t,
        "MKL_CBWR": os.environ.get("MKL_CBWR", "AUTO,STRICT"),
    }


def slurm_cluster(**kwargs):
    """A ``dask_jobqueue.SLURMCluster`` whose jobs start dpgnn workers (one process, one thread per core asked,
    the same environment variables as :func:`local_cluster`). ``kwargs`` go to ``SLURMCluster`` (queue, account,
    cores, memory, walltime, job_extra_directives, ...); scale it with ``cluster.scale(jobs=N)`` and pass
    ``cluster.scheduler_address`` as ``--scheduler``."""
    from dask_jobqueue import SLURMCluster

    cores = int(kwargs.pop("cores", 4))
    opts = {
        "cores": cores,
        "processes": 1,
        "memory": kwargs.pop("memory", "16GB"),
        "walltime": kwargs.pop("walltime", "04:00:00"),
        "job_script_prologue": ["export " + " ".join(f"{k}={v}" for k, v in worker_env(cores).items())]
        + list(kwargs.pop("job_script_prologue", [])),
    }
    opts.update(kwargs)
    return SLURMCluster(**opts)


# ---------------------------------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------------------------------
def compute(
    papers: Iterable[str] | None = None,
    *,
    profile: str = "smoke",
    artifacts: Iterable[str] | None = None,
    workers: int | None = None,
    threads_per_worker: int = 1,
    workers_per_gpu: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    device: str = "auto",
    stale: str = "keep",
    client=None,
    retries: int = 1,
    progress: bool = True,
    overrides: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Compute every missing cell of the chosen papers' artifacts on Dask and store their rows; nothing else.

    ``scheduler`` attaches to a running cluster (``tcp://host:8786``); otherwise a ``LocalCluster`` of
    ``workers`` processes (default: sized to the machine, ``workers_per_gpu`` per GPU on a GPU machine) is started
    and closed. ``client``: an existing ``distributed.Client`` (tests). ``force`` recomputes every cell into a
    staging store and swaps it in per artifact only when all its cells are done (an interrupted force keeps the
    old rows, and the next force resumes from the cells it staged). ``stale``: ``keep`` (default) or ``rerun`` the
    stored cells computed by other code. ``dry_run`` computes nothing and prints, per paper and artifact, cells
    stored / missing and an estimated cost from the stored per-cell times. ``overrides``: settings of the profile
    replaced for this run (``dpgnn run --set``, e.g. ``{"fidelity_k": [300]}``); a key the profile does not have
    is a ``ValueError``. Cells are keyed by their full configuration, so overridden cells are stored beside the
    profile's own. Returns the summary frame (see the module docstring).
    """
    from dpgnn.profiles import settings

    pairs = [(s, settings(s.paper, profile, **dict(overrides or {}))) for s in select(papers, artifacts)]
    return run_specs(
        pairs,
        profile,
        workers=workers,
        threads_per_worker=threads_per_worker,
        workers_per_gpu=workers_per_gpu,
        scheduler=scheduler,
        force=force,
        dry_run=dry_run,
        device=device,
        stale=stale,
        client=client,
        retries=retries,
        progress=progress,
    )


def run_specs(
    pairs: list[tuple[CellSpec, Any]],
    profile: str,
    *,
    workers: int | None = None,
    threads_per_worker: int = 1,
    workers_per_gpu: int = 1,
    scheduler: str | None = None,
    force: bool = False,
    dry_run: bool = False,
    device: str = "auto",
    stale: str = "keep",
    client=None,
    retries: int = 1,
    progress: bool = True,
) -> pd.DataFrame:
    """:func:`compute` for explicit ``(spec, settings)`` pairs."""
    if stale not in STALE_CHOICES:
        raise ValueError(f"stale must be one of {STALE_CHOICES}, got {stale!r}")
    if device not in ("auto", "cpu", "cuda") and not str(device).startswith("cuda:"):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    targets, per_spec = _plan(pairs, profile, force=force, stale=stale)
    summary = _summary(targets, per_spec, stale)
    for line in _lines(summary, stale, force):
        print(line)
    if dry_run:
        return summary

    # cells stored under another artifact of the same share group (ProGAP): copied, not run again
    copied = {key: _copy_shared(t) for key, t in targets.items()}

    # --force / --stale rerun: a staging store per artifact; the cells an interrupted one staged with this code
    # are not run again
    for t in targets.values():
        if t.redo:
            t.staging, t.staged = resume_staging(t.store, t.artifact, t.redo)
            if t.staged:
                print(staged_line(f"{t.store.paper}/{t.artifact}", len(t.staged), len(t.redo)))

    # availability (cheap checks), then one task per distinct cell of a share group
    skipped: dict[tuple[str, str], str] = {}
    tasks: dict[str, _Task] = {}
    # a key per cell and per invocation: a scheduler that still holds a previous driver's result for the same
    # cell (e.g. before a --force, or computed by other code) never hands it back as this run's
    token = uuid.uuid4().hex[:8]
    for spec, cfg, hashes, cells in per_spec:
        t = targets[(spec.paper, spec.store)]
        for h in hashes:
            cell = cells[h]
            name = str(cell.get("dataset"))
            if (spec.paper, name) in skipped:
                t.redo.discard(h)
                continue
            if spec.available is not None and not spec.available(cfg, name):
                skipped[(spec.paper, name)] = "dataset files unavailable offline"
                t.store.record_skip(name, skipped[(spec.paper, name)], artifact=spec.skip_as or spec.name)
                t.redo.discard(h)
                continue
            if (h in t.done and h not in t.redo) or h in t.staged:
                continue
            key = f"dpgnn-{profile}-{spec.paper}-{_group(spec)}-{h}-{token}"
            if key not in tasks:
                tasks[key] = _Task(key, spec.paper, cell, spec, dict(cfg) if isinstance(cfg, Mapping) else cfg)
            if all(tt is not t for tt, _ in tasks[key].targets):
                tasks[key].targets.append((t, h))
    for t in targets.values():
        _maybe_swap(t)  # every cell to recompute was already staged

    counts = {"computed": 0, "failed": 0}
    failures: list[str] = []
    if tasks:
        _drive(
            tasks,
            targets,
            skipped,
            counts,
            failures,
            workers=workers,
            threads=threads_per_worker,
            workers_per_gpu=workers_per_gpu,
            scheduler=scheduler,
            device=device,
            client=client,
            retries=retries,
            progress=progress,
        )
    for msg in failures:
        print(msg)
    out = _summary(targets, per_spec, stale)
    out["copied"] = [copied.get((p, s), 0) for p, s in zip(out["paper"], out["store"])]
    out["computed"] = [len(set(h) & targets[(sp.paper, sp.store)].computed) for sp, _, h, _ in per_spec]
    out["failed"] = [len(set(h) & targets[(sp.paper, sp.store)].failed) for sp, _, h, _ in per_spec]
    out["skipped"] = [", ".join(sorted(n for (p, n) in skipped if p == paper)) for paper in out["paper"]]
    return out


#: columns that differ between two computations of the same cell by design (wall times, when, where, code)
_VOLATILE = ("timestamp", "versions", "cell_seconds", "cell_device", "device")


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its wall-time / timestamp / device / version columns (``*_s``, ``*seconds``, ``*_per_s``),
    rows in a canonical order: two computations of the same cells compare equal with ``pandas.testing``."""
    drop = [c for c in df.columns if c in _VOLATILE or c.endswith(("_s", "seconds", "_per_s", "_per_second"))]
    df = df.drop(columns=drop)
    df = df.astype({c: str for c in df.columns if df[c].dtype == object})
    keys = [
        c
        for c in (
            "config_hash",
            "metric",
            "run",
            "checkpoint",
            "epoch_total",
            "stage",
            "epoch",
            "degree",
            "artifact",
            "method",
            "setting",
        )
        if c in df.columns
    ]
    return df[sorted(df.columns)].sort_values(keys or sorted(df.columns), kind="stable").reset_index(drop=True)


def _maybe_swap(t: _Target) -> None:
    if t.staging is not None and t.redo and t.redo <= t.staged:
        t.store.swap_in(t.artifact, t.redo)
        t.done |= t.redo
        t.stale -= t.redo
        t.redo = set()
        t.staging = None


def _store_result(task: _Task, res: dict[str, Any]) -> None:
    for t, h in task.targets:
        if h in t.redo and t.staging is not None:
            if h not in t.staged:
                t.staging.append(
                    t.artifact, cell_rows(res["rows"], task.cell, h, seconds=res["seconds"], device=res["device"])
                )
                t.staged.add(h)
                t.computed.add(h)
            _maybe_swap(t)
        elif h not in t.done and h not in t.written:  # one writer: a cell's rows are appended once
            t.store.append(
                t.artifact, cell_rows(res["rows"], task.cell, h, seconds=res["seconds"], device=res["device"])
            )
            t.written.add(h)
            t.done.add(h)
            t.computed.add(h)


def _record_failure(task: _Task, exc: BaseException, counts: dict[str, int], failures: list[str]) -> None:
    counts["failed"] += 1
    for t, h in task.targets:
        t.failed.add(h)
    failures.append(
        f"failed: {task.paper} cell {task.cell}: {type(exc).__name__}: {exc}"
        + (
            " (recomputation not swapped in: the old rows stay; the next --force resumes from the cells it staged)"
            if any(h in t.redo for t, h in task.targets)
            else ""
        )
    )


def _record_skip(task: _Task, reason: str, skipped, client, by_dataset) -> None:
    """A cell whose dataset turned out unavailable: recorded ``not_run`` once, the dataset's other cells cancelled."""
    name = str(task.cell.get("dataset"))
    if (task.paper, name) not in skipped:
        skipped[(task.paper, name)] = reason
        print(f"not_run: {name} -- {reason}")
        for t, _ in task.targets:
            t.store.record_skip(name, reason, artifact=task.spec.skip_as or task.spec.name)
        others = [f for f in by_dataset.get((task.paper, name), []) if not f.done()]
        client.cancel(others)
    for t, h in task.targets:
        t.redo.discard(h)
        _maybe_swap(t)


def _drive(
    tasks: dict[str, _Task],
    targets,
    skipped,
    counts,
    failures,
    *,
    workers,
    threads,
    workers_per_gpu,
    scheduler,
    device,
    client,
    retries,
    progress,
) -> None:
    from dask.distributed import Client, as_completed
    from tqdm.auto import tqdm

    cluster = None
    own = client is None
    if own:
        if scheduler:
            client = Client(scheduler)
        else:
            n = cluster_size(workers, threads, workers_per_gpu, device)
            cluster = local_cluster(n, threads)
            client = Client(cluster)
    try:
        print(f"Dask dashboard: {client.dashboard_link}")
        jobs = _jobs(tasks)
        print(
            f"{len(tasks)} cells to compute on {len(client.scheduler_info().get('workers', {}))} workers"
            + (f" ({len(jobs)} tasks: runs of one configuration train together)" if len(jobs) < len(tasks) else "")
        )
        estimates = _estimates(targets)
        futures = {}
        by_dataset: dict[tuple[str, str], list] = {}
        # the longest jobs first (stored cell times), so that no worker is left with a long one at the end; the
        # order does not change any row (seeds come from the cells)
        for job in jobs:
            head = job[0]
            fut = client.submit(
                execute_job,
                head.spec,
                head.cfg,
                [task.cell for task in job],
                device,
                threads,
                workers_per_gpu,
                key=head.key if len(job) == 1 else f"{head.key}-x{len(job)}",
                retries=retries,
                pure=False,
                priority=_cost(job, estimates),
            )
            futures[fut] = job
            by_dataset.setdefault((head.paper, str(head.cell.get("dataset"))), []).append(fut)
        bar = tqdm(total=len(tasks), desc="cells", mininterval=5.0, disable=not progress, smoothing=0.05)
        for fut in as_completed(list(futures)):
            job = futures[fut]
            bar.update(len(job))
            if fut.cancelled():
                continue
            try:
                results = fut.result()
            except Exception as exc:  # a failing cell: reported, the others go on (its old rows, if any, stay)
                for task in job:
                    _record_failure(task, exc, counts, failures)
                continue
            for task, res in zip(job, results):
                if "skip" in res:
                    _record_skip(task, res["skip"], skipped, client, by_dataset)
                    continue
                _store_result(task, res)
                counts["computed"] += 1
        bar.close()
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


# ---------------------------------------------------------------------------------------------------------------
# reporting
# ---------------------------------------------------------------------------------------------------------------
def _summary(targets, per_spec, stale: str) -> pd.DataFrame:
    rows = []
    for spec, cfg, hashes, cells in per_spec:
        t = targets[(spec.paper, spec.store)]
        hs = set(hashes)
        stored = hs & t.done
        old = stored & t.stale
        redo = hs & t.redo
        unavailable = _unavailable(t, spec, cfg, cells) - stored
        missing = ((hs - t.done) | redo) - unavailable
        secs = [t.durations[h][0] for h in stored if h in t.durations]
        per_cell = sum(secs) / len(secs) if secs else math.nan
        devices = sorted({t.durations[h][1] for h in stored if h in t.durations})
        rows.append(
            {
                "paper": spec.paper,
                "artifact": spec.name,
                "store": spec.store,
                "cells": len(hs),
                "stored": len(stored),
                "from_other_code": len(old),
                "missing": len(missing),
                "unavailable": len(unavailable),
                "sec_per_cell": per_cell,
                "est_seconds": per_cell * len(missing) if missing else 0.0,
                "devices": ",".join(devices),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "paper",
            "artifact",
            "store",
            "cells",
            "stored",
            "from_other_code",
            "missing",
            "unavailable",
            "sec_per_cell",
            "est_seconds",
            "devices",
        ],
    )


def _lines(summary: pd.DataFrame, stale: str, force: bool) -> list[str]:
    """One line per artifact, then what applies to all of them once: cells from other code, and the total."""
    out = []
    for r in summary.itertuples(index=False):
        line = f"{r.paper}/{r.artifact} ({r.store}): {r.stored} of {r.cells} cells stored"
        if r.from_other_code:
            line += f", {r.from_other_code} of them from other code"
        line += f"; {r.missing} to compute" + (" (--force: all)" if force else "")
        if r.missing:
            line += f", est. {_fmt_seconds(r.est_seconds)}"
            if r.sec_per_cell == r.sec_per_cell:
                line += f" at {r.sec_per_cell:.1f} s/cell on {_devices(r.devices)}"
        if r.unavailable:
            line += f"; {r.unavailable} not run (dataset not here)"
        out.append(line)
    if not len(summary):
        return out
    old = int(summary["from_other_code"].sum())
    if old:
        what = "recomputing them (--stale rerun)" if stale == "rerun" else "kept (--stale rerun recomputes them)"
        out.append(f"{old} stored cells come from other code: {what}")
    est = float(summary["est_seconds"].sum())
    unknown = int(summary.loc[summary["missing"] > 0, "sec_per_cell"].isna().sum())
    out.append(
        f"total: {int(summary['cells'].sum())} cells, {int(summary['stored'].sum())} stored, "
        f"{int(summary['missing'].sum())} to compute"
        + (
            f" (est. {_fmt_seconds(est)}"
            + (f"; {unknown} artifacts without stored cell times" if unknown else "")
            + ")"
            if summary["missing"].sum()
            else ""
        )
        + f", {int(summary['unavailable'].sum())} not run (dataset not here)"
    )
    return out


def _devices(devices: str) -> str:
    """The stored cells' devices as a reader wants them: ``?`` (rows from before devices were recorded) said so."""
    names = [d for d in str(devices).split(",") if d]
    known = [d for d in names if d != "?"]
    text = ", ".join(known) if known else ""
    if "?" in names or not names:
        text = (text + " and " if text else "") + "an unrecorded device"
    return text


__all__ = [
    "grid_papers",
    "compute",
    "comparable",
    "run_specs",
    "select",
    "specs",
    "execute",
    "cluster_size",
    "local_cluster",
    "slurm_cluster",
]
