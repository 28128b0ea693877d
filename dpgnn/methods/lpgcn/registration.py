"""LPGCN's method contract (:mod:`dpgnn.methods`): every mechanism × {node classification (GCN), link
prediction (VGAE)}, registered on import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from torch_geometric.data import Data

from dpgnn.methods import RunResult, register
from dpgnn.methods.lpgcn.common import METHODS, PAPER, _method_key
from dpgnn.methods.lpgcn.features import prepare, privacy_ledger
from dpgnn.methods.lpgcn.link_prediction import prepare_link_prediction, run_link_prediction
from dpgnn.methods.lpgcn.node_classification import run_node_classification

#: the model that names each Table-2 task in a method key: ``("lpgcn", "pgc-gcn", "feature")`` is node
#: classification (GCN, micro-F1) on PGC-perturbed features, ``("lpgcn", "pgc-vgae", "feature")`` link prediction
TASK_MODELS = {"node_classification": "gcn", "link_prediction": "vgae"}


def method_key(method: str, task: str) -> tuple[str, str, str]:
    """The registry key of one Table-2 cell: ``(PAPER, "<mechanism>-<gcn|vgae>", "feature" | "none" for RAW)``."""
    m = _method_key(method)
    if task not in TASK_MODELS:
        raise ValueError(f"unknown LPGCN task {task!r}; valid: {list(TASK_MODELS)}")
    return PAPER, f"{m}-{TASK_MODELS[task]}", "none" if m == "raw" else "feature"


def _contract_run(mechanism: str, task: str):
    """``run(data, config, *, seed, device) -> RunResult`` of one mechanism and task. ``config``: ``dataset`` (the
    name; it seeds the run and picks Table 4's hyper-parameters), ``epsilon`` (per-feature ε; omit or ∞ for RAW),
    ``run`` (the repeat index, default 0), and any keyword of :func:`run_node_classification` /
    :func:`run_link_prediction` (``max_epochs``, ``patience``, ``hparams``, ...). ``data`` is the registered
    ``prepare``'s view (for link prediction the split itself)."""

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        cfg = dict(config)
        if "dataset" not in cfg:
            raise ValueError("an LPGCN config needs 'dataset' (the dataset's name)")
        name, run_index = cfg.pop("dataset"), cfg.pop("run", 0)
        eps = cfg.pop("epsilon", None)
        if mechanism == "raw" and eps is not None and math.isinf(float(eps)):
            eps = None
        if task == "node_classification":
            row = run_node_classification(data, name, mechanism, eps, run=run_index, seed=seed, device=device, **cfg)
            metrics = {"train": row["train_micro_f1"], "val": row["val_micro_f1"], "test": row["value"]}
        else:
            row = run_link_prediction(
                data, name, mechanism, eps, run=run_index, seed=seed, device=device, split=data, **cfg
            )
            metrics = {"val": row["val_auc"], "test": row["value"]}
        history = row.pop("history")
        hist = [{"epoch": i + 1, "loss": v} for i, v in enumerate(history["train_loss"])]
        return RunResult(
            metrics=metrics,
            ledger=privacy_ledger(mechanism, eps, data.num_features),
            history=hist,
            seconds=row["duration_s"],
            extra={"row": row, "val_loss": history["val_loss"]},
        )

    run.__qualname__ = f"run_{mechanism}_{TASK_MODELS[task]}"
    run.__name__ = run.__qualname__
    return run


for _mech in METHODS:
    for _task, _model in TASK_MODELS.items():
        register(
            *method_key(_mech, _task),
            prepare=prepare if _task == "node_classification" else prepare_link_prediction,
            description=f"{_mech.upper()} features, {_model.upper()} {_task.replace('_', ' ')} (Table 2)",
        )(_contract_run(_mech, _task))
del _mech, _task, _model
