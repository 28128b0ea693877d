"""How long DRW and FDP train: the :class:`Schedule` of steps that stay within the target ε and the steps of every
integer ε checkpoint (:func:`epsilon_schedule`, :func:`fdp_schedule`; the ε is :mod:`dpgnn.privacy.drw`'s)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods.drw.paper import (
    TARGET_EPSILON,
)
from dpgnn.privacy.drw import drw_epsilon, fdp_run_epsilon
from dpgnn.privacy.validation import check_positive as _positive


@dataclass(frozen=True)
class Schedule:
    """How long to train: ``steps`` = most steps with ε ≤ target; ``checkpoints`` = (k, last step with ε ≤ k, ε)."""

    steps: int
    epsilon: float
    checkpoints: tuple[tuple[int, int, float], ...]


def _schedule(eps_of: Callable[[int], float], target: float, max_steps: int = 10_000_000) -> Schedule:
    memo: dict[int, float] = {0: 0.0}

    def e(t: int) -> float:
        if t not in memo:
            memo[t] = eps_of(t)
        return memo[t]

    def last_below(level: float, lo: int, hi: int | None) -> int:
        if hi is None:  # find an upper end by doubling
            hi = max(lo, 1)
            while e(hi) <= level:
                lo, hi = hi, hi * 2
                if hi > max_steps:
                    raise ValueError(f"ε stays below {level} for {max_steps} steps; the noise is too large")
        while hi - lo > 1:  # invariant: e(lo) <= level < e(hi)
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if e(mid) <= level else (lo, mid)
        return lo

    total = last_below(target, 0, None)
    cps = []
    for k in range(1, int(math.floor(target)) + 1):
        t = total if e(total) <= k else last_below(float(k), 0, total + 1)
        cps.append((k, t, e(t)))
    return Schedule(total, e(total), tuple(cps))


@cache
def epsilon_schedule(
    noise_multiplier: float,
    sample_rate: float,
    delta: float,
    target: float = TARGET_EPSILON,
    accountant: str = "autodp",
    fidelity: str | Fidelity = Fidelity.PAPER,
) -> Schedule:
    """:class:`Schedule` of DRW training (ε monotone in steps, so bisection is exact). Both fidelities stay at or
    below ``target`` (the authors' code takes one step past it; we do not)."""
    _positive(target, "target")
    fidelity = parse(fidelity)
    return _schedule(lambda t: drw_epsilon(noise_multiplier, sample_rate, t, delta, accountant, fidelity), target)


@cache
def fdp_schedule(
    noise_multiplier: float,
    num_train: int,
    batch: int,
    affected: int,
    delta: float,
    target: float = TARGET_EPSILON,
    variant: str = "paper",
) -> Schedule:
    """:class:`Schedule` of FDP training (paper: multi-order tight conversion; authors: α = 10, classic)."""
    return _schedule(
        lambda t: fdp_run_epsilon(t, noise_multiplier, num_train, batch, affected, delta, variant)[0], target
    )
