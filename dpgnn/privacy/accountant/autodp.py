"""The authors' libraries: autodp's Mechanism API and its legacy ``rdp_acct`` (ProGAP, DRW, PrivGNN)."""

from __future__ import annotations

import functools
from typing import Any

from dpgnn.privacy.accountant.base import (
    _AUTODP_SUPPORTED,
    Accountant,
    _check_event,
    _flatten,
    _quiet_autodp,
    _supported_autodp,
)
from dpgnn.privacy.events import (
    Event,
    GaussianEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
)
from dpgnn.privacy.validation import check_delta


@functools.lru_cache(maxsize=1 << 16)
def _rdp_laplace_cached(scale: float, alpha: float) -> float:
    from autodp import rdp_bank

    return rdp_bank.RDP_laplace({"b": scale}, alpha)


def _rdp_laplace(scale: float, alpha: Any) -> Any:
    """``rdp_bank.RDP_laplace`` of scale ``scale`` at order ``alpha``, remembered per (scale, order): autodp's
    subsampled bound asks for the same orders hundreds of times per ε, and again at every δ of a search."""
    try:
        return _rdp_laplace_cached(scale, alpha)
    except TypeError:  # an unhashable order (an array): computed as it comes
        from autodp import rdp_bank

        return rdp_bank.RDP_laplace({"b": scale}, alpha)


class _AutodpLedger(Accountant):
    """What both autodp accountants share: the ``improved_bound`` flag, the events they support, and composition
    that only records ``(event, count)`` (autodp's objects are built when ε is asked for)."""

    def __init__(self, improved_bound: bool) -> None:
        super().__init__()
        if not isinstance(improved_bound, bool):
            raise TypeError(f"improved_bound must be a bool, got {improved_bound!r}")
        self.improved_bound = improved_bound

    def supports(self, event: Event) -> bool:
        """Gaussian and Laplace events, sampled (Poisson or without replacement) or not, composed (no FDP step)."""
        return _supported_autodp(_check_event(event))

    def _supported_text(self) -> str:
        return _AUTODP_SUPPORTED

    def compose(self, event: Event, count: int = 1) -> _AutodpLedger:
        """Records the event only."""
        n = self._check_compose(event, count)
        new = type(self)(self.improved_bound)
        new._ledger = self._ledger + ((event, n),)
        return new


class AutodpAccountant(_AutodpLedger):
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
        super().__init__(improved_bound)

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
        """autodp's ``get_approxDP(delta)`` of the ledger (identical events composed by coefficient,
        ``ComposeGaussian`` when all are unsampled Gaussians and :attr:`compose_gaussian`); order None."""
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


class AutodpRdpAcctAccountant(_AutodpLedger):
    """autodp's legacy ``rdp_acct.anaRDPacct`` (as in the PrivGNN authors' code; ``get_eps`` uses the classic
    conversion ``ε = ε_RDP(α) + log(1/δ)/(α−1)`` optimised over α).

    Base RDP functions are ``rdp_bank.RDP_gaussian``/``RDP_laplace``; Poisson sampling uses
    ``compose_poisson_subsampled_mechanisms`` (exact for Gaussian and Laplace), sampling without replacement
    ``compose_subsampled_mechanism`` (improved bound when ``improved_bound``), unsampled events
    ``compose_mechanism``. anaRDPacct cannot mix Poisson sampling and sampling without replacement.
    """

    name = "autodp_rdp_acct"

    def __init__(self, improved_bound: bool = False) -> None:
        super().__init__(improved_bound)

    def get_epsilon_and_order(self, delta: float) -> tuple[float, float | None]:
        """``anaRDPacct.get_eps(delta)`` of the ledger (identical events composed by coefficient); order None.
        A ledger mixing Poisson sampling and sampling without replacement raises ``NotImplementedError``."""
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
                    funcs[e] = functools.partial(_rdp_laplace, float(e.scale))
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
