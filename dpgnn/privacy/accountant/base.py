"""The accountants' base class and what they share: the ledger, event checks, the events autodp expresses
and basic (pure-DP) composition."""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgnn.privacy.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpgnn.privacy.fdp import FdpSampledGaussianEvent
from dpgnn.privacy.validation import check_count

_AUTODP_SUPPORTED = (
    "GaussianEvent, LaplaceEvent, PoissonSampledEvent / SampledWithoutReplacementEvent of a "
    "Gaussian or Laplace event, and SelfComposedEvent / ComposedEvent of these"
)
_RDP_SUPPORTED = (
    "GaussianEvent, LaplaceEvent, PoissonSampledEvent / SampledWithoutReplacementEvent of a Gaussian "
    "or Laplace event, FdpSampledGaussianEvent, and SelfComposedEvent / ComposedEvent of these"
)


def _flatten(ledger: Sequence[tuple[Event, int]]) -> dict[Event, int]:
    """Leaf events (base or sampled) with their total multiplicities, merging identical leaves."""
    merged: dict[Event, int] = {}

    def walk(e: Event, mult: int) -> None:
        if isinstance(e, SelfComposedEvent):
            walk(e.event, mult * e.count)
        elif isinstance(e, ComposedEvent):
            for sub in e.events:
                walk(sub, mult)
        else:
            merged[e] = merged.get(e, 0) + mult

    for e, n in ledger:
        walk(e, n)
    return merged


@contextlib.contextmanager
def _quiet_autodp():
    """autodp's internal optimisers emit harmless numpy/scipy RuntimeWarnings; keep them out of user logs."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _check_event(event: Any) -> Event:
    if not isinstance(event, Event):
        raise TypeError(f"event must be a dpgnn.privacy Event, got {event!r}")
    return event


class Accountant:
    """Base class: immutable ledger of composed ``(event, count)`` pairs.

    The contract every accountant keeps (one test checks it for all of them): :meth:`supports` says whether an event
    can be composed; :meth:`compose` returns a new accountant with the event appended (this one is unchanged) and
    refuses an unsupported event with a ``NotImplementedError`` that lists what is supported; and
    :meth:`get_epsilon_and_order` gives an upper bound on the ε of the whole ledger at δ (``(0.0, None)`` for an
    empty ledger). A subclass overrides these three and ``_supported_text``.
    """

    name: str = ""

    def __init__(self) -> None:
        self._ledger: tuple[tuple[Event, int], ...] = ()

    @property
    def ledger(self) -> tuple[tuple[Event, int], ...]:
        """The ``(event, count)`` pairs composed so far, in order."""
        return self._ledger

    def supports(self, event: Event) -> bool:  # pragma: no cover - abstract
        """Whether this accountant can compose ``event`` (an unsupported one makes :meth:`compose` raise)."""
        raise NotImplementedError

    def compose(self, event: Event, count: int = 1) -> Accountant:  # pragma: no cover - abstract
        """A new accountant with ``event`` composed ``count`` times after this one's ledger (this one unchanged)."""
        raise NotImplementedError

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:  # pragma: no cover
        """ε at ``delta`` of everything composed so far, and the RDP order that gave it (None without orders)."""
        raise NotImplementedError

    def get_epsilon(self, delta: float) -> float:
        """ε of everything composed so far, at ``delta`` (0.0 when nothing was composed)."""
        return self.get_epsilon_and_order(delta)[0]

    def _check_compose(self, event: Event, count: int) -> int:
        _check_event(event)
        n = check_count(count, "count")
        if not self.supports(event):
            raise NotImplementedError(
                f"the {self.name!r} accountant does not support {event!r}; supported: {self._supported_text()}"
            )
        return n

    def _supported_text(self) -> str:  # pragma: no cover - overridden
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(events={len(self._ledger)})"


# ------------------------------------------------------------------------------------------------------------
# RDP
# ------------------------------------------------------------------------------------------------------------
def _supported_by(event: Event, leaves: tuple[type[Event], ...]) -> bool:
    """Whether ``event`` is built of what an accountant expresses: its ``leaves``, a sampled Gaussian or Laplace
    event, and any composition of these."""
    if isinstance(event, leaves):
        return True
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        return isinstance(event.event, (GaussianEvent, LaplaceEvent))
    if isinstance(event, SelfComposedEvent):
        return _supported_by(event.event, leaves)
    if isinstance(event, ComposedEvent):
        return all(_supported_by(e, leaves) for e in event.events)
    return False


def _supported_autodp(event: Event) -> bool:
    """Events autodp's mechanisms express: Gaussian/Laplace, sampled or not, composed in any way."""
    return _supported_by(event, (GaussianEvent, LaplaceEvent))


def _pure_epsilon(event: Event) -> float:
    """Pure-DP ε of ``event`` by basic composition (``inf`` when any part is not pure, e.g. Gaussian).

    Laplace: ``1/b``; sampled with rate q: ``log(1 + q(e^ε − 1))`` (Balle, Barthe & Gaboardi 2018: Poisson with
    add/remove, and sampling without replacement with replace-one).
    """
    if isinstance(event, LaplaceEvent):
        return 1.0 / event.scale
    if isinstance(event, (GaussianEvent, FdpSampledGaussianEvent)):
        return math.inf
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        inner = _pure_epsilon(event.event)
        if math.isinf(inner):
            return math.inf
        return math.log1p(event.sample_rate * math.expm1(inner)) if inner < 700 else inner + math.log(event.sample_rate)
    if isinstance(event, SelfComposedEvent):
        return event.count * _pure_epsilon(event.event)
    if isinstance(event, ComposedEvent):
        return float(sum(_pure_epsilon(e) for e in event.events))
    return math.inf  # pragma: no cover - guarded by supports()
