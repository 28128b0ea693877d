"""How long does one ``dpgnn epsilon`` call take? Pure accounting must not pay for torch, PyG, the methods or the
series (target: ≤ 1 s per call).

Each command runs ``--runs`` times in a fresh subprocess; the CSV keeps the median wall-clock and CPU (user + system)
seconds and the ratio to the baseline measured in the same run, a bare interpreter start (``python -c pass``).
``python -c "import torch"`` is timed too, as the cost the lazy imports avoid, and ``python -c "import scipy.stats"``,
the floor of every call that runs ``dp_accounting`` (the ``pld`` accountant, the sound value of ``dpsgd`` and
``laplace``) or ``autodp`` (the PrivGNN and ProGAP authors' accountants). Wall times on a shared machine are
contended (the CPU seconds much less): ``within_target`` compares the CPU seconds (a start-up is single-threaded,
so on an idle machine its wall time is its CPU time) with the target.

Writes ``benchmarks/results/epsilon_cli_import.csv`` (command, runs, median_wall_s, median_cpu_s, wall_ratio,
cpu_ratio, target_s, within_target). Run from the repository root: ``python benchmarks/epsilon_cli_import.py``
(about two minutes).
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "epsilon_cli_import.csv"
COLUMNS = ["command", "runs", "median_wall_s", "median_cpu_s", "wall_ratio", "cpu_ratio", "target_s", "within_target"]
TARGET_S = 1.0
BASELINE = ["-c", "pass"]
EPSILON = ["-m", "dpgnn", "epsilon"]
#: one call of every ``dpgnn epsilon`` subcommand (and its listing), at the papers' or the README's settings
COMMANDS = [
    (EPSILON + ["laplace", "-b", "1", "-q", "0.1", "-n", "10", "--delta", "1e-5"], TARGET_S),
    (EPSILON + ["dpsgd", "-z", "1.1", "-q", "0.004266", "-t", "14062", "--delta", "1e-5"], TARGET_S),
    (
        EPSILON
        + ["drw", "-z", "4", "-b", "70", "-n", "140", "-l", "1", "-t", "44", "--delta", "1e-5", "--accountant", "rdp"],
        TARGET_S,
    ),
    (
        EPSILON + ["fdp", "-z", "8", "-b", "10", "-n", "140", "-d", "3", "-l", "1", "-t", "5", "--delta", "1e-5"],
        TARGET_S,
    ),
    (EPSILON + ["lpgnn", "-x", "1", "-y", "1", "-d", "100"], TARGET_S),
    (EPSILON + ["privgnn", "--lam", "0.4", "--queries", "10", "--gamma", "0.3", "--delta", "1e-3"], TARGET_S),
    (EPSILON + ["pate", "--lam", "0.4", "--queries", "10", "--delta", "1e-3"], TARGET_S),
    (EPSILON + ["progap", "--level", "edge", "-k", "2", "--delta", "1e-7", "--sigma", "4"], TARGET_S),
    (
        EPSILON
        + [
            "progap",
            "--level",
            "node",
            "-k",
            "2",
            "--delta",
            "1e-5",
            "-z",
            "1",
            "--max-degree",
            "10",
            "--batch-size",
            "10",
            "--train-nodes",
            "100",
            "--epochs-per-stage",
            "2",
        ],
        TARGET_S,
    ),
    (EPSILON + ["--help"], TARGET_S),
    (["-c", "import dpgnn.cli"], TARGET_S),
    (["-c", "import scipy.stats"], None),  # what dp_accounting (pld, the sound values) and autodp import first
    (["-c", "import torch"], None),
]


def _time(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``python <args>`` in a subprocess (CPU: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True, env={**os.environ, "PYTHONWARNINGS": ""})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _median(args: list[str], runs: int) -> tuple[float, float]:
    _time(args)  # warm the file cache
    samples = [_time(args) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


README = Path(__file__).resolve().parent / "README.md"
ROW_START = "| `dpgnn epsilon` start-up, every subcommand |"


def readme_row(csv_path: Path = OUT) -> str:
    """The ``benchmarks/README.md`` row, from the stored CSV: the calls within the target and above it."""
    with open(csv_path, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["target_s"]]
    within = [r for r in rows if r["within_target"] == "True"]
    above = [r for r in rows if r["within_target"] != "True"]

    def label(r: dict[str, str]) -> str:
        if r["command"].startswith("python -c "):
            return "`" + r["command"].removeprefix("python -c ") + "`"
        words = r["command"].replace("python -m dpgnn epsilon ", "").split()
        level = [f"--level {words[i + 1]}" for i, w in enumerate(words[:-1]) if w == "--level"]
        return "`" + " ".join(words[:1] + level) + "`"

    def fmt(rs: list[dict[str, str]]) -> str:
        return ", ".join(f"{label(r)} {float(r['median_wall_s']):.2f}" for r in rs)

    runs = rows[0]["runs"] if rows else "?"
    return (
        f"{ROW_START} `python benchmarks/epsilon_cli_import.py --runs {runs}` then `--readme` (median of {runs} "
        f"subprocesses per command; `benchmarks/results/epsilon_cli_import.csv`) | this project's 2-core CPU | "
        f"wall seconds per call, target ≤ 1 s CPU: within it {fmt(within) or 'none'}; above it "
        f"{fmt(above) or 'none'} (each runs `dp_accounting` or `autodp`, whose import pulls in `scipy.stats`) |"
    )


def write_readme_row(csv_path: Path = OUT, readme: Path = README) -> None:
    lines = readme.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.startswith(ROW_START)]
    if len(hits) != 1:
        raise SystemExit(f"{readme}: expected one row starting with {ROW_START!r}, found {len(hits)}")
    lines[hits[0]] = readme_row(csv_path) + "\n"
    readme.write_text("".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command (median; default 5)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"CSV to write (default {OUT})")
    ap.add_argument("--readme", action="store_true", help="rewrite benchmarks/README.md's row from the CSV and exit")
    args = ap.parse_args()
    if args.readme:
        write_readme_row(args.out)
        return
    if args.runs < 1:
        ap.error(f"--runs must be an integer >= 1, got {args.runs}")
    base_wall, base_cpu = _median(BASELINE, args.runs)
    rows = [
        {
            "command": "python " + " ".join(BASELINE),
            "runs": args.runs,
            "median_wall_s": round(base_wall, 3),
            "median_cpu_s": round(base_cpu, 3),
            "wall_ratio": 1.0,
            "cpu_ratio": 1.0,
            "target_s": "",
            "within_target": "",
        }
    ]
    for cmd, target in COMMANDS:
        wall, cpu = _median(cmd, args.runs)
        rows.append(
            {
                "command": "python " + " ".join(cmd),
                "runs": args.runs,
                "median_wall_s": round(wall, 3),
                "median_cpu_s": round(cpu, 3),
                "wall_ratio": round(wall / base_wall, 2),
                "cpu_ratio": round(cpu / base_cpu, 2),
                "target_s": "" if target is None else target,
                "within_target": "" if target is None else cpu <= target,
            }
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    for r in rows:
        print(
            f"{r['median_wall_s']:7.3f} s wall {r['median_cpu_s']:7.3f} s CPU  (x{r['wall_ratio']:<5} the bare "
            f"interpreter)  {r['command']}"
        )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
