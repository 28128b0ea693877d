"""Accountants: turn privacy events into (ε, δ). Thin and immutable; the math lives in :mod:`dpgnn.privacy.rdp`
and :mod:`dpgnn.privacy.analytic`.

Every accountant has the same contract (checked by one test that all of them must pass)::

    acc = get_accountant("rdp")               # or RdpAccountant(orders=None)
    acc2 = acc.compose(event, count=1)        # a NEW accountant; ``acc`` is unchanged (immutable)
    acc2.get_epsilon(delta)                   # float
    acc2.get_epsilon_and_order(delta)         # (float, optimal RDP order or None)
    acc2.supports(event)                      # bool

Accountants (names are normalised like mechanism names):

- ``"rdp"`` (:class:`RdpAccountant`, default): Rényi DP on a wide grid of orders with exact per-event curves where
  known and the tight RDP → (ε, δ) conversion. Supports every event of :mod:`dpgnn.privacy.events` whose sampled
  events wrap a Gaussian or Laplace event, and the FDP step :class:`dpgnn.privacy.fdp.FdpSampledGaussianEvent`
  (Daigavane et al.'s multi-term hypergeometric RDP; on the orders :data:`dpgnn.privacy.fdp.FDP_ORDERS` it gives
  exactly :func:`dpgnn.privacy.fdp.fdp_epsilon`). The other accountants refuse the FDP event with a
  ``NotImplementedError`` naming what they support.
- ``"exact_gaussian"`` (:class:`ExactGaussianAccountant`): only compositions of (unsampled) Gaussian events; the
  composition is one Gaussian with ``z = (Σ z_k^-2)^-1/2`` converted with the exact Balle–Wang profile (the tight
  accountant for that case; what autodp's ``ComposeGaussian`` + ``get_approxDP`` compute, used by ProGAP).
- ``"autodp"`` (:class:`AutodpAccountant`): autodp's Mechanism API (``ExactGaussianMechanism``,
  ``LaplaceMechanism``, ``AmplificationBySampling``, ``Composition``/``ComposeGaussian``, ``get_approxDP``), as in
  the ProGAP and DRW authors' code. Reproduces their numbers.
- ``"autodp_rdp_acct"`` (:class:`AutodpRdpAcctAccountant`): autodp's legacy ``rdp_acct.anaRDPacct`` with
  ``compose_poisson_subsampled_mechanisms`` / ``compose_subsampled_mechanism`` / ``compose_mechanism`` and
  ``get_eps``, as in the PrivGNN authors' code. Reproduces PrivGNN's ε table.
- ``"pld"`` (:class:`PldAccountant`): privacy-loss-distribution accounting with Google's ``dp_accounting`` (0.6.0,
  ``dp_accounting.pld.PLDAccountant``; Koskela et al. 2020, Doroshenko et al. 2022): the tight (ε, δ) of
  compositions of Gaussian and Laplace events, unsampled or Poisson-subsampled (add/remove neighbouring, both
  adjacency directions), up to a discretisation that is rounded *pessimistically* (the value is never below the
  exact ε). Sampling without replacement (replace-one) and the FDP step use the dominating pairs of
  :mod:`dpgnn.privacy.sampled_pld` (symmetrised, so both directions of every step are covered). Much tighter than
  RDP at few steps (z = 0.6, q = 0.001, T = 10, δ = 1e-5: 0.333 vs 2.04). Counts above
  :data:`dpgnn.privacy.sampled_pld.MAX_COMPOSITIONS`, and loss grids too large to build
  (:mod:`dpgnn.privacy.pld_limits`), are refused in one line (use ``"rdp"``).

The default ``"rdp"`` is always sound; it is at least as tight as the autodp paths for the RDP-based cases because
it uses the same (or exact) RDP curves and a tighter conversion.
"""

from __future__ import annotations

import contextlib
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgnn.privacy import pld_limits as _pld_limits
from dpgnn.privacy import rdp as _rdp
from dpgnn.privacy import sampled_pld as _spld
from dpgnn.privacy.analytic import gaussian_epsilon
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
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite

