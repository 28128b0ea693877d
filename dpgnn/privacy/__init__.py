"""Differential privacy for dpgnn: mechanisms, privacy events, accountants, calibration (pure math, no graphs).

- :mod:`dpgnn.privacy.mechanisms`  -- noise mechanisms (LDP feature mechanisms, label RR, Gaussian) + registry.
- :mod:`dpgnn.privacy.events`      -- immutable privacy events (Gaussian, Laplace, sampled, composed).
- :mod:`dpgnn.privacy.rdp`         -- RDP curves and the RDP -> (epsilon, delta) conversion (pure math).
- :mod:`dpgnn.privacy.analytic`    -- exact (epsilon, delta) profile of the Gaussian mechanism (Balle & Wang 2018).
- :mod:`dpgnn.privacy.accountant`  -- immutable accountants (rdp, exact_gaussian, autodp, autodp_rdp_acct, pld).
- :mod:`dpgnn.privacy.calibration` -- conservative calibration (epsilon(value) <= target, asserted).

The mechanisms (torch) are loaded on first use of their names (``_LAZY``); the accounting imports no torch.
"""

import importlib
from typing import Any

from dpgnn.privacy.accountant import (
    Accountant,
    AutodpAccountant,
    AutodpCompositionAccountant,
    AutodpRdpAcctAccountant,
    ExactGaussianAccountant,
    PldAccountant,
    RdpAccountant,
    available_accountants,
    epsilon,
    event_rdp,
    get_accountant,
    register_accountant,
)
from dpgnn.privacy.analytic import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
)
from dpgnn.privacy.calibration import Calibration, calibrate, calibrate_noise_multiplier, dpsgd_event
from dpgnn.privacy.events import (
    ComposedEvent,
    Event,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)

#: Names loaded on first use (they need torch): the accounting above stays importable without it, so that
#: ``dpgnn epsilon`` answers in well under a second. Loading any of them imports :mod:`dpgnn.privacy.multibit`
#: first, which registers the ``multibit`` mechanism beside the others of :mod:`dpgnn.privacy.mechanisms`.
_LAZY = {
    **{
        name: "dpgnn.privacy.mechanisms"
        for name in (
            "AnalyticGaussianMechanism",
            "GaussianMechanism",
            "LaplaceMechanism",
            "Mechanism",
            "PGCMechanism",
            "PiecewiseMechanism",
            "RandomizedResponse",
            "available_mechanisms",
            "get_mechanism",
            "register_mechanism",
        )
    },
    "MultiBitMechanism": "dpgnn.privacy.multibit",
    "optimal_m": "dpgnn.privacy.lpgnn",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dpgnn.privacy' has no attribute {name!r}")
    importlib.import_module("dpgnn.privacy.multibit")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    # mechanisms
    "Mechanism",
    "LaplaceMechanism",
    "PiecewiseMechanism",
    "PGCMechanism",
    "RandomizedResponse",
    "GaussianMechanism",
    "AnalyticGaussianMechanism",
    "get_mechanism",
    "register_mechanism",
    "available_mechanisms",
    "MultiBitMechanism",
    "optimal_m",
    # events
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    # accounting
    "Accountant",
    "RdpAccountant",
    "ExactGaussianAccountant",
    "AutodpAccountant",
    "AutodpCompositionAccountant",
    "AutodpRdpAcctAccountant",
    "PldAccountant",
    "get_accountant",
    "register_accountant",
    "available_accountants",
    "epsilon",
    "event_rdp",
    "Calibration",
    "calibrate",
    "calibrate_noise_multiplier",
    "dpsgd_event",
    # Gaussian profile
    "gaussian_delta",
    "gaussian_epsilon",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
]
