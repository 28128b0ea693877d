"""LPGCN's method contract (:mod:`dpgnn.methods`): every mechanism × {node classification (GCN), link
prediction (VGAE)}, registered on import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from torch_geometric.data import Data

from dpgnn.methods import RunResult, register
from dpgnn.methods.lpgcn.common import METHODS, PAPER, _method_key
from dpgnn.methods.lpgcn.features import prepare, privacy_ledger
from dpgnn.methods.lpgcn.link_prediction import prepare_link_prediction, run_link_prediction
from dpgnn.methods.lpgcn.node_classification import run_node_classification
from dpgnn.methods.lpgcn.repeats import run_node_classification_repeats

#: the model that names each Table-2 task in a method key: ``("lpgcn", "pgc-gcn", "feature")`` is node
#: classification (GCN, micro-F1) on PGC-perturbed features, ``("lpgcn", "pgc-vgae", "feature")`` link prediction
TASK_MODELS = {"node_classification": "gcn", "link_prediction": "vgae"}


def method_key(method: str, task: str) -> tuple[str, str, str]:
    """The registry key of one Table-2 cell: ``(PAPER, "<mechanism>-<gcn|vgae>", "feature" | "none" for RAW)``."""
    m = _method_key(method)
    if task not in TASK_MODELS:
        raise ValueError(f"unknown LPGCN task {task!r}; valid: {list(TASK_MODELS)}")
    return PAPER, f"{m}-{TASK_MODELS[task]}", "none" if m == "raw" else "feature"


def _parse(config: Mapping[str, Any], mechanism: str) -> tuple[str, int, float | None, dict[str, Any]]:
    """``(dataset name, run index, ε, the other keywords)`` of a contract ``config`` (ε = ∞ for RAW is None)."""
    cfg = dict(config)
    if "dataset" not in cfg:
        raise ValueError("an LPGCN config needs 'dataset' (the dataset's name)")
    name, run_index = cfg.pop("dataset"), cfg.pop("run", 0)
    eps = cfg.pop("epsilon", None)
    if mechanism == "raw" and eps is not None and math.isinf(float(eps)):
        eps = None
    return name, run_index, eps, cfg


def _run_result(mechanism: str, eps: float | None, data: Data, row: dict[str, Any], task: str) -> RunResult:
    """The :class:`~dpgnn.methods.RunResult` of one run's row (its per-epoch history moved out of the row)."""
    if task == "node_classification":
        metrics = {"train": row["train_micro_f1"], "val": row["val_micro_f1"], "test": row["value"]}
    else:
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


def _contract_run(mechanism: str, task: str):
    """``run(data, config, *, seed, device) -> RunResult`` of one mechanism and task. ``config``: ``dataset`` (the
    name; it seeds the run and picks Table 4's hyper-parameters), ``epsilon`` (per-feature ε; omit or ∞ for RAW),
    ``run`` (the repeat index, default 0), and any keyword of :func:`run_node_classification` /
    :func:`run_link_prediction` (``max_epochs``, ``patience``, ``hparams``, ...). ``data`` is the registered
    ``prepare``'s view (for link prediction the split itself). Node classification's ``run.repeats`` trains
    several repeat indices of one configuration together."""

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        name, run_index, eps, cfg = _parse(config, mechanism)
        if task == "node_classification":
            row = run_node_classification(data, name, mechanism, eps, run=run_index, seed=seed, device=device, **cfg)
        else:
            row = run_link_prediction(
                data, name, mechanism, eps, run=run_index, seed=seed, device=device, split=data, **cfg
            )
        return _run_result(mechanism, eps, data, row, task)

    def repeats(
        data: Data, config: Mapping[str, Any], *, seed: int, runs: Sequence[int], device: str = "auto"
    ) -> list[RunResult]:
        """``run`` for each repeat index of ``runs`` (``config``'s own ``run`` aside), trained together
        (:func:`dpgnn.methods.lpgcn.repeats.run_node_classification_repeats`): one result per run, in order, each
        equal to its ``run``'s."""
        name, _, eps, cfg = _parse(config, mechanism)
        rows = run_node_classification_repeats(data, name, mechanism, eps, runs=runs, seed=seed, device=device, **cfg)
        return [_run_result(mechanism, eps, data, row, task) for row in rows]

    run.__qualname__ = f"run_{mechanism}_{TASK_MODELS[task]}"
    run.__name__ = run.__qualname__
    if task == "node_classification":
        run.repeats = repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together through it)
    return run


for _mech in METHODS:
    for _task, _model in TASK_MODELS.items():
        register(
            *method_key(_mech, _task),
            prepare=prepare if _task == "node_classification" else prepare_link_prediction,
            description=f"{_mech.upper()} features, {_model.upper()} {_task.replace('_', ' ')} (Table 2)",
        )(_contract_run(_mech, _task))
del _mech, _task, _model
