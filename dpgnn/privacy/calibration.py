"""Conservative calibration: the parameter value (noise multiplier, scale, …) whose ε is at most a target.

One generic root finder, :func:`calibrate`, over any monotone one-parameter family of events, and the DP-SGD
convenience :func:`calibrate_noise_multiplier`. The returned value always satisfies ``ε(value) ≤ target``
(asserted; github.com/pytorch/opacus/issues/346 was a calibration that overshot), and its ε is within ``rtol``
(default 0.1 %) of the target unless the bracket end is reached; then :attr:`Calibration.target_reached` is False
and callers must say so (the CLI does: "the target cannot be reached; returned ε = …").

With ``accountant="pld"`` (privacy loss distributions, :class:`dpgnn.privacy.PldAccountant`) one evaluation costs
far more at small noise (a wider loss range), so the search first calibrates with the cheap ``"rdp"`` accountant
and brackets the PLD answer around that value (PLD is never looser than RDP up to its pessimistic discretisation),
widening step by step; the bracket ends of the caller are evaluated only if the search reaches them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpgnn.privacy.accountant import PldAccountant, get_accountant
from dpgnn.privacy.accountant import epsilon as _epsilon
from dpgnn.privacy.events import (
    Event,
    GaussianEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpgnn.privacy.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_positive_finite,
    check_sample_rate,
)

__all__ = ["Calibration", "calibrate", "calibrate_noise_multiplier", "dpsgd_event", "dpsgd_relation", "DPSGD_RELATIONS"]


@dataclass(frozen=True)
class Calibration:
    """Result of a calibration: the parameter ``value`` and the ``epsilon`` it achieves (≤ ``target_epsilon``)."""

    value: float
    epsilon: float
    target_epsilon: float
    delta: float
    accountant: str
    event: Event = field(repr=False)
    evaluations: int = 0
    #: False when the whole bracket is feasible: ``value`` is the bracket's cheap end and ``epsilon`` may be far
    #: below ``target_epsilon`` (the target cannot be reached with the parameter range searched)
    target_reached: bool = True

    def ledger(self) -> dict[str, Any]:
        """The calibration as a JSON-ready dict (the event as :meth:`Event.to_dict`), for a result row's ledger."""
        return {
            "value": self.value,
            "epsilon": self.epsilon,
            "target_epsilon": self.target_epsilon,
            "delta": self.delta,
            "accountant": self.accountant,
            "event": self.event.to_dict(),
            "target_reached": self.target_reached,
        }

    def describe(self, name: str = "value") -> str:
        """One line: what was calibrated, and (when it was not reached) that the target cannot be reached."""
        if self.target_reached:
            return (
                f"{name} = {self.value:.6g} calibrated to epsilon <= {self.target_epsilon:g} (epsilon = "
                f"{self.epsilon:.6g}, {self.accountant})"
            )
        return (
            f"target epsilon {self.target_epsilon:g} cannot be reached: the end of the searched range, "
            f"{name} = {self.value:.6g}, already gives epsilon = {self.epsilon:.6g} ({self.accountant}); "
            f"that value and its epsilon are returned"
        )


def calibrate(
    make_event: Callable[[float], Event],
    target_epsilon: float,
    delta: float,
    *,
    lower: float,
    upper: float,
    accountant: str = "rdp",
    rtol: float = 1e-3,
    max_evaluations: int = 200,
) -> Calibration:
    """Find the parameter ``v ∈ [lower, upper]`` of ``make_event(v)`` with ``ε ≤ target_epsilon``, closest to it.

    ε must be monotone in ``v``. If it decreases (a noise parameter), the smallest feasible ``v`` is returned;
    if it increases (e.g. a number of steps or a sampling rate), the largest. Bisection (geometric when
    ``lower > 0``) stops when the feasible end's ε is within ``rtol`` of the target (relative), or when the
    bracket cannot shrink further. Raises ``ValueError`` if no ``v`` in the bracket reaches the target.
    """
    if not callable(make_event):
        raise TypeError("make_event must be a callable float -> Event")
    target = check_epsilon(target_epsilon, "target_epsilon")
    d = check_delta(delta)
    lo = float(lower)
    hi = float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"need finite lower < upper, got lower={lower}, upper={upper}")
    rtol = check_positive_finite(rtol, "rtol")
    acc_name = accountant if isinstance(accountant, str) else type(accountant).__name__
    acc = get_accountant(accountant)  # validate the name early
    eps_of = _CountedEpsilon(make_event, d, accountant, max_evaluations)
    if isinstance(acc, PldAccountant):
        lo, hi = _pld_search_bracket(make_event, eps_of, acc, target, d, lo, hi, rtol, max_evaluations)
    value, eps_value, reached = _bisect(eps_of, target, lo, hi, rtol)
    assert eps_value <= target, (eps_value, target)
    return Calibration(
        value=value,
        epsilon=eps_value,
        target_epsilon=target,
        delta=d,
        accountant=acc_name,
        event=make_event(value),
        evaluations=eps_of.evaluations,
        target_reached=reached,
    )


