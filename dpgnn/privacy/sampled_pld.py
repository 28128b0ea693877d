"""Tight privacy-loss distributions (PLDs) for sampling without replacement under replace-one neighbouring and for
FDP's hypergeometric sampling; pessimistically discretised on Google's ``dp_accounting`` (0.6.0). Pure math.

**Sampling without replacement** (:func:`wor_pld`; DRW, ``dpgnn epsilon dpsgd --sampling uniform``).
Neighbouring: two datasets of the same size ``n`` that differ in one record (replace-one; for DRW the records are
the ``m`` disjoint subgraphs and replacing one node's features changes one subgraph's gradient, Ayle et al. Sec.
4.1). A step draws ``B`` of the ``n`` records uniformly without replacement (``q = B / n``, or an upper bound on
it such as DRW's ``B / m_min``, Sec. 4.2), sums the clipped gradients (norm ≤ C) and adds ``N(0, σ² I)``. Replacing
one record moves the sum by at most ``Δ = 2C`` (sensitivity), so the unsampled step is ``G_μ``-DP with
``μ = Δ / σ = 1 / z`` (``z`` = noise multiplier relative to 2C; Laplace: ``T(Lap(0, b), Lap(1, b))``).
By Dong, Roth & Su (2022, "Gaussian differential privacy", Thm. 4.2, replace-one with a fixed ``n``) the sampled
step is ``C_q(f)``-DP with ``f_q = q f + (1 − q) Id`` and ``C_q(f) = min(f_q, f_q⁻¹)**``. ``f_q`` is the trade-off
function of the pair ``((1−q)N(0, σ²) + q N(Δ, σ²), N(0, σ²))`` (Zhu, Dong & Wang 2022, Prop. 30) and ``f_q⁻¹`` of
the swapped pair, so (convex conjugate of a minimum = maximum of conjugates) the hockey-stick profile of
``C_q(f)`` is ``δ(ε) = max(δ_remove(ε), δ_add(ε))`` for *every* real ε, where ``δ_remove``/``δ_add`` are the two
directions of the Poisson-subsampled mechanism's PLD under add/remove (what ``dp_accounting`` builds). Symmetrising
*before* composing matters: with adaptive training the other records' gradients can put one step in one direction
and the next step in the other, so the maximum of the two directions composed separately is not a bound (an attack
that picks step 2's direction from step 1's output exceeds it: ``tests/privacy/test_sampled_pld.py``).
One step's bound is attained: with every other record's gradient equal to ``C·e`` and the replaced record's
``C·e → −C·e``, the output pair is exactly ``(N(0), (1−q)N(0) + q N(−Δ))`` and the swapped datasets give the other
direction. Composed, the best attack we know (switching direction from step to step) stays below the composed
``C_q(f)`` (ε 1.84 against 2.20 at z = 1, q = 0.01, 1000 steps, δ = 1e-5; ``benchmarks/README.md``).
(Lebeda et al. 2024's pair ``((1−q)N(0)+qN(C), (1−q)N(0)+qN(−C))`` is for Poisson sampling under substitution; with
a fixed batch size a record left out is replaced by another, so it is below the truth here:
``tests/privacy/test_sampled_pld.py`` shows a pair of datasets that exceeds it.)

**FDP** (:func:`fdp_pld`; Daigavane et al., arXiv 2111.15521, Thm. 1). One node's features reach at most ``K`` roots'
gradients; ``B`` of ``n`` roots are drawn without replacement, so the number ``ρ`` of affected roots in the batch is
``Hypergeometric(n, K, B)`` (``p_i = P(ρ = i)``); noise ``σ = z · 2KC``. Write ``M(D) = p_0 μ_0 + (1 − p_0) μ_1`` and
``M(D') = p_0 μ_0 + (1 − p_0) μ_1'``: the batches without an affected root give the same ``μ_0`` on both graphs. By
advanced joint convexity (Balle, Barthe & Gaboardi 2018, Thm. 2), for ``α' ≥ 1``,
``H_α'(M(D) ‖ M(D')) = (1 − p_0) H_α(μ_1 ‖ (1 − β) μ_0 + β μ_1')`` with ``α = 1 + (α' − 1)/(1 − p_0)``, ``β = α'/α``,
and by joint convexity this is at most ``(1 − p_0)[(1 − β) H_α(μ_1 ‖ μ_0) + β H_α(μ_1 ‖ μ_1')]``. Conditional on
``ρ = i ≥ 1``, replacing the ``i`` affected roots of the batch by ``i`` random unaffected ones gives a batch distributed
as the ρ = 0 batches that moves the sum by at most ``2iC``, and the same batch on ``D'`` moves it by at most ``2iC``;
joint convexity over ``(i, batch)`` bounds both terms by ``Σ_{i≥1} p̃_i H_α(N(2iC, σ²) ‖ N(0, σ²))``,
``p̃_i = p_i / (1 − p_0)``. That is exactly ``H_α'`` of the pair ``((1 − p_0) P̃ + p_0 Q̃, Q̃)`` with the count
revealed among the affected batches, ``P̃ = Σ_{i≥1} p̃_i δ_i ⊗ N(2iC)``, ``Q̃ = Σ_{i≥1} p̃_i δ_i ⊗ N(0)`` (a
subsampled Gaussian of sensitivity ``i`` and rate ``1 − p_0`` per revealed ``i``), for both orders of ``(D, D')``. For
``α' < 1``, ``H_α'(P ‖ Q) = 1 − α' + α' H_{1/α'}(Q ‖ P)`` gives the swapped pair. So the step is ``C(f)``-DP with ``f``
this pair's trade-off function, symmetrised as above (:func:`symmetrise`), and composes (Dong, Roth & Su, Thm. 3.2).
``K = 1`` is the without-replacement case (``q = B / n``). Its Rényi divergence is at most Daigavane et al.'s
multi-term bound (:func:`dpgnn.privacy.fdp.fdp_rdp`, the count revealed in every batch). It is not proven tight: the
graphs with every root's gradient ``C·e`` and the K affected roots' turned to ``−C·e`` give ``(N(0), Σ_i p_i N(2iC))``
(the count hidden), a lower bound (:func:`fdp_lower_bound_pld`).

**Discretisation.** ``dp_accounting`` rounds both directions pessimistically (connect-the-dots). On the loss grid
``ℓ_j = jΔℓ`` each direction's ``δ`` is piecewise linear in ``u = e^ε`` with kinks on the grid, so the chord of
``max(δ_remove, δ_add)`` through the grid points (and ``δ(u = 0) = 1``) is an upper bound; its kinks give the
symmetric PMF (:func:`symmetrise`). Composition truncates tails into the infinite-loss mass (pessimistic).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from dpgnn.privacy.validation import check_count, check_positive_finite, check_sample_rate

__all__ = [
    "DEFAULT_INTERVAL",
    "MAX_COMPOSITIONS",
    "symmetrise",
    "wor_pld",
    "fdp_pld",
    "fdp_lower_bound_pld",
    "check_compositions",
]

#: Loss-grid spacing of the PLDs (as :class:`dpgnn.privacy.accountant.PldAccountant`'s default).
DEFAULT_INTERVAL = 1e-3
#: Most self-compositions a PLD is asked for; beyond it the callers say so in one line (use the ``rdp`` accountant).
MAX_COMPOSITIONS = 10**8


def check_compositions(count: int) -> int:
    """``count`` if in ``[1, MAX_COMPOSITIONS]``, else a one-line ``ValueError`` naming the range."""
    n = check_count(count, "count")
    if n > MAX_COMPOSITIONS:
        raise ValueError(
            f"count must be in [1, {MAX_COMPOSITIONS}] for PLD accounting, got {n}; use the 'rdp' accountant"
        )
    return n


def _direction_deltas(pmf: Any, lo: int, hi: int, step: float) -> np.ndarray:
    """``δ`` of one pessimistic PMF at ``u_j = e^{jΔℓ}``, ``j = lo … hi`` (its support lies in ``[lo, hi]``)."""
    dense = pmf.to_dense_pmf()
    probs = np.zeros(hi - lo + 1)
    start = dense._lower_loss - lo  # noqa: SLF001 - dp_accounting exposes no public accessor for the PMF
    probs[start : start + dense._probs.size] = dense._probs  # noqa: SLF001
    j = np.arange(lo, hi + 1)
    tail = np.concatenate([np.cumsum(probs[::-1])[::-1][1:], [0.0]])  # Σ_{k>j} p_k
    scaled = probs * np.exp(-(j - lo) * step)  # p_k e^{-(k-lo)Δℓ}
    tail_scaled = np.concatenate([np.cumsum(scaled[::-1])[::-1][1:], [0.0]])
    return dense._infinity_mass + tail - np.exp((j - lo) * step) * tail_scaled  # noqa: SLF001


def symmetrise(pld: Any) -> Any:
    """A symmetric ``PrivacyLossDistribution`` whose ``δ(ε)`` is at least ``max(δ_remove, δ_add)`` of ``pld`` for
    every ε (module docstring, "Discretisation"): the PLD of ``C_q(f)`` when ``pld`` is that of ``f_q``."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    rem, add = pld._pmf_remove.to_dense_pmf(), pld._pmf_add.to_dense_pmf()  # noqa: SLF001
    step = rem._discretization  # noqa: SLF001
    lo = min(rem._lower_loss, add._lower_loss)  # noqa: SLF001
    hi = max(rem._lower_loss + rem._probs.size, add._lower_loss + add._probs.size) - 1  # noqa: SLF001
    d = np.maximum(_direction_deltas(rem, lo, hi, step), _direction_deltas(add, lo, hi, step))
    # slopes of the chord in u = e^ℓ: from (0, 1) to the first grid point, between grid points, flat after the last
    u_lo = math.exp(lo * step)
    gaps = u_lo * np.exp(np.arange(hi - lo) * step) * math.expm1(step)
    slopes = np.concatenate([[(d[0] - 1.0) / u_lo], np.diff(d) / gaps, [0.0]])
    masses = np.exp(lo * step + np.arange(hi - lo + 1) * step) * np.diff(slopes)
    masses = np.maximum(masses, 0.0)  # rounding can leave -1e-17; more mass only raises δ (pessimistic)
    pmf = pld_pmf.DensePLDPmf(step, lo, masses, float(d[-1]), pessimistic_estimate=True)
    return PrivacyLossDistribution(pmf)


