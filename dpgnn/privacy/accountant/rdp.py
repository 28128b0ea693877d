"""The Rényi-DP accountant (the default) and the RDP curve of each event."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpgnn.privacy import rdp as _rdp
from dpgnn.privacy.accountant.base import (
    _RDP_SUPPORTED,
    Accountant,
    _check_event,
    _pure_epsilon,
    _supported_autodp,
)
from dpgnn.privacy.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpgnn.privacy.fdp import FdpSampledGaussianEvent, fdp_rdp
from dpgnn.privacy.validation import check_delta


def _supported_rdp(event: Event) -> bool:
    """What :func:`event_rdp` has a curve for: the autodp events and the FDP step, composed in any way."""
    if isinstance(event, FdpSampledGaussianEvent):
        return True
    if isinstance(event, SelfComposedEvent):
        return _supported_rdp(event.event)
    if isinstance(event, ComposedEvent):
        return all(_supported_rdp(e) for e in event.events)
    return _supported_autodp(event)


def event_rdp(event: Event, orders: Sequence[float] | None = None) -> np.ndarray:
    """RDP curve of ``event`` at ``orders`` (default :data:`dpgnn.privacy.rdp.DEFAULT_ORDERS`)."""
    _check_event(event)
    a = _rdp.check_orders(orders)
    if not _supported_rdp(event):
        raise NotImplementedError(f"no RDP curve for {event!r}; supported: {_RDP_SUPPORTED}")
    return _event_rdp(event, a)


def _event_rdp(event: Event, a: np.ndarray) -> np.ndarray:
    if isinstance(event, GaussianEvent):
        return _rdp.rdp_gaussian(event.noise_multiplier, a)
    if isinstance(event, LaplaceEvent):
        return _rdp.rdp_laplace(event.scale, a)
    if isinstance(event, PoissonSampledEvent):
        inner = event.event
        if isinstance(inner, GaussianEvent):
            return _rdp.rdp_poisson_gaussian(event.sample_rate, inner.noise_multiplier, a)
        return _rdp.rdp_poisson_laplace(event.sample_rate, inner.scale, a)
    if isinstance(event, SampledWithoutReplacementEvent):
        inner = event.event
        if isinstance(inner, GaussianEvent):
            return _rdp.rdp_sampled_without_replacement_gaussian(event.sample_rate, inner.noise_multiplier, a)
        b = inner.scale
        return _rdp.rdp_sampled_without_replacement(
            event.sample_rate, lambda x: _rdp.rdp_laplace(b, x), a, eps_pure=1.0 / b
        )
    if isinstance(event, FdpSampledGaussianEvent):  # ≥ 0 exactly; clipped where rounding lands at -1e-16
        return np.maximum(
            fdp_rdp(a, event.noise_multiplier, event.num_train, event.batch_size, event.max_affected), 0.0
        )
    if isinstance(event, SelfComposedEvent):
        return event.count * _event_rdp(event.event, a)
    if isinstance(event, ComposedEvent):
        return np.sum([_event_rdp(e, a) for e in event.events], axis=0)
    raise NotImplementedError(repr(event))  # pragma: no cover - guarded by _supported_rdp


class RdpAccountant(Accountant):
    """Rényi-DP accountant over a wide grid of orders (immutable: :meth:`compose` returns a new accountant).

    ``orders=None`` uses :data:`dpgnn.privacy.rdp.DEFAULT_ORDERS` (1.01 … 1e5). The conversion to (ε, δ) is the
    tight one of Balle et al. 2020 / Canonne, Kamath & Steinke 2020, minimised over the grid. The accountant also
    tracks the pure-DP ε of the composition (finite only without Gaussian events) and reports the smaller of the
    two; then the returned order is ``inf``.
    """

    name = "rdp"

    def __init__(self, orders: Sequence[float] | None = None) -> None:
        super().__init__()
        self.orders = _rdp.check_orders(orders)
        self._rdp = np.zeros(len(self.orders))
        self._pure = 0.0

    @property
    def rdp(self) -> np.ndarray:
        """A copy of the accumulated RDP curve (one value per order)."""
        return self._rdp.copy()

    def supports(self, event: Event) -> bool:
        """Gaussian and Laplace events, sampled (Poisson or without replacement) or not, the FDP step, composed."""
        return _supported_rdp(_check_event(event))

    def _supported_text(self) -> str:
        return _RDP_SUPPORTED

    def compose(self, event: Event, count: int = 1) -> RdpAccountant:
        """Adds ``count`` times the event's RDP curve on :attr:`orders` (and its pure-DP ε) to a copy's totals."""
        n = self._check_compose(event, count)
        new = RdpAccountant.__new__(RdpAccountant)
        Accountant.__init__(new)
        new.orders = self.orders
        new._rdp = self._rdp + n * _event_rdp(event, self.orders)
        new._pure = self._pure + n * _pure_epsilon(event)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        """The tight RDP → (ε, δ) conversion minimised over the orders, with the minimising order; or the pure-DP
        ε of basic composition when smaller, with order ``inf``."""
        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        eps, order = _rdp.rdp_to_epsilon(self.orders, self._rdp, d)
        if self._pure < eps:
            return self._pure, math.inf
        return eps, order