class _CountedEpsilon:
    """ε of ``make_event(v)`` under ``accountant``, cached per ``v``; more than ``limit`` evaluations is an error."""

    def __init__(self, make_event: Callable[[float], Event], delta: float, accountant: Any, limit: int) -> None:
        self.make_event, self.delta, self.accountant, self.limit = make_event, delta, accountant, limit
        self.evaluations = 0
        self.cache: dict[float, float] = {}

    def __call__(self, v: float) -> float:
        if v in self.cache:
            return self.cache[v]
        self.evaluations += 1
        if self.evaluations > self.limit:
            raise RuntimeError(f"calibration did not converge in {self.limit} evaluations")
        ev = self.make_event(v)
        if not isinstance(ev, Event):
            raise TypeError(f"make_event({v}) must return an Event, got {ev!r}")
        self.cache[v] = _epsilon(ev, self.delta, self.accountant)
        return self.cache[v]


def _pld_search_bracket(
    make_event: Callable[[float], Event],
    eps_of: _CountedEpsilon,
    acc: PldAccountant,
    target: float,
    delta: float,
    lo: float,
    hi: float,
    rtol: float,
    max_evaluations: int,
) -> tuple:
    """The PLD search's bracket (:func:`_pld_bracket`), started from a cheap coarse PLD calibration when the
    caller's discretisation is finer than :data:`PLD_SEARCH_INTERVAL`."""
    start = None
    if acc.value_discretization_interval < PLD_SEARCH_INTERVAL:
        # a cheap coarse search first (pessimistic too), then bracket the fine answer around it
        coarse = calibrate(
            make_event,
            target,
            delta,
            lower=lo,
            upper=hi,
            rtol=max(rtol, 1e-2),
            accountant=PldAccountant(PLD_SEARCH_INTERVAL),
            max_evaluations=max_evaluations,
        )
        start = coarse.value if coarse.target_reached else None
    return _pld_bracket(make_event, eps_of, target, delta, lo, hi, rtol, start=start)


def _bisect(
    eps_of: Callable[[float], float], target: float, lo: float, hi: float, rtol: float
) -> tuple[float, float, bool]:
    """``(value, its ε, target reached)``: the feasible value of ``[lo, hi]`` whose ε is closest to ``target``, by
    bisection (geometric when ``lo > 0``) toward the infeasible end; ``ValueError`` when no end is feasible."""
    e_lo, e_hi = eps_of(lo), eps_of(hi)
    decreasing = e_lo >= e_hi
    feasible, infeasible = (hi, lo) if decreasing else (lo, hi)
    e_feasible, e_infeasible = (e_hi, e_lo) if decreasing else (e_lo, e_hi)
    if e_feasible > target:
        raise ValueError(
            f"target_epsilon={target} is not reachable in [lower, upper] = [{lo}, {hi}]: the best value "
            f"{feasible} gives epsilon={e_feasible:.6g}; widen the bracket"
        )
    if e_infeasible <= target:
        # the whole bracket is feasible: the end that is furthest in the "cheap" direction
        return infeasible, e_infeasible, e_infeasible >= target * (1.0 - rtol)
    geometric = lo > 0
    value, eps_value = feasible, e_feasible
    while eps_value < target * (1.0 - rtol):
        mid = math.sqrt(feasible * infeasible) if geometric else 0.5 * (feasible + infeasible)
        if mid in (feasible, infeasible):
            break
        e_mid = eps_of(mid)
        if e_mid <= target:
            feasible, value, eps_value = mid, mid, e_mid
        else:
            infeasible = mid
        if abs(feasible - infeasible) <= 1e-13 * max(abs(feasible), abs(infeasible)):
            break
    return value, eps_value, True


#: PLD discretisation of the first, coarse search (cheap; pessimistic like every PLD here); the answer is then
#: bracketed and bisected with the caller's (finer) accountant
PLD_SEARCH_INTERVAL = 1e-2


def _pld_bracket(
    make_event: Callable[[float], Event],
    eps_of: Callable[[float], float],
    target: float,
    delta: float,
    lo: float,
    hi: float,
    rtol: float,
    start: float | None = None,
) -> tuple:
    """A sub-bracket of ``[lo, hi]`` around the PLD answer, found from the (cheap) RDP calibration.

    Returns ``(lo, hi)`` unchanged when RDP does not support the family or cannot reach the target. Otherwise the
    RDP answer ``v`` is PLD-feasible (checked) and the search steps geometrically (factor 1.5, doubling the step
    each time it fails) toward the expensive, infeasible side until a PLD-infeasible value is found; the
    returned bracket has one end on each side of the target (or is the caller's end where the search reached it).
    """
    from dpgnn.privacy.accountant import RdpAccountant

    if not RdpAccountant().supports(make_event(hi)):
        return lo, hi
    factor = 1.5
    if start is None:
        try:
            # integer orders only: fast (finite binomial sums), and the hint need not be tight
            rd = calibrate(
                make_event,
                target,
                delta,
                lower=lo,
                upper=hi,
                rtol=max(rtol, 1e-2),
                accountant=RdpAccountant(orders=np.arange(2, 257)),
            )
        except ValueError:
            return lo, hi
        if not rd.target_reached:
            return lo, hi
        v = rd.value
    else:  # a coarse PLD answer: the fine one is close
        v, factor = float(start), 1.1
    hint_acc = RdpAccountant(orders=np.arange(2, 257))
    decreasing = _epsilon(make_event(lo), delta, hint_acc) > _epsilon(make_event(hi), delta, hint_acc)
    # ensure v is feasible (PLD ≤ RDP up to its pessimistic rounding); else step toward the feasible side
    while eps_of(v) > target:
        w = min(hi, v * factor) if decreasing else max(lo, v / factor)
        if w == v:
            return lo, hi
        v = w
    # step toward the infeasible (cheap-for-privacy, expensive-to-account) side until PLD exceeds the target
    u = v
    while True:
        w = max(lo, u / factor) if decreasing else min(hi, u * factor)
        if w == u:
            return (lo, v) if decreasing else (v, hi)
        if eps_of(w) > target:
            return (w, v) if decreasing else (v, w)
        v = u = w
        factor = factor * factor


