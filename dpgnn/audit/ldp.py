"""Distinguishing-test audits of the local mechanisms (LDP-Auditor style; Arcolezi & Gambs 2023).

For an ε-LDP mechanism ``M`` and two inputs ``x_in, x_out`` of one node, every test ``T`` satisfies
``P[T(M(x_in))] ≤ e^ε P[T(M(x_out))] + δ``. The audit draws ``trials`` reports from each of the two worst-case
inputs (the two ends of the feature range ``[low, high]``; the all-low and all-high vectors for the per-node vector
mechanisms; two different labels for randomized response), splits them in halves, picks the threshold test
``statistic ≥ t`` that gives the largest bound on the first half, and reports the Clopper–Pearson ε lower bound
(:func:`dpgnn.audit.bounds.epsilon_lower_bound`) of that one test on the second half. Choosing on one half and
measuring on the other keeps the confidence level honest (no multiple-testing inflation).

Statistics are the likelihood-ratio orderings of each mechanism (monotone in the report), so the test family
contains the most powerful one: LM/PM/Gaussian — the report (clipped to the range for Laplace); PGC — the bit;
multi-bit / 1bm — the sum of the ±1 report; RR — "the report equals the first label".

Audited mechanisms (``MECHANISMS``): LPGCN's ``laplace`` (LM), ``piecewise`` (PM), ``pgc`` (= Duchi et al.);
LPGNN's ``mbm`` (multi-bit with the paper's m rule), and its feature baselines ``1bm`` (m = d), ``lpm`` (Laplace
with scale ``d/ε`` per coordinate), ``agm`` (analytic Gaussian, L2 sensitivity √d, δ = 1e-10); label ``rr``.
The vector mechanisms are audited on ``d = VECTOR_DIM`` features (the guarantee holds for every d).

``broken_laplace`` is deliberately wrong — the Laplace mechanism with its noise scale halved while still claiming
ε (it is really 2ε-LDP) — and exists so that a test can show the audit catches it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from dpgnn.audit.bounds import threshold_audit
from dpgnn.audit.catalog import BROKEN, MECHANISMS
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.guarantee import AS_PUBLISHED, SOUND, statement
from dpgnn.privacy.lpgnn import AGM_DELTA  # δ of LPGNN's analytic Gaussian feature baseline ("agm")
from dpgnn.privacy.mechanisms import LaplaceMechanism
from dpgnn.utils import make_generator, stable_seed

__all__ = [
    "MECHANISMS",
    "BROKEN",
    "VECTOR_DIM",
    "NUM_CLASSES",
    "NEIGHBOURING",
    "HalvedScaleLaplace",
    "sample_reports",
    "guarantee_statement",
    "audit_mechanism",
]

#: feature dimension used to audit the per-node vector mechanisms
VECTOR_DIM = 4
#: number of classes used to audit randomized response on labels
NUM_CLASSES = 7


class HalvedScaleLaplace(LaplaceMechanism):
    """**Deliberately broken** Laplace mechanism: noise scale ``Δ/(2ε)`` while claiming ε-LDP (it is 2ε-LDP).

    Exists only for the audit's negative control; never registered as a mechanism."""

    name = "broken_laplace"

    @property
    def scale(self) -> float:
        """The Laplace scale actually used, ``Δ/(2ε)``: half the one the ε claim needs."""
        return self.span / (2.0 * self.epsilon)


def _scalar(name: str):
    def build(eps: float):
        return get_mechanism(name, epsilon=eps)

    return build


def _build(name: str, eps: float):
    d = VECTOR_DIM
    if name in ("laplace", "piecewise", "pgc"):
        return get_mechanism(name, epsilon=eps)
    if name == "mbm":
        return get_mechanism("multibit", epsilon=eps, num_features=d)
    if name == "1bm":
        return get_mechanism("multibit", epsilon=eps, m=d, num_features=d)
    if name == "lpm":  # LPGNN draw_features: Laplace with ε/d per coordinate (L1 sensitivity d)
        return get_mechanism("laplace", epsilon=eps / d)
    if name == "agm":
        return get_mechanism("analytic_gaussian", epsilon=eps, delta=AGM_DELTA, sensitivity=math.sqrt(d))
    if name == "rr":
        return get_mechanism("rr", epsilon=eps, num_classes=NUM_CLASSES)
    if name == "broken_laplace":
        return HalvedScaleLaplace(eps)
    raise ValueError(f"unknown mechanism {name!r}; valid: {sorted(MECHANISMS) + sorted(BROKEN)}")


def _kind(name: str) -> str:
    return {**MECHANISMS, **BROKEN}[name][2]


