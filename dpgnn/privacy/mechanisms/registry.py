"""The mechanisms by name: :func:`register_mechanism`, :func:`available_mechanisms`, :func:`get_mechanism`."""

from __future__ import annotations

from typing import Any

from dpgnn.privacy.mechanisms.base import (
    Mechanism,
)
from dpgnn.privacy.mechanisms.gaussian import AnalyticGaussianMechanism, GaussianMechanism
from dpgnn.privacy.mechanisms.labels import RandomizedResponse
from dpgnn.privacy.mechanisms.local import LaplaceMechanism, PGCMechanism, PiecewiseMechanism


def _normalise(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"mechanism name must be a string, got {name!r}")
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


_REGISTRY: dict[str, type[Mechanism]] = {}
_DISPLAY: dict[str, str] = {}


def register_mechanism(name: str, cls: type[Mechanism], *, overwrite: bool = False) -> None:
    """Register ``cls`` (a :class:`Mechanism` subclass) under ``name`` (normalised: case, ``-``, ``_`` ignored)."""
    if not (isinstance(cls, type) and issubclass(cls, Mechanism)):
        raise TypeError(f"cls must be a subclass of dpgnn.privacy.Mechanism, got {cls!r}")
    key = _normalise(name)
    if not key:
        raise ValueError("mechanism name must not be empty")
    if key in _REGISTRY and _REGISTRY[key] is not cls and not overwrite:
        raise ValueError(
            f"a mechanism is already registered as {name!r} ({_REGISTRY[key].__name__}); "
            "pass overwrite=True to replace it"
        )
    _REGISTRY[key] = cls
    _DISPLAY[key] = name


def available_mechanisms() -> list[str]:
    """Registered names (aliases included), sorted."""
    return sorted(_DISPLAY.values())


def get_mechanism(
    name: str, *, epsilon: float, low: float | None = None, high: float | None = None, **kwargs: Any
) -> Mechanism:
    """Build the mechanism registered as ``name``.

    ``low``/``high`` default to the class defaults: ``[0, 1]`` for the local mechanisms, unbounded for the
    Gaussian ones. Extra keyword arguments go to the class (``num_classes`` for ``rr``; ``delta`` and
    ``sensitivity`` for ``gaussian``/``analytic_gaussian``; ``clip``).
    """
    key = _normalise(name)
    if key not in _REGISTRY:
        raise ValueError(f"unknown mechanism {name!r}; valid names: {', '.join(available_mechanisms())}")
    if low is not None:
        kwargs["low"] = low
    if high is not None:
        kwargs["high"] = high
    cls = _REGISTRY[key]
    try:
        return cls(epsilon=epsilon, **kwargs)
    except TypeError as err:
        if "unexpected keyword argument" in str(err):
            raise TypeError(f"{err} (mechanism {name!r} -> {cls.__name__})") from None
        raise


for _name, _cls in [
    ("laplace", LaplaceMechanism),
    ("piecewise", PiecewiseMechanism),
    ("pgc", PGCMechanism),
    ("duchi", PGCMechanism),
    ("rr", RandomizedResponse),
    ("gaussian", GaussianMechanism),
    ("analytic_gaussian", AnalyticGaussianMechanism),
]:
    register_mechanism(_name, _cls)
