"""One notebook executed by papermill in a subprocess of its own session: the command and environment, its output
streamed to a log and echoed (:class:`Echo`), a timeout, and stopping it with everything it started (the kernel
included) when the batch is interrupted (:func:`stop_all`). :mod:`dpgnn.runner` decides which notebooks run."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["Echo", "execute_notebook", "stop_all"]

# -- running processes: every notebook's papermill process, so that an interrupt can stop them all ----------------
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


def _papermill(nb: Path, out: Path, parameters: dict, cwd: Path, threads: int | None) -> tuple[list[str], dict]:
    """The papermill command that executes ``nb`` into ``out`` with ``parameters``, and its environment."""
    import yaml

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
    return cmd, env


def _expire(proc: subprocess.Popen, timed_out: threading.Event) -> None:
    """A notebook's time is up: say so and stop it."""
    timed_out.set()
    _terminate(proc)


def _stream(proc: subprocess.Popen, fh: IO[str], echo: Callable[[str], None] | None) -> None:
    """Copy ``proc``'s output to ``fh`` line by line (text mode: ``\\r`` progress updates also end a line) and each
    line to ``echo``; wait for it to end."""
    for line in proc.stdout:
        fh.write(line)
        fh.flush()
        if echo is not None:
            echo(line)
    proc.wait()


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
) -> tuple[str, str]:
    """Run one notebook with papermill in a subprocess of its own session; returns (status, error message).

    Output goes to ``log`` line by line (``\\r`` progress updates become lines) and each line to ``echo``.
    ``status`` is ``ok``, ``failed`` or ``interrupted`` (``stopping`` was set while it ran); on ``timeout`` the
    notebook and its kernel are stopped and it is ``failed``.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd, env = _papermill(nb, out, parameters, cwd, threads)
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
        timer = threading.Timer(timeout, _expire, args=(proc, timed_out)) if timeout else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            _stream(proc, fh, echo)
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
    return "failed", _error_line(log, proc.returncode)


def stop_all() -> None:
    """Stop every notebook running now (each in a thread of its own: :func:`_terminate` waits for its process)."""
    with _RUNNING_LOCK:
        procs = list(_RUNNING.values())
    for proc in procs:
        threading.Thread(target=_terminate, args=(proc,), daemon=True).start()