def sample_reports(name: str, epsilon: float, trials: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """``trials`` test statistics of reports from the "in" and the "out" worst-case input, and the claimed δ."""
    if name not in MECHANISMS and name not in BROKEN:
        raise ValueError(f"unknown mechanism {name!r}; valid: {sorted(MECHANISMS) + sorted(BROKEN)}")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 4:
        raise ValueError(f"trials must be an integer >= 4, got {trials!r}")
    mech = _build(name, epsilon)
    kind = _kind(name)
    gen = make_generator(stable_seed("ldp-audit", name, float(epsilon), seed))
    stats = []
    for side in ("in", "out"):
        if kind == "label":
            y = torch.full((trials,), 0 if side == "in" else 1, dtype=torch.long)
            out = mech.perturb(y, gen)
            stats.append((out == 0).double().numpy())
            continue
        dim = (trials,) if kind.startswith("scalar") else (trials, VECTOR_DIM)
        # the two ends of the declared range; the unbounded Gaussian takes 0 and 1 per coordinate, which is its
        # calibrated L2 sensitivity √d for d coordinates
        lo = mech.low if math.isfinite(mech.low) else 0.0
        hi = mech.high if math.isfinite(mech.high) else 1.0
        x = torch.full(dim, hi if side == "in" else lo, dtype=torch.float64)
        out = mech.perturb(x, gen)
        if kind.endswith("clip"):
            out = out.clamp(lo, hi)  # Laplace's likelihood ratio is flat outside [low, high]
        stats.append((out if kind.startswith("scalar") else out.sum(dim=1)).numpy())
    return stats[0], stats[1], float(getattr(mech, "delta", 0.0))


#: the neighbouring relation of a local mechanism: any two inputs one user may hold (in the declared range)
NEIGHBOURING = "any two inputs of one user (local DP)"


def guarantee_statement(name: str) -> dict[str, Any]:
    """Guarantee fields (:mod:`dpgnn.privacy.guarantee`) of one report of the local mechanism ``name`` at its claimed
    ε: ``sound`` for a registered mechanism on inputs in its declared range (its own ε-LDP calibration, no
    composition, nothing data-dependent outside it); ``as_published`` with an issue for the deliberately broken
    control, whose claimed ε does not hold."""
    if name in MECHANISMS:
        label, unit, _ = MECHANISMS[name]
        return statement(
            SOUND,
            NEIGHBOURING,
            accounted=f"one report of {label} per {unit}, inputs in the declared range: the "
            "mechanism's own epsilon-LDP calibration (no composition)",
        )
    if name in BROKEN:
        label, unit, _ = BROKEN[name]
        return statement(
            AS_PUBLISHED,
            NEIGHBOURING,
            accounted=f"one report of {label} per {unit}, charged as the Laplace mechanism's epsilon",
            issues=[
                "deliberately broken control: the Laplace noise scale is halved, so the claimed "
                "epsilon does not hold (the mechanism is 2*epsilon-LDP); the audit must flag it"
            ],
        )
    raise ValueError(f"unknown mechanism {name!r}; valid: {sorted(MECHANISMS) + sorted(BROKEN)}")


def audit_mechanism(
    name: str, epsilon: float, *, trials: int, seed: int = 0, alpha: float = 0.05, max_thresholds: int = 512
) -> dict[str, Any]:
    """Audit one mechanism at one claimed ε: ``trials`` reports per input, half to choose the test, half to
    measure it. Returns a flat row: ``epsilon`` (claimed), ``epsilon_lb`` (lower bound, confidence 1 − alpha),
    ``epsilon_point`` (plug-in), the chosen threshold and counts, ``violation`` (lower bound above the claim)."""
    s_in, s_out, delta = sample_reports(name, epsilon, trials, seed)
    t, b = threshold_audit(s_in, s_out, delta=delta, alpha=alpha, max_thresholds=max_thresholds)
    label, unit, _ = {**MECHANISMS, **BROKEN}[name]
    return {
        "mechanism": name,
        "label": label,
        "unit": unit,
        "epsilon": float(epsilon),
        "delta": delta,
        "epsilon_lb": b.epsilon_lb,
        "epsilon_point": b.epsilon_point,
        "threshold": t,
        "tpr": b.tpr,
        "fpr": b.fpr,
        "trials": int(trials),
        "alpha": alpha,
        "violation": bool(b.epsilon_lb > epsilon),
    }


def audit_many(
    names: list[str],
    epsilons: list[float],
    *,
    trials: int,
    seed: int = 0,
    alpha: float = 0.05,
    progress: Callable[[str, float], None] | None = None,
) -> list[dict[str, Any]]:
    """:func:`audit_mechanism` over a grid (convenience for scripts and tests)."""
    rows = []
    for n in names:
        for e in epsilons:
            if progress:
                progress(n, e)
            rows.append(audit_mechanism(n, e, trials=trials, seed=seed, alpha=alpha))
    return rows