#: DP-SGD's neighbouring relation per sampling scheme and the L2 sensitivity of the clipped-gradient sum under
#: it, in units of the clipping norm C: Poisson sampling goes with add/remove one record (one clipped gradient more
#: or less: C); fixed-size batches drawn without replacement go with replace one record (one clipped gradient
#: swapped for another: up to 2C). Balle, Barthe & Gaboardi 2018 (Sec. 5); DRW, Ayle et al., Sec. 4.
DPSGD_RELATIONS = {"poisson": ("add/remove one record", 1.0), "uniform": ("replace one record", 2.0)}


def dpsgd_relation(sampling: str) -> tuple:
    """``(neighbouring relation in words, sensitivity in units of C)`` of DP-SGD with ``sampling``
    (:data:`DPSGD_RELATIONS`): ``poisson`` → add/remove, ``C``; ``uniform`` → replace one, ``2C``."""
    if sampling not in DPSGD_RELATIONS:
        raise ValueError(f"sampling must be 'poisson' or 'uniform', got {sampling!r}")
    return DPSGD_RELATIONS[sampling]


def dpsgd_event(noise_multiplier: float, sample_rate: float, steps: int, sampling: str = "poisson") -> Event:
    """The event of ``steps`` DP-SGD steps: a sampled sensitivity-1 Gaussian, self-composed.

    Args:
        noise_multiplier: noise std **over the sensitivity of the sampling's neighbouring relation**
            (:func:`dpsgd_relation`): ``σ / C`` with ``poisson`` (add/remove one record, sensitivity ``C``), but
            ``σ / (2C)`` with ``uniform`` (replace one record, sensitivity ``2C``). A run that adds noise of std
            ``z·C`` to the clipped-gradient sum passes ``z / sensitivity`` (what ``dpgnn epsilon dpsgd -z`` does).
        sample_rate: ``poisson``: each record's inclusion probability; ``uniform``: batch size / dataset size.
            ``1`` is full-batch (no sampling event).
        steps: number of steps (self-compositions).
        sampling: ``"poisson"`` or ``"uniform"`` (fixed-size batches without replacement).

    Returns:
        ``steps`` compositions of the (Poisson or without-replacement) subsampled Gaussian with multiplier
        ``noise_multiplier``; the accountants (:mod:`dpgnn.privacy.accountant`) bound its (ε, δ) under the relation.
    """
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    q = check_sample_rate(sample_rate)
    t = check_count(steps, "steps")
    dpsgd_relation(sampling)
    base: Event = GaussianEvent(z)
    if q < 1.0:
        base = PoissonSampledEvent(q, base) if sampling == "poisson" else SampledWithoutReplacementEvent(q, base)
    return SelfComposedEvent(base, t) if t > 1 else base


def calibrate_noise_multiplier(
    target_epsilon: float,
    delta: float,
    *,
    sample_rate: float = 1.0,
    steps: int = 1,
    sampling: str = "poisson",
    accountant: str = "rdp",
    lower: float = 0.05,
    upper: float = 500.0,
    rtol: float = 1e-3,
    sensitivity: float = 1.0,
) -> Calibration:
    """Smallest noise multiplier of ``steps`` sampled Gaussian steps (see :func:`dpsgd_event`) with ε ≤ target.

    The returned ``value`` is ``sensitivity`` times the event's multiplier: the event is
    ``dpsgd_event(value / sensitivity, ...)`` and ``[lower, upper]`` scale by ``sensitivity``. The default ``1``
    returns the event's own multiplier (σ / C with ``poisson``, σ / 2C with ``uniform``); ``sensitivity =
    dpsgd_relation(sampling)[1]`` returns σ / C for both (the ``dpgnn epsilon dpsgd --target-epsilon`` value).
    """
    check_sample_rate(sample_rate)
    check_count(steps, "steps")
    dpsgd_relation(sampling)
    s = check_positive_finite(sensitivity, "sensitivity")
    return calibrate(
        lambda z: dpsgd_event(z / s, sample_rate, steps, sampling),
        target_epsilon,
        delta,
        lower=lower * s,
        upper=upper * s,
        accountant=accountant,
        rtol=rtol,
    )