__all__ = [
    "Accountant",
    "RdpAccountant",
    "ExactGaussianAccountant",
    "AutodpAccountant",
    "AutodpCompositionAccountant",
    "AutodpRdpAcctAccountant",
    "PldAccountant",
    "event_rdp",
    "epsilon",
    "get_accountant",
    "register_accountant",
    "available_accountants",
]


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
    """Base class: immutable ledger of composed ``(event, count)`` pairs."""

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
def _supported_autodp(event: Event) -> bool:
    """Events autodp's mechanisms express: Gaussian/Laplace, sampled or not, composed in any way."""
    if isinstance(event, (GaussianEvent, LaplaceEvent)):
        return True
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        return isinstance(event.event, (GaussianEvent, LaplaceEvent))
    if isinstance(event, SelfComposedEvent):
        return _supported_autodp(event.event)
    if isinstance(event, ComposedEvent):
        return all(_supported_autodp(e) for e in event.events)
    return False


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
        return _supported_rdp(_check_event(event))

    def _supported_text(self) -> str:
        return _RDP_SUPPORTED

    def compose(self, event: Event, count: int = 1) -> RdpAccountant:
        n = self._check_compose(event, count)
        new = RdpAccountant.__new__(RdpAccountant)
        Accountant.__init__(new)
        new.orders = self.orders
        new._rdp = self._rdp + n * _event_rdp(event, self.orders)
        new._pure = self._pure + n * _pure_epsilon(event)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        eps, order = _rdp.rdp_to_epsilon(self.orders, self._rdp, d)
        if self._pure < eps:
            return self._pure, math.inf
        return eps, order


# ------------------------------------------------------------------------------------------------------------
# exact Gaussian composition
# ------------------------------------------------------------------------------------------------------------
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
        return _gaussian_precision(_check_event(event)) is not None

    def _supported_text(self) -> str:
        return "GaussianEvent and SelfComposedEvent / ComposedEvent of Gaussian events (no sampling)"

    @property
    def noise_multiplier(self) -> float:
        """Noise multiplier of the single equivalent Gaussian mechanism (inf when empty)."""
        return math.inf if self._precision == 0 else self._precision**-0.5

    def compose(self, event: Event, count: int = 1) -> ExactGaussianAccountant:
        n = self._check_compose(event, count)
        new = ExactGaussianAccountant()
        new._precision = self._precision + n * _gaussian_precision(event)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        return gaussian_epsilon(self.noise_multiplier, d), None


# ------------------------------------------------------------------------------------------------------------
# autodp (the authors' libraries)
# ------------------------------------------------------------------------------------------------------------
class AutodpAccountant(Accountant):
    """autodp's Mechanism API, as used by the ProGAP and DRW authors (autodp 0.2.3.1 pinned).

    Gaussian → ``ExactGaussianMechanism(z)``; Laplace → ``LaplaceMechanism(b)``; Poisson sampling →
    ``AmplificationBySampling(PoissonSampling=True)(m, q, improved_bound_flag=...)``; sampling without
    replacement → ``AmplificationBySampling(PoissonSampling=False)`` of the mechanism flagged ``replace_one``;
    composition → ``ComposeGaussian`` when every event is an unsampled Gaussian, else ``Composition``; ε from
    ``get_approxDP(delta)``. ``improved_bound`` (default True, as in ProGAP) selects autodp's improved bound for
    mechanisms that satisfy its conditions (Gaussian and Laplace do).
    """

    name = "autodp"
    compose_gaussian = True

    def __init__(self, improved_bound: bool = True) -> None:
        super().__init__()
        if not isinstance(improved_bound, bool):
            raise TypeError(f"improved_bound must be a bool, got {improved_bound!r}")
        self.improved_bound = improved_bound

    def supports(self, event: Event) -> bool:
        return _supported_autodp(_check_event(event))

    def _supported_text(self) -> str:
        return _AUTODP_SUPPORTED

    def compose(self, event: Event, count: int = 1) -> AutodpAccountant:
        n = self._check_compose(event, count)
        new = type(self)(self.improved_bound)
        new._ledger = self._ledger + ((event, n),)
        return new

    def _mechanism(self, event: Event) -> Any:
        from autodp import mechanism_zoo, transformer_zoo

        def base(e: Event, replace_one: bool = False) -> Any:
            if isinstance(e, GaussianEvent):
                m = mechanism_zoo.ExactGaussianMechanism(sigma=e.noise_multiplier)
            else:
                m = mechanism_zoo.LaplaceMechanism(b=e.scale)
            if replace_one:
                m.neighboring = "replace_one"
            return m

        if isinstance(event, PoissonSampledEvent):
            amp = transformer_zoo.AmplificationBySampling(PoissonSampling=True)
            return amp(base(event.event), event.sample_rate, improved_bound_flag=self.improved_bound)
        if isinstance(event, SampledWithoutReplacementEvent):
            amp = transformer_zoo.AmplificationBySampling(PoissonSampling=False)
            return amp(base(event.event, replace_one=True), event.sample_rate, improved_bound_flag=self.improved_bound)
        return base(event)

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        from autodp import transformer_zoo

        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        merged = _flatten(self._ledger)  # autodp composes identical mechanisms by coefficient
        with _quiet_autodp():
            mechs = [self._mechanism(e) for e in merged]
        coeffs = list(merged.values())
        if self.compose_gaussian and all(isinstance(e, GaussianEvent) for e in merged):
            composed = transformer_zoo.ComposeGaussian()(mechs, coeffs)
        else:
            composed = transformer_zoo.Composition()(mechs, coeffs)
        with _quiet_autodp():
            eps = float(composed.get_approxDP(d))
        return eps, None


