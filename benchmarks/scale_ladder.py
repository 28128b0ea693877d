"""Scale ladder: seconds per epoch and peak memory of ProGAP, GAP, DP-GNN and DRW on CSBM graphs of 10⁴ to 2.4·10⁶
nodes (average degree 25, 100 features, 10 classes: ogbn-products' scale at the top rung), on the CPU.

    DPGNN_DATA_MIRROR=... nice -n 10 python benchmarks/scale_ladder.py [--rungs 10000 30000 ...]
        [--methods progap-edge gap-edge ...] [--epochs 5] [--mem-gib 16] [--time-s 1200] [--threads 1]
    python benchmarks/scale_ladder.py --plot      # benchmarks/results/scale_ladder.png
    python benchmarks/scale_ladder.py --readme    # the generated block of benchmarks/README.md

Each rung's graph is drawn once by :func:`dpgnn.data.synthetic.csbm` (seed 0) in its own subprocess and cached under
``--cache`` (a ``csbm-generate`` row records its time and memory); each method then trains on it in a fresh
subprocess through the public API (:func:`dpgnn.fit`, ε = 1, seed 0, ``--epochs`` epochs per stage; DRW: ``--epochs``
DP-SGD steps), so each row's peak RSS is that run's alone (``os.wait4``'s resource usage of the child: the graph as
loaded, the API's checks and the method). ``s_per_epoch`` is the time inside the training loop's epochs (each
epoch's update and evaluation, timed around :func:`dpgnn.train.fit`'s ``step``/``evaluate``) over the epochs run;
``fit_s`` is the whole :func:`dpgnn.fit` call (checks, calibration, aggregations, the epochs, the final scoring).

Caps: a watchdog polls the child's resident memory and kills it above ``--mem-gib`` (status ``out of memory``);
``RLIMIT_AS`` at the cap plus 6 GiB stops a spike between polls (an allocation failure: ``out of memory`` too);
past ``--time-s`` seconds the child is killed (status ``over time limit``). Each row is appended to
``benchmarks/results/scale_ladder.csv`` as it finishes; rows already there are skipped (a killed ladder resumes).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "scale_ladder.csv"
#: the authors' code beside ours (``--out`` this, with ``--methods progap-edge authors-progap-edge ...``)
AUTHORS_OUT = HERE / "results" / "scale_ladder_authors.csv"
PNG = HERE / "results" / "scale_ladder.png"
README = HERE / "README.md"
CACHE = Path("/tmp/dpgnn_scale_ladder")
RUNGS = [10_000, 30_000, 100_000, 300_000, 1_000_000, 2_400_000]
AVG_DEGREE = 25.0
FEATURES = 100
CLASSES = 10
#: ladder name -> (dpgnn.fit method, level, extra config); epochs are set by --epochs
METHODS = {
    "progap-edge": ("progap", "edge", {}),
    "gap-edge": ("gap", "edge", {}),
    "progap-node": ("progap", "node", {}),
    "gap-node": ("gap", "node", {}),
    "dp-gnn": ("dp-gnn", "node", {}),
    "drw": ("drw", "feature", {}),
}
#: the authors' code on the same graphs (benchmarks/authors_progap.py: prepared once, edge level only) -> our row
AUTHORS = {"authors-progap-edge": "progap-edge", "authors-gap-edge": "gap-edge"}
GENERATE = "csbm-generate"
#: the status of a run the ladder's end interrupted (``--record-stopped``); a resumed ladder runs it again
STOPPED = "stopped"
COLUMNS = [
    "method",
    "nodes",
    "edges",
    "epochs_per_stage",
    "epochs",
    "status",
    "reason",
    "s_per_epoch",
    "cpu_s_per_epoch",
    "epoch_timing",
    "fit_s",
    "wall_s",
    "cpu_s",
    "peak_rss_gib",
    "threads",
    "test_acc",
    "load",
    "date",
]
GIB = 2**30


# ---------------------------------------------------------------------------------------------------------------
# child side: one graph generation or one training run, result as one JSON line on stdout
# ---------------------------------------------------------------------------------------------------------------
def graph_path(cache: Path, nodes: int) -> Path:
    return cache / f"csbm_n{nodes}_d{AVG_DEGREE:g}_f{FEATURES}_c{CLASSES}.pt"


def child_generate(nodes: int, cache: Path) -> dict:
    from dpgnn.data.synthetic import csbm

    t0 = time.perf_counter()
    data = csbm(nodes, num_classes=CLASSES, num_features=FEATURES, avg_degree=AVG_DEGREE, seed=0)
    seconds = time.perf_counter() - t0
    cache.mkdir(parents=True, exist_ok=True)
    tmp = graph_path(cache, nodes).with_suffix(".tmp")
    import torch

    torch.save(data.to_dict(), tmp)
    tmp.replace(graph_path(cache, nodes))
    return {"edges": int(data.edge_index.size(1)), "epochs": 0, "fit_s": round(seconds, 3), "s_per_epoch": ""}


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def progress_path(cache: Path, key: tuple[str, int, str]) -> Path:
    return cache / "progress" / ("_".join(map(str, key)) + ".log")


def _time_epochs(log: list[tuple[float, float]], progress: Path) -> None:
    """Wrap every method module's ``fit`` (:func:`dpgnn.train.fit`) so that each epoch's step and evaluation are
    timed into ``log`` (one ``(wall s, CPU s)`` per epoch) and into ``progress`` (with the peak RSS so far, for a
    run stopped before its end); the numbers trained are unchanged."""
    import dpgnn.train

    original = dpgnn.train.fit

    def timed_fit(model, step, evaluate=None, **kw):
        start: list[tuple[float, float]] = []

        def done() -> None:
            wall, cpu = _clocks()
            w0, c0 = start.pop()
            log.append((wall - w0, cpu - c0))
            with open(progress, "a") as fh:
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB
                fh.write(f"{wall - w0:.4f} {cpu - c0:.4f} {peak:.3f}\n")

        def t_step(epoch):
            start.append(_clocks())
            try:
                return step(epoch)
            finally:
                if evaluate is None:  # no evaluation: the step is the epoch
                    done()

        def t_eval(epoch):
            try:
                return evaluate(epoch)
            finally:
                done()

        return original(model, t_step, None if evaluate is None else t_eval, **kw)

    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("dpgnn.") and getattr(mod, "fit", None) is original:
            mod.fit = timed_fit


def child_train(method: str, nodes: int, epochs: int, cache: Path) -> dict:
    import torch
    from torch_geometric.data import Data

    if method in AUTHORS:
        import authors_progap

        data = Data.from_dict(torch.load(graph_path(cache, nodes), weights_only=False))
        return authors_progap.child_train(method, data, epochs)

    import dpgnn
    import dpgnn.methods.dp_gnn  # noqa: F401  (import the modules whose fit is timed)
    import dpgnn.methods.drw  # noqa: F401
    import dpgnn.methods.gap  # noqa: F401
    import dpgnn.methods.progap  # noqa: F401

    name, level, extra = METHODS[method]
    data = Data.from_dict(torch.load(graph_path(cache, nodes), weights_only=False))
    log: list[tuple[float, float]] = []
    progress = progress_path(cache, row_key(method, nodes, epochs))
    progress.parent.mkdir(parents=True, exist_ok=True)
    progress.write_text("")
    _time_epochs(log, progress)
    config = dict(extra)
    if name == "drw":
        config["max_steps"] = epochs
        epsilon = 8.0  # DRW stops at max_steps; ε only sets the accounting target
    else:
        config["epochs"] = epochs
        epsilon = 1.0
    t0, c0 = _clocks()
    model = dpgnn.fit(data, name, level=level, epsilon=epsilon, seed=0, device="cpu", **config)
    fit_s, fit_cpu = (b - a for a, b in zip((t0, c0), _clocks()))
    done = len(log) or len(model.history)
    per_epoch = (sum(w for w, _ in log) if log else fit_s) / max(done, 1)
    cpu_per_epoch = (sum(c for _, c in log) if log else fit_cpu) / max(done, 1)
    return {
        "edges": int(data.edge_index.size(1)),
        "epochs": done,
        "fit_s": round(fit_s, 3),
        "s_per_epoch": round(per_epoch, 4),
        "cpu_s_per_epoch": round(cpu_per_epoch, 4),
        "epoch_timing": "training loop" if log else "whole fit call over its steps",
        "test_acc": round(100 * float(model.metrics.get("test", float("nan"))), 2),
    }


def child_main(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    try:
        if args.child == GENERATE:
            out = child_generate(args.nodes, args.cache)
        else:
            out = child_train(args.child, args.nodes, args.epochs, args.cache)
        out["status"] = "ok"
    except (MemoryError, RuntimeError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        oom = isinstance(exc, MemoryError) or "allocate" in text or "memory" in text.lower()
        traceback.print_exc(file=sys.stderr)
        out = {"status": "out of memory" if oom else "error", "reason": text[:300]}
    print("LADDER-RESULT " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------------------------------------------------
# parent side: the ladder, a fresh subprocess per row, memory watchdog and time cap
# ---------------------------------------------------------------------------------------------------------------
def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_child(cmd: list[str], mem_gib: float, time_s: float) -> tuple[dict, float, float, float]:
    """``(result, wall s, CPU s, peak RSS GiB)`` of the command (its last ``LADDER-RESULT {json}`` line on stdout),
    killed past the caps."""
    limit = int((mem_gib + 6) * GIB)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, preexec_fn=cap)
        killed, seen, status = "", 0, None
        while status is None:
            pid, code, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = code
                break
            rss = _rss_bytes(proc.pid)
            seen = max(seen, rss)
            if rss > mem_gib * GIB:
                killed = f"resident memory passed the {mem_gib:g} GiB cap (killed by the watchdog)"
            elif time.perf_counter() - t0 > time_s:
                killed = f"still running after the {time_s:g} s cap (killed)"
            if killed:
                os.kill(proc.pid, signal.SIGKILL)
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.2)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak = max(usage.ru_maxrss * 1024, seen) / GIB
    cpu = usage.ru_utime + usage.ru_stime
    lines = [ln for ln in stdout.splitlines() if ln.startswith("LADDER-RESULT ")]
    if killed:
        status = "out of memory" if "memory" in killed else "over time limit"
        return {"status": status, "reason": killed}, wall, cpu, peak
    if not lines:
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return {"status": "error", "reason": f"exit {proc.returncode}: {tail[:300]}"}, wall, cpu, peak
    return json.loads(lines[-1].removeprefix("LADDER-RESULT ")), wall, cpu, peak


def row_key(method: str, nodes: int, epochs: int | str) -> tuple[str, int, str]:
    """A row's identity: generation rows by rung, training rows by rung and epochs per stage."""
    return method, int(nodes), "" if method == GENERATE else str(epochs)


