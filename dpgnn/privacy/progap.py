"""ProGAP accounting (Sajadmanesh & Gatica-Perez, WSDM 2024; docs/papers/progap.md#edge-level-privacy and
docs/papers/progap.md#node-level-privacy): events, paper bounds, calibration.

Pure math, no graphs (the method itself is :mod:`dpgnn.methods.progap`).

- **edge level** (add/remove one edge): ``K`` NAP queries of L2 sensitivity 1 with Gaussian noise ``σ`` — the
  composition of ``K`` Gaussians. Tight accountant ``exact_gaussian`` (= autodp's ``ComposeGaussian`` + exact
  conversion; our default, ``fidelity="paper"``); the paper's Theorem 4.1 bound ``K/(2σ²) + √(2K log(1/δ))/σ``
  beside it. The authors' code, run side by side, does *not* compose exactly: its NAP mechanism is not autodp's
  Gaussian class, so autodp falls back to generic RDP composition (``autodp_composition``; autodp 0.2.3.1), which
  needs more noise for the same ε: σ 4.977 / 7.038 / 8.620 at ε = 1, δ = 1e-7, K = 1 / 2 / 3 against our
  4.679 / 6.617 / 8.104. ``fidelity="authors_code"`` reproduces that calibration (:data:`FIDELITY_ACCOUNTANT`).
- **node level** (add/remove one node with its edges, degrees bounded by ``D``): ``K`` NAP queries (sensitivity
  ``√D``, noise ``z√D``) and ``K + 1`` DP-SGD runs (clip ``C``, noise ``zC``, Poisson rate ``B/N``, ``E⌊N/B⌋``
  steps each), one shared multiplier ``z``. Tight accountant ``autodp`` (the authors'); ``rdp`` is our own
  independent one; the paper's Theorem 4.2 bound beside them. GAP uses the same events with 2 DP-SGD runs.

What the code guarantees (:func:`guarantee_statement`):

- **edge level, directed** (the authors' accounting, default): one *directed* edge ``u → v`` enters one aggregate
  row (``v``'s) as a unit vector, L2 sensitivity 1. The Facebook100 graphs are undirected and stored as two
  directed edges, so removing one friendship moves two rows (``u``'s and ``v``'s), L2 sensitivity ``√2``: the ε
  does not cover one undirected edge (``as_published``).
- **edge level, undirected** (``edge_relation="undirected"``): the NAP noise std is ``σ·√2`` for the same
  calibrated multiplier, so the ε of the same event holds for add/remove one undirected edge (``sound``; model
  selection on validation labels is post-processing here: labels and features are public at edge level).
- **node level**: removing node ``w`` (in- and out-degrees capped at ``D`` by :func:`bound_degree`) changes the at
  most ``D`` rows ``w`` feeds by a unit vector each: L2 ``√D``. ``w``'s *own* aggregate row (norm up to ``D``) is
  *not* covered by ``√D``: it exists only in the graph that contains ``w``. It reaches the released model only as
  one DP-SGD example (per-sample clipping ``C`` and Poisson sampling bound its effect whatever its value) and, after
  the next stage's row normalisation, as one unit vector in each of ``w``'s out-neighbours' rows (counted in
  ``√D``); releasing the aggregate matrix, or ``w``'s own prediction, is not covered. The random in-edge sampling of
  the degree cap also depends on ``w``: adding ``w`` to a full in-neighbourhood swaps one sampled neighbour, a row
  change of up to 2, not 1 (the paper's argument, like GAP's, treats the capped graph as fixed). The best
  validation epoch per stage is chosen on private labels. Hence ``as_published``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from dpgnn.fidelity import FIDELITIES, Fidelity, parse
from dpgnn.privacy.accountant import epsilon as event_epsilon
from dpgnn.privacy.calibration import calibrate
from dpgnn.privacy.events import ComposedEvent, Event, GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpgnn.privacy.guarantee import AS_PUBLISHED, MODEL_SELECTION, SOUND, non_private, statement
from dpgnn.privacy.validation import check_fraction, check_int, check_positive

__all__ = [
    "LEVELS",
    "DEFAULT_ACCOUNTANT",
    "DEFAULT_RTOL",
    "default_delta",
    "stage_steps",
    "accounted_steps",
    "privacy_event",
    "theorem41_epsilon",
    "theorem42_epsilon",
    "calibrate_noise",
    "privacy_ledger",
    "EDGE_RELATIONS",
    "edge_sensitivity",
    "guarantee_statement",
    "FIDELITIES",
    "FIDELITY_ACCOUNTANT",
    "accountant_for",
    "check_level",
]

#: edge-level neighbouring relations: one directed edge (the authors') or one undirected edge (two directed ones)
EDGE_RELATIONS = ("directed", "undirected")


def edge_sensitivity(edge_relation: str) -> float:
    """L2 sensitivity of one NAP query (unit-norm rows summed over in-neighbours) to one edge: removing a directed
    edge ``u → v`` takes one unit vector out of row ``v`` (1); removing an undirected edge takes one out of row
    ``v`` and one out of row ``u`` (``√(1² + 1²) = √2``)."""
    if edge_relation not in EDGE_RELATIONS:
        raise ValueError(f"edge_relation must be one of {EDGE_RELATIONS}, got {edge_relation!r}")
    return 1.0 if edge_relation == "directed" else math.sqrt(2.0)


def guarantee_statement(
    level: str, *, edge_relation: str = "directed", dpsgd_runs: int = 0, aggregations: int = 0, method: str = "progap"
) -> dict[str, Any]:
    """Guarantee fields of a ProGAP/GAP-style run (module docstring, "What the code guarantees")."""
    check_level(level)
    if level == "none":
        return non_private()
    if level == "edge":
        sens = edge_sensitivity(edge_relation)
        accounted = (
            f"{aggregations} NAP Gaussian queries, noise std = multiplier x {sens:.4g} (L2 sensitivity of "
            f"one {edge_relation} edge)"
        )
        if aggregations == 0:
            return statement(
                SOUND,
                f"add/remove one {edge_relation} edge",
                accounted="nothing private is used (no aggregation): epsilon = 0",
            )
        if edge_relation == "directed":
            return statement(
                AS_PUBLISHED,
                "add/remove one directed edge",
                accounted=accounted,
                issues=[
                    "the graphs are undirected: one undirected edge is two directed edges and "
                    "moves two aggregate rows (L2 sqrt(2)); use edge_relation='undirected'"
                ],
            )
        return statement(SOUND, "add/remove one undirected edge (both directions)", accounted=accounted)
    issues = []
    if aggregations:
        issues = [
            "the removed node's own aggregate row (norm up to D) is not covered by the sqrt(D) sensitivity: it "
            "reaches the model only as one clipped DP-SGD example and, normalised, in its out-neighbours' rows",
            "the random in-edge sampling of the degree cap depends on the node (a swap moves a row by up to 2)",
        ]
    return statement(
        AS_PUBLISHED,
        "add/remove one node with its edges (degrees capped at D)",
        accounted=f"{aggregations} NAP Gaussian queries (sensitivity sqrt(D)) + {dpsgd_runs} DP-SGD runs "
        "(per-sample clipping, Poisson sampling)",
        not_covered=[MODEL_SELECTION],
        issues=issues,
    )


LEVELS = ("none", "edge", "node")

#: accountant used by default per level (docs/papers/progap.md#edge-level-privacy and
#: docs/papers/progap.md#node-level-privacy; at edge level the exact composition, tighter than the
#: authors' code, see FIDELITY_ACCOUNTANT)
DEFAULT_ACCOUNTANT = {"edge": "exact_gaussian", "node": "autodp"}

#: accountant per fidelity and level: ``authors_code`` = what the official code computes (measured side by side);
#: the fidelities' values are :data:`dpgnn.fidelity.FIDELITIES` (re-exported here as ``FIDELITIES``)
FIDELITY_ACCOUNTANT = {
    Fidelity.PAPER: DEFAULT_ACCOUNTANT,
    Fidelity.AUTHORS_CODE: {"edge": "autodp_composition", "node": "autodp"},
}


def accountant_for(level: str, fidelity: Fidelity | str = Fidelity.PAPER, accountant: str | None = None) -> str:
    """The accountant of ``level`` under ``fidelity`` (parsed: ``ValueError`` for an unknown one; an explicit
    ``accountant`` wins)."""
    fidelity = parse(fidelity, "fidelity")
    return accountant or FIDELITY_ACCOUNTANT[fidelity][level]


#: calibration tolerance on ε per level: the edge-level profile is closed form, so calibrating to 1e-6 is free and
#: lands on the exact σ of the reference table (docs/papers/progap.md#edge-level-privacy) (a 1e-3 tolerance on ε leaves
#: σ up to ~0.1% too large)
DEFAULT_RTOL = {"edge": 1e-6, "node": 1e-3}


# ---------------------------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------------------------
def check_level(level: str) -> str:
    """``level`` if it is one of :data:`LEVELS` (``none``, ``edge``, ``node``), else ``ValueError``."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return level


