"""The worker side: one cell, or the cells a spec computes together, computed in whatever process runs them.

:func:`execute` and :func:`execute_job` need nothing but their arguments (a Dask worker, or this process); both go
through one set-up (threads, the worker's device, the profile's settings, the timer, a dataset not here).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from dpgnn.sweep import CellSpec


def _worker_device(device: str, workers_per_gpu: int) -> str:
    """The device of this worker: with CUDA, the GPU of its group (LocalCluster worker ``i`` of ``G`` per GPU uses
    GPU ``i // G``; workers started elsewhere see the GPU their ``CUDA_VISIBLE_DEVICES`` gives them)."""
    import torch

    if device == "cpu" or (device == "auto" and not torch.cuda.is_available()):
        return "cpu"
    if not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but CUDA is not available on this worker")
    if device not in ("auto", "cuda"):
        return device  # an explicit cuda:N
    idx = 0
    try:
        from distributed import get_worker

        name = get_worker().name
        if isinstance(name, int) or str(name).isdigit():
            idx = (int(name) // max(1, workers_per_gpu)) % torch.cuda.device_count()
    except (ImportError, ValueError):
        pass
    torch.cuda.set_device(idx)
    return f"cuda:{idx}"


def _run_here(
    fn: Callable[[Any, Any, str], Any], cfg: Any, work: Any, device: str, threads: int, workers_per_gpu: int
) -> dict[str, Any]:
    """``fn(settings, work, device)`` in this process with ``threads`` threads on this worker's device:
    ``{"rows", "seconds", "device"}``, or ``{"skip": reason}`` when a dataset's files are unavailable."""
    import torch

    from dpgnn.data import DatasetUnavailable
    from dpgnn.profiles import Settings

    torch.set_num_threads(int(threads))
    dev = _worker_device(device, workers_per_gpu)
    t0 = time.perf_counter()
    try:
        rows = fn(Settings(cfg) if isinstance(cfg, Mapping) else cfg, work, dev)
    except DatasetUnavailable as exc:
        return {"skip": str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}
    return {"rows": rows, "seconds": time.perf_counter() - t0, "device": dev}


def execute(
    spec: CellSpec,
    cfg: Any,
    cell: dict[str, Any],
    device: str = "auto",
    threads: int = 1,
    workers_per_gpu: int = 1,
) -> dict[str, Any]:
    """Compute one cell in this process: ``{"rows", "seconds", "device"}``, or ``{"skip": reason}`` when its
    dataset's files are unavailable. Runs in a Dask worker (or anywhere: it needs nothing but its arguments)."""
    device = "cpu" if spec.cpu_only else device
    return _run_here(spec.run, cfg, dict(cell), device, threads, workers_per_gpu)


def execute_job(
    spec: CellSpec,
    cfg: Any,
    cells: list[dict[str, Any]],
    device: str = "auto",
    threads: int = 1,
    workers_per_gpu: int = 1,
) -> list[dict[str, Any]]:
    """:func:`execute` for cells that the spec computes together (``spec.batch``: the seeds of one configuration),
    one result per cell; the batch's wall time is shared equally among its cells (``seconds``). One cell, or a
    spec without ``batch``: exactly :func:`execute`."""
    if len(cells) == 1 or spec.batch is None:
        return [execute(spec, cfg, c, device, threads, workers_per_gpu) for c in cells]
    device = "cpu" if spec.cpu_only else device
    res = _run_here(spec.batch, cfg, [dict(c) for c in cells], device, threads, workers_per_gpu)
    if "skip" in res:
        return [res for _ in cells]
    seconds = res["seconds"] / len(cells)
    return [{"rows": r, "seconds": seconds, "device": res["device"]} for r in res["rows"]]
