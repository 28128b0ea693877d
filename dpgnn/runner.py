"""Batch runner: execute the notebook series with papermill, one process per notebook.

``dpgnn reproduce [PAPER ...] --profile smoke|paper --device auto --jobs N [--force]``

- Notebooks are ``notebooks/<paper>/NN_<what>.ipynb``; each is executed by ``python -m papermill`` in its own
  process (papermill is not thread-safe with working directories) with the parameters ``profile``, ``device``
  and ``force`` injected, the kernel ``python3`` and the repository root as working directory.
- Executed notebooks and logs go to ``papermill_runs/<profile>/<paper>/``.
- ``papermill_runs/<profile>/manifest.csv`` gets one row per notebook (status, duration, output, log, error) as
  soon as it finishes, so one failure never loses the others.
- Resuming: a notebook whose last run succeeded with the same notebook contents is skipped (status ``cached``);
  inside notebooks, sweeps skip cells whose results are stored (:mod:`dpgnn.sweep`). ``--force`` recomputes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from dpgnn.utils import ROOT

MANIFEST_COLUMNS = ["paper", "notebook", "profile", "status", "duration_s", "started", "output", "log", "error",
                    "notebook_sha256", "device"]
PROFILES = ("smoke", "paper")


def notebooks_dir(root: Path | None = None) -> Path:
    return Path(root or ROOT) / "notebooks"


def available_papers(root: Path | None = None) -> list[str]:
    d = notebooks_dir(root)
    return sorted(p.name for p in d.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))) if d.exists() else []


def discover(papers: list[str] | None = None, root: Path | None = None) -> list[tuple[str, Path]]:
    """(paper, notebook path) pairs in execution order."""
    known = available_papers(root)
    names = papers or known
    unknown = [p for p in names if p not in known]
    if unknown:
        raise ValueError(f"unknown paper series {unknown}; available: {known}")
    return [(p, nb) for p in names for nb in sorted((notebooks_dir(root) / p).glob("*.ipynb"))]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest_path(profile: str, root: Path | None = None) -> Path:
    return Path(root or ROOT) / "papermill_runs" / profile / "manifest.csv"


def load_manifest(profile: str, root: Path | None = None) -> pd.DataFrame:
    p = manifest_path(profile, root)
    if p.exists() and p.stat().st_size:
        return pd.read_csv(p, dtype=str).reindex(columns=MANIFEST_COLUMNS)
    return pd.DataFrame(columns=MANIFEST_COLUMNS)


def execute_notebook(nb: Path, out: Path, log: Path, parameters: dict, *, cwd: Path,
                     timeout: int | None = None, threads: int | None = None) -> tuple[str, str]:
    """Run one notebook with papermill in a subprocess; returns (status, error message)."""
    import yaml

    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "papermill", str(nb), str(out), "-k", "python3", "--cwd", str(cwd),
           "-y", yaml.safe_dump(parameters), "--log-output", "--no-progress-bar"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "MPLBACKEND": "Agg", "DPGNN_HOME": str(cwd)}
    if threads:  # parallel notebooks share the cores instead of oversubscribing them
        env.setdefault("OMP_NUM_THREADS", str(threads))
        env.setdefault("MKL_NUM_THREADS", str(threads))
    with open(log, "w") as fh:
        try:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "failed", f"timed out after {timeout} s"
    if proc.returncode == 0:
        return "ok", ""
    text = log.read_text(errors="replace").strip().splitlines()
    errs = [ln for ln in text if "Error" in ln or "Exception" in ln]
    return "failed", (errs[-1] if errs else (text[-1] if text else f"exit code {proc.returncode}"))[:500]


def plan(papers: list[str] | None = None, *, profile: str = "smoke", jobs: int = 1,
         root: Path | None = None) -> list[tuple[str, Path]]:
    """The notebooks :func:`reproduce` would execute; a ``ValueError`` for an unknown paper or profile, or bad
    ``jobs`` (the CLI checks its input with this before any work starts)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    root = Path(root or ROOT)
    todo = discover(papers, root)
    if not todo:
        raise ValueError(f"no notebooks found under {notebooks_dir(root)}")
    return todo


def reproduce(papers: list[str] | None = None, *, profile: str = "smoke", device: str = "auto", jobs: int = 1,
              force: bool = False, timeout: int | None = None, root: Path | None = None,
              report: bool = True) -> pd.DataFrame:
    """Execute the notebooks of ``papers`` (default: all) for ``profile``; returns the manifest."""
    root = Path(root or ROOT)
    todo = plan(papers, profile=profile, jobs=jobs, root=root)
    runs = root / "papermill_runs" / profile
    runs.mkdir(parents=True, exist_ok=True)
    manifest = load_manifest(profile, root)
    lock = threading.Lock()

    def record(row: dict) -> None:
        nonlocal manifest
        with lock:
            keep = ~((manifest["paper"] == row["paper"]) & (manifest["notebook"] == row["notebook"]))
            manifest = pd.concat([manifest[keep], pd.DataFrame([row])], ignore_index=True)
            tmp = manifest_path(profile, root).with_suffix(".tmp")
            manifest.reindex(columns=MANIFEST_COLUMNS).to_csv(tmp, index=False)
            os.replace(tmp, manifest_path(profile, root))

    def previous(paper: str, name: str) -> dict | None:
        hit = manifest[(manifest["paper"] == paper) & (manifest["notebook"] == name)]
        return hit.iloc[-1].to_dict() if len(hit) else None

    def one(paper: str, nb: Path) -> dict:
        out = runs / paper / nb.name
        log = out.with_suffix(".log")
        digest = _sha256(nb)
        prev = previous(paper, nb.name)
        base = dict(paper=paper, notebook=nb.name, profile=profile, output=str(out.relative_to(root)),
                    log=str(log.relative_to(root)), notebook_sha256=digest, device=device)
        if (not force and prev is not None and prev.get("status") in ("ok", "cached")
                and prev.get("notebook_sha256") == digest and out.exists()):
            row = {**base, "status": "cached", "duration_s": "0", "started": prev.get("started", ""), "error": ""}
            record(row)
            return row
        started = time.strftime("%Y-%m-%dT%H:%M:%S")
        record({**base, "status": "running", "duration_s": "", "started": started, "error": ""})
        t0 = time.perf_counter()
        status, error = execute_notebook(nb, out, log, {"profile": profile, "device": device, "force": force},
                                         cwd=root, timeout=timeout, threads=max(1, (os.cpu_count() or 1) // jobs))
        row = {**base, "status": status, "duration_s": f"{time.perf_counter() - t0:.1f}", "started": started,
               "error": error}
        record(row)
        return row

    bar = tqdm(total=len(todo), desc=f"reproduce ({profile})", unit="notebook", mininterval=1.0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, p, nb): (p, nb) for p, nb in todo}
        for fut in as_completed(futures):
            p, nb = futures[fut]
            try:
                row = fut.result()
            except Exception as exc:  # never lose the other notebooks
                row = {"paper": p, "notebook": nb.name, "profile": profile, "status": "failed",
                       "error": f"{type(exc).__name__}: {exc}"}
                record(row)
            tqdm.write(f"[{row['status']:>6}] {p}/{nb.name} {row.get('duration_s', '')}s {row.get('error', '')}")
            bar.update(1)
    bar.close()
    if report:
        from dpgnn.report import build_report

        build_report(profile)
    return load_manifest(profile, root)
