"""Multi-term (hypergeometric) RDP accountant of the FDP baseline (Daigavane et al., "Node-level differentially
private graph neural networks", arXiv 2111.15521; docs/papers/drw.md#fdp-baseline). Pure math: no graphs.

Setting. Feature-level DP with replace-one neighbouring graphs. Every training node (root) trains on its own
neighbourhood in a degree-bounded graph (max degree ``D``); a ``depth``-layer GCN lets one node's features reach
the gradients of at most ``K = 1 + D + … + D^depth = (D^(depth+1) − 1)/(D − 1)`` roots (:func:`max_affected`). A
step draws ``B`` of the ``N`` roots uniformly without replacement, clips every per-root gradient to norm ``C``,
sums them and adds ``N(0, σ²)`` with ``σ = z · 2KC`` (``z`` = noise multiplier relative to the batch's worst-case
sensitivity ``2KC``).

RDP of one step (Daigavane et al., Theorem 1; the number ρ of affected roots in the batch is
``Hypergeometric(N, K, B)``)::

    γ(α) = 1/(α−1) · log Σ_i P(ρ = i) · exp(α(α−1) · (2iC)² / (2σ²))
         = 1/(α−1) · log Σ_i P(ρ = i) · exp(α(α−1) · i² / (2 z² K²))

composed over ``T`` steps by addition. Conversion to (ε, δ):

- ``"tight"`` (default; the dp_accounting conversion used by Daigavane et al.)
  ``ε = min_α T·γ(α) + log((α−1)/α) − (log δ + log α)/(α−1)`` over a grid of orders;
- ``"classic"`` (the DRW authors' code) ``ε = T·γ(α) + log(1/δ)/(α−1)``, with ``orders=[10]`` for their single
  fixed order.

Both conversions are valid upper bounds; the DRW authors' variant (one order, classic conversion) only reports a
larger ε.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from dpgnn.privacy.events import Event
from dpgnn.privacy.validation import check_count, check_delta, check_int, check_positive_finite

__all__ = ["FDP_ORDERS", "max_affected", "fdp_rdp", "fdp_epsilon", "FdpSampledGaussianEvent"]

#: Orders of the multi-term accountant (Daigavane et al. use 1.1 … 9.9 and integers; we add larger ones).
FDP_ORDERS: np.ndarray = np.unique(
    np.concatenate(
        [np.round(np.arange(1.1, 10.0, 0.1), 2), np.arange(10, 64, 1.0), np.array([80.0, 100.0, 128.0, 256.0])]
    )
)
_CONVERSIONS = ("tight", "classic")


def max_affected(max_degree: int, depth: int) -> int:
    """``K = Σ_{l=0}^{depth} D^l``: roots whose depth-hop neighbourhood (max degree D) can contain a given node."""
    D = check_int(max_degree, "max_degree", 1)
    L = check_int(depth, "depth", 0)
    return L + 1 if D == 1 else (D ** (L + 1) - 1) // (D - 1)


def _check_sizes(num_train: int, batch_size: int, affected: int) -> tuple[int, int, int]:
    n = check_int(num_train, "num_train", 1)
    b = check_int(batch_size, "batch_size", 1)
    k = check_int(affected, "max_affected", 1)
    if b > n:
        raise ValueError(f"batch_size must be in [1, num_train={n}], got {b}")
    return n, b, min(k, n)


def _orders(orders: Sequence[float] | None) -> np.ndarray:
    a = FDP_ORDERS if orders is None else np.asarray(orders, dtype=float).ravel()
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 1.0):
        raise ValueError(f"orders must be finite numbers > 1, got {orders!r}")
    return np.unique(a)


def fdp_rdp(
    orders: Sequence[float] | None, noise_multiplier: float, num_train: int, batch_size: int, max_affected: int
) -> np.ndarray:
    """Per-step RDP ``γ(α)`` at ``orders`` (see the module docstring); ``z = noise_multiplier``."""
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    n, b, k = _check_sizes(num_train, batch_size, max_affected)
    a = _orders(orders)
    from scipy.stats import hypergeom  # on use: scipy.stats costs ~0.3 s to import (dpgnn epsilon stays fast)

    i = np.arange(0, min(k, b) + 1)
    logp = hypergeom.logpmf(i, n, k, b)  # population n, k "affected", b draws
    keep = np.isfinite(logp)
    i, logp = i[keep], logp[keep]
    expo = (a[:, None] * (a[:, None] - 1.0)) * (i[None, :] ** 2) / (2.0 * z * z * k * k)
    return logsumexp(logp[None, :] + expo, axis=1) / (a - 1.0)


def fdp_epsilon(
    steps: int,
    noise_multiplier: float,
    num_train: int,
    batch_size: int,
    max_affected: int,
    delta: float,
    *,
    orders: Sequence[float] | None = None,
    conversion: str = "tight",
) -> tuple[float, float]:
    """(ε, optimal order) after ``steps`` FDP steps at ``delta``; ``steps=0`` gives ε = 0."""
    t = check_int(steps, "steps", 0)
    d = check_delta(delta)
    if conversion not in _CONVERSIONS:
        raise ValueError(f"conversion must be one of {_CONVERSIONS}, got {conversion!r}")
    a = _orders(orders)
    gamma = fdp_rdp(a, noise_multiplier, num_train, batch_size, max_affected)
    if t == 0:
        return 0.0, math.nan
    total = t * gamma
    if conversion == "tight":
        eps = total + np.log1p(-1.0 / a) - (math.log(d) + np.log(a)) / (a - 1.0)
    else:
        eps = total + math.log(1.0 / d) / (a - 1.0)
    eps = np.where(np.isfinite(eps), eps, np.inf)
    j = int(np.argmin(eps))
    return max(float(eps[j]), 0.0), float(a[j])


@dataclass(frozen=True)
class FdpSampledGaussianEvent(Event):
    """One FDP step: Gaussian noise ``z · 2KC`` on the sum of ``batch_size`` of ``num_train`` clipped per-root
    gradients, ``K = max_affected`` of which one node's features can change (replace-one, feature level).

    An event of the algebra (:mod:`dpgnn.privacy.events`): ``SelfComposedEvent(step, T)`` is a run of ``T`` steps,
    and the ``rdp`` accountant composes it with the per-step curve :func:`fdp_rdp` (``RdpAccountant(FDP_ORDERS)``
    gives exactly :func:`fdp_epsilon`); accountants without that curve refuse it (``NotImplementedError``)."""

    noise_multiplier: float
    num_train: int
    batch_size: int
    max_affected: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", check_positive_finite(self.noise_multiplier, "noise_multiplier"))
        n, b, _ = _check_sizes(self.num_train, self.batch_size, self.max_affected)
        object.__setattr__(self, "num_train", n)
        object.__setattr__(self, "batch_size", b)
        check_count(self.max_affected, "max_affected")

    def epsilon(
        self, steps: int, delta: float, *, orders: Sequence[float] | None = None, conversion: str = "tight"
    ) -> tuple[float, float]:
        """``(ε, optimal order)`` of ``steps`` such steps at ``delta``: :func:`fdp_epsilon` (``orders``: its grid,
        default :data:`FDP_ORDERS`; ``conversion``: ``"tight"`` or the DRW authors' ``"classic"``)."""
        return fdp_epsilon(
            steps,
            self.noise_multiplier,
            self.num_train,
            self.batch_size,
            self.max_affected,
            delta,
            orders=orders,
            conversion=conversion,
        )

    def to_dict(self) -> dict[str, Any]:
        """``{"event": "fdp_hypergeometric_gaussian", "noise_multiplier", "num_train", "batch_size",
        "max_affected"}`` with the step's values."""
        return {
            "event": "fdp_hypergeometric_gaussian",
            "noise_multiplier": self.noise_multiplier,
            "num_train": self.num_train,
            "batch_size": self.batch_size,
            "max_affected": self.max_affected,
        }
