"""LPGNN's method contract (:mod:`dpgnn.methods`): every feature method at the levels its ε's allow,
registered on import.

The training code (torch, PyG) is imported when a method runs or prepares data, not here: registering the methods
and building grids (:func:`level_of`) stay light.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgnn.methods import RunResult, register
from dpgnn.methods.lpgnn.common import FEATURE_METHODS, INF, PAPER, _check_features, _eps
from dpgnn.privacy.lpgnn import REPLACEMENTS, privacy_ledger  # the privacy statement

if TYPE_CHECKING:
    from torch_geometric.data import Data

#: feature mechanisms that perturb the private features (a finite ε_x)
MECHANISMS = ("mbm", "1bm", "lpm", "agm")


def level_of(method: str, eps_x: float, eps_y: float) -> str:
    """The privacy level of a run (:data:`dpgnn.methods.LEVELS`): ``feature`` when the features are perturbed
    (finite ε_x), ``label`` when the labels are (finite ε_y), ``feature+label`` for both, ``none`` for neither
    (RAW features or a feature replacement, with clean labels)."""
    meth, ex = _check_features(method, eps_x)
    ey = _eps(eps_y, "eps_y")
    feature = meth in MECHANISMS and math.isfinite(ex)
    label = math.isfinite(ey)
    return {(True, True): "feature+label", (True, False): "feature", (False, True): "label", (False, False): "none"}[
        (feature, label)
    ]


def _prepare(dataset_name: str, *, root=None) -> Data:
    """:func:`dpgnn.methods.lpgnn.features.prepare` (the paper's data pipeline), imported when first called."""
    from dpgnn.methods.lpgnn.features import prepare

    return prepare(dataset_name, root=root)


def _contract_run(method: str, level: str):
    """``run(data, config, *, seed, device) -> RunResult`` of one feature method at one level.

    ``config``: ``dataset`` (the name: it seeds the draws and picks the published steps and hyper-parameters),
    ``eps_x`` (required for a mechanism; ∞ otherwise), ``eps_y`` (required at the ``label`` levels; ∞ otherwise),
    and any keyword of :func:`run_cell`: ``k_x``/``k_y`` (KProp steps; default the published ones), ``label_method``
    (``ce``, ``fc`` or ``drop`` = forward correction + K_y label propagation, the default), ``backbone``,
    ``repeats`` (runs trained at once by :func:`train_batched`), ``epochs``, ``m``, ``hparams``, ``threads``.
    A config whose ε's give another level than the registered one is refused (the key states what is private).
    ``metrics``: means over the repeats in [0, 1] (``test``: clean test accuracy at the selected epoch; ``val`` /
    ``train``: noisy accuracies); ``extra["rows"]``: :func:`run_cell`'s rows, one per repeat.
    """
    label = level in ("label", "feature+label")

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        cfg = dict(config)
        if "dataset" not in cfg:
            raise ValueError("an LPGNN config needs 'dataset' (the dataset's name)")
        for key, needed in (("eps_x", method in MECHANISMS), ("eps_y", label)):
            if key not in cfg:
                if needed:
                    raise ValueError(f"LPGNN method {method!r} at level {level!r} needs {key!r} in its config")
                cfg[key] = INF
        got = level_of(method, cfg["eps_x"], cfg["eps_y"])
        if got != level:
            meth = _check_features(method, cfg["eps_x"])[0]
            raise ValueError(
                f"eps_x={cfg['eps_x']}, eps_y={cfg['eps_y']} make an LPGNN {method!r} run {got!r}, not "
                f"{level!r}: use the method registered as ({meth!r}, {got!r})"
            )
        from dpgnn.methods.lpgnn.cell import run_cell

        t0 = time.perf_counter()
        rows = run_cell(data, cfg.pop("dataset"), method=method, seed=seed, device=device, **cfg)
        metrics = {
            "train": float(np.mean([r["train_acc_noisy"] for r in rows])) / 100.0,
            "val": float(np.mean([r["val_acc_noisy"] for r in rows])) / 100.0,
            "test": float(np.mean([r["value"] for r in rows])) / 100.0,
        }
        ledger = privacy_ledger(method, cfg["eps_x"], cfg["eps_y"], data.num_features, cfg.get("m"))
        if "edge_input" in rows[0]:
            ledger["edge_input"] = rows[0]["edge_input"]
        return RunResult(metrics=metrics, ledger=ledger, seconds=time.perf_counter() - t0, extra={"rows": rows})

    run.__qualname__ = run.__name__ = f"run_{method}_{level.replace('+', '_')}"
    return run


for _method in FEATURE_METHODS + REPLACEMENTS:
    for _level in ("feature", "feature+label") if _method in MECHANISMS else ("none", "label"):
        register(
            PAPER,
            _method,
            _level,
            prepare=_prepare,
            description=f"features: {_method}{' (replacement)' if _method in REPLACEMENTS else ''}; "
            f"labels: {'RR + Drop/FC/CE' if 'label' in _level else 'clean'}; KProp on the features "
            "(Sec. 4)",
        )(_contract_run(_method, _level))
del _method, _level
