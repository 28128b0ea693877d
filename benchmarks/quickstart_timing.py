"""Time the README's two quick-start commands on a fresh clone, as a new user runs them.

Clones this repository's ``HEAD`` into a new folder with ``../shared`` beside it (the offline dataset mirror, as
CI has it), then runs ``bash scripts/smoke.sh`` (set-up included: the clone has no ``.venv``) and
``bash scripts/test.sh`` there, and appends one row per command to ``benchmarks/results/quickstart.csv``: date,
command, seconds, exit status, commit, machine. The README's quick start quotes the newest rows
(``python -m dpgnn.readme``); nothing is typed by hand. The smoke run's notebook durations replace the smoke rows
of ``papermill_runs/durations.csv`` (:func:`dpgnn.runner.record_durations`), from which a first ``dpgnn reproduce``
orders its series, longest first.

    python benchmarks/quickstart_timing.py [--workdir /tmp/quickstart] [--only smoke|tests] [--shared DIR] [--note TEXT]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "quickstart.csv"
COMMANDS = {"smoke": "bash scripts/smoke.sh", "tests": "bash scripts/test.sh"}
FIELDS = ["date", "command", "seconds", "status", "commit", "machine", "note"]


def machine() -> str:
    """Cores, memory and CPU of this machine, and whether a GPU is visible."""
    mem = "?"
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    gpu = "GPU" if shutil.which("nvidia-smi") else "no GPU"
    return f"{os.cpu_count()} cores, {mem}, {platform.machine()}, {gpu}"


def fresh_clone(workdir: Path, shared: Path) -> Path:
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    clone = workdir / "main"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    if shared.exists():
        (workdir / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    return clone


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/dpgnn-quickstart"))
    ap.add_argument("--only", choices=sorted(COMMANDS), action="append")
    ap.add_argument(
        "--shared", type=Path, default=ROOT.parent / "shared", help="the offline mirror to link beside the clone"
    )
    ap.add_argument("--note", default="", help="what else ran on the machine meanwhile, added to each row's note")
    args = ap.parse_args()
    if not args.shared.is_dir():
        print(f"[quickstart] no offline mirror at {args.shared}: datasets come from their public URLs", flush=True)
    clone = fresh_clone(args.workdir, args.shared)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    # a fresh machine's environment: no project settings, no active venv, no other checkout on the import path
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DPGNN_", "VIRTUAL_ENV", "PYTHONPATH"))}
    status = 0
    for name in args.only or list(COMMANDS):
        cmd = COMMANDS[name]
        log = args.workdir / f"{name}.log"
        print(f"[quickstart] {cmd} (log {log}) ...", flush=True)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        with open(log, "w") as f:
            rc = subprocess.run(cmd, shell=True, cwd=clone, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
        secs = time.perf_counter() - t0
        print(f"[quickstart] {cmd}: exit {rc}, {secs:.0f} s", flush=True)
        first = name == (args.only or list(COMMANDS))[0]
        note = (
            ("set-up included" if first else "environment already set up by the first command")
            + (f"; load average {load:.1f} at the start" if load > 1.5 else "")
            + (f"; {args.note}" if args.note else "")
        )
        row = {
            "date": dt.datetime.now().isoformat(timespec="seconds"),
            "command": cmd,
            "seconds": f"{secs:.1f}",
            "status": rc,
            "commit": commit,
            "machine": machine(),
            "note": note,
        }
        new = not OUT.exists()
        OUT.parent.mkdir(parents=True, exist_ok=True)
        with open(OUT, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        status = status or rc
        if name == "smoke" and rc == 0:
            sys.path.insert(0, str(ROOT))
            from dpgnn.runner import record_durations

            n = record_durations(clone / "papermill_runs" / "smoke" / "manifest.csv", "smoke")
            print(f"[quickstart] {n} smoke notebook durations recorded in papermill_runs/durations.csv", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
