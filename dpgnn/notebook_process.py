"""Notebooks executed by papermill in a worker process of its own session (:class:`NotebookWorker`): its output
streamed to a log and echoed (:class:`Echo`), a timeout, and stopping it with everything it started (the kernel
included) when the batch is interrupted (:func:`stop_all`). :mod:`dpgnn.runner` decides which notebooks run.

A worker executes notebooks one after another, each in a fresh kernel, so papermill and what it imports load once
per worker rather than once per notebook (``import papermill`` alone takes seconds: nbformat's schema validation
builds jsonschema's IRI parsers). ``python -m dpgnn.notebook_process`` is the worker: it reads one request per line
on stdin and, after each notebook, writes an exit line that ends that notebook's output."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["Echo", "NotebookWorker", "StopOnSignals", "execute_notebook", "stop_all"]

# -- running workers: the papermill process of every notebook running now, so that an interrupt can stop them all
_RUNNING: dict[int, subprocess.Popen] = {}
_RUNNING_LOCK = threading.Lock()


def _descendants(pid: int) -> list:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _send(sig: int, groups: set[int], family: list) -> None:
    """Send ``sig`` to every process group of ``groups`` and every process of ``family`` (gone ones skipped)."""
    import psutil

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

    _send(signal.SIGTERM, groups, family)
    _, alive = psutil.wait_procs(family, timeout=grace)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    if alive or proc.poll() is None:
        _send(signal.SIGKILL, groups, family)
        psutil.wait_procs(alive, timeout=grace)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


_PROGRESS = re.compile(r"\d+%\|.*\|\s*\d+/\d+")  # a tqdm line: "desc:  40%|####      | 16/40 [00:10<00:15, ...]"
_CELL = re.compile(r"Executing Cell (\d+)-")


class Echo:
    """Echo the progress found in one notebook's papermill output to the terminal, prefixed with its name: each
    cell as it starts, ``dpgnn`` log lines and ``not_run:`` lines, and progress bars at most every ``every`` s."""

    def __init__(self, name: str, cells: int, write: Callable[[str], None], every: float = 10.0):
        self.name, self.cells, self.write, self.every = name, cells, write, every
        self.last: dict[str, float] = {}

    def __call__(self, line: str) -> None:
        """Take one line of papermill's output and write it, prefixed, when it is worth echoing (else nothing)."""
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


#: The line a worker writes after each notebook, followed by its exit code (0: executed, 1: failed).
EXIT = "@@dpgnn-notebook-exit"


def _environment(cwd: Path, threads: int | None) -> dict[str, str]:
    """The environment of a worker and of the kernels it starts."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "DPGNN_HOME": str(cwd), "DPGNN_BATCH": "1"}
    env.pop("MPLBACKEND", None)  # the kernel's inline backend: executed notebooks hold their figures
    if threads:  # parallel notebooks share the cores instead of oversubscribing them
        env.setdefault("OMP_NUM_THREADS", str(threads))
        env.setdefault("MKL_NUM_THREADS", str(threads))
    return env


class NotebookWorker:
    """A papermill process that executes notebooks one after another (:func:`execute_notebook`), started on first
    use and again after it was stopped; ``close`` ends it. One worker serves one thread at a time."""

    def __init__(self, cwd: Path, threads: int | None = None):
        self.cwd, self.threads = Path(cwd), threads
        self.proc: subprocess.Popen | None = None

    def process(self) -> subprocess.Popen:
        """The running worker process (started now if there is none)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dpgnn.notebook_process"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=_environment(self.cwd, self.threads),
                cwd=self.cwd,
                start_new_session=True,
                text=True,
                errors="replace",
            )
        return self.proc

    def close(self, grace: float = 10.0) -> None:
        """End the worker: it exits when its input ends; stopped after ``grace`` seconds if it does not."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=grace)
        except (OSError, subprocess.TimeoutExpired):
            _terminate(proc)
        proc.stdout.close()

    def __enter__(self) -> NotebookWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _expire(proc: subprocess.Popen, timed_out: threading.Event) -> None:
    """A notebook's time is up: say so and stop it."""
    timed_out.set()
    _terminate(proc)


def _stream(proc: subprocess.Popen, fh: IO[str], echo: Callable[[str], None] | None) -> int:
    """Copy a worker's output to ``fh`` line by line (text mode: ``\\r`` progress updates also end a line) and each
    line to ``echo`` until its exit line; returns the notebook's exit code (the worker's, when it ended first)."""
    for line in proc.stdout:
        if line.startswith(EXIT):
            return int(line.split()[1])
        fh.write(line)
        fh.flush()
        if echo is not None:
            echo(line)
    return proc.wait()