# ---------------------------------------------------------------------------------------------------------------
# privacy: δ rule, events, paper bounds, calibration
# ---------------------------------------------------------------------------------------------------------------
def default_delta(count: int) -> float:
    """The authors' δ rule: ``10^-(number of decimal digits of count)`` (count = directed edges at edge level,
    training nodes at node level; docs/papers/progap.md#edge-level-privacy and
    docs/papers/progap.md#node-level-privacy), so that δ < 1/count."""
    n = check_int(count, "count", 1)
    return 10.0 ** (-len(str(n)))


def stage_steps(train_nodes: int, batch_size: int, epochs: int) -> tuple[float, int]:
    """``(sample_rate, steps)`` of one DP-SGD stage: rate ``min(1, B/N)``, ``epochs · max(1, ⌊N/B⌋)`` steps."""
    n = check_int(train_nodes, "train_nodes", 1)
    b = check_int(batch_size, "batch_size", 1)
    e = check_int(epochs, "epochs", 1)
    return min(1.0, b / n), e * max(1, n // b)


def accounted_steps(train_nodes: int, batch_size: int, epochs: int) -> int:
    """Steps of one DP-SGD stage as the authors' accountant counts them: ``⌊E·N/B⌋``
    (docs/papers/progap.md#node-level-privacy), never fewer than
    the ``E·⌊N/B⌋`` steps :func:`stage_steps` trains, so counting them over-states ε by a hair, never under-states
    it (e.g. N = 19,804, B = 256, E = 5: 386 accounted for 385 trained). This count reproduces the reference
    noise multipliers to 3 digits; the trained count gives 0.1% smaller ones."""
    _, trained = stage_steps(train_nodes, batch_size, epochs)
    return max(trained, int(epochs) * int(train_nodes) // int(batch_size))


def privacy_event(
    level: str,
    noise: float,
    *,
    aggregations: int,
    dpsgd_runs: int = 0,
    train_nodes: int = 1,
    batch_size: int = 1,
    epochs: int = 1,
) -> Event | None:
    """The privacy event of a ProGAP/GAP run in units of sensitivity (``None`` when it has no cost).

    ``aggregations`` NAP queries (Gaussian, noise multiplier ``noise``) plus, at node level, ``dpsgd_runs``
    DP-SGD runs (Poisson-sampled Gaussian, same multiplier, rate ``B/N``) of
    ``accounted_steps(train_nodes, batch_size, epochs)`` steps each.
    """
    check_level(level)
    k = check_int(aggregations, "aggregations", 0)
    runs = check_int(dpsgd_runs, "dpsgd_runs", 0)
    z = check_positive(noise, "noise")
    parts: list[Event] = []
    if k:
        parts.append(SelfComposedEvent(GaussianEvent(z), k) if k > 1 else GaussianEvent(z))
    if level == "node" and runs:
        q, _ = stage_steps(train_nodes, batch_size, epochs)
        t = accounted_steps(train_nodes, batch_size, epochs)
        step: Event = PoissonSampledEvent(q, GaussianEvent(z)) if q < 1 else GaussianEvent(z)
        parts.append(SelfComposedEvent(step, t * runs) if t * runs > 1 else step)
    if level == "edge" and runs:
        raise ValueError("dpsgd_runs must be 0 at edge level (training on cached aggregates is post-processing)")
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else ComposedEvent(parts)


def theorem41_epsilon(sigma: float, depth: int, delta: float) -> float:
    """Paper Theorem 4.1 (edge level, RDP + classic conversion): ``ε = K/(2σ²) + √(2K log(1/δ))/σ``."""
    s, k, d = check_positive(sigma, "sigma"), check_int(depth, "depth", 0), check_fraction(delta)
    return 0.0 if k == 0 else k / (2 * s * s) + math.sqrt(2 * k * math.log(1 / d)) / s


def theorem42_epsilon(
    noise_multiplier: float,
    depth: int,
    sample_rate: float,
    steps: int,
    delta: float,
    *,
    dpsgd_runs: int | None = None,
    max_order: int = 256,
) -> float:
    """Paper Theorem 4.2 (node level): ``min_α [(K+1)·T·ε_SGM(α) + Kα/(2z²) + log(1/δ)/(α−1)]`` over integer
    ``α ∈ [2, max_order]``, with ``σ_GP = z·C``, ``σ_AP = z·√D`` (so ``C²/σ_GP² = D/σ_AP² = 1/z²``) and ``ε_SGM``
    the Zhu & Wang (2019) upper bound for the Poisson-subsampled Gaussian (the sum printed in Eq. 11)."""
    z = check_positive(noise_multiplier, "noise_multiplier")
    k = check_int(depth, "depth", 0)
    q = float(sample_rate)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
    t = check_int(steps, "steps", 1)
    d = check_fraction(delta)
    runs = k + 1 if dpsgd_runs is None else check_int(dpsgd_runs, "dpsgd_runs", 0)
    best = math.inf
    for a in range(2, check_int(max_order, "max_order", 2) + 1):
        if q < 1.0:
            j = np.arange(3, a + 1)
            log_binom = gammaln(a + 1) - gammaln(j + 1) - gammaln(a - j + 1)
            terms = [
                (a - 1) * math.log1p(-q) + math.log(a * q - q + 1),
                math.log(a * (a - 1) / 2) + 2 * math.log(q) + (a - 2) * math.log1p(-q) + 1 / z**2,
            ]
            terms += list(log_binom + (a - j) * math.log1p(-q) + j * math.log(q) + (j - 1) * j / (2 * z**2))
            sgm = float(logsumexp(terms)) / (a - 1)
        else:
            sgm = a / (2 * z**2)
        eps = runs * t * sgm + k * a / (2 * z**2) + math.log(1 / d) / (a - 1)
        best = min(best, eps)
    return best


@functools.lru_cache(maxsize=4096)
def _calibrate_cached(
    level: str,
    target: float,
    delta: float,
    aggregations: int,
    dpsgd_runs: int,
    train_nodes: int,
    batch_size: int,
    epochs: int,
    accountant: str,
    rtol: float,
    lower: float,
    upper: float,
):
    def make(v: float) -> Event:
        return privacy_event(
            level,
            v,
            aggregations=aggregations,
            dpsgd_runs=dpsgd_runs,
            train_nodes=train_nodes,
            batch_size=batch_size,
            epochs=epochs,
        )

    return calibrate(make, target, delta, lower=lower, upper=upper, accountant=accountant, rtol=rtol)


def calibrate_noise(
    level: str,
    target_epsilon: float,
    delta: float,
    *,
    aggregations: int,
    dpsgd_runs: int = 0,
    train_nodes: int = 1,
    batch_size: int = 1,
    epochs: int = 1,
    accountant: str | None = None,
    rtol: float | None = None,
    lower: float = 0.05,
    upper: float = 2000.0,
    fidelity: Fidelity | str = Fidelity.PAPER,
):
    """Smallest noise multiplier with ``ε ≤ target_epsilon`` (a :class:`dpgnn.privacy.Calibration`; cached).

    ``rtol`` (relative tolerance on ε below the target) defaults to ``DEFAULT_RTOL[level]``; ``fidelity`` picks
    the accountant (:func:`accountant_for`) unless ``accountant`` is given."""
    check_level(level)
    if level == "none":
        raise ValueError("level='none' has no noise to calibrate")
    if (
        privacy_event(
            level,
            1.0,
            aggregations=aggregations,
            dpsgd_runs=dpsgd_runs,
            train_nodes=train_nodes,
            batch_size=batch_size,
            epochs=epochs,
        )
        is None
    ):
        raise ValueError("this run touches no private data (no aggregation and no DP-SGD run): nothing to calibrate")
    eps = check_positive(target_epsilon, "target_epsilon")
    acc = accountant_for(level, fidelity, accountant)
    tol = DEFAULT_RTOL[level] if rtol is None else rtol
    cal = _calibrate_cached(
        level,
        eps,
        check_fraction(delta),
        int(aggregations),
        int(dpsgd_runs),
        int(train_nodes),
        int(batch_size),
        int(epochs),
        acc,
        float(tol),
        float(lower),
        float(upper),
    )
    assert cal.epsilon <= eps
    return cal


def privacy_ledger(
    level: str,
    *,
    depth: int,
    delta: float | None = None,
    noise: float | None = None,
    target_epsilon: float | None = None,
    aggregations: int | None = None,
    dpsgd_runs: int | None = None,
    train_nodes: int = 1,
    batch_size: int = 1,
    epochs: int = 1,
    max_degree: int | None = None,
    clip: float = 1.0,
    accountant: str | None = None,
    method: str = "progap",
    rtol: float | None = None,
    edge_relation: str = "directed",
    fidelity: Fidelity | str = Fidelity.PAPER,
) -> dict[str, Any]:
    """Noise and ε of a ProGAP-style run, with the paper's bound beside the numerical accountant.

    Give either ``noise`` (the multiplier ``z``/``σ``) or ``target_epsilon`` (then calibrated). ``aggregations``
    defaults to ``depth`` and ``dpsgd_runs`` to ``depth + 1`` at node level (GAP: 2). The returned dict holds
    ``epsilon`` (numerical accountant, the one results are reported with), ``epsilon_paper_bound`` (Theorem
    4.1/4.2; ProGAP only), ``accountant``, the NAP noise std ``sigma_nap``, the DP-SGD noise std ``sigma_sgd``, the
    sampling rate and steps. ``edge_relation`` (edge level): ``"directed"`` (the authors', sensitivity 1) or
    ``"undirected"`` (sensitivity √2: the same ε, NAP noise std ``σ·√2``). The guarantee fields
    (:func:`guarantee_statement`) are merged in. ``fidelity="authors_code"`` calibrates with the authors' code's
    accountant (:data:`FIDELITY_ACCOUNTANT`) and is recorded as ``fidelity``.
    """
    check_level(level)
    sens_edge = edge_sensitivity(edge_relation)
    k = check_int(depth, "depth", 0)
    aggs = k if aggregations is None else check_int(aggregations, "aggregations", 0)
    if level == "none":
        return _none_ledger(k)
    if delta is None:
        raise ValueError("delta is required for a private run (see default_delta)")
    d = check_fraction(delta)
    runs = (k + 1 if dpsgd_runs is None else check_int(dpsgd_runs, "dpsgd_runs", 0)) if level == "node" else 0
    if level == "node":
        dd = check_int(max_degree, "max_degree", 1) if max_degree is not None else None
        if dd is None and aggs:
            raise ValueError("max_degree is required at node level (degree bound D)")
    kw = dict(aggregations=aggs, dpsgd_runs=runs, train_nodes=train_nodes, batch_size=batch_size, epochs=epochs)
    fidelity = parse(fidelity, "fidelity")
    acc = accountant_for(level, fidelity, accountant)
    if (noise is None) == (target_epsilon is None):
        raise ValueError("give exactly one of noise (the noise multiplier) and target_epsilon")
    z, eps, cal_info = _noise_and_epsilon(level, d, acc, noise, target_epsilon, rtol, kw)
    out: dict[str, Any] = {
        "level": level,
        "method": method,
        "depth": k,
        "aggregations": aggs,
        "delta": d,
        "noise_multiplier": z,
        "epsilon": eps,
        "target_epsilon": cal_info,
        "accountant": acc if z > 0 else "none (no private data used)",
        "fidelity": fidelity,
    }
    if level == "edge":
        return _add_edge_fields(out, sens_edge, edge_relation)
    return _add_node_fields(out, max_degree=max_degree, clip=clip, **kw)


def _none_ledger(depth: int) -> dict[str, Any]:
    """The ledger of a non-private run (``level="none"``): no mechanism, ``ε = inf``."""
    return {
        "level": "none",
        "mechanism": "none",
        "epsilon": math.inf,
        "delta": 0.0,
        "accountant": "none",
        "noise_multiplier": 0.0,
        "sigma_nap": 0.0,
        "depth": depth,
        **guarantee_statement("none"),
    }


def _noise_and_epsilon(
    level: str,
    delta: float,
    accountant: str,
    noise: float | None,
    target_epsilon: float | None,
    rtol: float | None,
    kw: dict[str, int],
) -> tuple[float, float, float | None]:
    """``(noise multiplier, ε, calibration target or None)`` of :func:`privacy_ledger`: zero when the run touches
    nothing private (e.g. an edge-level MLP), calibrated to ``target_epsilon``, or ``noise`` with its ε."""
    if privacy_event(level, 1.0, **kw) is None:
        return 0.0, 0.0, None
    if target_epsilon is not None:
        cal = calibrate_noise(level, target_epsilon, delta, accountant=accountant, rtol=rtol, **kw)
        return cal.value, cal.epsilon, cal.target_epsilon
    z = check_positive(noise, "noise")
    return z, event_epsilon(privacy_event(level, z, **kw), delta, accountant), None


def _add_edge_fields(out: dict[str, Any], sens_edge: float, edge_relation: str) -> dict[str, Any]:
    """``out`` (the common fields of :func:`privacy_ledger`) with the edge level's: NAP noise std and sensitivity,
    neighbouring relation, mechanism, guarantee and, for ProGAP, Theorem 4.1's bound."""
    z, aggs, d = out["noise_multiplier"], out["aggregations"], out["delta"]
    out.update(
        sigma_nap=z * sens_edge,
        sensitivity_nap=sens_edge,
        edge_relation=edge_relation,
        mechanism=f"{aggs} x NAP Gaussian (sensitivity {sens_edge:.4g}: one {edge_relation} edge)",
        **guarantee_statement("edge", edge_relation=edge_relation, aggregations=aggs if z > 0 else 0),
    )
    if out["method"] == "progap" and z > 0:
        out["epsilon_paper_bound"] = theorem41_epsilon(z, aggs, d)
        out["paper_bound"] = "Theorem 4.1"
    return out


def _add_node_fields(
    out: dict[str, Any],
    *,
    max_degree: int | None,
    clip: float,
    aggregations: int,
    dpsgd_runs: int,
    train_nodes: int,
    batch_size: int,
    epochs: int,
) -> dict[str, Any]:
    """``out`` (the common fields of :func:`privacy_ledger`) with the node level's: NAP and DP-SGD noise stds,
    sampling and steps, mechanism, guarantee and, for ProGAP with ``K + 1`` DP-SGD runs, Theorem 4.2's bound."""
    z, aggs, runs = out["noise_multiplier"], aggregations, dpsgd_runs
    q, trained = stage_steps(train_nodes, batch_size, epochs)
    t = accounted_steps(train_nodes, batch_size, epochs)
    dd = max_degree if max_degree is not None else 0
    out.update(
        **guarantee_statement("node", aggregations=aggs, dpsgd_runs=runs),
        sigma_nap=z * math.sqrt(dd),
        sensitivity_nap=math.sqrt(dd),
        max_degree=max_degree,
        sigma_sgd=z * clip,
        clip=clip,
        sample_rate=q,
        steps_per_run=t,
        steps_trained_per_run=trained,
        dpsgd_runs=runs,
        batch_size=batch_size,
        train_nodes=train_nodes,
        epochs=epochs,
        mechanism=f"{aggs} x NAP Gaussian (sensitivity sqrt(D)) + {runs} x DP-Adam (Poisson sampling)",
    )
    if out["method"] == "progap" and z > 0 and runs == aggs + 1:
        out["epsilon_paper_bound"] = theorem42_epsilon(z, aggs, q, t, out["delta"])
        out["paper_bound"] = "Theorem 4.2"
    return out
