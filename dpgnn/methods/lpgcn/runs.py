"""What LPGCN's Table-2 runs share: the trainers' argument checks, the run seeds, the tidy result row and the
summary over runs.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.methods.lpgcn.common import PAPER
from dpgnn.methods.lpgcn.features import perturb_features, privacy_ledger
from dpgnn.utils import (
    config_hash,
    make_generator,
    seed_everything,
    stable_seed,
    versions,
)


def _check_common(lr: float, weight_decay: float, max_epochs: int, min_epochs: int) -> None:
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
    if max_epochs < 1 or min_epochs < 0 or min_epochs > max_epochs:
        raise ValueError(f"need 0 <= min_epochs <= max_epochs and max_epochs >= 1, got {min_epochs=}, {max_epochs=}")


def _run_seed(seed: int, dataset: str, method: str, eps: float, run: int, task: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int (0 is a seed), got {seed!r}")
    if isinstance(run, bool) or not isinstance(run, (int, np.integer)) or run < 0:
        raise ValueError(f"run must be a non-negative int, got {run!r}")
    return stable_seed(PAPER, task, int(seed), dataset, method, eps, int(run))


def _perturb_for_run(x: Tensor, method: str, eps: float, run_seed: int, t0: float) -> tuple[Tensor, float]:
    """A run's fresh perturbation of all nodes' features ``x`` (stream ``(run_seed, "perturb")``; ``raw`` ignores
    ``eps``), then torch's global RNG seeded for its model (stream ``(run_seed, "model")``).

    Returns:
        The perturbed features and the seconds from ``t0`` to the end of the perturbation.
    """
    generator = make_generator(stable_seed(run_seed, "perturb"))
    x_hat = perturb_features(x, method, None if method == "raw" else eps, generator)
    t_perturb = time.perf_counter() - t0
    seed_everything(stable_seed(run_seed, "model"))
    return x_hat, t_perturb


def _fit_columns(res: Mapping[str, Any], t_perturb: float, t0: float) -> dict[str, Any]:
    """The columns every Table-2 row takes from its trainer's result ``res``: epochs and stopping, timings
    (``duration_s`` since ``t0``, taken now), the device and the per-epoch ``history``."""
    return {
        "epochs": res["epochs"],
        "stop_epoch": res["stop_epoch"],
        "best_epoch": res["best_epoch"],
        "perturb_time_s": t_perturb,
        "train_time_s": res["train_time_s"],
        "duration_s": time.perf_counter() - t0,
        "device": res["device"],
        "history": res["history"],
    }


def _with_features(data: Data, x: Tensor) -> Data:
    out = copy.copy(data)
    out.x = x
    return out


def _result(
    task: str,
    key: str,
    method: str,
    eps: float,
    run: int,
    seed: int,
    run_seed: int,
    num_features: int,
    config: dict[str, Any],
    metric: str,
    value: float,
    extra: dict[str, Any],
) -> dict[str, Any]:
    row = {
        "paper": PAPER,
        "artifact": "table2",
        "task": task,
        "dataset": key,
        "method": method,
        **privacy_ledger(method, None if method == "raw" else eps, num_features),
        "run": int(run),
        "seed": int(seed),
        "run_seed": run_seed,
        "metric": metric,
        "value": float(value),
    }
    row.update(extra)
    row.update(config)
    row["config_hash"] = config_hash({"task": task, "dataset": key, "method": method, "epsilon": eps, **config})
    row["versions"] = versions()
    return row


def summarize_runs(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Table-2 style summary: mean and population std (ddof 0, as the paper) over runs, in %, per cell."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    keys = [k for k in ("task", "dataset", "method", "epsilon", "metric") if k in df.columns]
    g = df.groupby(keys, dropna=False)["value"]
    out = g.agg(mean=lambda s: 100 * s.mean(), std=lambda s: 100 * s.std(ddof=0), runs="size").reset_index()
    return out
