"""ProGAP: progressive aggregation perturbation (Sajadmanesh & Gatica-Perez, WSDM 2024), edge and node level.

The model is trained in ``K + 1`` stages (Algorithm 2). Stage ``s`` learns base MLPs ``0..s``, a jumping-knowledge
concatenation and a head on the cached inputs ``X̃^(0) = X`` and ``X̃^(k) = NAP(A, X^(k-1))``; after the stage
(with the best-validation epoch restored) its last base's output ``X^(s)`` is aggregated ONCE by the NAP
mechanism (normalise rows to unit L2 norm → sum over in-neighbours → Gaussian noise) and cached. Training and
inference afterwards only post-process cached aggregates, so the graph is queried exactly ``K`` times.

Privacy (docs/papers/progap.md#edge-level-privacy and docs/papers/progap.md#node-level-privacy):

- **edge level** (neighbouring graphs differ in one edge): each NAP query has L2 sensitivity 1, noise ``σ``;
  the run is the composition of ``K`` Gaussian mechanisms. Tight accounting: ``exact_gaussian`` (one Gaussian of
  noise ``σ/√K``, the exact (ε, δ) profile, = autodp's ``ComposeGaussian``); paper bound: Theorem 4.1,
  ``ε = K/(2σ²) + √(2K log(1/δ))/σ``.
- **node level** (one node and its edges added/removed): in-degrees bounded to ``D`` so a NAP query has
  sensitivity ``√D`` (noise ``z·√D``); every stage is trained with DP-Adam (per-sample clipping ``C``, noise
  ``z·C``, Poisson sampling with rate ``B/N_train``, ``E·⌊N_train/B⌋`` steps). One shared noise multiplier ``z``.
  The run is the composition of ``K`` Gaussians and ``K + 1`` DP-SGD runs. Tight accounting: ``autodp`` (the
  authors' accountant; ``rdp`` is our own independent one); paper bound: Theorem 4.2.

Calibration (``target_epsilon``) is conservative: the returned noise satisfies ``ε(noise) ≤ target``.

The package, by responsibility: :mod:`~dpgnn.methods.progap.graph` (degree bounding, NAP),
:mod:`~dpgnn.methods.progap.stage` (one stage's training), :mod:`~dpgnn.methods.progap.config` (config and
result), :mod:`~dpgnn.methods.progap.train` (a full run), :mod:`~dpgnn.methods.progap.registration` (the methods
in the registry, registered on import).
"""

from __future__ import annotations

from dpgnn.methods.progap.config import ProGAPConfig, ProGAPResult
from dpgnn.methods.progap.graph import NAP, bound_degree, graph_edges, note_edges
from dpgnn.methods.progap.registration import PAPER, method_config
from dpgnn.methods.progap.stage import PER_SAMPLE, DPSettings, predict, train_stage
from dpgnn.methods.progap.train import _masks as _masks  # the split masks, shared by GAP and the baselines
from dpgnn.methods.progap.train import run_setup, stage_base, stage_head, train_progap
from dpgnn.privacy.progap import (  # re-exported: the method's accounting
    DEFAULT_ACCOUNTANT,
    LEVELS,
    accountant_for,
    calibrate_noise,
    default_delta,
    edge_sensitivity,
    privacy_event,
    privacy_ledger,
    stage_steps,
    theorem41_epsilon,
    theorem42_epsilon,
)

__all__ = [
    "LEVELS",
    "ProGAPConfig",
    "ProGAPResult",
    "NAP",
    "bound_degree",
    "default_delta",
    "privacy_event",
    "privacy_ledger",
    "calibrate_noise",
    "theorem41_epsilon",
    "theorem42_epsilon",
    "stage_steps",
    "train_progap",
    "train_stage",
    "DPSettings",
    "predict",
    "PER_SAMPLE",
    "method_config",
    "graph_edges",
    "note_edges",
    "run_setup",
    "stage_base",
    "stage_head",
    "PAPER",
    "DEFAULT_ACCOUNTANT",
    "accountant_for",
    "edge_sensitivity",
]
