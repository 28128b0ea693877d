"""Golden run for refactors: what a tree computes and prints, stored so that two trees can be compared exactly.

``python scripts/golden.py --out FILE.json`` records, for the tree it is run in (or ``--root PATH``; every
``dpgnn`` import happens in a child process with that tree first on ``PYTHONPATH``):

- ``cli``: a fixed set of ``dpgnn`` command lines whose output is deterministic (every ``dpgnn epsilon``
  calculator in text and ``--json``, bad input, ``methods``, ``data``, ``run --profile paper --dry-run``), run
  through ``dpgnn.cli.app`` in one process (typer's test runner: the imports are paid once): exit status, stdout
  (and stderr when the command fails; the tree's path reads ``<root>``), verbatim and as a SHA-256;
- ``processes``: a few of them as real ``python -m dpgnn`` processes (the entry point, lazy imports, exit statuses);
- ``cells``: per grid of every series (``dpgnn.series.<paper>.CELLS``), one small cell computed on the CPU with
  one thread through ``dpgnn.sweep.run_grid`` into a temporary results root (``DPGNN_OUTPUT_ROOT``): the cell, its
  config hash and the stored CSV rows read back as text, without the columns that differ by design (wall times,
  timestamps, devices, versions), with their SHA-256. The cell is the test profile's with the fewest epochs and
  then the smallest config hash among those whose dataset is here (the smoke profile's when the test profile has
  none, e.g. ProGAP's stand-ins);
- ``hashes``: per series, profile (``test``, ``smoke``, ``paper``) and grid, the number of cells and the SHA-256
  of their sorted config hashes (planning only, nothing computed).

``python scripts/golden.py --compare A.json B.json`` prints every difference (``meta``, where and when it ran, is
not compared) and exits 1 when there is one, 0 when the two trees agree. A run takes about 3 minutes on this
project's 2-core CPU (``--parts`` runs fewer of ``cli``, ``processes``, ``cells``, ``hashes``).

The set is fixed here on purpose (:data:`SERIES`, :data:`COMMANDS`): a tree that lost a series or a command shows
as a difference. The functions the cells part calls on the tree (the grids, a profile's settings, the store) are
looked up in :func:`_grids` and :func:`_settings`, the one place to adapt when those names move.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: the series whose grids are computed and planned (fixed: a tree that lost one shows as a difference)
SERIES = ("lpgcn", "lpgnn", "privgnn", "drw", "progap")
PLANNED_PROFILES = ("test", "smoke", "paper")
PARTS = ("cli", "processes", "cells", "hashes")
EPS = ["epsilon"]
#: ``dpgnn`` argument lists whose output is deterministic
COMMANDS: list[list[str]] = [
    ["--help"],
    EPS + ["--help"],
    EPS + ["laplace", "-b", "1", "-q", "0.1", "-n", "10", "--delta", "1e-5"],
    EPS + ["laplace", "-b", "1", "-q", "0.1", "-n", "10", "--delta", "1e-5", "--json"],
    EPS + ["dpsgd", "-z", "1.1", "-q", "0.004266", "-t", "14062", "--delta", "1e-5"],
    EPS + ["dpsgd", "-z", "1.1", "-q", "0.004266", "-t", "14062", "--delta", "1e-5", "--json"],
    EPS + ["dpsgd", "-z", "0.6", "-q", "0.001", "-t", "10", "--delta", "1e-5", "--accountant", "pld", "--json"],
    EPS + ["dpsgd", "--target-epsilon", "2", "-q", "0.01", "-t", "1000", "--delta", "1e-5"],
    EPS + ["drw", "-z", "4", "-b", "70", "-n", "140", "-l", "1", "-t", "44", "--delta", "1e-5", "--accountant", "rdp"],
    EPS + ["drw", "-z", "4", "-b", "70", "-n", "140", "-l", "1", "-t", "44", "--delta", "1e-5", "--json"],
    EPS + ["fdp", "-z", "8", "-b", "10", "-n", "140", "-d", "3", "-l", "1", "-t", "5", "--delta", "1e-5"],
    EPS + ["fdp", "-z", "8", "-b", "10", "-n", "140", "-d", "3", "-l", "1", "-t", "5", "--delta", "1e-5", "--json"],
    EPS + ["lpgnn", "-x", "1", "-y", "1", "-d", "100"],
    EPS + ["lpgnn", "-x", "1", "-y", "1", "-d", "100", "--json"],
    EPS + ["privgnn", "--lam", "0.4", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3"],
    EPS + ["privgnn", "--lam", "0.4", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3", "--json"],
    EPS + ["pate", "--lam", "0.4", "--queries", "10", "--delta", "1e-3", "--json"],
    EPS + ["progap", "--level", "edge", "-k", "2", "--delta", "1e-7", "--sigma", "4"],
    EPS + ["progap", "--level", "edge", "-k", "2", "--delta", "1e-7", "--sigma", "4", "--json"],
    EPS
    + ["progap", "--level", "node", "-k", "2", "--delta", "1e-5", "-z", "1", "--max-degree", "10"]
    + ["--batch-size", "10", "--train-nodes", "100", "--epochs-per-stage", "2", "--json"],
    EPS + ["dpsgd", "-z", "-1", "-q", "0.01", "-t", "10", "--delta", "1e-5"],  # bad input: one line, exit 2
    EPS + ["nosuch"],
    ["methods"],
    ["methods", "progap"],
    ["methods", "drw"],
    ["data", "list"],
    ["data", "info", "cora"],
    ["run", "--profile", "paper", "--dry-run"],
    ["run", "nosuchpaper", "--profile", "test", "--dry-run"],
]
#: command lines also run as real processes (``python -m dpgnn``): the entry point, lazy imports, exit statuses
PROCESSES: list[list[str]] = [
    ["--help"],
    EPS + ["lpgnn", "-x", "1", "-y", "1", "-d", "100", "--json"],
    EPS + ["dpsgd", "-z", "-1", "-q", "0.01", "-t", "10", "--delta", "1e-5"],
]
#: stored columns that differ between two computations of the same cell by design
VOLATILE = ("timestamp", "versions", "cell_seconds", "cell_device", "device")
VOLATILE_SUFFIXES = ("_s", "seconds", "_per_s", "_per_second")
#: cell keys that measure its length, fewest first
EPOCH_KEYS = ("epochs", "max_epochs", "max_steps", "teacher_epochs", "student_epochs")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _env(root: Path, **extra: str) -> dict[str, str]:
    """The children's environment: the tree first on the path, one thread, a fixed terminal width, no colour."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "PYTHONSTARTUP")}
    env.update(
        PYTHONPATH=str(root),
        COLUMNS="120",
        LINES="50",
        TERM="dumb",
        NO_COLOR="1",
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONWARNINGS="ignore",
        **extra,
    )
    return env


