"""The accountants by name: :func:`register_accountant`, :func:`get_accountant` and the one-call
:func:`epsilon`."""

from __future__ import annotations

from typing import Any

from dpgnn.privacy.accountant.autodp import AutodpAccountant, AutodpCompositionAccountant, AutodpRdpAcctAccountant
from dpgnn.privacy.accountant.base import (
    Accountant,
    _check_event,
)
from dpgnn.privacy.accountant.exact_gaussian import ExactGaussianAccountant
from dpgnn.privacy.accountant.pld import PldAccountant
from dpgnn.privacy.accountant.rdp import RdpAccountant
from dpgnn.privacy.events import (
    Event,
)
from dpgnn.privacy.validation import check_delta


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
