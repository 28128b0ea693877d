"""LPGCN's constants (datasets, mechanisms, Table 4's hyper-parameters, widths, seeds) and input checks."""

from __future__ import annotations

import math
from collections.abc import Mapping

PAPER = "lpgcn"
DATASETS = ("citeseer", "cora", "elliptic", "flickr", "twitch")
#: method name used in the paper -> mechanism name in :mod:`dpgnn.privacy` (RAW: no mechanism).
MECHANISMS: dict[str, str | None] = {"lm": "laplace", "pm": "piecewise", "pgc": "pgc", "raw": None}
METHODS = ("lm", "pm", "pgc", "raw")
EPSILONS_MAE = (1.0, 3.0, 5.0, 7.0, 9.0)  # Fig. 2
EPSILONS_TABLE2 = (1.0, 5.0, 9.0)  # Table 2
NUM_RUNS = 10  # Table 2: mean ± std (ddof 0) over 10 runs
# the authors' global seed (docs/papers/cross-paper.md#conventions-shared-by-the-sajadmanesh-repositories)
GLOBAL_SEED = 12345

#: Best hyper-parameters, paper Table 4 (Appendix E; grid-searched on RAW, reused for every mechanism),
#: docs/papers/lpgcn.md#models-and-training.
HPARAMS: dict[str, dict[str, dict[str, float]]] = {
    "citeseer": {
        "gcn": {"lr": 0.01, "weight_decay": 0.1, "dropout": 0.5},
        "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0},
    },
    "cora": {
        "gcn": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.5},
        "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0},
    },
    "elliptic": {
        "gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0},
    },
    "flickr": {
        "gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0},
    },
    "twitch": {
        "gcn": {"lr": 0.001, "weight_decay": 1e-4, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0},
    },
}
#: Node-classification hidden width. [CODE≠PAPER] (docs/papers/lpgcn.md#models-and-training): the authors' code and
#: experiment script use 16 (output = number of classes); the paper text says hidden 32 / output 16.
#: Default: the code's 16.
HIDDEN_CODE = 16
HIDDEN_PAPER = 32
#: VGAE encoder widths (paper Sec. 5 and code agree).
VGAE_HIDDEN = 32
VGAE_OUT = 16

#: Paper Table 3: average normalised feature value x̄ (eq. 28).
TABLE3_MEAN_FEATURE = {"citeseer": 0.009, "cora": 0.013, "elliptic": 0.219, "flickr": 0.037, "twitch": 0.008}
#: Paper Table 1: number of node features.
TABLE1_NUM_FEATURES = {"citeseer": 3703, "cora": 1433, "elliptic": 166, "flickr": 500, "twitch": 2545}

#: How each dataset is loaded for this paper (name, variant) -- docs/papers/lpgcn.md#data-and-splits.
_LOAD = {
    "cora": ("cora", "lpgcn"),
    "citeseer": ("citeseer", "lpgcn"),
    "twitch": ("twitch", "lpgcn"),
    "elliptic": ("elliptic", "lpgcn"),
    "flickr": ("flickr", None),
}


# ---------------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------------
def _dataset_key(name: str) -> str:
    key = str(name).strip().lower()
    if key not in HPARAMS:
        raise ValueError(f"unknown LPGCN dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _label(name: str) -> str:
    """Lower-case dataset label (any name is allowed where it is only a label, e.g. a synthetic graph)."""
    key = str(name).strip().lower()
    if not key:
        raise ValueError("dataset_name must be a non-empty string")
    return key


def _hparams(key: str, model: str, override: Mapping[str, float] | None) -> dict[str, float]:
    hp = {**HPARAMS.get(key, {}).get(model, {}), **(override or {})}
    missing = {"lr", "weight_decay", "dropout"} - hp.keys()
    if missing:
        raise ValueError(
            f"no Table-4 hyper-parameters for dataset {key!r} (known: {list(DATASETS)}); pass "
            f"hparams with {sorted(missing)}"
        )
    return hp


def _method_key(method: str) -> str:
    key = str(method).strip().lower()
    if key not in MECHANISMS:
        raise ValueError(f"unknown LPGCN method {method!r}; valid methods: {list(METHODS)}")
    return key


def _epsilon(method: str, epsilon: float | None) -> float:
    """Validated per-feature ε as a float (``inf`` for RAW)."""
    if method == "raw":
        if epsilon is not None and math.isfinite(float(epsilon)):
            raise ValueError(
                f"method 'raw' adds no noise, so a finite epsilon={epsilon} would be a false privacy "
                "claim; pass epsilon=None (or math.inf) for RAW"
            )
        return math.inf
    if epsilon is None:
        raise ValueError(f"method {method!r} needs a finite epsilon > 0")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be finite and > 0 for method {method!r}, got {epsilon}")
    return eps
