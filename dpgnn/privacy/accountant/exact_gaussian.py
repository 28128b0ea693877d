"""The exact accountant of compositions of (unsampled) Gaussian events (Balle–Wang's profile)."""

from __future__ import annotations

import math

from dpgnn.privacy.accountant.base import (
    Accountant,
    _check_event,
)
from dpgnn.privacy.analytic import gaussian_epsilon
from dpgnn.privacy.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    SelfComposedEvent,
)
from dpgnn.privacy.validation import check_delta


def _gaussian_precision(event: Event) -> float | None:
    """Σ z^-2 of a pure composition of Gaussian events, or None if ``event`` is something else."""
    if isinstance(event, GaussianEvent):
        return event.noise_multiplier**-2
    if isinstance(event, SelfComposedEvent):
        inner = _gaussian_precision(event.event)
        return None if inner is None else event.count * inner
    if isinstance(event, ComposedEvent):
        parts = [_gaussian_precision(e) for e in event.events]
        return None if any(p is None for p in parts) else float(sum(parts))
    return None


class ExactGaussianAccountant(Accountant):
    """Tight accountant for compositions of unsampled Gaussian events (Balle & Wang 2018 exact profile).

    K Gaussians with noise multipliers ``z_k`` are exactly one Gaussian with ``z = (Σ z_k^-2)^-1/2``.
    Sampled events are refused (use ``"rdp"``).
    """

    name = "exact_gaussian"

    def __init__(self) -> None:
        super().__init__()
        self._precision = 0.0

    def supports(self, event: Event) -> bool:
        """Unsampled Gaussian events and their compositions only."""
        return _gaussian_precision(_check_event(event)) is not None

    def _supported_text(self) -> str:
        return "GaussianEvent and SelfComposedEvent / ComposedEvent of Gaussian events (no sampling)"

    @property
    def noise_multiplier(self) -> float:
        """Noise multiplier of the single equivalent Gaussian mechanism (inf when empty)."""
        return math.inf if self._precision == 0 else self._precision**-0.5

    def compose(self, event: Event, count: int = 1) -> ExactGaussianAccountant:
        """Adds ``count · Σ z^-2`` of the event to the precision of the one equivalent Gaussian."""
        n = self._check_compose(event, count)
        new = ExactGaussianAccountant()
        new._precision = self._precision + n * _gaussian_precision(event)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        """The exact ε of the one equivalent Gaussian (Balle & Wang 2018, analytic Gaussian); order None."""
        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        return gaussian_epsilon(self.noise_multiplier, d), None