@functools.lru_cache(maxsize=128)
def wor_pld(mechanism: str, noise: float, sample_rate: float, interval: float = DEFAULT_INTERVAL) -> Any:
    """PLD of one step of ``mechanism`` (``"gaussian"``: noise multiplier ``z``; ``"laplace"``: scale ``b``, both
    relative to the replace-one sensitivity) on a without-replacement sample of rate ``sample_rate``
    (symmetrised ``C_q(f)``, module docstring). Rate 1: the unsampled mechanism."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    x = check_positive_finite(noise, "noise_multiplier" if mechanism == "gaussian" else "scale")
    q = check_sample_rate(sample_rate, "sample_rate")
    h = check_positive_finite(interval, "value_discretization_interval")
    if mechanism == "gaussian":
        pld = pld_lib.from_gaussian_mechanism(x, sampling_prob=q, value_discretization_interval=h)
    elif mechanism == "laplace":
        pld = pld_lib.from_laplace_mechanism(x, sampling_prob=q, value_discretization_interval=h)
    else:
        raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r}")
    return pld if q == 1.0 else symmetrise(pld)


def _affected_pmf(num_train: int, batch_size: int, max_affected: int) -> tuple[np.ndarray, np.ndarray]:
    n = check_count(num_train, "num_train")
    b = check_count(batch_size, "batch_size")
    if b > n:
        raise ValueError(f"batch_size must be in [1, num_train={n}], got {b}")
    k = min(check_count(max_affected, "max_affected"), n)
    from scipy.stats import hypergeom  # on use: scipy.stats costs ~0.3 s to import (dpgnn epsilon stays fast)

    i = np.arange(0, min(k, b) + 1)
    p = hypergeom.pmf(i, n, k, b)
    return i[p > 0], p[p > 0]


@functools.lru_cache(maxsize=128)
def fdp_pld(
    noise_multiplier: float, num_train: int, batch_size: int, max_affected: int, interval: float = DEFAULT_INTERVAL
) -> Any:
    """PLD of one FDP step (noise ``z · 2KC``; module docstring): the symmetrised pair
    ``((1 − p_0) P̃ + p_0 Q̃, Q̃)``, a mixture over the revealed count ``i ≥ 1`` of subsampled Gaussians of
    sensitivity ``i / (zK)`` at rate ``1 − p_0`` (``K = 1``: the without-replacement pair at ``q = B / n``)."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    i, p = _affected_pmf(num_train, batch_size, max_affected)
    k = min(max_affected, num_train)
    if k == 1:
        return wor_pld("gaussian", z, batch_size / num_train, interval)
    rate = 1.0 - (float(p[0]) if i[0] == 0 else 0.0)  # no unaffected batch (n - K < B): rate 1, no sampling
    out, weight = None, 0.0
    for count, prob in zip(i[i > 0], p[i > 0]):
        part = pld_lib.from_gaussian_mechanism(
            z * k, sensitivity=float(count), sampling_prob=rate, value_discretization_interval=interval
        )
        out, weight = (
            (part, prob) if out is None else (part.compute_mixture(out, prob / (weight + prob)), weight + prob)
        )
    return symmetrise(out)


def fdp_lower_bound_pld(
    noise_multiplier: float, num_train: int, batch_size: int, max_affected: int, interval: float = DEFAULT_INTERVAL
) -> Any:
    """PLD of one concrete pair of FDP datasets, ``(N(0), Σ_i p_i N(2iC))`` with ``σ = z·2KC`` (every root's gradient
    ``C·e``, the K affected roots' ``−C·e``): discretised *optimistically*, so its ε is a lower bound on the truth."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    i, p = _affected_pmf(num_train, batch_size, max_affected)
    k = min(max_affected, num_train)
    return pld_lib.from_mixture_gaussian_mechanism(
        z * k,
        [float(c) for c in i],
        [float(w) for w in p],
        pessimistic_estimate=False,
        value_discretization_interval=interval,
    )
