"""LPGNN's privacy statement (Sajadmanesh & Gatica-Perez, CCS 2021, Sec. 3-4): one node's local privacy.

Pure math, no graphs (the method is :mod:`dpgnn.methods.lpgnn`; the calculator ``dpgnn epsilon lpgnn`` is
:mod:`dpgnn.cli.epsilon_lpgnn`). Both build the statement here, so a result row and the calculator cannot disagree.

A node sends its feature vector once through a feature mechanism (ε_x-LDP for the whole vector: the multi-bit
mechanism ``mbm`` of Algorithm 1 with ``m`` sampled coordinates, its one-bit variant ``1bm`` (``m = d``), the
Laplace ``lpm`` or the analytic Gaussian ``agm`` baseline, which is (ε_x, δ)-LDP with δ = :data:`AGM_DELTA`) and, if
it is a training/validation node, its label once through randomised response (ε_y-LDP, Sec. 4.3). Everything the
server does after (KProp, training, Drop, model selection) is post-processing, so by basic composition of the two
reports the node is protected with ``ε = ε_x + ε_y``. An infinite budget means that part is sent unperturbed (no
privacy for it); the feature replacements ``rnd``/``one``/``ohd`` send no private feature (ε_x contributes 0).

What the code guarantees: the features are min-max normalised over all nodes (and constant columns
dropped) before the users perturb them, a statistic of every node's features that the LDP argument does not cover:
``as_published`` with ``not_covered = [preprocessing]``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, non_private, statement
from dpgnn.privacy.validation import check_int

__all__ = [
    "M_RULE_CONSTANT",
    "optimal_m",
    "AGM_DELTA",
    "FEATURE_MECHANISMS",
    "REPLACEMENTS",
    "NEIGHBOURING",
    "ACCOUNTED",
    "feature_method",
    "feature_samples",
    "privacy_ledger",
    "budget",
]

#: δ of the analytic-Gaussian feature baseline (the authors' choice; Sec. 5.1)
AGM_DELTA = 1e-10
#: the LDP feature mechanisms (Sec. 4.1 and the baselines of Sec. 5.1)
FEATURE_MECHANISMS = ("mbm", "1bm", "lpm", "agm")
#: feature replacements (Sec. 5.2): they carry no private information
REPLACEMENTS = ("rnd", "one", "ohd")
NEIGHBOURING = "LDP: any two (feature vector, label) pairs of one node"
ACCOUNTED = "one feature report and one label report per node, basic composition"


#: the constant of the paper's rule m* = max(1, min(d, floor(ε / 2.18))) (docs/papers/lpgnn.md#multi-bit-mechanism)
M_RULE_CONSTANT = 2.18


def optimal_m(epsilon: float, num_features: int) -> int:
    """The paper's sampling parameter ``m* = max(1, min(d, ⌊ε/2.18⌋))`` of the multi-bit mechanism (Sec. 4.1)."""
    d = check_int(num_features, "num_features", 1)
    if not (isinstance(epsilon, numbers.Real) and epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    return max(1, min(d, int(math.floor(float(epsilon) / M_RULE_CONSTANT))))


def _budget(value: Any, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0 or inf, got {value!r}") from None
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{name} must be > 0 (inf = no perturbation), got {value!r}")
    return v


def feature_method(method: str, eps_x: float) -> tuple[str, float]:
    """``(method, ε_x)`` checked and normalised: any mechanism at ``ε_x = inf`` is ``raw`` (features sent
    unperturbed); ``raw`` or a replacement with a finite ε_x is refused (a false privacy claim)."""
    valid = FEATURE_MECHANISMS + ("raw",) + REPLACEMENTS
    m = str(method).strip().lower()
    if m not in valid:
        raise ValueError(f"feature method must be one of {list(valid)}, got {method!r}")
    e = _budget(eps_x, "eps_x")
    if m in FEATURE_MECHANISMS and math.isinf(e):
        m = "raw"  # ε_x = ∞: every mechanism reduces to sending the features unperturbed
    if m == "raw" and math.isfinite(e):
        raise ValueError(
            f"feature method 'raw' adds no noise, so eps_x={eps_x} would be a false privacy claim; "
            "use eps_x=inf or a mechanism (mbm, 1bm, lpm, agm)"
        )
    if m in REPLACEMENTS and math.isfinite(e):
        raise ValueError(f"feature replacement {m!r} uses no private feature; pass eps_x=inf")
    return m, e


def feature_samples(
    method: str, eps_x: float, num_features: int, m: int | None = None, *, name: str = "m"
) -> int | None:
    """Coordinates a node reports: ``mbm`` -- ``m`` when given (an integer in [1, d]) else the paper's rule
    :func:`optimal_m` (Sec. 4.1); ``1bm`` -- ``d``; otherwise (or ``ε_x = inf``) ``None``."""
    if method == "mbm" and math.isfinite(eps_x):
        mm = optimal_m(eps_x, num_features) if m is None else int(m)
        if not 1 <= mm <= num_features:
            raise ValueError(f"{name} must be an integer in [1, d] = [1, {num_features}], got {m}")
        return mm
    if method == "1bm" and math.isfinite(eps_x):
        return int(num_features)
    return None


def _epsilon_delta(method: str, feature_epsilon: float, eps_y: float) -> tuple[float, float]:
    """Basic composition of the two pure reports (``inf`` when either is sent in the clear); δ of ``agm``."""
    return feature_epsilon + eps_y, AGM_DELTA if method == "agm" else 0.0


def privacy_ledger(method: str, eps_x: float, eps_y: float, num_features: int, m: int | None = None) -> dict[str, Any]:
    """The per-node privacy statement of one LPGNN run (flat, for a result row)."""
    meth, ex = feature_method(method, eps_x)
    ey = _budget(eps_y, "eps_y")
    d = int(num_features)
    mm = feature_samples(meth, ex, d, m)
    feat_eps = 0.0 if meth in REPLACEMENTS else ex
    total, delta = _epsilon_delta(meth, feat_eps, ey)
    level = "none" if math.isinf(total) and math.isinf(ey) and math.isinf(feat_eps) else "node-ldp"
    if level == "none":
        guarantee = non_private()
    else:  # features min-max normalised over all nodes (and constant columns dropped) before the users perturb
        guarantee = statement(AS_PUBLISHED, NEIGHBOURING, accounted=ACCOUNTED, not_covered=[PREPROCESSING])
    return {
        "level": level,
        **guarantee,
        "mechanism": f"features={meth}" + (f"(m={mm})" if mm else "") + "; labels=rr",
        "eps_x": ex,
        "eps_y": ey,
        "epsilon": total,
        "delta": delta,
        "m": mm,
        "feature_epsilon": feat_eps,
        "accountant": "basic composition of the feature and label reports (each sent once; post-processing after)",
    }


def _option_budget(value: float, option: str) -> float:
    v = float(value)
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{option} must be > 0 (use inf for no perturbation), got {value}")
    return v


def budget(
    feature_epsilon: float, label_epsilon: float, num_features: int, mechanism: str = "mbm", m: int | None = None
) -> dict[str, Any]:
    """The privacy statement of one LPGNN collection as the calculator prints it (errors name its options)."""
    ex = _option_budget(feature_epsilon, "--feature-epsilon")
    ey = _option_budget(label_epsilon, "--label-epsilon")
    if mechanism not in FEATURE_MECHANISMS:
        raise ValueError(f"--mechanism must be one of {list(FEATURE_MECHANISMS)}, got {mechanism!r}")
    if isinstance(num_features, bool) or int(num_features) != num_features or num_features < 1:
        raise ValueError(f"--num-features must be an integer >= 1, got {num_features}")
    d = int(num_features)
    out: dict[str, Any] = {"feature_epsilon": ex, "label_epsilon": ey, "num_features": d, "mechanism": mechanism}
    if m is not None and mechanism != "mbm":
        raise ValueError("--m applies to the multi-bit mechanism (mbm) only")
    if math.isfinite(ex):
        mm = feature_samples(mechanism, ex, d, m, name="--m")
        out["m"] = mm
        out["epsilon_per_sampled_coordinate"] = ex / mm if mm else ex / d
    eps, delta = _epsilon_delta(mechanism if math.isfinite(ex) else "raw", ex, ey)
    out["epsilon"] = eps
    out["delta"] = delta
    out["neighbouring"] = NEIGHBOURING
    out["accountant"] = "basic composition of feature and label reports (pure LDP; post-processing after)"
    return out
