"""Batch runner: execute the notebook series with papermill, each notebook in a fresh kernel.

``dpgnn reproduce [PAPER ...] --profile smoke|test|paper --device auto --jobs N [--notebook lpgcn/03] [-p key=value]``

- Notebooks are ``notebooks/<paper>/NN_<what>.ipynb``; each is executed by papermill in a fresh kernel, in one
  worker process per job (:class:`dpgnn.notebook_process.NotebookWorker`, a session of its own: papermill is not
  thread-safe with working directories, and loads once per worker); ``--jobs N`` runs N series side by side, each
  series' notebooks in order (later notebooks reuse the grids earlier ones stored). The parameters
  ``profile``, ``device`` and ``force`` are injected (plus ``-p key=value`` parameters, to the notebooks that
  declare them); the kernel is ``python3`` and the working directory the repository root. Matplotlib's backend is left
  to the kernel, so executed notebooks hold their figures inline (they are also saved as PNG + PDF under ``figures/``).
- Executed notebooks and logs go to ``papermill_runs/<profile>/<paper>/``. Progress is streamed to the terminal
  while a notebook runs: which cell executes, the sweeps' progress lines and ``dpgnn`` log lines (e.g. how many grid
  cells were already stored), each prefixed with the notebook's name. In these batch kernels (``DPGNN_BATCH=1``)
  progress bars are text, so they also reach the log and the executed notebook; interactive JupyterLab keeps its
  widgets.
- ``papermill_runs/<profile>/manifest.csv`` gets one row per notebook (status, duration, output, log, error, the
  parameters, the code version) as soon as it starts and when it ends, so one failure never loses the others.
- Interrupting (SIGTERM, SIGINT/Ctrl-C) stops every running notebook -- papermill, its kernel and their children
  -- records them as ``interrupted`` with the time, and exits with status 128 + signal number; the next run
  executes them again (their finished sweep cells are stored and are not recomputed).
- Grid cells first: for the five paper series, ``reproduce`` first computes every missing grid cell of the
  profile on Dask (:func:`dpgnn.engine.compute`, as ``dpgnn run`` does: a ``LocalCluster`` sized to the machine,
  or ``scheduler``), so the notebooks that follow only read the stored rows and draw. With ``--notebook`` or
  ``-p`` parameters (which may change a notebook's grid) or ``cells=False``, the notebooks compute their own missing
  cells, one after another, through the same cell functions.
- Resuming: a notebook whose last run succeeded with the same notebook file, the same parameters, the same code
  (a digest of the ``dpgnn`` package's source; the manifest also shows :func:`dpgnn.utils.code_version`) and the
  same stored rows to draw from (:func:`rows_digest`) is skipped (status ``cached``). A notebook whose last
  successful run came from *other* code is said so in the terminal and, by default (``stale="rerun"``), executed
  again; ``stale="keep"`` keeps its outputs (status ``stale``).
  Inside notebooks, sweeps skip cells whose results are stored (:mod:`dpgnn.sweep`). ``force`` recomputes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import queue
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from dpgnn.atomic import write_csv
from dpgnn.notebook_process import Echo, NotebookWorker, StopOnSignals, execute_notebook
from dpgnn.notebook_series import (
    RESERVED,
    declared_parameters,
    discover,
    notebooks_dir,
    select,
)
from dpgnn.notebook_series import (
    available_papers as available_papers,
)
from dpgnn.notebook_series import (
    parse_parameters as parse_parameters,
)
from dpgnn.profiles import PROFILE_NAMES, check_profile
from dpgnn.results import results_dir
from dpgnn.utils import ROOT, code_version, output_root

MANIFEST_COLUMNS = [
    "paper",
    "notebook",
    "profile",
    "status",
    "duration_s",
    "started",
    "ended",
    "output",
    "log",
    "error",
    "notebook_sha256",
    "device",
    "parameters",
    "code_version",
    "code_sha256",
    "rows_sha256",
]
PROFILES = PROFILE_NAMES  #: the profile names (one tuple: dpgnn.profiles.PROFILE_NAMES)
DEVICES = ("auto", "cpu", "cuda")
STALE = ("rerun", "keep")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_digest() -> str:
    """sha256 over the ``dpgnn`` package's Python sources and reference data: any change to the code that makes
    results (committed or not) changes it."""
    pkg = Path(__file__).resolve().parent
    files = (p for p in sorted(pkg.rglob("*")) if p.suffix in (".py", ".csv") and "__pycache__" not in p.parts)
    return _files_digest((str(p.relative_to(pkg)), p) for p in files)


def _files_digest(files) -> str:
    """sha256 over ``(name, path)`` pairs: each name and its file's bytes, in the order given."""
    h = hashlib.sha256()
    for name, p in files:
        h.update(name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def rows_digest(profile: str, paper: str) -> str:
    """sha256 over the stored rows a notebook of ``paper`` draws from: its own store ``results/<profile>/<paper>/``
    or, for a series without one (the comparison across papers, the course), every profile's stores."""
    own = results_dir(profile, paper)
    stores = [own] if own.is_dir() else sorted((output_root() / "results").glob("*/*/"))
    return _files_digest((f"{d.name}/{f.name}", f) for d in stores for f in sorted(d.glob("*.csv*")))


def manifest_path(profile: str, root: Path | None = None) -> Path:
    """``papermill_runs/<profile>/manifest.csv`` under ``root`` (default: the repository): one row per notebook run."""
    return Path(root or ROOT) / "papermill_runs" / profile / "manifest.csv"


def load_manifest(profile: str, root: Path | None = None) -> pd.DataFrame:
    """The profile's manifest (:func:`manifest_path`) as strings in :data:`MANIFEST_COLUMNS`; empty when none."""
    p = manifest_path(profile, root)
    if p.exists() and p.stat().st_size:
        return pd.read_csv(p, dtype=str, keep_default_na=False).reindex(columns=MANIFEST_COLUMNS, fill_value="")
    return pd.DataFrame(columns=MANIFEST_COLUMNS)


class Manifest:
    """``papermill_runs/<profile>/manifest.csv``: one row per notebook, replaced atomically on every change.

    Thread-safe: the notebooks of a batch run in threads and record their rows as they start and end; ``lock`` also
    keeps their terminal lines whole."""

    def __init__(self, profile: str, root: Path | None = None):
        self.path = manifest_path(profile, root)
        self.frame = load_manifest(profile, root)
        self.lock = threading.Lock()

    def previous(self, paper: str, notebook: str) -> dict | None:
        """The last recorded row of ``paper``'s ``notebook`` (a file name), or None."""
        hit = self.frame[(self.frame["paper"] == paper) & (self.frame["notebook"] == notebook)]
        return hit.iloc[-1].to_dict() if len(hit) else None

    def record(self, row: dict) -> None:
        """Make ``row`` the notebook's row (replacing its previous one) and write the manifest."""
        with self.lock:
            m = self.frame
            keep = ~((m["paper"] == row["paper"]) & (m["notebook"] == row["notebook"]))
            self.frame = pd.concat([m[keep], pd.DataFrame([row])], ignore_index=True)
            self._write()

    def mark_forced(self, todo: list[tuple[str, Path]]) -> None:
        """Mark the rows of ``todo`` ``forced`` before a ``--force`` run starts, so that a notebook the run does not
        reach (interrupted, killed) is executed by the next plain ``dpgnn reproduce`` instead of reported cached."""
        if not len(self.frame):
            return
        names = {(paper, nb.name) for paper, nb in todo}
        hit = [(p, n) in names for p, n in zip(self.frame["paper"], self.frame["notebook"])]
        self.frame.loc[hit, "status"] = "forced"
        self.frame.loc[hit, "error"] = "--force started: executed again by the next run"
        self._write()

    def _write(self) -> None:
        write_csv(self.frame.reindex(columns=MANIFEST_COLUMNS), self.path)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def plan(
    papers: list[str] | None = None,
    *,
    profile: str = "smoke",
    jobs: int = 1,
    root: Path | None = None,
    notebooks: list[str] | None = None,
    parameters: dict[str, Any] | None = None,
    device: str = "auto",
    stale: str = "rerun",
) -> list[tuple[str, Path]]:
    """The notebooks :func:`reproduce` would execute; a ``ValueError`` for an unknown paper, notebook, profile,
    device or ``stale`` choice, a parameter no selected notebook declares, or bad ``jobs`` (the CLI checks its
    input with this before any work starts)."""
    check_profile(profile)
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if stale not in STALE:
        raise ValueError(f"stale must be one of {STALE}, got {stale!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    root = Path(root or ROOT)
    todo = discover(papers, root)
    if not todo:
        raise ValueError(f"no notebooks found under {notebooks_dir(root)}")
    if notebooks:
        todo = select(todo, notebooks)
    for key in parameters or {}:
        if key in RESERVED:
            raise ValueError(f"parameter {key!r} is set by --{key}, not by -p")
        if not any(key in declared_parameters(nb) for _, nb in todo):
            raise ValueError(f"no selected notebook has a parameter {key!r} (see papermill --help-notebook NOTEBOOK)")
    return todo


@dataclass(frozen=True)
class Batch:
    """What one ``dpgnn reproduce`` executes: the notebooks (``todo``, ``(paper, path)`` in execution order), for
    which profile, device and parameters, and where their outputs go (:attr:`runs`)."""

    #: ``(paper, notebook path)`` pairs, in execution order (:func:`plan`)
    todo: tuple[tuple[str, Path], ...]
    profile: str
    device: str
    #: the repository root: notebooks are read and executed from here, outputs written under it
    root: Path
    #: ``-p`` parameters; each notebook gets those it declares
    parameters: dict[str, Any]
    #: the ``force`` parameter injected into the notebooks
    force: bool = False
    #: execute every notebook again, even one whose last run is current (``--force``)
    rerun: bool = False
    #: what to do with a notebook whose last run came from other code: ``rerun`` or ``keep``
    stale: str = "rerun"
    #: seconds a notebook may run (None: no limit)
    timeout: int | None = None
    #: series executed side by side
    jobs: int = 1
    code_version: str = ""
    code_sha256: str = ""

    @property
    def runs(self) -> Path:
        """``papermill_runs/<profile>/``: executed notebooks, their logs and the manifest."""
        return self.root / "papermill_runs" / self.profile

    def output(self, paper: str, nb: Path) -> Path:
        """Where the executed copy of ``nb`` goes (its log beside it, ``.log``)."""
        return self.runs / paper / nb.name

    @property
    def threads(self) -> int:
        """Threads of each notebook's kernel: the cores shared by the ``jobs`` side by side."""
        return max(1, (os.cpu_count() or 1) // self.jobs)

    def series(self) -> list[list[tuple[str, Path]]]:
        """The notebooks grouped by paper: a series' notebooks run in order (later ones reuse the grids earlier
        ones stored, and two processes never compute the same missing cells); ``jobs`` series run side by side."""
        chains: dict[str, list[tuple[str, Path]]] = {}
        for paper, nb in self.todo:
            chains.setdefault(paper, []).append((paper, nb))
        return list(chains.values())


def _base_row(batch: Batch, paper: str, nb: Path, params: dict[str, Any]) -> dict[str, Any]:
    """The manifest fields of ``nb`` that do not depend on how it ends."""
    out = batch.output(paper, nb)
    return dict(
        paper=paper,
        notebook=nb.name,
        profile=batch.profile,
        output=str(out.relative_to(batch.root)),
        log=str(out.with_suffix(".log").relative_to(batch.root)),
        notebook_sha256=_sha256(nb),
        device=batch.device,
        parameters=json.dumps(params, sort_keys=True),
        code_version=batch.code_version,
        code_sha256=batch.code_sha256,
    )


def _kept_row(batch: Batch, base: dict[str, Any], prev: dict | None, out: Path) -> dict | None:
    """The row of a notebook whose last successful run is kept (``cached``: same notebook, parameters, code and
    stored rows; ``stale``: other code, kept by ``stale="keep"``), or None when it must be executed."""
    same_run = (
        prev is not None
        and prev.get("status") in ("ok", "cached", "stale")
        and prev.get("notebook_sha256") == base["notebook_sha256"]
        and (prev.get("parameters") or "{}") == base["parameters"]
        and out.exists()
    )
    if batch.rerun or not same_run:
        return None
    if prev.get("rows_sha256") != rows_digest(batch.profile, base["paper"]):
        tqdm.write(f"[{base['paper']}/{Path(base['notebook']).stem}] its stored rows changed: executing it again")
        return None
    kept = {**prev, **base, "duration_s": "0", "code_version": prev.get("code_version", "")}
    if prev.get("code_sha256") == batch.code_sha256:
        return {**kept, "status": "cached", "error": ""}
    name, other = f"{base['paper']}/{Path(base['notebook']).stem}", prev.get("code_version") or "unrecorded code"
    if batch.stale == "keep":
        tqdm.write(
            f"[{name}] stored outputs come from other code ({other}; now {batch.code_version}): kept "
            f"(--stale rerun executes it again)"
        )
        error = f"outputs from other code: {other}"
        return {**kept, "status": "stale", "error": error, "code_sha256": prev.get("code_sha256", "")}
    tqdm.write(
        f"[{name}] last run came from other code ({other}; now {batch.code_version}): executing it again "
        f"(--stale keep keeps it)"
    )
    return None


def run_notebook(
    batch: Batch,
    manifest: Manifest,
    paper: str,
    nb: Path,
    stopping: threading.Event | None = None,
    worker: NotebookWorker | None = None,
) -> dict:
    """Execute ``paper``'s notebook ``nb`` of ``batch`` in ``worker`` (else a worker of its own), or keep its last
    run (:func:`_kept_row`), recording its manifest row when it starts and when it ends. Returns the row; ``{}``
    when ``stopping`` was set before it started."""
    out = batch.output(paper, nb)
    declared = declared_parameters(nb)
    params = {k: v for k, v in batch.parameters.items() if k in declared}
    base = _base_row(batch, paper, nb, params)
    kept = _kept_row(batch, base, manifest.previous(paper, nb.name), out)
    if kept is not None:
        manifest.record(kept)
        return kept
    if stopping is not None and stopping.is_set():
        return {}
    started = _now()
    manifest.record({**base, "status": "running", "duration_s": "", "started": started, "ended": "", "error": ""})
    t0 = time.perf_counter()
    status, error = execute_notebook(
        nb,
        out,
        out.with_suffix(".log"),
        {"profile": batch.profile, "device": batch.device, "force": batch.force, **params},
        cwd=batch.root,
        timeout=batch.timeout,
        threads=batch.threads,
        echo=Echo(f"{paper}/{nb.stem}", _cell_count(nb), tqdm.write),
        stopping=stopping,
        worker=worker,
    )
    row = {
        **base,
        "status": status,
        "duration_s": f"{time.perf_counter() - t0:.1f}",
        "started": started,
        "ended": _now(),
        "error": error,
        "rows_sha256": rows_digest(batch.profile, paper),
    }
    manifest.record(row)
    return row


def _run_series(
    batch: Batch,
    manifest: Manifest,
    items: list[tuple[str, Path]],
    stopping: threading.Event,
    bar,
    workers: queue.SimpleQueue,
) -> None:
    """Run one series' notebooks in order in a worker taken from ``workers`` (and given back); a notebook that
    raises is recorded ``failed`` and the next one runs."""
    worker = workers.get()
    try:
        for paper, nb in items:
            _run_one(batch, manifest, paper, nb, stopping, bar, worker)
    finally:
        workers.put(worker)


def _run_one(
    batch: Batch,
    manifest: Manifest,
    paper: str,
    nb: Path,
    stopping: threading.Event,
    bar,
    worker: NotebookWorker,
) -> None:
    """Run one notebook of a series and say how it went (a notebook that raises is recorded ``failed``)."""
    try:
        row = run_notebook(batch, manifest, paper, nb, stopping, worker)
    except Exception as exc:  # never lose the other notebooks
        row = {
            "paper": paper,
            "notebook": nb.name,
            "profile": batch.profile,
            "status": "failed",
            "ended": _now(),
            "error": f"{type(exc).__name__}: {exc}",
            "code_version": batch.code_version,
            "code_sha256": batch.code_sha256,
        }
        manifest.record(row)
    if not row:  # not started: the batch was interrupted first
        return
    dur = f" {row.get('duration_s')}s" if row.get("duration_s") not in ("", "0", None) else ""
    with manifest.lock:
        tqdm.write(f"[{row['status']:>11}] {paper}/{nb.name}{dur} {row.get('error', '')}".rstrip())
        bar.update(1)


#: Notebook durations measured on a fresh clone (``benchmarks/quickstart_timing.py`` records them from that run's
#: manifest, :func:`record_durations`): the order of a first ``reproduce``, which has no manifest of its own.
DURATIONS = ROOT / "papermill_runs" / "durations.csv"
DURATION_COLUMNS = ["profile", "paper", "notebook", "duration_s"]


def load_durations(profile: str, path: Path = DURATIONS) -> dict[tuple[str, str], float]:
    """(paper, notebook file name) -> seconds of the profile's recorded durations; empty when none are recorded."""
    if not path.exists():
        return {}
    d = pd.read_csv(path, dtype={"profile": str, "paper": str, "notebook": str})
    d = d[d["profile"] == profile]
    return {(p, n): float(s) for p, n, s in zip(d["paper"], d["notebook"], d["duration_s"])}


def record_durations(manifest: Path, profile: str, path: Path = DURATIONS) -> int:
    """Replace the profile's rows of ``path`` by the durations of the notebooks that ran ``ok`` in ``manifest``
    (another profile's rows are kept); returns the number of rows written for the profile."""
    m = pd.read_csv(manifest, dtype=str, keep_default_na=False)
    ok = m[m["status"] == "ok"]
    rows = pd.DataFrame(
        {"profile": profile, "paper": ok["paper"], "notebook": ok["notebook"], "duration_s": ok["duration_s"]}
    )
    old = pd.read_csv(path, dtype=str) if path.exists() else pd.DataFrame(columns=DURATION_COLUMNS)
    out = pd.concat([old[old["profile"] != profile], rows], ignore_index=True)
    write_csv(out.sort_values(["profile", "paper", "notebook"]).reindex(columns=DURATION_COLUMNS), path)
    return len(rows)


def _series_cost(
    manifest: Manifest, recorded: dict[tuple[str, str], float], items: list[tuple[str, Path]]
) -> tuple[float, int]:
    """A series' expected duration, per notebook its last ``ok`` run in the manifest or else its ``recorded``
    duration, and its number of notebooks: the longest series start first, so that the workers finish close
    together."""
    seconds = 0.0
    for paper, nb in items:
        prev = manifest.previous(paper, nb.name) or {}
        try:
            last = float(prev.get("duration_s") or 0) if prev.get("status") == "ok" else 0.0
        except ValueError:
            last = 0.0
        seconds += last or recorded.get((paper, nb.name), 0.0)
    return seconds, len(items)


def run_batch(batch: Batch, manifest: Manifest) -> list[int]:
    """Execute ``batch``, ``jobs`` series side by side, longest first; returns the signals that interrupted it."""
    batch.runs.mkdir(parents=True, exist_ok=True)
    stopping = threading.Event()
    workers: queue.SimpleQueue = queue.SimpleQueue()  # one papermill worker per job, reused by its series
    with StopOnSignals(stopping, tqdm.write) as signals:
        bar = tqdm(total=len(batch.todo), desc=f"reproduce ({batch.profile})", unit="notebook", mininterval=1.0)
        try:
            recorded = load_durations(batch.profile)
            chains = sorted(batch.series(), key=functools.partial(_series_cost, manifest, recorded), reverse=True)
            for _ in range(batch.jobs):
                workers.put(NotebookWorker(batch.root, batch.threads))
            with ThreadPoolExecutor(max_workers=batch.jobs) as pool:
                pending = {pool.submit(_run_series, batch, manifest, items, stopping, bar, workers) for items in chains}
                while pending:
                    done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    for fut in done:
                        fut.result()
        finally:
            bar.close()
            while not workers.empty():
                workers.get().close()
    return signals.received


def reproduce(
    papers: list[str] | None = None,
    *,
    profile: str = "smoke",
    device: str = "auto",
    jobs: int = 1,
    force: bool = False,
    timeout: int | None = None,
    root: Path | None = None,
    report: bool = True,
    notebooks: list[str] | None = None,
    parameters: dict[str, Any] | None = None,
    stale: str = "rerun",
    cells: bool = True,
    workers: int | None = None,
    scheduler: str | None = None,
) -> pd.DataFrame:
    """Execute the notebooks of ``papers`` (default: all; ``notebooks`` picks some) for ``profile``; returns the
    manifest. ``parameters`` go to the notebooks that declare them. SIGTERM/SIGINT stop the running notebooks,
    mark them ``interrupted`` and raise ``SystemExit(128 + signal)`` (see the module docstring).

    ``cells`` (default): first compute the paper series' missing grid cells on Dask (``workers`` local processes,
    default sized to the machine, or the cluster at ``scheduler``); the notebooks then only read and draw."""
    root = Path(root or ROOT)
    parameters = dict(parameters or {})
    todo = plan(
        papers,
        profile=profile,
        jobs=jobs,
        root=root,
        notebooks=notebooks,
        parameters=parameters,
        device=device,
        stale=stale,
    )
    if force:  # --force executes every selected notebook again, even where its cells were recomputed on Dask
        Manifest(profile, root).mark_forced(todo)
    computed = (
        cells
        and not notebooks
        and not parameters
        and compute_cells(
            [p for p, _ in todo], profile=profile, device=device, force=force, workers=workers, scheduler=scheduler
        )
    )
    batch = Batch(
        todo=tuple(todo),
        profile=profile,
        device=device,
        root=root,
        parameters=parameters,
        force=force and not computed,  # cells recomputed on Dask are not trained a second time
        rerun=force,
        stale=stale,
        timeout=timeout,
        jobs=jobs,
        code_version=code_version(),
        code_sha256=code_digest(),
    )
    received = run_batch(batch, Manifest(profile, root))
    if received:
        tqdm.write(
            f"[reproduce] interrupted; the manifest marks the stopped notebooks 'interrupted' and the next "
            f"run executes them again ({manifest_path(profile, root)})"
        )
        raise SystemExit(128 + received[0])
    if report:
        from dpgnn.report import build_report

        build_report(profile)
    return load_manifest(profile, root)


def compute_cells(
    papers: list[str],
    *,
    profile: str,
    device: str = "auto",
    force: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
) -> bool:
    """Compute the missing grid cells of those of ``papers`` that have cells (:func:`dpgnn.engine.grid_papers`) on Dask;
    returns whether any paper had cells. SIGTERM/SIGINT stop it cleanly (the Dask workers are closed; the cells
    finished so far are stored) and raise ``SystemExit(128 + signal)``."""
    from dpgnn import engine

    chosen = [p for p in dict.fromkeys(papers) if p in engine.grid_papers()]
    if not chosen:
        return False
    with StopOnSignals() as signals:
        tqdm.write(f"[reproduce] grid cells of {', '.join(chosen)} ({profile}) on Dask")
        try:
            summary = engine.compute(
                chosen, profile=profile, device=device, force=force, workers=workers, scheduler=scheduler
            )
        except KeyboardInterrupt:
            sig = signals.received[0] if signals.received else signal.SIGINT
            tqdm.write(
                "[reproduce] interrupted while computing grid cells; the finished cells are stored and the next "
                "run computes only the missing ones"
            )
            raise SystemExit(128 + sig) from None
    failed = int(summary["failed"].sum()) if "failed" in summary else 0
    if failed:
        tqdm.write(f"[reproduce] {failed} grid cell(s) failed on Dask; the notebooks retry them one by one")
    return True


def _cell_count(nb: Path) -> int:
    """Cells papermill will number in the executed copy: the notebook's, plus the injected parameters cell."""
    try:
        return len(json.loads(nb.read_text())["cells"]) + 1
    except (OSError, ValueError, KeyError):
        return 0
