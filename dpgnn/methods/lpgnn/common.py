"""LPGNN's constants, the authors' published tuned values with their look-ups (:func:`hparams_for`,
:func:`steps_for`) and the input checks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from dpgnn.privacy.lpgnn import REPLACEMENTS, feature_method  # the privacy rules

PAPER = "lpgnn"
GLOBAL_SEED = 12345
DATASETS = ("cora", "pubmed", "facebook", "lastfm")
_LOAD = {"cora": "cora", "pubmed": "pubmed", "facebook": "facebook-pagepage", "lastfm": "lastfm"}
#: feature mechanisms (docs/papers/lpgnn.md#multi-bit-mechanism); the replacements (docs/papers/lpgnn.md#baselines) are
#: dpgnn.privacy.lpgnn.REPLACEMENTS
FEATURE_METHODS = ("mbm", "1bm", "lpm", "agm", "raw")
#: label-noise handling (docs/papers/lpgnn.md#baselines): plain cross-entropy, forward correction only, Drop (correction
#: + K_y)
LABEL_METHODS = ("ce", "fc", "drop")
INF = math.inf
EPS_X = (0.01, 0.1, 1.0, 2.0, 3.0, INF)
EPS_Y = (0.5, 1.0, 2.0, 3.0, INF)
STEPS = (0, 2, 4, 8, 16)
TUNING_GRID = {
    "lr": (0.01, 0.001, 0.0001),
    "weight_decay": (0.01, 0.001, 0.0001, 0.0),
    "dropout": (0.0, 0.25, 0.5, 0.75),
}

# ---------------------------------------------------------------------------------------------------------------
# Published tuned values (authors' hparams/lwd.csv and hparams/steps.csv,
# docs/papers/lpgnn.md#hyper-parameters-and-grids) -- cited reference data.
# ---------------------------------------------------------------------------------------------------------------
_ORDER = ("cora", "pubmed", "facebook", "lastfm")


def _lwd(*cells: str) -> dict[str, dict[str, float]]:
    out = {}
    for name, cell in zip(_ORDER, cells):
        lr, wd, do = (float(v) for v in cell.split("/"))
        out[name] = {"lr": lr, "weight_decay": wd, "dropout": do}
    return out


#: (feature group, ε_x finite?, ε_y finite?) -> dataset -> lr / weight decay / dropout
#: (docs/papers/lpgnn.md#hyper-parameters-and-grids, lwd.csv).
#: Feature group "raw" = the real features (perturbed or not); replacements have no ε_x (stored as inf).
HPARAMS: dict[tuple[str, bool, bool], dict[str, dict[str, float]]] = {
    ("raw", True, True): _lwd(".01/.001/.5", ".01/1e-4/.25", ".001/.01/.5", ".001/1e-4/.75"),
    ("raw", True, False): _lwd(".01/.01/.75", ".01/.01/.75", ".01/.01/.75", ".01/.01/.75"),
    ("raw", False, True): _lwd(".01/1e-4/.75", ".01/1e-4/0", ".01/1e-4/.25", ".01/1e-4/.75"),
    ("raw", False, False): _lwd(".01/.01/.5", ".01/.001/.25", ".001/1e-4/.75", ".001/.01/.25"),
    ("rnd", False, True): _lwd("1e-4/.01/.25", ".001/.001/.5", "1e-4/.001/0", "1e-4/1e-4/.5"),
    ("rnd", False, False): _lwd(".001/.001/.75", ".001/1e-4/.75", "1e-4/1e-4/0", "1e-4/1e-4/0"),
    ("one", False, True): _lwd("1e-4/.01/.75", "1e-4/1e-4/0", "1e-4/.01/.75", "1e-4/.01/.75"),
    ("one", False, False): _lwd("1e-4/.001/.75", "1e-4/.001/.75", "1e-4/.01/.75", "1e-4/.001/.5"),
    ("ohd", False, True): _lwd(".01/0/0", ".01/0/0", ".01/0/0", ".01/0/.5"),
    ("ohd", False, False): _lwd(".01/1e-4/.75", ".01/1e-4/0", ".01/1e-4/0", ".01/1e-4/.5"),
}


def _steps_rows(text: str) -> dict[tuple[float, float], tuple[int, int]]:
    """Parse ``"0.01: 4,4 | 8,8 | ...; 0.1: ..."`` (rows ε_x, columns ε_y = 0.5 | 1 | 2 | 3 | ∞)."""
    out = {}
    for row in text.split(";"):
        ex, cells = row.split(":")
        for ey, cell in zip(EPS_Y, cells.split("|")):
            kx, ky = (int(v) for v in cell.split(","))
            out[(float(ex), ey)] = (kx, ky)
    return out


#: dataset -> (ε_x, ε_y) -> (K_x, K_y) selected by the authors (docs/papers/lpgnn.md#hyper-parameters-and-grids,
#: steps.csv)
BEST_STEPS: dict[str, dict[tuple[float, float], tuple[int, int]]] = {
    "cora": _steps_rows(
        "0.01: 4,4|8,8|8,8|8,8|8,0; 0.1: 0,8|2,4|16,4|8,4|16,0; 1: 2,8|2,8|8,4|16,4|16,0;"
        "2: 8,8|4,8|8,4|16,2|16,0; 3: 2,8|16,8|8,4|16,2|16,0; inf: 4,8|0,4|0,4|0,2|0,0"
    ),
    "pubmed": _steps_rows(
        "0.01: 16,2|16,2|16,2|16,2|16,0; 0.1: 4,4|8,2|8,2|16,0|16,0;"
        "1: 0,4|4,2|16,0|16,0|16,0; 2: 0,4|4,2|16,0|16,0|16,0; 3: 0,4|4,2|16,0|16,0|16,0;"
        "inf: 0,2|0,2|0,0|0,0|0,0"
    ),
    "facebook": _steps_rows(
        "0.01: 2,4|4,2|4,2|4,2|8,0; 0.1: 8,4|2,4|4,2|4,2|8,0; 1: 8,4|2,4|4,2|16,0|8,0;"
        "2: 8,4|2,4|4,2|8,0|8,0; 3: 8,4|2,4|4,2|4,2|8,0; inf: 2,2|0,2|0,2|2,0|0,0"
    ),
    "lastfm": _steps_rows(
        "0.01: 4,4|4,4|2,4|4,2|4,0; 0.1: 8,4|2,4|8,2|8,4|2,0; 1: 8,8|4,4|4,4|4,2|8,0;"
        "2: 4,8|2,4|4,4|16,0|16,0; 3: 16,8|2,4|2,4|16,0|16,0; inf: 0,4|0,2|0,2|4,0|0,0"
    ),
}


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------
def _dataset(name: str) -> str:
    key = str(name).strip().lower()
    if key not in DATASETS:
        raise ValueError(f"unknown LPGNN dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _eps(value: Any, arg: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{arg} must be a number > 0 or inf, got {value!r}") from None
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{arg} must be > 0 (inf = no perturbation), got {value!r}")
    return v


def _steps(value: Any, arg: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{arg} must be an integer >= 0, got {value!r}")
    return int(value)


def _choice(value: str, valid: Sequence[str], arg: str) -> str:
    key = str(value).strip().lower()
    if key not in valid:
        raise ValueError(f"{arg} must be one of {list(valid)}, got {value!r}")
    return key


def _check_features(method: str, eps_x: float) -> tuple[str, float]:
    return feature_method(method, eps_x)  # the privacy rule (ε_x = inf is raw; no false claims) lives there


def hparams_for(dataset: str, method: str, eps_x: float, eps_y: float) -> dict[str, float]:
    """The published lr / weight decay / dropout (docs/papers/lpgnn.md#hyper-parameters-and-grids): any finite ε uses
    the ε = 1 row."""
    key = _dataset(dataset)
    meth, ex = _check_features(method, eps_x)
    ey = _eps(eps_y, "eps_y")
    group = meth if meth in REPLACEMENTS else "raw"
    return dict(HPARAMS[(group, math.isfinite(ex) and group == "raw", math.isfinite(ey))][key])


def steps_for(dataset: str, eps_x: float, eps_y: float) -> tuple[int, int]:
    """The published (K_x, K_y) for (ε_x, ε_y) (docs/papers/lpgnn.md#hyper-parameters-and-grids, steps.csv)."""
    key = _dataset(dataset)
    cell = (_eps(eps_x, "eps_x"), _eps(eps_y, "eps_y"))
    if cell not in BEST_STEPS[key]:
        raise ValueError(
            f"no published steps for (eps_x, eps_y) = {cell}; eps_x in {list(EPS_X)}, eps_y in {list(EPS_Y)}"
        )
    return BEST_STEPS[key][cell]