# ---------------------------------------------------------------------------------------------------------------
# cli: the command lines in one process (typer's test runner; imports are paid once), a few as real processes
# ---------------------------------------------------------------------------------------------------------------
def _entry(rc: int, stdout: str, stderr: str, root: Path) -> dict[str, Any]:
    """One command's record; the tree's own path (``dpgnn data info`` prints its cache folder) reads ``<root>``."""
    stdout, stderr = (t.replace(str(root), "<root>") for t in (stdout, stderr))
    entry = {"rc": rc, "stdout": stdout, "stdout_sha256": _sha(stdout)}
    if rc != 0:
        entry["stderr"] = stderr
    return entry


def run_cli(root: Path) -> dict[str, Any]:
    """Every command line of :data:`COMMANDS` through ``dpgnn.cli.app`` in this process."""
    from typer.testing import CliRunner

    from dpgnn.cli import app

    runner = CliRunner()
    out = {}
    for args in COMMANDS:
        res = runner.invoke(app, args, prog_name="dpgnn", color=False)
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            err = f"{type(res.exception).__name__}: {res.exception}"
        else:
            err = res.stderr
        out["dpgnn " + " ".join(args)] = _entry(res.exit_code, res.stdout, err, root)
        print(f"  cli rc={res.exit_code} dpgnn {' '.join(args)}", file=sys.stderr, flush=True)
    return out


