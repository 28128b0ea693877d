"""GPU acceptance run of dpgnn: the engine's smoke grids on one GPU with 1 and G workers, batched repeats against
sequential runs, peak GPU memory, and the GPU rows against CPU rows stored in the repository.

    bash benchmarks/gpu_check.sh [--cells 6]             # on the GPU machine: installs .whl/, then runs this
    DPGNN_GPU_CHECK_REHEARSAL=1 bash benchmarks/gpu_check.sh --cells 2 ...   # the same steps on the CPU
    python benchmarks/gpu_check.py --write-reference     # the CPU rows the GPU rows are compared with
    python benchmarks/gpu_check.py --mirror-files        # the raw dataset files the check needs

Phases, each printing its progress and one verdict per check (pass / fail / info / skip):

1. *device*: CUDA is seen (in a rehearsal, ``DPGNN_GPU_CHECK_REHEARSAL=1``, the CPU stands in for the GPU).
2. *warm-up*: the first cell of each paper computed in this process on the device: a device bug fails here, with
   its traceback, before any cluster starts (the grids then go on without that paper); it also fills the
   processed-dataset cache both grid runs then share.
3. *front door*: ``dpgnn.fit`` of every method at every level on a tiny random graph, then ``predict``, on the
   device (the paths of the own-graph API that no grid takes).
4. *grid*: the cells of :data:`SELECTION` (the first ``--cells`` of each artifact, on :data:`DATASETS`) through
   :func:`dpgnn.engine.run_specs` -- what ``dpgnn run --profile smoke --workers-per-gpu G`` calls -- on a
   LocalCluster of 1 worker, then of G workers sharing the GPU, each into its own temporary results root (never
   the repository's ``results/``): every cell computed; cells/s of each (cluster start-up excluded), their ratio.
5. *rows*: the G-worker rows against the 1-worker rows, then the 1-worker rows against the CPU rows stored in
   :data:`REFERENCE`: the same cells and rows, equal ledger columns, and per paper the accuracies within tolerance
   (``benchmarks/gpu_check_rows.py``).
6. *batched*: LPGNN's grid cell with R repeats trained together against R sequential single runs; ProGAP's
   batched repeats against sequential ``train_progap`` runs where this checkout has them. On the GPU batched must
   not be slower; in a rehearsal the ratios are reported only.
7. *memory*: peak GPU memory (``torch.cuda.max_memory_allocated``) of this process and of the workers.

Writes ``gpu_check.csv`` (one row per check), ``gpu_check.json`` (environment, arguments, grid timings, checks),
``gpu_check_rows.csv`` (every compared row: CPU value, GPU value, difference) and ``gpu_check_gpu_rows.csv.gz``
(the 1-worker GPU rows) to ``$OUT`` when set and, once a device was found, to ``benchmarks/results/`` (named
``gpu_check_rehearsal*`` in a rehearsal, so that a rehearsal never replaces a GPU run's files), after every phase.
Ends with one line and exits 1 when a check failed, 2 when ``--budget-s`` left checks unrun, 0 when every check
passed.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_check_rows, beside this file
from gpu_check_rows import Check, compare_rows, summary_line
from repeats_race import write_table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: the CPU rows of every cell of the selection (``--write-reference``, made with the project environment)
REFERENCE = RESULTS / "gpu_check_cpu_rows.csv.gz"
PROFILE = "smoke"
#: the grids the check runs, per paper
SELECTION: dict[str, tuple[str, ...]] = {
    "lpgcn": ("table2",),
    "lpgnn": ("fig_a", "table_b", "table_c"),
    "drw": ("table1", "table1_sound"),
    "progap": ("table2", "fig2"),
    "privgnn": ("accuracy",),
}
#: the datasets each paper's cells are limited to: their raw files travel in the wheelhouse (no network there)
DATASETS: dict[str, tuple[str, ...]] = {
    "lpgcn": ("cora",),
    "lpgnn": ("cora",),
    "drw": ("cora", "citeseer"),
    "progap": ("fb100-amherst41",),
    "privgnn": ("credit",),
}
#: the libraries the environment report names, with their distribution names
LIBRARIES = {
    "torch_geometric": "torch-geometric",
    "opacus": "opacus",
    "autodp": "autodp",
    "dp_accounting": "dp-accounting",
    "dask": "dask",
    "distributed": "distributed",
    "numpy": "numpy",
    "scipy": "scipy",
    "pandas": "pandas",
}
MIB = 2**20


# ---------------------------------------------------------------------------------------------------------------
# the selection
# ---------------------------------------------------------------------------------------------------------------
def first_cells(cells_fn: Callable, datasets: tuple[str, ...], n: int, cfg: Any) -> list[dict[str, Any]]:
    """The first ``n`` cells (all when ``n`` is 0) of ``cells_fn(cfg)`` whose dataset is in ``datasets``."""
    cells = [c for c in cells_fn(cfg) if str(c.get("dataset")) in datasets]
    return cells[:n] if n else cells


def selection(cells: int) -> list[tuple[Any, Any]]:
    """``(spec, settings)`` pairs of :data:`SELECTION`, each spec cut to its first ``cells`` cells on
    :data:`DATASETS` (a ``functools.partial`` of this module's function: Dask workers receive it by value)."""
    from dpgnn import engine
    from dpgnn.profiles import settings

    pairs = []
    for paper, artifacts in SELECTION.items():
        for spec in engine.select([paper], artifacts):
            cut = functools.partial(first_cells, spec.cells, DATASETS[paper], cells)
            pairs.append((dataclasses.replace(spec, cells=cut), settings(paper, PROFILE)))
    return pairs


def planned(pairs) -> set[tuple[str, str]]:
    """The (paper, config hash) of every cell of ``pairs``."""
    from dpgnn.utils import config_hash

    return {(s.paper, config_hash(c)) for s, cfg in pairs for c in s.cells(cfg)}


def mirror_files() -> list[str]:
    """Paths, relative to the offline mirror, of the raw files of every dataset in :data:`DATASETS`."""
    from dpgnn.data.registry import get_spec

    names = sorted({d for ds in DATASETS.values() for d in ds})
    return sorted({r.mirror for n in names for r in get_spec(n).raw_files if r.mirror})


def source_digest() -> str:
    """sha256 (12 hex digits) of ``dpgnn/**/*.py``: names the code that ran where no git checkout travels."""
    h = hashlib.sha256()
    for p in sorted((ROOT / "dpgnn").rglob("*.py")):
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


# ---------------------------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------------------------
class Report:
    """The checks so far, printed as they come and written (with everything else) after every phase."""

    def __init__(self, stem: str, args: argparse.Namespace):
        self.stem, self.args = stem, args
        self.checks: list[Check] = []
        self.info: dict[str, Any] = {"arguments": vars(args), "grid": {}}
        self.pairs = None
        self.rows = None
        self.in_repository = False  # benchmarks/results/ once a device was found (a run elsewhere leaves it)

    def add(self, *checks: Check) -> None:
        for c in checks:
            self.checks.append(c)
            value = "" if c.value is None else f" = {c.value:.4g} {c.unit}".rstrip()
            print(f"[{c.phase}] {c.verdict.upper():4} {c.name}{value}: {c.detail}", flush=True)

    def write(self) -> list[Path]:
        import pandas as pd

        dests = ([RESULTS] if self.in_repository else []) + ([Path(os.environ["OUT"])] if os.environ.get("OUT") else [])
        table = pd.DataFrame(
            [dataclasses.asdict(c) for c in self.checks], columns=[f.name for f in dataclasses.fields(Check)]
        )
        blob = json.dumps(
            {**self.info, "checks": table.to_dict(orient="records"), "written": time.strftime("%Y-%m-%dT%H:%M:%S")},
            indent=1,
            default=str,
        )
        written = []
        for d in dests:
            d.mkdir(parents=True, exist_ok=True)
            table.to_csv(d / f"{self.stem}.csv", index=False)
            (d / f"{self.stem}.json").write_text(blob + "\n")
            written += [d / f"{self.stem}.csv", d / f"{self.stem}.json"]
            if self.pairs is not None:
                self.pairs.to_csv(d / f"{self.stem}_rows.csv", index=False)
                written.append(d / f"{self.stem}_rows.csv")
            if self.rows is not None:
                self.rows.to_csv(
                    d / f"{self.stem}_gpu_rows.csv.gz", index=False, compression={"method": "gzip", "mtime": 0}
                )
                written.append(d / f"{self.stem}_gpu_rows.csv.gz")
        return written


# ---------------------------------------------------------------------------------------------------------------
# phases
# ---------------------------------------------------------------------------------------------------------------
def _peak_memory() -> dict[str, float]:
    """This process's peak GPU memory allocated by torch and peak resident memory (Linux's ``VmHWM``: ``ru_maxrss``
    survives the ``exec`` of a spawned worker and would report its parent's peak), in MiB."""
    import torch

    gpu = torch.cuda.max_memory_allocated() if torch.cuda.is_available() and torch.cuda.is_initialized() else 0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:
        with open("/proc/self/status") as f:
            rss = next((int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:")), rss)
    except OSError:
        pass
    return {"gpu_mib": gpu / MIB, "rss_mib": rss / MIB}


def environment(device: str, rehearsal: bool) -> dict[str, Any]:
    """Python, torch, the device and the libraries (version and the folder it was imported from)."""
    import importlib
    import importlib.metadata as md

    import torch

    cuda = torch.cuda.is_available()
    env = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda": cuda,
        "device": device,
        "rehearsal": rehearsal,
        "device_name": torch.cuda.get_device_name(0) if cuda else (platform.processor() or "cpu"),
        "device_memory_mib": torch.cuda.get_device_properties(0).total_memory / MIB if cuda else None,
        "dpgnn_sources_sha256": source_digest(),
        "data_mirror": os.environ.get("DPGNN_DATA_MIRROR"),
        "data_dir": os.environ.get("DPGNN_DATA_DIR"),
    }
    for mod, dist in LIBRARIES.items():
        try:
            where = Path(importlib.import_module(mod).__file__).parent.parent
            env[dist] = f"{md.version(dist)} ({where})"
        except Exception as exc:  # a missing library is reported here and fails where it is needed
            env[dist] = f"missing: {type(exc).__name__}: {exc}"
    return env


def phase_device(report: Report, rehearsal: bool) -> str | None:
    """The device the check runs on (``cuda`` or, in a rehearsal, ``cpu``), or None when CUDA is missing."""
    import torch

    device = "cpu" if rehearsal else "cuda"
    env = environment(device, rehearsal)
    report.info["environment"] = env
    for k, v in env.items():
        print(f"[device] {k}: {v}")
    if rehearsal:
        report.add(Check("device", "cuda seen", "info", None, "", "rehearsal: the CPU stands in for the GPU"))
        return device
    if not torch.cuda.is_available():
        report.add(
            Check(
                "device",
                "cuda seen",
                "fail",
                None,
                "",
                f"torch {torch.__version__} (CUDA "
                f"{torch.version.cuda}) sees no GPU; DPGNN_GPU_CHECK_REHEARSAL=1 rehearses on the CPU",
            )
        )
        return None
    report.add(
        Check(
            "device",
            "cuda seen",
            "pass",
            float(torch.cuda.device_count()),
            "GPUs",
            f"{env['device_name']}, {env['device_memory_mib']:.0f} MiB, torch {torch.__version__}",
        )
    )
    return device


def phase_warm_up(report: Report, pairs, device: str, threads: int) -> set[str]:
    """The first cell of each paper in this process, on ``device`` (not stored); returns the papers that failed."""
    from dpgnn import engine

    seen, failed = set(), set()
    for spec, cfg in pairs:
        cells = spec.cells(cfg)
        if spec.paper in seen or not cells:
            continue
        seen.add(spec.paper)
        t0 = time.perf_counter()
        try:
            res = engine.execute(spec, cfg, cells[0], device, threads)
        except Exception as exc:  # a failing paper: reported with its traceback, the others go on
            traceback.print_exc()
            report.add(
                Check("warm-up", spec.paper, "fail", None, "", f"{spec.name} {cells[0]}: {type(exc).__name__}: {exc}")
            )
            failed.add(spec.paper)
            continue
        secs = time.perf_counter() - t0
        if "skip" in res:
            report.add(Check("warm-up", spec.paper, "fail", None, "", f"dataset unavailable: {res['skip']}"))
            failed.add(spec.paper)
        else:
            n = 1 if isinstance(res["rows"], dict) else len(res["rows"])  # a run may return one row as a dict
            report.add(
                Check(
                    "warm-up",
                    spec.paper,
                    "pass",
                    secs,
                    "s",
                    f"{spec.name} cell on {res['device']}: "
                    f"{n} row(s) (first load of {cells[0].get('dataset')} included)",
                )
            )
    return failed


def load_rows(pairs, root: Path):
    """Every row the grid stored under ``root`` for ``pairs``, with ``paper`` and ``store`` columns, in the
    comparable form of :func:`dpgnn.engine.comparable` (no wall times, devices, versions, timestamps)."""
    import pandas as pd

    from dpgnn.engine import comparable
    from dpgnn.results import ResultStore

    frames = [
        ResultStore(paper, PROFILE, root=root / "results").load(store).assign(paper=paper, store=store)
        for paper, store in sorted({(s.paper, s.store) for s, _ in pairs})
    ]
    return comparable(pd.concat(frames, ignore_index=True))


def run_grid(pairs, device: str, per_gpu: int, threads: int, root: Path) -> dict[str, Any]:
    """``pairs`` on a fresh LocalCluster (``per_gpu`` workers sharing the device) into ``root``: timings, the
    cells computed, the failures, the workers' peak memory and the rows."""
    from dask.distributed import Client

    from dpgnn import engine

    os.environ["DPGNN_OUTPUT_ROOT"] = str(root)  # the driver's store; the workers only compute
    cores = os.cpu_count() or 1
    n = (
        engine.cluster_size(None, threads, per_gpu, device)
        if device != "cpu"
        else max(1, min(per_gpu, cores // threads))
    )
    t0 = time.perf_counter()
    cluster = engine.local_cluster(n, threads)
    client = Client(cluster)
    try:
        client.wait_for_workers(n)
        start = time.perf_counter() - t0
        t1 = time.perf_counter()
        summary = engine.run_specs(
            pairs,
            PROFILE,
            client=client,
            device=device,
            threads_per_worker=threads,
            workers_per_gpu=per_gpu,
            progress=True,
        )
        wall = time.perf_counter() - t1
        peaks = list(client.run(_peak_memory).values())
    finally:
        client.close()
        cluster.close()
    rows = load_rows(pairs, root)
    done = set(zip(rows["paper"].astype(str), rows["config_hash"].astype(str)))
    return {
        "workers": n,
        "start_s": start,
        "wall_s": wall,
        "failed": int(summary["failed"].sum()),
        "cells": len(done),
        "done": done,
        "peaks": peaks,
        "rows": rows,
    }


def phase_grid(report: Report, pairs, device: str, args, tmp: Path, deadline: float) -> dict[int, dict]:
    """The grid on 1 worker, then on G workers per GPU: one check per run, then the cells/s ratio."""
    want = planned(pairs)
    print(f"[grid] {len(want)} cells of {', '.join(f'{s.paper}/{s.name}' for s, _ in pairs)}", flush=True)
    runs: dict[int, dict] = {}
    for g in args.workers_per_gpu:
        name = f"{g} worker(s) per {'GPU' if device != 'cpu' else 'CPU (rehearsal)'}"
        # the first run's time scaled to g workers (no faster than 4x), with its start-up: does it fit?
        need = min((r["wall_s"] * k / g + r["start_s"] for k, r in runs.items()), default=0.0)
        need = max(need, min((r["wall_s"] / 4 for r in runs.values()), default=0.0))
        if time.perf_counter() + need > deadline:
            report.add(
                Check(
                    "grid",
                    name,
                    "skip",
                    None,
                    "",
                    f"--budget-s {args.budget_s:g} would be exceeded "
                    f"(about {need:.0f} s needed); a smaller --cells fits",
                )
            )
            continue
        print(f"[grid] {name}: starting the cluster", flush=True)
        try:
            run = run_grid(pairs, device, g, args.threads, tmp / f"grid_{g}")
        except Exception as exc:  # a broken cluster: reported, the next run and phases go on
            traceback.print_exc()
            report.add(Check("grid", name, "fail", None, "", f"{type(exc).__name__}: {exc}"))
            continue
        runs[g] = run
        rate = run["cells"] / run["wall_s"] if run["wall_s"] > 0 else float("nan")
        report.info["grid"][str(g)] = {k: v for k, v in run.items() if k not in ("rows", "done")}
        lost = len(want - run["done"])
        ok = run["failed"] == 0 and not lost
        report.add(
            Check(
                "grid",
                name,
                "pass" if ok else "fail",
                rate,
                "cells/s",
                f"{run['cells']} of {len(want)} cells in {run['wall_s']:.1f} s on {run['workers']} "
                f"worker(s) ({run['start_s']:.1f} s cluster start-up not counted); {run['failed']} "
                f"failed, {lost} missing",
            )
        )
        report.write()
    base = args.workers_per_gpu[0]
    for g in [g for g in args.workers_per_gpu[1:] if g in runs and base in runs]:
        r0, r1 = runs[base], runs[g]
        ratio = (r1["cells"] / r1["wall_s"]) / (r0["cells"] / r0["wall_s"])
        report.add(
            Check(
                "grid",
                f"cells/s {g} vs {base} worker(s)",
                "info",
                ratio,
                "x",
                f"{r1['cells'] / r1['wall_s']:.3f} vs {r0['cells'] / r0['wall_s']:.3f} cells/s",
            )
        )
    return runs


def phase_rows(report: Report, runs: dict[int, dict], args) -> None:
    """G-worker rows against 1-worker rows; 1-worker rows against the stored CPU rows."""
    import pandas as pd

    tol = {"acc_tol": args.acc_tol, "gross_tol": args.gross_tol, "alpha": args.alpha, "ledger_rtol": args.ledger_rtol}
    if not runs:
        report.add(Check("rows", "compared", "skip", None, "", "no grid run finished"))
        return
    base = args.workers_per_gpu[0]
    first = runs.get(base) or next(iter(runs.values()))
    report.rows = first["rows"]
    for g in [g for g in runs if g != base and base in runs]:
        checks, _ = compare_rows(
            runs[g]["rows"], runs[base]["rows"], label=f"rows {g}w vs {base}w", subset=False, **tol
        )
        report.add(*checks)
        try:
            pd.testing.assert_frame_equal(runs[g]["rows"], runs[base]["rows"], check_like=True)
            same = "bit-identical"
        except AssertionError as exc:
            same = "not bit-identical: " + str(exc).strip().splitlines()[0]
        report.add(Check(f"rows {g}w vs {base}w", "identical rows", "info", None, "", same))
    if not REFERENCE.exists():
        report.add(
            Check(
                "rows vs cpu",
                "reference",
                "fail",
                None,
                "",
                f"{REFERENCE.relative_to(ROOT)} is missing: python benchmarks/gpu_check.py --write-reference",
            )
        )
        return
    ref = pd.read_csv(REFERENCE, dtype=str, keep_default_na=False)
    test = first["rows"].astype(str)
    checks, report.pairs = compare_rows(test, ref, label="rows vs cpu", **tol)
    report.add(*checks)


def speed_verdict(ratio: float, device: str) -> str:
    """Batched training must not be slower than sequential on the GPU; on the CPU (a rehearsal) the ratio is only
    reported: there the sparse products grow with R and a few short runs can favour the sequential loop."""
    if device == "cpu":
        return "info"
    return "pass" if ratio >= 1 else "fail"


def phase_front_door(report: Report, device: str, methods: list[str] | None = None) -> None:
    """``dpgnn.fit`` of every method at every level it supports (or of ``methods``) on ``device``, with the tiny
    settings and budgets of ``tests/api/test_fit.py`` on its random graph, then ``predict`` on a new graph: the
    front door's device paths, which the grids do not all take. One check per method, failing on the first level
    that raises (its traceback printed) or predicts a non-finite logit."""
    import torch

    import dpgnn
    from dpgnn.api import METHODS

    sys.path.insert(0, str(ROOT / "tests"))
    from helpers.own_graph import EPS, FAST, random_graph

    graph, new = random_graph(), random_graph(n=23, seed=5)
    for name in methods or list(METHODS):
        t0, detail, verdict = time.perf_counter(), [], "pass"
        for level in METHODS[name].levels:
            try:
                model = dpgnn.fit(graph, name, level=level, epsilon=EPS[level], device=device, **FAST[name])
                logits = model.predict(new)
                if not bool(torch.isfinite(logits).all()):
                    raise ValueError(f"predict gave non-finite logits on {logits.device}")
            except Exception as exc:  # reported with its traceback; the other methods go on
                traceback.print_exc()
                verdict = "fail"
                detail.append(f"{level}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                break
            detail.append(f"{level}: test {model.metrics['test']:.2f}")
        secs = time.perf_counter() - t0
        report.add(Check("front door", name, verdict, secs, "s", f"dpgnn.fit on {device}; " + "; ".join(detail)))


def phase_batched_lpgnn(report: Report, device: str, repeats: int, epochs: int) -> None:
    """LPGNN's grid cell (Cora, SAGE, multi-bit ε_x = ε_y = 1) with ``repeats`` repeats in one batched run against
    ``repeats`` single-repeat cells run one after another."""
    from dpgnn.methods import lpgnn

    data = lpgnn.prepare("cora")
    kw = {"method": "mbm", "eps_x": 1.0, "eps_y": 1.0, "backbone": "sage", "device": device, "threads": 1}
    lpgnn.run_cell(data, "cora", repeats=2, epochs=5, **kw)  # kernels, allocator, caches
    t0 = time.perf_counter()
    rows = lpgnn.run_cell(data, "cora", repeats=repeats, epochs=epochs, **kw)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [
        lpgnn.run_cell(data, "cora", repeats=1, epochs=epochs, seed=lpgnn.GLOBAL_SEED + r, **kw)[0]
        for r in range(repeats)
    ]
    t_seq = time.perf_counter() - t0
    ratio = t_seq / t_batched
    acc_b = sum(r["value"] for r in rows) / len(rows)
    acc_s = sum(r["value"] for r in singles) / len(singles)
    report.add(
        Check(
            "batched",
            f"lpgnn R={repeats} batched vs sequential",
            speed_verdict(ratio, device),
            ratio,
            "x",
            f"Cora, SAGE, mbm eps_x=eps_y=1, {epochs} epochs: one batched cell {t_batched:.2f} s, "
            f"{repeats} single-repeat cells {t_seq:.2f} s; mean test accuracy {acc_b:.1f} vs {acc_s:.1f} %"
            f" (different seeds: informative only)",
        )
    )


def phase_batched_progap(report: Report, device: str, repeats: int, epochs: int, levels: list[str]) -> None:
    """ProGAP (fb100-amherst41, depth 2, ε = 1) with ``repeats`` seeds trained together
    (``dpgnn.methods.repeats.train_progap_repeats``) against ``train_progap`` on each seed in turn."""
    try:
        from dpgnn.methods.repeats import train_progap_repeats
    except ImportError as exc:
        report.add(
            Check(
                "batched",
                "progap batched vs sequential",
                "info",
                None,
                "",
                f"no batched ProGAP trainer in this checkout ({exc})",
            )
        )
        return
    from dpgnn.data import load_dataset
    from dpgnn.methods import progap
    from dpgnn.profiles import settings

    size = int(settings("progap", PROFILE).standins["fb100-amherst41"])
    data = load_dataset("fb100-amherst41", variant="progap", min_class_size=size)
    seeds = list(range(repeats))
    for level in levels:
        cfg = progap.ProGAPConfig(level=level, depth=2, epsilon=1.0, epochs=epochs)
        train_progap_repeats(data, dataclasses.replace(cfg, epochs=2), seeds[:2], device=device)  # warm-up
        t0 = time.perf_counter()
        batched = train_progap_repeats(data, cfg, seeds, device=device)
        t_batched = time.perf_counter() - t0
        t0 = time.perf_counter()
        single = [progap.train_progap(data, cfg, seed=s, device=device) for s in seeds]
        t_seq = time.perf_counter() - t0
        ratio = t_seq / t_batched
        gap = max(abs(b.test_acc - s.test_acc) for b, s in zip(batched, single))
        report.add(
            Check(
                "batched",
                f"progap {level} R={repeats} batched vs sequential",
                speed_verdict(ratio, device),
                ratio,
                "x",
                f"fb100-amherst41, depth 2, eps 1, {epochs} epochs per stage: batched {t_batched:.2f} s, "
                f"{repeats} sequential runs {t_seq:.2f} s; largest test-accuracy difference between a "
                f"seed's two runs {100 * gap:.2f} points (the same seeds: float rounding only)",
            )
        )


def phase_memory(report: Report, runs: dict[int, dict]) -> None:
    mine = _peak_memory()
    report.add(
        Check(
            "memory",
            "peak GPU memory, this process",
            "info",
            mine["gpu_mib"],
            "MiB",
            f"torch.cuda.max_memory_allocated (warm-up and batched phases); peak RSS {mine['rss_mib']:.0f} MiB",
        )
    )
    for g, run in sorted(runs.items()):
        gpu = max((p["gpu_mib"] for p in run["peaks"]), default=0.0)
        rss = max((p["rss_mib"] for p in run["peaks"]), default=0.0)
        report.add(
            Check(
                "memory",
                f"peak GPU memory, {g}-worker grid",
                "info",
                gpu,
                "MiB",
                f"largest of {len(run['peaks'])} worker(s); sum {sum(p['gpu_mib'] for p in run['peaks']):.0f}"
                f" MiB; peak RSS of a worker {rss:.0f} MiB",
            )
        )


# ---------------------------------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------------------------------
def write_reference(args, tmp: Path) -> int:
    """The CPU rows of every cell of the selection (``--cells``; default all) into :data:`REFERENCE`, with the
    environment that made them beside it (``.json``)."""
    pairs = selection(args.cells)
    run = run_grid(pairs, "cpu", args.workers_per_gpu[-1], args.threads, tmp / "reference")
    if run["failed"] or run["done"] != planned(pairs):
        print(f"gpu_check: FAIL: the reference grid lost cells ({run['failed']} failed)")
        return 1
    run["rows"].to_csv(REFERENCE, index=False, compression={"method": "gzip", "mtime": 0})
    meta = {
        "environment": environment("cpu", False),
        "cells": run["cells"],
        "rows": len(run["rows"]),
        "selection": SELECTION,
        "datasets": DATASETS,
        "profile": PROFILE,
        "cells_per_artifact": args.cells,
        "workers": run["workers"],
        "wall_s": round(run["wall_s"], 1),
        "written": time.strftime("%Y-%m-%d"),
    }
    REFERENCE.with_name("gpu_check_cpu_rows.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    print(
        f"gpu_check: wrote {run['cells']} cells, {len(run['rows'])} rows to {REFERENCE.relative_to(ROOT)} "
        f"in {run['wall_s']:.0f} s on {run['workers']} CPU worker(s)"
    )
    return 0


def readme_block() -> str:
    """The summary of the stored GPU run ``benchmarks/results/gpu_check.{csv,json}``: where and when it ran, its
    verdicts, the grids' cells/s, the batched ratios and the peak GPU memory, every number read from those files."""
    import pandas as pd

    checks = pd.read_csv(RESULTS / "gpu_check.csv")
    meta = json.loads((RESULTS / "gpu_check.json").read_text())
    env = meta["environment"]
    one = {(r.phase, r.name): r for r in checks.itertuples()}
    verdicts = checks["verdict"].value_counts()
    failed = checks.loc[checks["verdict"] == "fail", "name"].tolist()
    grid = meta["grid"]
    w = sorted(grid, key=int)
    rate = {k: one[("grid", f"{k} worker(s) per GPU")].value for k in w}
    batched = checks[checks["phase"] == "batched"]
    memory = one.get(("memory", f"peak GPU memory, {w[-1]}-worker grid")) if w else None
    out = [
        f"Generated by `python benchmarks/gpu_check.py --readme` from `results/gpu_check.csv` and `.json` (written "
        f"{meta['written'][:10]}): {env['device_name']}, torch {env['torch']}, Python {env['python']}, "
        f"{env['cpus']} CPUs, dpgnn sources `{env['dpgnn_sources_sha256']}`.",
        "",
        f"- Verdicts: {verdicts.get('pass', 0)} pass, {verdicts.get('fail', 0)} fail, {verdicts.get('info', 0)} info, "
        f"{verdicts.get('skip', 0)} skip" + (f" (failed: {', '.join(failed)})." if failed else "."),
    ]
    if w:
        cells = grid[w[0]]["cells"]
        out.append(
            "- Smoke grids, "
            + "; ".join(f"{k} worker(s): {grid[k]['wall_s']:.1f} s, {rate[k]:.3g} cells/s" for k in w)
            + f" ({cells} cells each); {w[-1]} vs {w[0]} worker(s) {rate[w[-1]] / rate[w[0]]:.2f}×."
        )
    if len(batched):
        out.append(
            f"- Batched R = {meta['arguments']['repeats']} against sequential: "
            + "; ".join(f"{r.name.split(' R=')[0]} {r.value:.2f}×" for r in batched.itertuples())
            + "."
        )
    if memory is not None:
        out.append(f"- Peak GPU memory of a worker: {memory.value:.0f} MiB ({memory.detail.split('; ')[1]}).")
    return "\n".join(out) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=6, help="first N cells of each artifact (0: all; default 6)")
    ap.add_argument(
        "--workers-per-gpu",
        type=int,
        nargs="+",
        default=[1, 4],
        help="grid runs, each on a cluster of this many workers sharing the GPU (default 1 4)",
    )
    ap.add_argument("--threads", type=int, default=1, help="torch threads per worker (default 1)")
    ap.add_argument("--repeats", type=int, default=10, help="R of the batched phase (default 10)")
    ap.add_argument("--epochs", type=int, default=200, help="LPGNN epochs in the batched phase (default 200)")
    ap.add_argument(
        "--progap-epochs",
        type=int,
        default=30,
        help="ProGAP epochs per stage in the batched phase (default 30, the smoke grids')",
    )
    ap.add_argument("--progap-levels", nargs="*", default=["edge", "node"], choices=["edge", "node"])
    ap.add_argument(
        "--acc-tol",
        type=float,
        default=3.0,
        help="accuracy: smallest tolerance of the mean difference per paper, points (default 3)",
    )
    ap.add_argument(
        "--gross-tol",
        type=float,
        default=10.0,
        help="accuracy: largest mean |difference| per paper, points (default 10)",
    )
    ap.add_argument("--alpha", type=float, default=1e-3, help="accuracy: level of the t-test (default 0.001)")
    ap.add_argument("--ledger-rtol", type=float, default=1e-5, help="ledgers: relative tolerance of numbers")
    ap.add_argument(
        "--budget-s",
        type=float,
        default=360.0,
        help="no phase starts after this many seconds, nor "
        "a grid run expected to end after them (default 360: the whole check within 8 minutes)",
    )
    ap.add_argument("--write-reference", action="store_true", help="compute the CPU rows (project environment)")
    ap.add_argument("--mirror-files", action="store_true", help="print the dataset files the check needs")
    ap.add_argument("--source-digest", action="store_true", help="print the digest of dpgnn/**/*.py")
    ap.add_argument("--readme", action="store_true", help="the stored GPU run's summary into benchmarks/README.md")
    args = ap.parse_args(argv)
    if (
        args.cells < 0
        or args.repeats < 1
        or args.epochs < 1
        or args.progap_epochs < 1
        or args.threads < 1
        or min(args.workers_per_gpu) < 1
    ):
        ap.error("--cells must be >= 0; --repeats, --epochs, --progap-epochs, --threads, --workers-per-gpu >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.mirror_files or args.source_digest:
        print("\n".join(mirror_files()) if args.mirror_files else source_digest())
        return 0
    if args.readme:  # the block between the gpu_check markers of benchmarks/README.md, and results/gpu_check.md
        write_table(RESULTS / "gpu_check.csv", readme_block, "gpu_check")
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="gpu_check_"))  # the grids' stores and scratch, removed at the end
    os.environ["DPGNN_OUTPUT_ROOT"] = str(tmp / "scratch")  # never the repository's results/
    try:
        return write_reference(args, tmp) if args.write_reference else run_check(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_check(args: argparse.Namespace, tmp: Path) -> int:
    """The phases, the files and the closing line; the exit status."""
    rehearsal = os.environ.get("DPGNN_GPU_CHECK_REHEARSAL") == "1"
    report = Report("gpu_check_rehearsal" if rehearsal else "gpu_check", args)
    deadline = time.perf_counter() + args.budget_s
    device = phase_device(report, rehearsal)
    report.in_repository = device is not None
    if device is not None:
        import torch

        torch.set_num_threads(args.threads)
        pairs = selection(args.cells)
        broken = phase_warm_up(report, pairs, device, args.threads)
        report.write()
        if broken:  # their cells would only fail again, slowly: the grids go on with the other papers
            print(f"[grid] without {', '.join(sorted(broken))} (failed in the warm-up)", flush=True)
        pairs = [(s, c) for s, c in pairs if s.paper not in broken]
        phase_front_door(report, device)
        report.write()
        runs = phase_grid(report, pairs, device, args, tmp, deadline) if pairs else {}
        phase_rows(report, runs, args)
        report.write()
        for name, phase in (
            ("lpgnn", lambda: phase_batched_lpgnn(report, device, args.repeats, args.epochs)),
            (
                "progap",
                lambda: phase_batched_progap(report, device, args.repeats, args.progap_epochs, args.progap_levels),
            ),
        ):
            if time.perf_counter() > deadline:
                report.add(Check("batched", name, "skip", None, "", f"--budget-s {args.budget_s:g} spent"))
                continue
            try:
                phase()
            except Exception as exc:  # a failing timing: reported, the other phases go on
                traceback.print_exc()
                report.add(Check("batched", name, "fail", None, "", f"{type(exc).__name__}: {exc}"))
            report.write()
        phase_memory(report, runs)
    written = report.write()
    code, line = summary_line(report.checks)
    print(f"gpu_check: wrote {', '.join(str(p) for p in written) or 'nothing (no $OUT, no device)'}")
    print(line, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
