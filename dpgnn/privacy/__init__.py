"""Differential privacy for dpgnn: mechanisms, privacy events, accountants, calibration (pure math, no graphs).

- :mod:`dpgnn.privacy.mechanisms` -- noise mechanisms (LDP feature mechanisms, label RR, Gaussian) and their registry.
- :mod:`dpgnn.privacy.analytic`   -- exact (ε, δ) profile of the Gaussian mechanism (Balle & Wang 2018).
"""

from dpgnn.privacy.analytic import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
)
from dpgnn.privacy.mechanisms import (
    AnalyticGaussianMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    Mechanism,
    PGCMechanism,
    PiecewiseMechanism,
    RandomizedResponse,
    available_mechanisms,
    get_mechanism,
    register_mechanism,
)

__all__ = [
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
    "gaussian_delta",
    "gaussian_epsilon",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
]
