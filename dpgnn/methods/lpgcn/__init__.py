"""LPGCN / PGC -- Sajadmanesh & Gatica-Perez, "When Differential Privacy Meets Graph Neural Networks"
(arXiv 2006.05535 v1, 2020); docs/papers/lpgcn.md.

Setting (paper Sec. 3-4): the server knows the graph; every node holds a private feature vector in [0, 1]^d (after
per-column min-max normalisation, so α = 0 and Δ = 1) and sends an ε-LDP perturbation of *each* feature. The server
forms unbiased estimates y* and runs a GCN whose first layer is the graph convolution of y* (Algorithm 1).
Mechanisms: LM (Laplace), PM (piecewise, Wang et al. 2019), PGC (Duchi-style one-bit, the paper's method), and RAW
(no perturbation, the non-private upper bound). ε is a per-feature budget; by basic composition a node's whole
feature vector is protected with d·ε.

Experiments reproduced here (notebooks call only this module):

* Fig. 1 / 4 / 5 -- analytic variances: :func:`variance_table`, :func:`mean_feature` (Table 3).
* Fig. 2 / 3 -- MAE of the first-layer graph-convolution estimate: :func:`gc_mae`, :func:`mae_vs_epsilon`,
  :func:`mae_vs_degree`.
* Table 2 -- node classification (GCN, micro-F1) and link prediction (VGAE, AUC), 10 runs per cell:
  :func:`run_node_classification`, :func:`run_link_prediction`, :func:`summarize_runs`; their full-batch loops
  :func:`train_node_classifier`, :func:`train_link_predictor` run on :func:`dpgnn.train.fit`;
  :func:`run_node_classification_repeats` trains a cell's node-classification runs together (each row equal to
  its :func:`run_node_classification`'s).

Methods registered (:mod:`dpgnn.methods`): ``("lpgcn", "<lm|pm|pgc>-<gcn|vgae>", "feature")`` and
``("lpgcn", "raw-<gcn|vgae>", "none")`` -- each mechanism for node classification (GCN) and link prediction (VGAE);
:func:`method_key` names the key of a Table-2 cell.

One module per responsibility: :mod:`~dpgnn.methods.lpgcn.common` (constants, input checks),
:mod:`~dpgnn.methods.lpgcn.features` (data, perturbation, estimation error, variances),
:mod:`~dpgnn.methods.lpgcn.node_classification` and :mod:`~dpgnn.methods.lpgcn.link_prediction` (Table 2's trainers
and runs), :mod:`~dpgnn.methods.lpgcn.repeats` (a configuration's node-classification runs trained together),
:mod:`~dpgnn.methods.lpgcn.runs` (what the runs share), :mod:`~dpgnn.methods.lpgcn.registration` (the
method contract, registered on import).
"""

from __future__ import annotations

from dpgnn.methods.lpgcn.common import (
    DATASETS,
    EPSILONS_MAE,
    EPSILONS_TABLE2,
    GLOBAL_SEED,
    HIDDEN_CODE,
    HIDDEN_PAPER,
    HPARAMS,
    MECHANISMS,
    METHODS,
    NUM_RUNS,
    PAPER,
    TABLE1_NUM_FEATURES,
    TABLE3_MEAN_FEATURE,
    VGAE_HIDDEN,
    VGAE_OUT,
)
from dpgnn.methods.lpgcn.features import (
    gc_mae,
    gcn_propagation_matrix,
    mae_vs_degree,
    mae_vs_epsilon,
    mean_feature,
    perturb_features,
    prepare,
    privacy_ledger,
    variance_table,
)
from dpgnn.methods.lpgcn.link_prediction import (
    NegativeSampler,
    prepare_link_prediction,
    run_link_prediction,
    split_for_link_prediction,
    train_link_predictor,
)
from dpgnn.methods.lpgcn.node_classification import run_node_classification, train_node_classifier
from dpgnn.methods.lpgcn.registration import TASK_MODELS, method_key
from dpgnn.methods.lpgcn.repeats import run_node_classification_repeats
from dpgnn.methods.lpgcn.runs import summarize_runs

__all__ = [
    "PAPER",
    "DATASETS",
    "METHODS",
    "MECHANISMS",
    "HPARAMS",
    "HIDDEN_CODE",
    "HIDDEN_PAPER",
    "VGAE_HIDDEN",
    "VGAE_OUT",
    "EPSILONS_MAE",
    "EPSILONS_TABLE2",
    "NUM_RUNS",
    "GLOBAL_SEED",
    "TABLE3_MEAN_FEATURE",
    "TABLE1_NUM_FEATURES",
    "prepare",
    "perturb_features",
    "privacy_ledger",
    "gcn_propagation_matrix",
    "gc_mae",
    "mae_vs_epsilon",
    "mae_vs_degree",
    "variance_table",
    "mean_feature",
    "split_for_link_prediction",
    "run_node_classification",
    "run_link_prediction",
    "summarize_runs",
    "train_node_classifier",
    "run_node_classification_repeats",
    "train_link_predictor",
    "NegativeSampler",
    "TASK_MODELS",
    "method_key",
    "prepare_link_prediction",
]