class AutodpCompositionAccountant(AutodpAccountant):
    """:class:`AutodpAccountant` that never uses ``ComposeGaussian``: unsampled Gaussians are composed by autodp's
    generic RDP ``Composition`` too. This is what the ProGAP authors' code computes at edge level: its NAP
    mechanism is not autodp's Gaussian class, so autodp falls back to RDP composition (σ 4.977 / 7.038 / 8.620 at
    ε = 1, δ = 1e-7 for K = 1 / 2 / 3, against 4.679 / 6.617 / 8.104 with the exact Gaussian composition). A valid,
    looser bound (more noise for the same ε)."""

    name = "autodp_composition"
    compose_gaussian = False


class AutodpRdpAcctAccountant(Accountant):
    """autodp's legacy ``rdp_acct.anaRDPacct`` (as in the PrivGNN authors' code; ``get_eps`` uses the classic
    conversion ``ε = ε_RDP(α) + log(1/δ)/(α−1)`` optimised over α).

    Base RDP functions are ``rdp_bank.RDP_gaussian``/``RDP_laplace``; Poisson sampling uses
    ``compose_poisson_subsampled_mechanisms`` (exact for Gaussian and Laplace), sampling without replacement
    ``compose_subsampled_mechanism`` (improved bound when ``improved_bound``), unsampled events
    ``compose_mechanism``. anaRDPacct cannot mix Poisson sampling and sampling without replacement.
    """

    name = "autodp_rdp_acct"

    def __init__(self, improved_bound: bool = False) -> None:
        super().__init__()
        if not isinstance(improved_bound, bool):
            raise TypeError(f"improved_bound must be a bool, got {improved_bound!r}")
        self.improved_bound = improved_bound

    def supports(self, event: Event) -> bool:
        return _supported_autodp(_check_event(event))

    def _supported_text(self) -> str:
        return _AUTODP_SUPPORTED

    def compose(self, event: Event, count: int = 1) -> AutodpRdpAcctAccountant:
        n = self._check_compose(event, count)
        new = AutodpRdpAcctAccountant(self.improved_bound)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        from autodp import rdp_acct, rdp_bank

        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        merged = _flatten(self._ledger)
        kinds = {type(e) for e in merged} & {PoissonSampledEvent, SampledWithoutReplacementEvent}
        if len(kinds) > 1:
            raise NotImplementedError(
                "autodp's anaRDPacct cannot mix Poisson sampling and sampling without "
                "replacement; use the 'rdp' or 'autodp' accountant"
            )
        acct = rdp_acct.anaRDPacct()
        funcs: dict[Event, Any] = {}

        def func_of(e: Event) -> Any:
            if e not in funcs:
                if isinstance(e, GaussianEvent):
                    params = {"sigma": e.noise_multiplier}
                    funcs[e] = lambda x: rdp_bank.RDP_gaussian(params, x)
                else:
                    params = {"b": e.scale}
                    funcs[e] = lambda x: rdp_bank.RDP_laplace(params, x)
            return funcs[e]

        for e, n in merged.items():
            if isinstance(e, PoissonSampledEvent) and e.sample_rate < 1.0:
                acct.compose_poisson_subsampled_mechanisms(func_of(e.event), e.sample_rate, coeff=n)
            elif isinstance(e, SampledWithoutReplacementEvent) and e.sample_rate < 1.0:
                acct.compose_subsampled_mechanism(
                    func_of(e.event), e.sample_rate, coeff=n, improved_bound_flag=self.improved_bound
                )
            elif isinstance(e, (PoissonSampledEvent, SampledWithoutReplacementEvent)):  # rate 1: no sampling
                acct.compose_mechanism(func_of(e.event), coeff=n)
            else:
                acct.compose_mechanism(func_of(e), coeff=n)
        with _quiet_autodp():
            eps = float(acct.get_eps(d))
        return eps, None


