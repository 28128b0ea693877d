"""DRW -- Ayle et al., "Training Differentially Private Graph Neural Networks with Random Walk Sampling"
(arXiv 2301.00738); docs/papers/drw.md. Baseline FDP: Daigavane et al. (arXiv 2111.15521).

Privacy notion (paper Sec. 4.1): feature-level DP, neighbouring graphs share the structure and differ in ONE node's
feature row (replace-one). DRW trains on disjoint subgraphs (:mod:`dpgnn.data.random_walks`): one node's features
enter at most one per-subgraph gradient, so after clipping each to norm ``C`` the batch sum has replace-one
sensitivity ``2C``; Gaussian noise ``σ = z · 2C`` is added (``z`` = noise multiplier). A batch is ``B`` subgraphs
drawn uniformly without replacement, and a node's subgraph is in it with probability at most ``q = B / m_min``.
Accounting: ``T`` compositions of the uniformly subsampled (replace-one) Gaussian, autodp's amplification bound as
in the authors' code (:class:`dpgnn.privacy.SampledWithoutReplacementEvent`, accountant ``"autodp"``). Training
runs until the next step would exceed the target ε (8 in Table 1) and records test F1 at every integer ε (Fig. 2).

Per-subgraph gradients are exact for any depth: the loss of each subgraph (on its root) is differentiated on that
subgraph alone with ``torch.func.vmap(grad(...))`` over padded dense subgraphs (the authors' per-row gradients are
only exact for one layer; docs/papers/drw.md#dp-training-step [BUG?]).

Clipping (docs/papers/drw.md#dp-training-step, the paper's "clip norm percentage"): ``C = clip_fraction · ‖g0‖`` where
``g0`` holds the per-tensor gradient norms of single-root losses averaged over up to 10 roots of a first batch;
per-tensor thresholds ``C_j = C·√softmax(g0)_j`` (Σ C_j² = C²). This calibration looks at the data without privacy (as
the authors' code); ``clip_norm=`` gives a data-independent absolute C split evenly over tensors instead.

What the code guarantees (:func:`guarantee_fields`). The paper's pipeline (``scaling="train_zscore"``,
``clip_fraction``, best-validation model) is reported ``as_published``: the z-scoring reads the training nodes'
mean and standard deviation, so one node's raw features move *every* node's input (all subgraphs, not one: the 2C
sensitivity fails); the clipping norm is a function of private gradients; the best epoch (and, in the series, the
configuration) is chosen on validation F1 computed from private features. None of these is in ε. The **sound**
mode -- ``prepare(..., scaling="none")`` (raw features, no statistics read), ``clip_norm=C`` (fixed) and
``select="last"`` (the final model, no selection) -- leaves only the accounted Gaussian steps: changing one node's
raw features changes only the (one) subgraph that contains it, and the clipped sum by at most 2C.

Methods (Table 1 rows): ``gcn`` (non-DP, RW sampler), ``mlp`` (non-DP, uniform sampler), ``fdp``, ``drw``, ``drw-d``
(DRW re-generated every ``resample_every`` steps) and ``drw-r`` (2 walks per root), each registered in
:mod:`dpgnn.methods` at its privacy level (:data:`LEVELS`: ``none`` for the baselines, ``feature`` for the DP
methods); ``run_xxx(data, config, *, seed, device)`` wraps :func:`train_nondp` or the DP-SGD run :func:`train_dp`
(:func:`run_dp` with a :class:`DPTrainConfig`), both on :func:`dpgnn.train.fit`, and returns a
:class:`dpgnn.methods.RunResult`.

What is here, by module: :mod:`~dpgnn.methods.drw.paper` (the paper's constants), :mod:`~dpgnn.methods.drw.data`
(:class:`DRWData`, :func:`prepare`),
:mod:`~dpgnn.methods.drw.gradients` (per-subgraph gradients, clipping, noise), :mod:`~dpgnn.methods.drw.accounting`
(the ε :class:`Schedule` of DRW and FDP), :mod:`~dpgnn.methods.drw.evaluation` (scores, prediction spread),
:mod:`~dpgnn.methods.drw.dp` (DP-SGD: :class:`DPTrainConfig`, :func:`run_dp`), :mod:`~dpgnn.methods.drw.nondp`
(the non-private baselines) and :mod:`~dpgnn.methods.drw.registration` (the method contract, imported here so that
importing this package registers the methods). ``fidelity`` is a :class:`dpgnn.fidelity.Fidelity`, parsed where a
config is built (:class:`DPTrainConfig`, :func:`epsilon_schedule`).
"""

from __future__ import annotations

from dpgnn.data.random_walks import sampler_bound
from dpgnn.fidelity import FIDELITIES, Fidelity
from dpgnn.methods.drw.accounting import Schedule, epsilon_schedule, fdp_schedule
from dpgnn.methods.drw.paper import (
    ARCHS,
    DATASETS,
    DELTA,
    DP_METHODS,
    INDUCTIVE,
    METHODS,
    NUM_TRAIN,
    PAPER,
    SEEDS,
    TARGET_EPSILON,
    batch_size,
)
from dpgnn.methods.drw.registration import (
    LEVELS,
    run,
    run_drw,
    run_drw_d,
    run_drw_r,
    run_fdp,
    run_gcn,
    run_mlp,
)
from dpgnn.privacy.drw import drw_epsilon, drw_event, fdp_run_epsilon, guarantee_fields, run_accounting
from dpgnn.utils import lazy_exports

#: the data and training code (torch, PyG), imported on first use (PEP 562): the constants, the accounting and the
#: registration stay light, so series that read stored rows and build grids start without torch
_LAZY = {
    **dict.fromkeys(("DRWData", "SCALINGS", "normalized_adjacency", "prepare", "scale_features"), "data"),
    **dict.fromkeys(
        (
            "DP_OPTIONS",
            "PER_SAMPLE",
            "SELECTS",
            "DPMethod",
            "DPTrainConfig",
            "FdpVariant",
            "PerSample",
            "Select",
            "run_dp",
            "train_dp",
        ),
        "dp",
    ),
    **dict.fromkeys(("eval_features", "prediction_spread", "split_features"), "evaluation"),
    **dict.fromkeys(
        (
            "add_noise",
            "clip_and_noise",
            "clip_thresholds",
            "clipped_grad_sum",
            "dense_subgraph_inputs",
            "per_subgraph_grads",
        ),
        "gradients",
    ),
    "train_nondp": "nondp",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "PAPER",
    "DATASETS",
    "METHODS",
    "DP_METHODS",
    "ARCHS",
    "DELTA",
    "NUM_TRAIN",
    "INDUCTIVE",
    "SEEDS",
    "TARGET_EPSILON",
    "FIDELITIES",
    "Fidelity",
    "batch_size",
    "guarantee_fields",
    "run_accounting",
    "drw_event",
    "drw_epsilon",
    "fdp_run_epsilon",
    "sampler_bound",
    "Schedule",
    "epsilon_schedule",
    "fdp_schedule",
    "LEVELS",
    "run",
    "run_gcn",
    "run_mlp",
    "run_drw",
    "run_drw_d",
    "run_drw_r",
    "run_fdp",
    *_LAZY,
]
