"""Privacy events: immutable descriptions of what a randomised algorithm does (no numbers computed here).

An algebra in the style of Google's ``dp_accounting``: base mechanisms (:class:`GaussianEvent`,
:class:`LaplaceEvent`), sampling wrappers (:class:`PoissonSampledEvent`, :class:`SampledWithoutReplacementEvent`)
and composition (:class:`SelfComposedEvent`, :class:`ComposedEvent`). Accountants
(:mod:`dpgnn.privacy.accountant`) turn events into (ε, δ).

Neighbouring relations (what the accountants assume):

- base events: the query has sensitivity 1 (L2 for Gaussian, L1 for Laplace) between neighbouring inputs;
  noise parameters are therefore *multipliers* of the sensitivity.
- :class:`PoissonSampledEvent`: add/remove-one neighbouring; every record is included independently with
  probability ``sample_rate``.
- :class:`SampledWithoutReplacementEvent`: replace-one neighbouring; a uniformly random subset of size
  ``sample_rate · n`` is used.

All events validate their arguments at construction and are frozen (hashable, safe to share and cache).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dpgnn.privacy.validation import check_count, check_positive_finite, check_sample_rate

__all__ = [
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ComposedEvent",
]


class Event:
    """Base class of privacy events."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able description (for result ledgers)."""
        raise NotImplementedError


def _check_event(event: Any, name: str = "event") -> Event:
    if not isinstance(event, Event):
        raise TypeError(f"{name} must be a dpgnn.privacy Event, got {event!r}")
    return event


@dataclass(frozen=True)
class GaussianEvent(Event):
    """Gaussian mechanism on a sensitivity-1 (L2) query with noise standard deviation ``σ = noise_multiplier``."""

    noise_multiplier: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", check_positive_finite(self.noise_multiplier, "noise_multiplier"))

    def to_dict(self) -> dict[str, Any]:
        """``{"event": "gaussian", "noise_multiplier": σ}``."""
        return {"event": "gaussian", "noise_multiplier": self.noise_multiplier}


@dataclass(frozen=True)
class LaplaceEvent(Event):
    """Laplace mechanism on a sensitivity-1 (L1) query with scale ``b = scale`` (pure 1/b-DP)."""

    scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive_finite(self.scale, "scale"))

    def to_dict(self) -> dict[str, Any]:
        """``{"event": "laplace", "scale": b}``."""
        return {"event": "laplace", "scale": self.scale}


@dataclass(frozen=True)
class _SampledEvent(Event):
    """``event`` run on a random subsample of the records at rate ``sample_rate``; a subclass says how the subsample
    is drawn, under which neighbouring relation, and its ``kind`` (the ``"event"`` of :meth:`to_dict`)."""

    kind: ClassVar[str]
    sample_rate: float
    event: Event

    def __post_init__(self) -> None:
        object.__setattr__(self, "sample_rate", check_sample_rate(self.sample_rate, "sample_rate"))
        _check_event(self.event)

    def to_dict(self) -> dict[str, Any]:
        """``{"event": <kind>, "sample_rate": q, "inner": <the sampled event's dict>}``."""
        return {"event": self.kind, "sample_rate": self.sample_rate, "inner": self.event.to_dict()}


@dataclass(frozen=True)
class PoissonSampledEvent(_SampledEvent):
    """``event`` run on a Poisson subsample (each record kept w.p. ``sample_rate``); add/remove neighbouring."""

    kind: ClassVar[str] = "poisson_sampled"


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(_SampledEvent):
    """``event`` run on a uniformly random subset of size ``sample_rate · n``; replace-one neighbouring."""

    kind: ClassVar[str] = "sampled_without_replacement"


@dataclass(frozen=True)
class SelfComposedEvent(Event):
    """``event`` composed with itself ``count`` times (adaptively)."""

    event: Event
    count: int

    def __post_init__(self) -> None:
        _check_event(self.event)
        object.__setattr__(self, "count", check_count(self.count, "count"))

    def to_dict(self) -> dict[str, Any]:
        """``{"event": "self_composed", "count": n, "inner": <the repeated event's dict>}``."""
        return {"event": "self_composed", "count": self.count, "inner": self.event.to_dict()}


@dataclass(frozen=True)
class ComposedEvent(Event):
    """Adaptive composition of ``events`` (any iterable; stored as a tuple)."""

    events: tuple[Event, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        events = self.events
        if isinstance(events, Event) or not isinstance(events, Iterable):
            raise TypeError(f"events must be an iterable of Event, got {events!r}")
        events = tuple(events)
        if not events:
            raise ValueError("events must contain at least one Event")
        for i, e in enumerate(events):
            _check_event(e, f"events[{i}]")
        object.__setattr__(self, "events", events)

    def to_dict(self) -> dict[str, Any]:
        """``{"event": "composed", "events": [<each event's dict>, ...]}``."""
        return {"event": "composed", "events": [e.to_dict() for e in self.events]}