# ------------------------------------------------------------------------------------------------------------
# privacy loss distributions (dp_accounting)
# ------------------------------------------------------------------------------------------------------------
def _supported_pld(event: Event) -> bool:
    if isinstance(event, (GaussianEvent, LaplaceEvent, FdpSampledGaussianEvent)):
        return True
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        return isinstance(event.event, (GaussianEvent, LaplaceEvent))
    if isinstance(event, SelfComposedEvent):
        return _supported_pld(event.event)
    if isinstance(event, ComposedEvent):
        return all(_supported_pld(e) for e in event.events)
    return False


def _dpa_event(event: Event) -> Any:
    """The ``dp_accounting`` DpEvent of a leaf event (base or Poisson-sampled; sensitivity 1 throughout)."""
    import dp_accounting as dpa

    def base(e: Event) -> Any:
        if isinstance(e, GaussianEvent):
            return dpa.GaussianDpEvent(e.noise_multiplier)
        return dpa.LaplaceDpEvent(e.scale)  # dp_accounting's Laplace "noise_multiplier" is the scale b

    if isinstance(event, PoissonSampledEvent):
        return (
            base(event.event)
            if event.sample_rate == 1.0
            else dpa.PoissonSampledDpEvent(event.sample_rate, base(event.event))
        )
    return base(event)


@functools.lru_cache(maxsize=256)
def _pld_epsilon(leaves: tuple[tuple[Event, int], ...], delta: float, interval: float) -> float:
    import dp_accounting as dpa
    from dp_accounting.pld import pld_privacy_accountant

    if any(isinstance(e, (SampledWithoutReplacementEvent, FdpSampledGaussianEvent)) for e, _ in leaves):
        return _custom_pld_epsilon(leaves, delta, interval)
    acc = pld_privacy_accountant.PLDAccountant(
        dpa.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=interval
    )
    for e, n in leaves:
        acc.compose(_dpa_event(e), n)
    with _quiet_autodp():
        return float(acc.get_epsilon(delta))


