"""Batch runner: execute the notebook series with papermill, one process per notebook.

``dpgnn reproduce [PAPER ...] --profile smoke|test|paper --device auto --jobs N [--notebook lpgcn/03] [-p key=value]``

- Notebooks are ``notebooks/<paper>/NN_<what>.ipynb``; each is executed by ``python -m papermill`` in its own
  process and session (papermill is not thread-safe with working directories); ``--jobs N`` runs N series side by
  side, each series' notebooks in order (later notebooks reuse the grids earlier ones stored). The parameters
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
- Resuming: a notebook whose last run succeeded with the same notebook file, the same parameters and the same code
  (a digest of the ``dpgnn`` package's source; the manifest also shows :func:`dpgnn.utils.code_version`) is skipped
  (status ``cached``). A notebook whose last successful run came from *other* code is said so in the terminal and,
  by default (``stale="rerun"``), executed again; ``stale="keep"`` keeps its outputs (status ``stale``).
  Inside notebooks, sweeps skip cells whose results are stored (:mod:`dpgnn.sweep`). ``force`` recomputes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from dpgnn.profiles import PROFILE_NAMES, check_profile
from dpgnn.utils import ROOT, code_version

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
]
PROFILES = PROFILE_NAMES  #: the profile names (one tuple: dpgnn.profiles.PROFILE_NAMES)
DEVICES = ("auto", "cpu", "cuda")
STALE = ("rerun", "keep")
#: Parameters every notebook takes; set by ``reproduce``'s own options, never by ``-p``.
RESERVED = ("profile", "device", "force")


def notebooks_dir(root: Path | None = None) -> Path:
    return Path(root or ROOT) / "notebooks"


def _series_folders(root: Path | None = None) -> dict[str, Path]:
    """Series name -> its notebook folder under ``root``, for every folder that holds notebooks: the registered
    series' folders (:attr:`dpgnn.series.Series.notebooks`), then any other folder of ``notebooks/`` (a series
    of one's own, run by the folder's name)."""
    from dpgnn import series

    base = Path(root or ROOT)
    out = {s.name: base / s.notebooks for s in series.all_series()}
    d = notebooks_dir(root)
    claimed = set(out.values())
    for folder in sorted(d.iterdir()) if d.exists() else []:
        if folder.is_dir() and folder not in claimed:
            out.setdefault(folder.name, folder)
    return {name: f for name, f in sorted(out.items()) if any(f.glob("*.ipynb"))}


def available_papers(root: Path | None = None) -> list[str]:
    """The notebook series under ``root`` (:func:`_series_folders`), by name."""
    return list(_series_folders(root))


def discover(papers: list[str] | None = None, root: Path | None = None) -> list[tuple[str, Path]]:
    """(paper, notebook path) pairs in execution order."""
    folders = _series_folders(root)
    known = list(folders)
    names = papers or known
    unknown = [p for p in names if p not in known]
    if unknown:
        raise ValueError(f"unknown paper series {unknown}; available: {known}")
    return [(p, nb) for p in names for nb in sorted(folders[p].glob("*.ipynb"))]


def select(todo: list[tuple[str, Path]], notebooks: list[str]) -> list[tuple[str, Path]]:
    """The notebooks of ``todo`` named by ``notebooks``: ``paper/NN_name``, ``paper/NN`` (a unique prefix), with
    or without ``.ipynb`` or a leading ``notebooks/``; a name matching none or several is a ``ValueError``."""
    chosen: list[tuple[str, Path]] = []
    for name in notebooks:
        key = name.strip().removeprefix("notebooks/").removesuffix(".ipynb")
        if "/" not in key:
            raise ValueError(f"notebook {name!r}: give it as paper/name, e.g. lpgcn/03_node_link_prediction")
        paper, stem = key.split("/", 1)
        hits = [(p, nb) for p, nb in todo if p == paper and nb.stem == stem]
        hits = hits or [(p, nb) for p, nb in todo if p == paper and nb.stem.startswith(stem)]
        if len(hits) != 1:
            names = [f"{p}/{nb.stem}" for p, nb in (hits or todo)]
            raise ValueError(f"notebook {name!r} matches {'none' if not hits else 'several'} of {names}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def declared_parameters(nb: Path) -> list[str]:
    """Names assigned in ``nb``'s ``parameters`` cell (what papermill's ``-p`` can set)."""
    import ast

    import nbformat

    for cell in nbformat.read(nb, as_version=4).cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            names = []
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.append(node.target.id)
                elif isinstance(node, ast.Assign):
                    names += [t.id for t in node.targets if isinstance(t, ast.Name)]
            return names
    return []


def parse_parameters(items: list[str] | None, option: str = "-p") -> dict[str, Any]:
    """``["key=value", ...]`` → dict; values are read as YAML (``runs=2`` an int, ``datasets=[cora]`` a list,
    ``x=null`` None); a key may name a nested setting as ``part.field`` (:func:`dpgnn.profiles.apply`). A
    malformed item or a reserved name (set by its own option) is a ``ValueError``; messages
    name the command-line ``option`` the items came from (``-p`` of ``reproduce``, ``--set`` of ``run``)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not all(part.isidentifier() for part in key.split(".")):
            raise ValueError(f"{option} {item!r}: expected key=value, e.g. {option} runs=2 or {option} datasets=[cora]")
        if key in RESERVED:
            raise ValueError(f"{option} {key!r}: set by --{key}, not by {option}")
        try:
            out[key] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError as exc:
            raise ValueError(f"{option} {item!r}: the value is not valid YAML ({exc.__class__.__name__})") from None
    return out


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def code_digest() -> str:
    """sha256 over the ``dpgnn`` package's Python sources and reference data: any change to the code that makes
    results (committed or not) changes it."""
    pkg = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(pkg.rglob("*")):
        if p.suffix in (".py", ".csv") and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(pkg)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def manifest_path(profile: str, root: Path | None = None) -> Path:
    return Path(root or ROOT) / "papermill_runs" / profile / "manifest.csv"


