"""The engine's plan: which papers and grids, which cells each store artifact needs, and which cells run together.

:func:`plan_targets` reads the stores once (:func:`dpgnn.sweep.plan`) and returns one :class:`Target` per (paper,
store artifact); the driver (:mod:`dpgnn.engine.driver`) turns the missing cells into :class:`Task` objects, which
:func:`group_jobs` groups into what one worker computes at once, longest first by :func:`cost`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpgnn import series
from dpgnn.results import ResultStore
from dpgnn.sweep import CellSpec, SharedRuns, grid_hashes, plan


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


@dataclass
class Target:
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
class Task:
    """One distinct cell to compute, and the (target, config hash) pairs its rows go to (a share group's stores)."""

    key: str
    paper: str
    cell: dict[str, Any]
    spec: CellSpec
    cfg: Any  #: the profile's settings (a frozen dataclass, or a dict for hand-made grids)
    targets: list[tuple[Target, str]] = field(default_factory=list)


def group(spec: CellSpec) -> str:
    """Cells of specs in one share group with equal hashes are the same run."""
    return "+".join(sorted(set(spec.share) | {spec.store})) if spec.share else spec.store


def plan_targets(pairs: list[tuple[CellSpec, Any]], profile: str, *, force: bool, stale: str, root: Path | None = None):
    """One :class:`Target` per (paper, store artifact), planned by :func:`dpgnn.sweep.plan` over the union of the
    grids of the specs that feed it, and per spec ``(spec, cfg, hashes, cells by hash)``. ``root``: the results
    root the stores read (default: the output root's ``results/``)."""
    grids: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    shares: dict[tuple[str, str], tuple[str, ...]] = {}
    per_spec: list[tuple[CellSpec, Any, list[str], dict[str, dict]]] = []
    for spec, cfg in pairs:
        cells = spec.cells(cfg)
        hashes = grid_hashes(cells, f"{spec.paper}/{spec.name}")
        grids.setdefault((spec.paper, spec.store), {}).update(zip(hashes, cells))
        shares.setdefault((spec.paper, spec.store), tuple(spec.share))
        per_spec.append((spec, cfg, hashes, dict(zip(hashes, cells))))
    targets: dict[tuple[str, str], Target] = {}
    for (paper, artifact), cells in grids.items():
        p = plan(ResultStore(paper, profile, root), artifact, cells, force=force, stale=stale)
        targets[(paper, artifact)] = Target(
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


def copy_shared(t: Target) -> int:
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


def unavailable_hashes(t: Target, spec: CellSpec, cfg: Any, cells: dict[str, dict]) -> set[str]:
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


def group_jobs(tasks: dict[str, Task], max_batch: int = 10) -> list[list[Task]]:
    """The tasks grouped into what one worker computes at once: the cells of a spec with ``batch`` that share its
    ``batch_key`` (at most ``max_batch`` together), every other cell alone; in plan order."""
    open_groups: dict[tuple[str, str, str], list[Task]] = {}
    jobs: list[list[Task]] = []
    for task in tasks.values():
        spec = task.spec
        if spec.batch is None or spec.batch_key is None:
            jobs.append([task])
            continue
        k = (spec.paper, group(spec), spec.batch_key(task.cell))
        if k not in open_groups or len(open_groups[k]) >= max_batch:
            open_groups[k] = []
            jobs.append(open_groups[k])
        open_groups[k].append(task)
    return jobs


def cost_estimates(targets: Mapping[tuple[str, str], Target]) -> dict[tuple[str, str], dict[tuple[str, str], float]]:
    """Per target, the mean stored wall time of a cell per (dataset, method), ``("", "")`` holding the mean over
    all its stored cells: what :func:`cost` ranks missing cells by."""
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


def cost(job: list[Task], estimates) -> float:
    """Estimated wall time of a job: its cells' stored means (by dataset and method, else the artifact's, else 1 s)."""
    total = 0.0
    for task in job:
        t, _ = task.targets[0]
        est = estimates.get((t.store.paper, t.artifact), {})
        total += est.get((str(task.cell.get("dataset")), str(task.cell.get("method"))), est.get(("", ""), 1.0))
    return total