def _custom_pld_epsilon(leaves: tuple[tuple[Event, int], ...], delta: float, interval: float) -> float:
    """ε of a composition with sampling without replacement or FDP steps (:mod:`dpgnn.privacy.sampled_pld`: both
    directions of every step in one symmetric PLD, so the other leaves are taken with both directions too)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    def leaf(e: Event) -> Any:
        if isinstance(e, FdpSampledGaussianEvent):
            return _spld.fdp_pld(e.noise_multiplier, e.num_train, e.batch_size, e.max_affected, interval)
        if isinstance(e, SampledWithoutReplacementEvent):
            inner = e.event
            kind, x = (
                ("gaussian", inner.noise_multiplier) if isinstance(inner, GaussianEvent) else ("laplace", inner.scale)
            )
            return _spld.wor_pld(kind, x, e.sample_rate, interval)
        q, base = (e.sample_rate, e.event) if isinstance(e, PoissonSampledEvent) else (1.0, e)
        if isinstance(base, GaussianEvent):
            return pld_lib.from_gaussian_mechanism(
                base.noise_multiplier, sampling_prob=q, value_discretization_interval=interval
            )
        return pld_lib.from_laplace_mechanism(base.scale, sampling_prob=q, value_discretization_interval=interval)

    total = None
    for _, n in leaves:
        _spld.check_compositions(n)
    with _quiet_autodp():
        for e, n in leaves:
            part = leaf(e).self_compose(n)
            total = part if total is None else total.compose(part)
        return float(total.get_epsilon_for_delta(delta))


class PldAccountant(Accountant):
    """Privacy-loss-distribution accountant of Google's ``dp_accounting`` (tight; pessimistic discretisation).

    Supports Gaussian and Laplace events (sensitivity 1), Poisson-subsampled or not, composed in any way;
    neighbouring: add/remove one record (for unsampled events identical to replace-one at sensitivity 1). Sampling
    without replacement (replace-one) and FDP steps: :mod:`dpgnn.privacy.sampled_pld`. The
    PLDs are discretised on a grid of ``value_discretization_interval`` (default 1e-3; dp_accounting's own default
    1e-4 costs ~10× more time for differences in ε below 1e-3 in our checks) with *pessimistic* rounding
    and the truncated tail mass counted as infinite loss, so the returned ε is an upper bound on the exact ε
    (``dp_accounting``'s Observation 1). The accountant also tracks the pure-DP ε of basic composition (finite
    without Gaussian events) and reports the smaller of the two (both are sound). Results are cached per
    composition (the computation is deterministic).
    """

    name = "pld"

    def __init__(self, value_discretization_interval: float = 1e-3) -> None:
        super().__init__()
        self.value_discretization_interval = check_positive_finite(
            value_discretization_interval, "value_discretization_interval"
        )

    def supports(self, event: Event) -> bool:
        return _supported_pld(_check_event(event))

    def _supported_text(self) -> str:
        return (
            "GaussianEvent, LaplaceEvent, PoissonSampledEvent / SampledWithoutReplacementEvent of a Gaussian or "
            "Laplace event, FdpSampledGaussianEvent, and SelfComposedEvent / ComposedEvent of these"
        )

    def compose(self, event: Event, count: int = 1) -> PldAccountant:
        n = self._check_compose(event, count)
        new = PldAccountant(self.value_discretization_interval)
        new._ledger = self._ledger + ((event, n),)
        return new

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        d = check_delta(delta)
        if not self._ledger:
            return 0.0, None
        merged = _flatten(self._ledger)
        leaves = tuple(sorted(merged.items(), key=repr))
        _pld_limits.check_steps(leaves, self.value_discretization_interval)  # too large: one line, nothing built
        with _pld_limits.bounded_convolutions():
            eps = _pld_epsilon(leaves, d, self.value_discretization_interval)
        pure = float(sum(n * _pure_epsilon(e) for e, n in merged.items()))
        if pure < eps:
            return pure, math.inf
        return eps, None


# ------------------------------------------------------------------------------------------------------------
# registry and the one-call function
# ------------------------------------------------------------------------------------------------------------
def _normalise(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"accountant name must be a string, got {name!r}")
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


_ACCOUNTANTS: dict[str, type[Accountant]] = {}
_ACCOUNTANT_DISPLAY: dict[str, str] = {}


def register_accountant(name: str, cls: type[Accountant], *, overwrite: bool = False) -> None:
    """Register an :class:`Accountant` subclass under ``name`` (normalised)."""
    if not (isinstance(cls, type) and issubclass(cls, Accountant)):
        raise TypeError(f"cls must be a subclass of dpgnn.privacy.Accountant, got {cls!r}")
    key = _normalise(name)
    if key in _ACCOUNTANTS and _ACCOUNTANTS[key] is not cls and not overwrite:
        raise ValueError(f"an accountant is already registered as {name!r}; pass overwrite=True to replace it")
    _ACCOUNTANTS[key] = cls
    _ACCOUNTANT_DISPLAY[key] = name


def available_accountants() -> list[str]:
    """The registered accountants' names, sorted: what :func:`get_accountant` accepts ("-", "_", case ignored)."""
    return sorted(_ACCOUNTANT_DISPLAY.values())


def get_accountant(name: str = "rdp", **kwargs: Any) -> Accountant:
    """A fresh accountant by name (``rdp``, ``exact_gaussian``, ``autodp``, ``autodp_rdp_acct``, ``pld``)."""
    if isinstance(name, Accountant):
        if kwargs:
            raise TypeError("keyword arguments are only accepted with an accountant name")
        return name
    key = _normalise(name)
    if key not in _ACCOUNTANTS:
        raise ValueError(f"unknown accountant {name!r}; valid names: {', '.join(available_accountants())}")
    return _ACCOUNTANTS[key](**kwargs)


def epsilon(event: Event, delta: float, accountant: str = "rdp", **kwargs: Any) -> float:
    """ε of ``event`` at ``delta`` with the named accountant (a fresh one; ``kwargs`` go to its constructor)."""
    _check_event(event)
    d = check_delta(delta)
    acc = get_accountant(accountant, **kwargs)
    if acc.ledger:
        raise ValueError("epsilon() needs a fresh accountant (or a name), got one with composed events")
    return acc.compose(event).get_epsilon(d)


for _n, _c in [
    ("rdp", RdpAccountant),
    ("exact_gaussian", ExactGaussianAccountant),
    ("autodp", AutodpAccountant),
    ("autodp_composition", AutodpCompositionAccountant),
    ("autodp_rdp_acct", AutodpRdpAcctAccountant),
    ("pld", PldAccountant),
]:
    register_accountant(_n, _c)
