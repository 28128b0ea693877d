"""A toy grid for tests/test_engine.py: cells that sleep, fail or kill their own worker on request.

Module-level functions (importable by Dask workers, which get the test process's ``sys.path``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpgnn.sweep import CellSpec


def cells(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"dataset": "toy", "x": i, "seed": 0} for i in range(int(cfg["n"]))]


def run(cfg: dict[str, Any], cell: dict[str, Any], device: str) -> list[dict[str, Any]]:
    x = int(cell["x"])
    if cfg.get("log"):
        with open(cfg["log"], "a") as f:
            f.write(f"{x}\n")
    time.sleep(float(cfg.get("sleep", 0.0)))
    if cfg.get("kill_x") == x and not Path(cfg["marker"]).exists():
        Path(cfg["marker"]).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies in the middle of this cell
    if cfg.get("fail_x") == x:
        raise RuntimeError(f"cell {x} fails on purpose")
    rng = np.random.default_rng([int(cell["seed"]), x])  # seeds come from the cell
    return [
        {"metric": "m", "value": float(x) + float(cfg.get("offset", 0.0)) + rng.random(), "method": "toy"},
        {"metric": "m2", "value": float(x) * 2, "method": "toy"},
    ]


SPEC = CellSpec("toy", "grid", "grid", cells, run)


def batch(cfg: dict[str, Any], cells: list[dict[str, Any]], device: str) -> list[list[dict[str, Any]]]:
    """The cells of one ``batch_key`` together: each cell's rows are :func:`run`'s; the batch size is logged."""
    if cfg.get("batch_log"):
        with open(cfg["batch_log"], "a") as f:
            f.write(f"{len(cells)}\n")
    return [run(cfg, c, device) for c in cells]


def batch_key(cell: dict[str, Any]) -> str:
    return str(int(cell["x"]) // 3)


BATCHED = CellSpec("toy", "grid", "grid", cells, run, batch=batch, batch_key=batch_key)
