"""The driver: plan, print the summary, and compute the missing cells on Dask, one writer storing their rows.

:func:`compute` (the papers' own grids, what ``dpgnn run`` calls) and :func:`run_specs` (explicit ``(spec,
settings)`` pairs) print one line per artifact and return the summary frame (:mod:`dpgnn.engine.summary`); rows
stream back to this process and are appended as the futures complete (:func:`_collect`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpgnn.engine.cluster import cluster_size, local_cluster
from dpgnn.engine.jobs import execute_job
from dpgnn.engine.planning import (
    Target,
    Task,
    copy_shared,
    cost,
    cost_estimates,
    group,
    group_jobs,
    plan_targets,
    select,
)
from dpgnn.engine.summary import summary_frame, summary_lines
from dpgnn.results import ResultStore
from dpgnn.sweep import STALE_CHOICES, CellSpec, cell_rows, resume_staging, staged_line

#: the ``not_run`` reason of a dataset whose spec's cheap check fails, where its series recorded none of its own
UNAVAILABLE = "dataset files unavailable offline"


@dataclass(frozen=True)
class _Options:
    """How and where the cells run (:func:`run_specs`' arguments of the same names)."""

    workers: int | None
    threads: int
    workers_per_gpu: int
    scheduler: str | None
    device: str
    retries: int
    progress: bool


@dataclass
class _Outcome:
    """What a run found besides stored rows: datasets not run (``(paper, dataset)`` -> reason), failure messages."""

    skipped: dict[tuple[str, str], str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


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
    profile's own. Returns the summary frame (see :mod:`dpgnn.engine`).
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


def coverage(
    papers: Iterable[str] | None = None,
    *,
    profile: str = "paper",
    artifacts: Iterable[str] | None = None,
    root: Path | str | None = None,
) -> pd.DataFrame:
    """How much of the profile's grids is stored, computing and printing nothing: the summary frame of
    ``dpgnn run --dry-run`` (one row per paper and artifact: cells, stored, missing, unavailable, est_seconds)
    for the stores under ``root`` (default: the output root's ``results/``)."""
    from dpgnn.profiles import settings

    pairs = [(s, settings(s.paper, profile)) for s in select(papers, artifacts)]
    targets, per_spec = plan_targets(pairs, profile, force=False, stale="keep", root=Path(root) if root else None)
    return summary_frame(targets, per_spec, "keep")


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
    targets, per_spec = plan_targets(pairs, profile, force=force, stale=stale)
    summary = summary_frame(targets, per_spec, stale)
    for line in summary_lines(summary, stale, force):
        print(line)
    cpu = sorted({f"{s.paper}/{s.name}" for s, _ in pairs if s.cpu_only})
    if cpu and device != "cpu" and (device != "auto" or _cuda()):
        print(f"on the CPU whatever the device (their cells never use a GPU): {', '.join(cpu)}")
    if dry_run:
        return summary

    # cells stored under another artifact of the same share group (ProGAP): copied, not run again
    copied = {key: copy_shared(t) for key, t in targets.items()}
    _resume_staged(targets)
    outcome = _Outcome()
    tasks = _tasks(per_spec, targets, profile, outcome.skipped)
    for t in targets.values():
        _maybe_swap(t)  # every cell to recompute was already staged
    if tasks:
        opts = _Options(workers, threads_per_worker, workers_per_gpu, scheduler, device, retries, progress)
        _drive(tasks, targets, outcome, opts, client)
    for msg in outcome.failures:
        print(msg)
    return _final_summary(targets, per_spec, stale, copied, outcome.skipped)


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _resume_staged(targets: Mapping[tuple[str, str], Target]) -> None:
    """--force / --stale rerun: a staging store per artifact; the cells an interrupted one staged with this code
    are not run again."""
    for t in targets.values():
        if t.redo:
            t.staging, t.staged = resume_staging(t.store, t.artifact, t.redo)
            if t.staged:
                print(staged_line(f"{t.store.paper}/{t.artifact}", len(t.staged), len(t.redo)))


def _tasks(per_spec, targets: Mapping[tuple[str, str], Target], profile: str, skipped) -> dict[str, Task]:
    """One task per distinct cell of a share group still to compute, after the specs' cheap availability checks
    (a dataset not here is recorded in ``skipped`` and its cells dropped)."""
    tasks: dict[str, Task] = {}
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
                skipped[(spec.paper, name)] = _record_unavailable(t.store, spec, name)
                t.redo.discard(h)
                continue
            if (h in t.done and h not in t.redo) or h in t.staged:
                continue
            key = f"dpgnn-{profile}-{spec.paper}-{group(spec)}-{h}-{token}"
            if key not in tasks:
                tasks[key] = Task(key, spec.paper, cell, spec, dict(cfg) if isinstance(cfg, Mapping) else cfg)
            if all(tt is not t for tt, _ in tasks[key].targets):
                tasks[key].targets.append((t, h))
    return tasks


def _record_unavailable(store: ResultStore, spec: CellSpec, dataset: str) -> str:
    """Record ``dataset`` ``not_run`` under the spec's artifact and return the reason: the one its series already
    recorded (for that artifact, else for all of the paper's), never replaced by the generic :data:`UNAVAILABLE`."""
    artifact = spec.skip_as or spec.name
    sk = store.skipped()
    sk = sk[sk["dataset"].astype(str) == dataset]
    reason = UNAVAILABLE
    for scope in ("*", artifact):  # the artifact's own record wins
        reasons = sk.loc[sk["artifact"] == scope, "reason"]
        if len(reasons) and str(reasons.iloc[0]).strip():
            reason = str(reasons.iloc[0])
    store.record_skip(dataset, reason, artifact=artifact)
    return reason


def _final_summary(targets, per_spec, stale: str, copied, skipped) -> pd.DataFrame:
    """The summary after the run, with what it copied, computed and failed, and the datasets it did not run."""
    out = summary_frame(targets, per_spec, stale)
    out["copied"] = [copied.get((p, s), 0) for p, s in zip(out["paper"], out["store"])]
    out["computed"] = [len(set(h) & targets[(sp.paper, sp.store)].computed) for sp, _, h, _ in per_spec]
    out["failed"] = [len(set(h) & targets[(sp.paper, sp.store)].failed) for sp, _, h, _ in per_spec]
    out["skipped"] = [", ".join(sorted(n for (p, n) in skipped if p == paper)) for paper in out["paper"]]
    return out


def _maybe_swap(t: Target) -> None:
    """Swap ``t``'s staged recomputation in once every cell to recompute is staged."""
    if t.staging is not None and t.redo and t.redo <= t.staged:
        t.store.swap_in(t.artifact, t.redo)
        t.done |= t.redo
        t.stale -= t.redo
        t.redo = set()
        t.staging = None


def _store_result(task: Task, res: dict[str, Any]) -> None:
    """A computed cell's rows into each of its targets: staged for a recomputation, else appended once."""
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


def _record_failure(task: Task, exc: BaseException, outcome: _Outcome) -> None:
    """A failing cell: reported, its targets' hashes marked failed (their old rows, if any, stay)."""
    for t, h in task.targets:
        t.failed.add(h)
    outcome.failures.append(
        f"failed: {task.paper} cell {task.cell}: {type(exc).__name__}: {exc}"
        + (
            " (recomputation not swapped in: the old rows stay; the next --force resumes from the cells it staged)"
            if any(h in t.redo for t, h in task.targets)
            else ""
        )
    )


def _record_skip(task: Task, reason: str, skipped, client, by_dataset) -> None:
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


def _drive(tasks: dict[str, Task], targets, outcome: _Outcome, opts: _Options, client) -> None:
    """Compute ``tasks`` on Dask (``client``, a scheduler's or a local cluster started and closed here)."""
    with _connected(client, opts) as client:
        print(f"Dask dashboard: {client.dashboard_link}")
        jobs = group_jobs(tasks)
        print(
            f"{len(tasks)} cells to compute on {len(client.scheduler_info().get('workers', {}))} workers"
            + (f" ({len(jobs)} tasks: runs of one configuration train together)" if len(jobs) < len(tasks) else "")
        )
        futures, by_dataset = _submit(client, jobs, cost_estimates(targets), opts)
        _collect(client, futures, by_dataset, len(tasks), outcome, opts.progress)


@contextmanager
def _connected(client, opts: _Options):
    """``client`` as given (left open), or one to ``opts.scheduler`` or to a local cluster, closed afterwards."""
    from dask.distributed import Client

    if client is not None:
        yield client
        return
    cluster = None
    if opts.scheduler:
        client = Client(opts.scheduler)
    else:
        n = cluster_size(opts.workers, opts.threads, opts.workers_per_gpu, opts.device)
        cluster = local_cluster(n, opts.threads)
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _submit(client, jobs: list[list[Task]], estimates, opts: _Options):
    """One future per job, and the futures of each (paper, dataset) (cancelled together when it is not here)."""
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
            opts.device,
            opts.threads,
            opts.workers_per_gpu,
            key=head.key if len(job) == 1 else f"{head.key}-x{len(job)}",
            retries=opts.retries,
            pure=False,
            priority=cost(job, estimates),
        )
        futures[fut] = job
        by_dataset.setdefault((head.paper, str(head.cell.get("dataset"))), []).append(fut)
    return futures, by_dataset


def _collect(client, futures, by_dataset, total: int, outcome: _Outcome, progress: bool) -> None:
    """Store each job's rows as it completes; a failing job is reported and the others go on."""
    from dask.distributed import as_completed
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc="cells", mininterval=5.0, disable=not progress, smoothing=0.05)
    for fut in as_completed(list(futures)):
        job = futures[fut]
        bar.update(len(job))
        if fut.cancelled():
            continue
        try:
            results = fut.result()
        except Exception as exc:  # a failing cell: reported, the others go on (its old rows, if any, stay)
            for task in job:
                _record_failure(task, exc, outcome)
            continue
        for task, res in zip(job, results):
            if "skip" in res:
                _record_skip(task, res["skip"], outcome.skipped, client, by_dataset)
                continue
            _store_result(task, res)
    bar.close()
