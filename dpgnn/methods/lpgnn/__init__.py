"""LPGNN -- Sajadmanesh & Gatica-Perez, "Locally Private Graph Neural Networks" (CCS 2021); docs/papers/lpgnn.md.

Setting (docs/papers/lpgnn.md#setting): the server knows the graph; every node's feature vector is private (ε_x-LDP for
the whole vector, multi-bit mechanism) and so is the label of every training/validation node (ε_y-LDP, generalised
randomised response). Test labels are only used to report accuracy. The server propagates the rectified features with
KProp (``Â^{K_x}``), trains a GCN / GraphSAGE / GAT backbone, denoises the labels with Drop (forward correction +
``Â^{K_y}`` label propagation) and selects the epoch without clean labels (noisy validation, the RR ceiling).

Public API (notebooks go through :mod:`dpgnn.series.lpgnn`):

* :func:`prepare` -- the paper's data pipeline (50/25/25 random split, min-max, constant columns dropped).
* :func:`draw_features` -- one repeat's features for a method (``mbm``, ``1bm``, ``lpm``, ``agm``, ``raw``, and the
  replacements ``rnd``, ``one``, ``ohd``); :func:`perturb_labels`, :func:`transition_matrix`.
* :func:`drop_targets`, :func:`label_probabilities`, :func:`selection_step` -- Drop and the model-selection rule.
* :func:`run_cell` -- one grid cell (``repeats`` runs, batched) → tidy rows with the privacy ledger.
* :func:`train_reference` -- the straightforward per-run loop (PyG layers, one run at a time), kept as the
  baseline of the speed benchmark and as an independent check of the batched trainer.
* :data:`HPARAMS`, :data:`BEST_STEPS` -- the published tuned values (cited), :func:`hparams_for`,
  :func:`steps_for`; :func:`tune` -- redo the selection on noisy validation data only.

Methods registered (:mod:`dpgnn.methods`): ``("lpgnn", <mbm|1bm|lpm|agm>, "feature" | "feature+label")`` and
``("lpgnn", <raw|rnd|one|ohd>, "none" | "label")``; the level follows from ε_x/ε_y (:func:`level_of`). KProp
(``k_x``) and the label handling (``label_method`` ce / fc / drop with ``k_y``) are the config's; each run trains
its repeats at once (:func:`train_batched`, the fast path).

One module per responsibility: :mod:`~dpgnn.methods.lpgnn.common` (constants, the published values, input
checks), :mod:`~dpgnn.methods.lpgnn.features` (data, perturbed features and labels),
:mod:`~dpgnn.methods.lpgnn.training` (Drop, model selection, the trainers), :mod:`~dpgnn.methods.lpgnn.cell` (one
grid cell, tuning) and :mod:`~dpgnn.methods.lpgnn.registration` (the method contract, registered on import).
"""

from __future__ import annotations

from dpgnn.methods.lpgnn.common import (
    BEST_STEPS,
    DATASETS,
    EPS_X,
    EPS_Y,
    FEATURE_METHODS,
    GLOBAL_SEED,
    HPARAMS,
    LABEL_METHODS,
    PAPER,
    STEPS,
    TUNING_GRID,
    hparams_for,
    steps_for,
)
from dpgnn.methods.lpgnn.registration import MECHANISMS, level_of
from dpgnn.privacy.lpgnn import AGM_DELTA as AGM_DELTA
from dpgnn.privacy.lpgnn import REPLACEMENTS, privacy_ledger  # the privacy statement
from dpgnn.utils import lazy_exports

#: the training code (torch, PyG), imported on first use (PEP 562): the constants, the registration and
#: :func:`level_of` stay light, so series that read stored rows and build grids start without torch
_LAZY = {
    **dict.fromkeys(("run_cell", "tune"), "cell"),
    **dict.fromkeys(("dense_features", "draw_features", "perturb_labels", "prepare", "transition_matrix"), "features"),
    **dict.fromkeys(
        ("drop_targets", "label_probabilities", "selection_step", "train_batched", "train_reference"), "training"
    ),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "PAPER",
    "DATASETS",
    "FEATURE_METHODS",
    "REPLACEMENTS",
    "LABEL_METHODS",
    "EPS_X",
    "EPS_Y",
    "STEPS",
    "HPARAMS",
    "BEST_STEPS",
    "TUNING_GRID",
    "GLOBAL_SEED",
    "privacy_ledger",
    "hparams_for",
    "steps_for",
    "MECHANISMS",
    "level_of",
    *_LAZY,
]
