"""What starting a notebook costs in ``dpgnn reproduce``: a paper notebook's first two cells (its parameters and its
imports) executed K times by papermill's command line, a process per notebook (``python -m papermill ...
--log-output``), vs one papermill worker for all of them (:class:`dpgnn.notebook_process.NotebookWorker`, how the
runner executes a series), each notebook in a fresh kernel either way.

    python benchmarks/notebook_startup.py                      # progap/04's first cells, 6 notebooks per way
    python benchmarks/notebook_startup.py --notebook lpgnn/02_fully_private_baselines --count 4
    python benchmarks/notebook_startup.py --table              # the README block from the stored rows

The two ways alternate notebook by notebook, so load on a shared machine falls on both alike. Each run appends
one row per way to ``benchmarks/results/notebook_startup.csv`` (wall seconds per notebook, of which the imports
cell, read from the executed notebooks' papermill metadata; the ratio of the two; the load average before and
after) and rewrites the generated block of ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from repeats_race import RESULTS, read_rows, store, write_table

OUT = RESULTS / "notebook_startup.csv"
ROOT = Path(__file__).resolve().parent.parent
COLUMNS = [
    "date",
    "commit",
    "notebook",
    "notebooks",
    "way",
    "seconds_per_notebook",
    "imports_cell_s",
    "ratio",
    "load_before",
    "load_after",
]
WAYS = ("papermill command per notebook", "one worker")


def _first_cells(name: str, folder: Path) -> Path:
    """A copy of ``notebooks/<name>.ipynb`` keeping its parameters cell and the code cell after it."""
    nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    nb["cells"] = code[:2]
    path = folder / "first_cells.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _papermill_command(nb: Path, out: Path, params: dict) -> tuple[str, str]:
    """Execute ``nb`` with papermill's command line in a process of its own; (status, error) as the runner says."""
    cmd = [sys.executable, "-m", "papermill", str(nb), str(out), "-k", "python3", "--cwd", str(ROOT)]
    cmd += ["-y", json.dumps(params), "--log-output", "--no-progress-bar"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "DPGNN_HOME": str(ROOT), "DPGNN_BATCH": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    return ("ok", "") if done.returncode == 0 else ("failed", done.stdout[-500:] + done.stderr[-500:])


def _imports_seconds(executed: Path) -> float:
    """Seconds papermill recorded for the executed notebook's last cell (the imports)."""
    cells = json.loads(executed.read_text())["cells"]
    return float(cells[-1]["metadata"]["papermill"]["duration"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notebook", default="progap/04_convergence", help="paper/NN_name under notebooks/")
    ap.add_argument("--count", type=int, default=6, help="notebooks executed each way")
    ap.add_argument("--table", action="store_true", help="only rewrite the README block from the stored rows")
    args = ap.parse_args()
    if args.table:
        write_table(OUT, table, "notebook_startup")
        return

    from dpgnn.notebook_process import NotebookWorker, execute_notebook

    folder = Path(tempfile.mkdtemp(prefix="notebook_startup_"))
    nb = _first_cells(args.notebook, folder)
    params = {"profile": "smoke", "device": "cpu", "force": False}
    seconds: dict[str, list[float]] = {w: [] for w in WAYS}
    imports: dict[str, list[float]] = {w: [] for w in WAYS}
    load_before = os.getloadavg()[0]
    with NotebookWorker(ROOT, threads=1) as shared:
        for i in range(args.count):
            for way in WAYS:
                out = folder / f"{i}_{way.replace(' ', '_')}.ipynb"
                t0 = time.perf_counter()
                if way == "one worker":
                    status, error = execute_notebook(
                        nb, out, out.with_suffix(".log"), params, cwd=ROOT, threads=1, worker=shared
                    )
                else:
                    status, error = _papermill_command(nb, out, params)
                if status != "ok":
                    raise SystemExit(f"{args.notebook}'s first cells failed ({way}): {error}")
                seconds[way].append(time.perf_counter() - t0)
                imports[way].append(_imports_seconds(out))
    load_after = os.getloadavg()[0]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    date = dt.datetime.now().isoformat(timespec="seconds")
    base = statistics.mean(seconds[WAYS[0]])
    rows = []
    for way in WAYS:
        mean = statistics.mean(seconds[way])
        rows.append(
            {
                "date": date,
                "commit": commit,
                "notebook": args.notebook,
                "notebooks": args.count,
                "way": way,
                "seconds_per_notebook": round(mean, 3),
                "imports_cell_s": round(statistics.mean(imports[way]), 3),
                "ratio": round(base / mean, 3),
                "load_before": round(load_before, 2),
                "load_after": round(load_after, 2),
            }
        )
        print(f"{way}: {mean:.2f} s per notebook (imports cell {statistics.mean(imports[way]):.2f} s)")
    store(OUT, COLUMNS, ["date", "way"], rows)
    write_table(OUT, table, "notebook_startup")


def table(path: Path = OUT) -> str:
    """The stored runs, newest first: seconds per notebook each way, the imports cell's share and the ratio."""
    runs: dict[str, list[dict[str, str]]] = {}
    for r in read_rows(path):
        runs.setdefault(r["date"], []).append(r)
    lines = [
        "| run | notebook's first cells | notebooks per way | papermill command per notebook: s (imports cell) | "
        "one worker: s (imports cell) | ratio | load average before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    for date, rs in sorted(runs.items(), reverse=True):
        by = {r["way"]: r for r in rs}
        a, b = by[WAYS[0]], by[WAYS[1]]
        lines.append(
            f"| {date[:16]} ({a['commit']}) | `{a['notebook']}` | {a['notebooks']} | "
            f"{float(a['seconds_per_notebook']):.2f} ({float(a['imports_cell_s']):.2f}) | "
            f"{float(b['seconds_per_notebook']):.2f} ({float(b['imports_cell_s']):.2f}) | "
            f"**{float(b['ratio']):.2f}×** | {a['load_before']} → {a['load_after']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