def _error_line(log: Path, returncode: int) -> str:
    """The line of a failed notebook's log that says why: the last error, else the last line."""
    text = log.read_text(errors="replace").strip().splitlines()
    errs = [ln for ln in text if "Error" in ln or "Exception" in ln]
    return (errs[-1] if errs else (text[-1] if text else f"exit code {returncode}"))[:500]


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
    worker: NotebookWorker | None = None,
) -> tuple[str, str]:
    """Run one notebook with papermill in ``worker`` (else in a worker of its own, ended afterwards); returns (status,
    error message).

    Output goes to ``log`` line by line (``\\r`` progress updates become lines) and each line to ``echo``.
    ``status`` is ``ok``, ``failed`` or ``interrupted`` (``stopping`` was set while it ran); on ``timeout`` the
    worker and the notebook's kernel are stopped and it is ``failed``.
    """
    if worker is None:
        with NotebookWorker(cwd, threads) as own:
            return execute_notebook(
                nb, out, log, parameters, cwd=cwd, timeout=timeout, echo=echo, stopping=stopping, worker=own
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    if stopping is not None and stopping.is_set():
        return "interrupted", "not started: the batch was interrupted"
    timed_out = threading.Event()
    request = {"input": str(nb), "output": str(out), "parameters": parameters, "cwd": str(cwd)}
    with open(log, "w") as fh:
        proc = worker.process()
        with _RUNNING_LOCK:
            _RUNNING[proc.pid] = proc
        if stopping is not None and stopping.is_set():  # interrupted between the check above and the start
            threading.Thread(target=_terminate, args=(proc,), daemon=True).start()
        timer = threading.Timer(timeout, _expire, args=(proc, timed_out)) if timeout else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            try:
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
            except OSError:  # the worker is gone (stopped): what it said is read below
                pass
            code = _stream(proc, fh, echo)
        finally:
            if timer is not None:
                timer.cancel()
            with _RUNNING_LOCK:
                _RUNNING.pop(proc.pid, None)
    if timed_out.is_set():
        return "failed", f"timed out after {timeout} s"
    if stopping is not None and stopping.is_set() and code != 0:
        return "interrupted", "stopped by an interrupt of the batch"
    if code == 0:
        return "ok", ""
    return "failed", _error_line(log, code)


def stop_all() -> None:
    """Stop every notebook running now (each in a thread of its own: :func:`_terminate` waits for its process)."""
    with _RUNNING_LOCK:
        procs = list(_RUNNING.values())
    for proc in procs:
        threading.Thread(target=_terminate, args=(proc,), daemon=True).start()


class StopOnSignals:
    """While active (in the main thread; elsewhere it does nothing), SIGTERM and SIGINT are caught and listed in
    ``received``. With ``stopping``: the event is set and every running notebook (papermill, its kernel and their
    children) is stopped, said once through ``write``; without: ``KeyboardInterrupt`` is raised. The previous
    handlers come back on exit."""

    def __init__(self, stopping: threading.Event | None = None, write: Callable[[str], None] = print):
        self.stopping, self.write = stopping, write
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: object) -> None:
        first = not self.received
        self.received.append(signum)
        if self.stopping is None:
            raise KeyboardInterrupt
        if first:
            self.write(f"[reproduce] {signal.Signals(signum).name}: stopping the running notebooks ...")
        self.stopping.set()
        stop_all()


def main() -> None:
    """The worker: execute each requested notebook (a JSON line on stdin) as ``papermill --log-output`` would, then
    write the exit line; a failure prints its traceback (the notebook's error) and the next request runs.

    When its last cell has run, a notebook's kernel is stopped at once (``shutdown_kernel="immediate"``: its process
    group is killed) rather than asked to exit: its outputs are collected and every file it wrote is written by then
    (nothing in ``dpgnn`` acts at exit), and an interpreter that imported torch takes about two seconds to tear
    down."""
    import logging
    import traceback

    import papermill

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for line in sys.stdin:
        request = json.loads(line)
        code = 0
        try:
            papermill.execute_notebook(
                request["input"],
                request["output"],
                parameters=request["parameters"],
                kernel_name="python3",
                progress_bar=False,
                log_output=True,
                cwd=request["cwd"],
                shutdown_kernel="immediate",
            )
        except Exception:
            traceback.print_exc()
            code = 1
        sys.stderr.flush()
        print(f"{EXIT} {code}", flush=True)


if __name__ == "__main__":
    main()