def done_rows(path: Path) -> set[tuple[str, int, str]]:
    if not path.exists():
        return set()
    with open(path, newline="") as fh:
        return {
            row_key(r["method"], r["nodes"], r["epochs_per_stage"])
            for r in csv.DictReader(fh)
            if r["status"] != STOPPED
        }


def claim(cache: Path, key: tuple[str, int, str]) -> bool:
    """Whether this process may run ``key``: False while another live ladder process holds its claim file (two
    ladders may share one CSV, e.g. small and large rungs side by side)."""
    path = cache / "claims" / ("_".join(map(str, key)) + ".pid")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not _dead(path):
        return False
    path.write_text(str(os.getpid()))
    return True


def append_row(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow({c: row.get(c, "") for c in COLUMNS})


def ladder(args: argparse.Namespace) -> None:
    common = ["--threads", str(args.threads), "--cache", str(args.cache), "--epochs", str(args.epochs)]
    for nodes in args.rungs:
        for method in [GENERATE, *args.methods]:
            graph = graph_path(args.cache, nodes)
            key = row_key(method, nodes, args.epochs)
            done = done_rows(args.out)  # read again: another ladder may share the CSV
            if key in done and (method != GENERATE or graph.exists()):
                continue
            if method != GENERATE and not graph.exists():
                continue  # its generation failed or was skipped: nothing to train on
            if not claim(args.cache, key):
                continue
            print(f"{time.strftime('%H:%M:%S')} {method} n={nodes} ...", flush=True)
            child = [sys.executable, str(Path(__file__).resolve()), "--child", method, "--nodes", str(nodes), *common]
            res, wall, cpu, peak = run_child(child, args.mem_gib, args.time_s)
            if method == GENERATE and key in done_rows(args.out):
                continue  # the cached graph was missing and is back: its row is already stored
            row = {
                "method": method,
                "nodes": nodes,
                "epochs_per_stage": "" if method == GENERATE else args.epochs,
                "threads": args.threads,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "peak_rss_gib": round(peak, 3),
                "load": round(os.getloadavg()[0], 2),
                "date": time.strftime("%Y-%m-%d"),
                **res,
            }
            append_row(args.out, row)
            print(f"    {row['status']}: {json.dumps(row)}", flush=True)


def record_stopped(args: argparse.Namespace) -> None:
    """Append a ``stopped`` row for each training run that left epochs in its progress file, has no row (of any
    status) and whose ladder process is gone (a ladder stopped mid-run): the epochs done, their mean seconds and
    the peak RSS so far. A resumed ladder runs it again; its finished row then replaces it in the table."""
    rows = read_rows(args.out) if args.out.exists() else []
    recorded = {row_key(r["method"], r["nodes"], r["epochs_per_stage"]) for r in rows}  # stopped ones included
    for progress in sorted((args.cache / "progress").glob("*.log")):
        method, nodes, epochs = progress.stem.rsplit("_", 2)
        key = row_key(method, int(nodes), epochs)
        claim_file = args.cache / "claims" / (progress.stem + ".pid")
        if key in recorded or method not in METHODS or not _dead(claim_file):
            continue
        lines = [tuple(map(float, ln.split())) for ln in progress.read_text().splitlines() if ln.strip()]
        if not lines:
            continue
        graph = graph_path(args.cache, int(nodes))
        edges = [r["edges"] for r in rows if r["method"] == GENERATE and r["nodes"] == nodes]
        row = {
            "method": method,
            "nodes": int(nodes),
            "edges": edges[-1] if edges else "",
            "epochs_per_stage": epochs,
            "epochs": len(lines),
            "status": STOPPED,
            "reason": f"the ladder was stopped after {len(lines)} epochs (graph {graph.name})",
            "s_per_epoch": round(sum(w for w, _, _ in lines) / len(lines), 4),
            "cpu_s_per_epoch": round(sum(c for _, c, _ in lines) / len(lines), 4),
            "epoch_timing": "training loop",
            "peak_rss_gib": max(p for _, _, p in lines),
            "threads": args.threads,
            "load": round(os.getloadavg()[0], 2),
            "date": time.strftime("%Y-%m-%d", time.gmtime(progress.stat().st_mtime)),
        }
        append_row(args.out, row)
        print(f"recorded {json.dumps(row)}")


def _dead(claim_file: Path) -> bool:
    try:
        os.kill(int(claim_file.read_text()), 0)
    except (OSError, ValueError):
        return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# plot and README block
# ---------------------------------------------------------------------------------------------------------------
def read_rows(path: Path = OUT) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _ok(rows: list[dict], method: str, epochs: str = "") -> list[tuple[int, dict]]:
    """The method's ``ok`` rows by rung (training rows at ``epochs`` per stage, else at the fewest: the ladder's)."""
    hit = [r for r in rows if r["method"] == method]
    if method != GENERATE:
        want = epochs or min((r["epochs_per_stage"] for r in hit), key=int, default="")
        hit = [r for r in hit if r["epochs_per_stage"] == want]
    return sorted((int(r["nodes"]), r) for r in hit if r["status"] == "ok")


def plot(path: Path = OUT, png: Path = PNG) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(path)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
    for method in [*METHODS, GENERATE]:
        ok = _ok(rows, method)
        if not ok:
            continue
        xs = [n for n, _ in ok]
        timed = [(n, float(r["cpu_s_per_epoch"])) for n, r in ok if r["cpu_s_per_epoch"]]  # CPU seconds only
        if method != GENERATE and timed:
            ax_t.plot(*zip(*timed), marker="o", label=method)
        style = {"linestyle": ":", "color": "grey"} if method == GENERATE else {}
        ax_m.plot(xs, [float(r["peak_rss_gib"]) for _, r in ok], marker="o", label=method, **style)
    for ax, label in ((ax_t, "CPU seconds per epoch (1 thread)"), (ax_m, "peak RSS of the run (GiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("nodes (CSBM, average degree 25, 100 features)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    ax_m.axhline(24, color="red", linewidth=0.8, linestyle="--")
    ax_m.legend(fontsize=8)
    ax_t.set_title("time per training epoch")
    ax_m.set_title("peak memory (dashed: 24 GiB)")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


BEGIN, END = "<!-- begin scale_ladder -->", "<!-- end scale_ladder -->"


def _stages(rows: list[dict], method: str) -> float:
    """Epochs run per requested epoch (ProGAP: K + 1 stages, GAP: encoder and classifier), from the rows."""
    r = next(r for _, r in _ok(rows, method))
    return int(r["epochs"]) / int(r["epochs_per_stage"])


def _project(row: dict, stages: float, epochs: int = 100) -> float:
    """CPU seconds of the row's run at ``epochs`` per stage: its CPU seconds plus the missing epochs' cost."""
    per_epoch = float(row["cpu_s_per_epoch"] or row["s_per_epoch"])
    return float(row["cpu_s"]) + (epochs * stages - int(row["epochs"])) * per_epoch


def readme_block(path: Path = OUT) -> str:
    rows = read_rows(path)
    rungs = sorted({int(r["nodes"]) for r in rows})
    edges = {int(r["nodes"]): int(r["edges"]) for r in rows if r["method"] == GENERATE and r["edges"]}
    head = "| method | " + " | ".join(
        f"{n:,} nodes, {edges[n] / 1e6:.2f} M edges" if n in edges else f"{n:,} nodes" for n in rungs
    )
    lines = [head + " |", "|---" * (len(rungs) + 1) + "|"]
    projections: list[str] = []
    measured: list[str] = []
    for method in [GENERATE, *METHODS]:
        ok = dict(_ok(rows, method))
        cells = []
        for n in rungs:
            failed = [r for r in rows if r["method"] == method and int(r["nodes"]) == n and r["status"] != "ok"]
            if n in ok:
                r = ok[n]
                if method == GENERATE:
                    cells.append(f"{float(r['cpu_s']):.1f} s, {float(r['peak_rss_gib']):.2f} GiB")
                elif r["cpu_s_per_epoch"]:
                    whole = "" if r["epoch_timing"] == "training loop" else " (whole call)"
                    cells.append(f"{float(r['cpu_s_per_epoch']):.3g} s{whole}, {float(r['peak_rss_gib']):.2f} GiB")
                else:
                    wall = float(r["s_per_epoch"])
                    cells.append(f"{wall:.3g} s wall (whole call), {float(r['peak_rss_gib']):.2f} GiB")
            elif failed and failed[-1]["status"] == STOPPED:
                r = failed[-1]
                cells.append(
                    f"**{STOPPED}** after {r['epochs']} epochs: {float(r['cpu_s_per_epoch']):.3g} s, "
                    f"≥ {float(r['peak_rss_gib']):.2f} GiB"
                )
            elif failed:
                r = failed[-1]
                cells.append(f"**{r['status']}** after {float(r['wall_s']):.0f} s at {r['peak_rss_gib']} GiB")
            else:
                cells.append("not run")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
        if method in ("progap-edge", "gap-edge") and ok:
            n, r = max(ok.items())
            projections.append(
                f"{method} at {n:,} nodes: {float(r['cpu_s']):.0f} CPU s and {float(r['peak_rss_gib']):.2f} GiB "
                f"for {r['epochs_per_stage']} epochs per stage, so about {_project(r, _stages(rows, method)):.0f} "
                "CPU s for 100 epochs per stage"
            )
            for long in [r for r in rows if r["method"] == method and r["epochs_per_stage"] == "100"]:
                short = ok.get(int(long["nodes"]))
                if long["status"] != "ok" or short is None:
                    continue
                measured.append(
                    f"{method} at {int(long['nodes']):,} nodes: {float(long['cpu_s']):.0f} CPU s and "
                    f"{float(long['peak_rss_gib']):.2f} GiB (projected from its {short['epochs_per_stage']}-epoch "
                    f"run: {_project(short, _stages(rows, method)):.0f} CPU s, {float(short['peak_rss_gib']):.2f} GiB)"
                )
    ratios = authors_ratios(read_rows(AUTHORS_OUT)) if AUTHORS_OUT.exists() else []
    dates = sorted({r["date"] for r in rows})
    loads = [float(r["load"]) for r in rows if r["load"]]
    threads = sorted({r["threads"] for r in rows})
    note = (
        f"Generated by `python benchmarks/scale_ladder.py --readme` from `results/scale_ladder.csv` "
        f"({len(rows)} rows, {', '.join(dates)}; {'/'.join(threads)} torch thread(s) per run; load average "
        f"{min(loads, default=0):.1f}–{max(loads, default=0):.1f} on this project's 2-core CPU, so the CSV's wall "
        "seconds are inflated by the other work and the table gives CPU seconds). Each cell: CPU seconds per "
        "training epoch (each epoch's update and evaluation; ProGAP counts each stage's epochs, GAP the encoder's "
        "and the classifier's, DRW one DP-SGD step; `whole call`: the `dpgnn.fit` call over its steps, for a "
        "method whose loop is not `dpgnn.train.fit`, so set-up and accounting included) and the run's peak RSS "
        "(the graph as loaded, `dpgnn.fit`'s "
        "checks, the method); `csbm-generate`: the CPU seconds and peak RSS of the process that draws and saves "
        "the graph."
    )
    body = [BEGIN, note, "", *lines]
    if projections:
        body += [
            "",
            "Projected (the run's CPU seconds plus the missing epochs at its CPU seconds per epoch; the memory stays "
            "that of the short run) from the largest rung each finished: " + "; ".join(projections) + ".",
        ]
    if measured:
        body += ["", "Measured at 100 epochs per stage: " + "; ".join(measured) + "."]
    if ratios:
        body += [
            "",
            "The authors' code side by side (`results/scale_ladder_authors.csv`: sisaman/ProGAP run by "
            "`benchmarks/authors_progap.py` on the same graph, masks and hyper-parameters, edge level, each rung's "
            "four runs one after the other in one ladder; theirs vs ours): CPU seconds per training epoch, the whole "
            "run's wall seconds (their `run`; our `dpgnn.fit` with its checks) and peak RSS: "
            + "; ".join(ratios)
            + ".",
        ]
    return "\n".join([*body, END])


def authors_ratios(rows: list[dict]) -> list[str]:
    """Per authors' row with a row of ours at the same rung and epochs: ``theirs / ours`` per epoch and per run."""
    ours = {(r["method"], r["nodes"], r["epochs_per_stage"]): r for r in rows if r["status"] == "ok"}
    out = []
    for r in rows:
        mine = ours.get((AUTHORS.get(r["method"]), r["nodes"], r["epochs_per_stage"]))
        if r["status"] != "ok" or mine is None:
            continue
        e1, e0 = float(r["cpu_s_per_epoch"]), float(mine["cpu_s_per_epoch"])
        f1, f0 = float(r["fit_s"]), float(mine["fit_s"])
        m1, m0 = float(r["peak_rss_gib"]), float(mine["peak_rss_gib"])
        out.append(
            f"{AUTHORS[r['method']]} at {int(r['nodes']):,} nodes: {e1:.3g} vs {e0:.3g} s per epoch "
            f"(**{e1 / e0:.2f}×**), {f1:.3g} vs {f0:.3g} s per run ({f1 / f0:.2f}×), {m1:.2f} vs {m0:.2f} GiB"
        )
    return out


def write_readme(path: Path = OUT, readme: Path = README) -> None:
    text = readme.read_text()
    block = readme_block(path)
    if BEGIN in text and END in text:
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + block + text[stop:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(text)
    print(f"wrote the scale_ladder block of {readme}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rungs", type=int, nargs="+", default=RUNGS, help="node counts (default: the ladder)")
    ap.add_argument(
        "--methods",
        nargs="+",
        default=list(METHODS),
        choices=[*METHODS, *AUTHORS],
        help="ladder rows (default: this project's methods; the authors' rows need authors_progap.py --prepare)",
    )
    ap.add_argument("--epochs", type=int, default=5, help="epochs per stage (DRW: DP-SGD steps); default 5")
    ap.add_argument("--mem-gib", type=float, default=16.0, help="resident-memory cap per run (GiB; default 16)")
    ap.add_argument("--time-s", type=float, default=1200.0, help="wall-clock cap per run (s; default 1200)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per run (default 1)")
    ap.add_argument("--cache", type=Path, default=CACHE, help=f"cached graphs (default {CACHE})")
    ap.add_argument("--out", type=Path, default=OUT, help=f"CSV (default {OUT})")
    ap.add_argument("--plot", action="store_true", help="draw the PNG from the CSV and exit")
    ap.add_argument("--readme", action="store_true", help="rewrite benchmarks/README.md's block from the CSV and exit")
    ap.add_argument(
        "--record-stopped", action="store_true", help="append rows for runs a stopped ladder interrupted, and exit"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--nodes", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_main(args)
        return
    if args.record_stopped:
        record_stopped(args)
        return
    if args.plot or args.readme:
        if not args.out.exists():
            ap.error(f"{args.out} does not exist: run the ladder first")
        if args.plot:
            plot(args.out)
        if args.readme:
            write_readme(args.out)
        return
    if args.epochs < 1 or args.mem_gib <= 0 or args.time_s <= 0 or args.threads < 1:
        ap.error("--epochs and --threads must be >= 1, --mem-gib and --time-s > 0")
    if any(n < 2 * CLASSES for n in args.rungs):
        ap.error(f"every rung needs at least {2 * CLASSES} nodes")
    ladder(args)


if __name__ == "__main__":
    main()