def load_manifest(profile: str, root: Path | None = None) -> pd.DataFrame:
    p = manifest_path(profile, root)
    if p.exists() and p.stat().st_size:
        return pd.read_csv(p, dtype=str, keep_default_na=False).reindex(columns=MANIFEST_COLUMNS, fill_value="")
    return pd.DataFrame(columns=MANIFEST_COLUMNS)


def _write_manifest(manifest: pd.DataFrame, profile: str, root: Path | None = None) -> None:
    """Replace the manifest atomically (a reader never sees a half-written file)."""
    tmp = manifest_path(profile, root).with_suffix(".tmp")
    manifest.reindex(columns=MANIFEST_COLUMNS).to_csv(tmp, index=False)
    os.replace(tmp, manifest_path(profile, root))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


# -- running processes: every notebook's papermill process, so that an interrupt can stop them all ----------------
_RUNNING: dict[int, subprocess.Popen] = {}
_RUNNING_LOCK = threading.Lock()


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _terminate(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop ``proc`` and everything it started: its process group (it leads its own session) and every descendant,
    e.g. the kernel, which jupyter_client starts in a session of its own. SIGTERM first, SIGKILL after ``grace``."""
    import psutil

    family = _descendants(proc.pid)
    groups = {proc.pid}
    for p in family:
        try:
            groups.add(os.getpgid(p.pid))
        except OSError:
            pass

    def send(sig: int) -> None:
        for g in groups:
            try:
                os.killpg(g, sig)
            except OSError:
                pass
        for p in family:
            try:
                p.send_signal(sig)
            except psutil.Error:
                pass

    send(signal.SIGTERM)
    _, alive = psutil.wait_procs(family, timeout=grace)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    if alive or proc.poll() is None:
        send(signal.SIGKILL)
        psutil.wait_procs(alive, timeout=grace)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


_PROGRESS = re.compile(r"\d+%\|.*\|\s*\d+/\d+")  # a tqdm line: "desc:  40%|####      | 16/40 [00:10<00:15, ...]"
_CELL = re.compile(r"Executing Cell (\d+)-")


class _Echo:
    """Echo the progress found in one notebook's papermill output to the terminal, prefixed with its name: each
    cell as it starts, ``dpgnn`` log lines and ``not_run:`` lines, and progress bars at most every ``every`` s."""

    def __init__(self, name: str, cells: int, write: Callable[[str], None], every: float = 10.0):
        self.name, self.cells, self.write, self.every = name, cells, write, every
        self.last: dict[str, float] = {}

    def __call__(self, line: str) -> None:
        line = line.rstrip()
        if not line:
            return
        m = _CELL.search(line)
        if m:
            self.write(f"[{self.name}] cell {m.group(1)}/{self.cells}")
        elif _PROGRESS.search(line):
            desc = line.split(":", 1)[0]
            now = time.monotonic()
            done = re.search(r"\|\s*(\d+)/(\d+)", line)
            final = done is not None and done.group(1) == done.group(2)
            if final or now - self.last.get(desc, -1e9) >= self.every:
                self.last[desc] = now
                self.write(f"[{self.name}] {line.strip()}")
        elif line.startswith(("INFO dpgnn", "WARNING dpgnn", "not_run:")):
            self.write(f"[{self.name}] {line}")


def execute_notebook(
    nb: Path,
    out: Path,
    log: Path,
    parameters: dict,
    *,
    cwd: Path,
    timeout: int | None = None,
    threads: int | None = None,
    echo: Callable[[str], None] | None = None,
    stopping: threading.Event | None = None,
) -> tuple[str, str]:
    """Run one notebook with papermill in a subprocess of its own session; returns (status, error message).

    Output goes to ``log`` line by line (``\\r`` progress updates become lines) and each line to ``echo``.
    ``status`` is ``ok``, ``failed`` or ``interrupted`` (``stopping`` was set while it ran); on ``timeout`` the
    notebook and its kernel are stopped and it is ``failed``.
    """
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "papermill",
        str(nb),
        str(out),
        "-k",
        "python3",
        "--cwd",
        str(cwd),
        "-y",
        yaml.safe_dump(parameters),
        "--log-output",
        "--no-progress-bar",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "DPGNN_HOME": str(cwd), "DPGNN_BATCH": "1"}
    env.pop("MPLBACKEND", None)  # the kernel's inline backend: executed notebooks hold their figures
    if threads:  # parallel notebooks share the cores instead of oversubscribing them
        env.setdefault("OMP_NUM_THREADS", str(threads))
        env.setdefault("MKL_NUM_THREADS", str(threads))
    if stopping is not None and stopping.is_set():
        return "interrupted", "not started: the batch was interrupted"
    timed_out = threading.Event()
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            start_new_session=True,
            text=True,
            errors="replace",
        )
        with _RUNNING_LOCK:
            _RUNNING[proc.pid] = proc
        if stopping is not None and stopping.is_set():  # interrupted between the check above and the start
            threading.Thread(target=_terminate, args=(proc,), daemon=True).start()
        timer = None
        if timeout:

            def expire():
                timed_out.set()
                _terminate(proc)

            timer = threading.Timer(timeout, expire)
            timer.daemon = True
            timer.start()
        try:
            for line in proc.stdout:  # text mode: "\r" (progress bar updates) also ends a line
                fh.write(line)
                fh.flush()
                if echo is not None:
                    echo(line)
            proc.wait()
        finally:
            if timer is not None:
                timer.cancel()
            with _RUNNING_LOCK:
                _RUNNING.pop(proc.pid, None)
    if timed_out.is_set():
        return "failed", f"timed out after {timeout} s"
    if stopping is not None and stopping.is_set() and proc.returncode != 0:
        return "interrupted", "stopped by an interrupt of the batch"
    if proc.returncode == 0:
        return "ok", ""
    text = log.read_text(errors="replace").strip().splitlines()
    errs = [ln for ln in text if "Error" in ln or "Exception" in ln]
    return "failed", (errs[-1] if errs else (text[-1] if text else f"exit code {proc.returncode}"))[:500]


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


def _mark_forced(todo: list[tuple[str, Path]], profile: str, root: Path) -> None:
    """Mark the manifest rows of ``todo`` ``forced`` before a ``--force`` run starts, so that a notebook the run does
    not reach (interrupted, killed) is executed by the next plain ``dpgnn reproduce`` instead of reported cached."""
    manifest = load_manifest(profile, root)
    if not len(manifest):
        return
    names = {(paper, nb.name) for paper, nb in todo}
    hit = [(p, n) in names for p, n in zip(manifest["paper"], manifest["notebook"])]
    manifest.loc[hit, "status"] = "forced"
    manifest.loc[hit, "error"] = "--force started: executed again by the next run"
    _write_manifest(manifest, profile, root)


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
    rerun = force  # --force executes every selected notebook again, even where its cells were recomputed on Dask
    if rerun:
        _mark_forced(todo, profile, root)
    if cells and not notebooks and not parameters:
        if compute_cells(
            [p for p, _ in todo], profile=profile, device=device, force=force, workers=workers, scheduler=scheduler
        ):
            force = False  # the cells were recomputed on Dask; the notebooks must not train them a second time
    runs = root / "papermill_runs" / profile
    runs.mkdir(parents=True, exist_ok=True)
    manifest = load_manifest(profile, root)
    lock = threading.Lock()
    stopping = threading.Event()
    version, digest_code = code_version(), code_digest()

    def record(row: dict) -> None:
        nonlocal manifest
        with lock:
            keep = ~((manifest["paper"] == row["paper"]) & (manifest["notebook"] == row["notebook"]))
            manifest = pd.concat([manifest[keep], pd.DataFrame([row])], ignore_index=True)
            _write_manifest(manifest, profile, root)

    def previous(paper: str, name: str) -> dict | None:
        hit = manifest[(manifest["paper"] == paper) & (manifest["notebook"] == name)]
        return hit.iloc[-1].to_dict() if len(hit) else None

    def one(paper: str, nb: Path) -> dict:
        out = runs / paper / nb.name
        log = out.with_suffix(".log")
        digest = _sha256(nb)
        declared = declared_parameters(nb)
        params = {k: v for k, v in parameters.items() if k in declared}
        params_json = json.dumps(params, sort_keys=True)
        prev = previous(paper, nb.name)
        name = f"{paper}/{nb.stem}"
        base = dict(
            paper=paper,
            notebook=nb.name,
            profile=profile,
            output=str(out.relative_to(root)),
            log=str(log.relative_to(root)),
            notebook_sha256=digest,
            device=device,
            parameters=params_json,
            code_version=version,
            code_sha256=digest_code,
        )
        same_run = (
            prev is not None
            and prev.get("status") in ("ok", "cached", "stale")
            and prev.get("notebook_sha256") == digest
            and (prev.get("parameters") or "{}") == params_json
            and out.exists()
        )
        if not rerun and same_run:
            if prev.get("code_sha256") == digest_code:
                row = {
                    **prev,
                    **base,
                    "status": "cached",
                    "duration_s": "0",
                    "error": "",
                    "code_version": prev.get("code_version", ""),
                }
                record(row)
                return row
            other = prev.get("code_version") or "unrecorded code"
            if stale == "keep":
                tqdm.write(
                    f"[{name}] stored outputs come from other code ({other}; now {version}): kept "
                    f"(--stale rerun executes it again)"
                )
                row = {
                    **prev,
                    **base,
                    "status": "stale",
                    "duration_s": "0",
                    "error": f"outputs from other code: {other}",
                    "code_version": prev.get("code_version", ""),
                    "code_sha256": prev.get("code_sha256", ""),
                }
                record(row)
                return row
            tqdm.write(
                f"[{name}] last run came from other code ({other}; now {version}): executing it again "
                f"(--stale keep keeps it)"
            )
        if stopping.is_set():
            return {}
        started = _now()
        record({**base, "status": "running", "duration_s": "", "started": started, "ended": "", "error": ""})
        t0 = time.perf_counter()
        echo = _Echo(name, _cell_count(nb), tqdm.write)
        status, error = execute_notebook(
            nb,
            out,
            log,
            {"profile": profile, "device": device, "force": force, **params},
            cwd=root,
            timeout=timeout,
            threads=max(1, (os.cpu_count() or 1) // jobs),
            echo=echo,
            stopping=stopping,
        )
        row = {
            **base,
            "status": status,
            "duration_s": f"{time.perf_counter() - t0:.1f}",
            "started": started,
            "ended": _now(),
            "error": error,
        }
        record(row)
        return row

    received: list[int] = []

    def interrupt(signum, frame):  # main thread: stop every running notebook, then let the workers record it
        if not received:
            tqdm.write(f"[reproduce] {signal.Signals(signum).name}: stopping the running notebooks ...")
        received.append(signum)
        stopping.set()
        with _RUNNING_LOCK:
            procs = list(_RUNNING.values())
        for proc in procs:
            threading.Thread(target=_terminate, args=(proc,), daemon=True).start()

    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            handlers[sig] = signal.signal(sig, interrupt)
    bar = tqdm(total=len(todo), desc=f"reproduce ({profile})", unit="notebook", mininterval=1.0)

    def safe_one(p: str, nb: Path) -> None:
        try:
            row = one(p, nb)
        except Exception as exc:  # never lose the other notebooks
            row = {
                "paper": p,
                "notebook": nb.name,
                "profile": profile,
                "status": "failed",
                "ended": _now(),
                "error": f"{type(exc).__name__}: {exc}",
                "code_version": version,
                "code_sha256": digest_code,
            }
            record(row)
        if not row:  # not started: the batch was interrupted first
            return
        dur = f" {row.get('duration_s')}s" if row.get("duration_s") not in ("", "0", None) else ""
        with lock:
            tqdm.write(f"[{row['status']:>11}] {p}/{nb.name}{dur} {row.get('error', '')}".rstrip())
            bar.update(1)

    def chain(items: list[tuple[str, Path]]) -> None:
        for p, nb in items:
            safe_one(p, nb)

    # a series' notebooks run in order (later ones reuse the grids earlier ones stored, and two processes never
    # compute the same missing cells); --jobs runs different series side by side
    chains: dict[str, list[tuple[str, Path]]] = {}
    for p, nb in todo:
        chains.setdefault(p, []).append((p, nb))

    def cost(items: list[tuple[str, Path]]) -> tuple[float, int]:
        """Longest series first (their last recorded durations, else their number of notebooks), so that the
        workers finish close together."""
        seconds = 0.0
        for p, nb in items:
            prev = previous(p, nb.name) or {}
            try:
                seconds += float(prev.get("duration_s") or 0) if prev.get("status") == "ok" else 0.0
            except ValueError:
                pass
        return seconds, len(items)

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            pending = {pool.submit(chain, items) for items in sorted(chains.values(), key=cost, reverse=True)}
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in done:
                    fut.result()
    finally:
        bar.close()
        for sig, h in handlers.items():
            signal.signal(sig, h)
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
    received: list[int] = []

    def interrupt(signum, frame):
        received.append(signum)
        raise KeyboardInterrupt

    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            handlers[sig] = signal.signal(sig, interrupt)
    tqdm.write(f"[reproduce] grid cells of {', '.join(chosen)} ({profile}) on Dask")
    try:
        summary = engine.compute(
            chosen, profile=profile, device=device, force=force, workers=workers, scheduler=scheduler
        )
    except KeyboardInterrupt:
        sig = received[0] if received else signal.SIGINT
        tqdm.write(
            "[reproduce] interrupted while computing grid cells; the finished cells are stored and the next "
            "run computes only the missing ones"
        )
        raise SystemExit(128 + sig) from None
    finally:
        for sig, h in handlers.items():
            signal.signal(sig, h)
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