def run_processes(root: Path) -> dict[str, Any]:
    """:data:`PROCESSES`, each ``python -m dpgnn ...`` in its own process (the real entry point)."""
    out = {}
    for args in PROCESSES:
        res = subprocess.run(
            [sys.executable, "-m", "dpgnn", *args], cwd=root, env=_env(root), capture_output=True, text=True
        )
        out["python -m dpgnn " + " ".join(args)] = _entry(res.returncode, res.stdout, res.stderr, root)
        print(f"  process rc={res.returncode} python -m dpgnn {' '.join(args)}", file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------------------------------------------------------
# cells and hashes: run inside a child whose dpgnn is the tree's (``--worker``)
# ---------------------------------------------------------------------------------------------------------------
def _grids(paper: str) -> dict[str, Any]:
    """The cell grids of ``paper`` by name (``CellSpec``: ``store``, ``cells(cfg)``, ``run(cfg, cell, device)``)."""
    import importlib

    return dict(importlib.import_module(f"dpgnn.series.{paper}").CELLS)


def _settings(paper: str, profile: str) -> Any:
    """The settings object a grid's ``cells`` and ``run`` take."""
    from dpgnn.profiles import settings

    return settings(paper, profile)


def _available(spec: Any, cfg: Any, paper: str, dataset: str) -> bool:
    if getattr(spec, "available", None) is not None:
        return bool(spec.available(cfg, dataset))
    from dpgnn.data.registry import paper_dataset_available

    return paper_dataset_available(dataset, paper) is not False


def _length(cell: dict[str, Any]) -> tuple:
    return tuple(cell.get(k) if isinstance(cell.get(k), (int, float)) else 0 for k in EPOCH_KEYS)


def choose_cell(paper: str, spec: Any) -> tuple[str, dict[str, Any], Any] | None:
    """``(profile, cell, settings)``: the chosen cell of a grid (see the module docstring), None when no profile
    has one whose dataset is here."""
    from dpgnn.utils import config_hash

    for profile in ("test", "smoke"):
        cfg = _settings(paper, profile)
        here: dict[str, bool] = {}
        cells = []
        for c in spec.cells(cfg):
            name = str(c.get("dataset"))
            if name not in here:
                here[name] = _available(spec, cfg, paper, name)
            if here[name]:
                cells.append(c)
        if cells:
            return profile, min(cells, key=lambda c: (_length(c), config_hash(c))), cfg
    return None


def _stored_rows(results: Path) -> list[dict[str, str]]:
    """Every stored row under ``results`` (CSV text, volatile columns dropped), in a canonical order."""
    import csv

    rows = []
    for path in sorted(results.rglob("*.csv")):
        with path.open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                keep = {k: v for k, v in r.items() if k not in VOLATILE and not k.endswith(VOLATILE_SUFFIXES) and k}
                rows.append({"file": path.relative_to(results).as_posix(), **keep})
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def run_cells() -> dict[str, Any]:
    """Each grid's chosen cell computed into its own temporary results root."""
    import torch

    from dpgnn.results import ResultStore
    from dpgnn.sweep import run_grid
    from dpgnn.utils import config_hash

    torch.set_num_threads(1)
    out = {}
    for paper in SERIES:
        for name, spec in _grids(paper).items():
            key = f"{paper}/{name}"
            chosen = choose_cell(paper, spec)
            if chosen is None:
                out[key] = {"skip": "no cell whose dataset is here"}
                continue
            profile, cell, cfg = chosen
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
                os.environ["DPGNN_OUTPUT_ROOT"] = tmp
                store = ResultStore(paper, profile)
                run_grid(store, spec.store, [cell], lambda c, spec=spec, cfg=cfg: spec.run(cfg, c, "cpu"))
                rows = _stored_rows(Path(tmp))
            text = json.dumps(rows, sort_keys=True)
            out[key] = {
                "profile": profile,
                "cell": json.loads(json.dumps(cell, default=str)),
                "config_hash": config_hash(cell),
                "rows_sha256": _sha(text),
                "rows": rows,
            }
            print(f"  cell {key} ({profile}): {len(rows)} rows, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return out


def run_hashes() -> dict[str, Any]:
    """Per series, profile and grid: how many cells and the SHA-256 of their sorted config hashes."""
    from dpgnn.utils import config_hash

    out = {}
    for paper in SERIES:
        grids = _grids(paper)
        for profile in PLANNED_PROFILES:
            cfg = _settings(paper, profile)
            for name, spec in grids.items():
                hashes = sorted(config_hash(c) for c in spec.cells(cfg))
                out[f"{paper}/{profile}/{name}"] = {
                    "store": spec.store,
                    "cells": len(hashes),
                    "sha256": _sha("\n".join(hashes)),
                }
    return out


def worker(root: Path, part: str, dest: Path) -> None:
    """The child: ``part`` (``cells`` or ``hashes``) of the tree at ``root``, written as JSON to ``dest``."""
    sys.path.insert(0, str(root))
    import dpgnn

    if Path(dpgnn.__file__).resolve().parent != (root / "dpgnn").resolve():
        raise SystemExit(f"golden: imported {dpgnn.__file__}, not the tree at {root}")
    result = run_cli(root) if part == "cli" else run_cells() if part == "cells" else run_hashes()
    dest.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")


def _child(root: Path, part: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="golden-part-") as tmp:
        dest = Path(tmp) / f"{part}.json"
        res = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", part, "--root", str(root), "--out", str(dest)],
            cwd=root,
            env=_env(root, DPGNN_OUTPUT_ROOT=tmp),
            stdout=sys.stderr,
        )
        if res.returncode != 0:
            raise SystemExit(f"golden: the {part} part failed in {root} (exit status {res.returncode})")
        return json.loads(dest.read_text(encoding="utf-8"))


def _meta(root: Path, seconds: dict[str, float]) -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout.strip()

    return {
        "root": str(root),
        "commit": git("rev-parse", "HEAD"),
        "changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": sys.version.split()[0],
        "seconds": seconds,
    }


# ---------------------------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------------------------
def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every place where ``a`` and ``b`` differ, as ``path: a -> b`` (texts line by line)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            where = f"{path}/{k}" if path else k
            if k not in a:
                out.append(f"{where}: only in B")
            elif k not in b:
                out.append(f"{where}: only in A")
            else:
                out += differences(a[k], b[k], where)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = [f"{path}: {len(a)} items -> {len(b)}"] if len(a) != len(b) else []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    if a == b:
        return []
    if isinstance(a, str) and isinstance(b, str) and ("\n" in a or "\n" in b):
        import difflib

        diff = difflib.unified_diff(a.splitlines(), b.splitlines(), "A", "B", lineterm="", n=0)
        return [f"{path}:\n    " + "\n    ".join(list(diff)[2:])]
    return [f"{path}: {a!r} -> {b!r}"]


def compare(a_path: Path, b_path: Path) -> int:
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (a_path, b_path))
    found = differences({k: v for k, v in a.items() if k != "meta"}, {k: v for k, v in b.items() if k != "meta"})
    for line in found:
        print(line)
    counts = {part: len(b.get(part, {})) for part in PARTS}
    if found:
        print(f"golden: {len(found)} difference(s) between {a_path} and {b_path}")
        return 1
    print(
        f"golden: identical ({counts['cli']} command lines, {counts['processes']} processes, "
        f"{counts['cells']} grid cells, {counts['hashes']} planned grids)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="the JSON file to write")
    ap.add_argument("--root", type=Path, default=ROOT, help="the tree to run (default: this repository)")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two outputs; exit 1 if unequal")
    ap.add_argument("--worker", choices=("cli", "cells", "hashes"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compare:
        missing = [str(p) for p in args.compare if not p.is_file()]
        if missing:
            ap.error(f"no such file: {', '.join(missing)}")
        return compare(*args.compare)
    if not args.out:
        ap.error("give --out FILE.json (or --compare A.json B.json)")
    root = args.root.resolve()
    if not (root / "dpgnn").is_dir():
        ap.error(f"{root} has no dpgnn/ package")
    if args.worker:
        worker(root, args.worker, args.out)
        return 0
    result: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    for part in PARTS:
        if part in args.parts:
            t0 = time.perf_counter()
            print(f"golden: {part} in {root}", file=sys.stderr, flush=True)
            result[part] = run_processes(root) if part == "processes" else _child(root, part)
            seconds[part] = round(time.perf_counter() - t0, 1)
    result["meta"] = _meta(root, seconds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"golden: wrote {args.out} ({', '.join(f'{k} {v} s' for k, v in seconds.items())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
