"""Private hyper-parameter selection: train ``K`` times with randomly drawn hyper-parameters, ``K`` itself random,
and release only the best run -- with ε that includes the search.

**Why.** Every paper we reproduce picks its hyper-parameters by validation accuracy without counting that search in
ε: the released model then depends on many private runs, and a search over ``m`` candidates can cost up to ``m``
times the budget of one run under plain composition. Liu & Talwar (STOC 2019) and Papernot & Steinke ("Hyperparameter
Tuning with Rényi Differential Privacy", ICLR 2022) show that if the *number* of runs is random, releasing the best
of them costs only a small constant factor over one run, whatever the number of candidates.

**The algorithm** ``A`` (Papernot & Steinke §3). ``Q`` is one private run: draw a configuration at random from the
search space, train with it, and return the model *and its score*; the score must be computed only from what ``Q``
already released or noised and accounted (e.g. validation accuracy of a model whose inputs are the run's noisy
aggregates and public labels), so that ``(model, score)`` is ``Q``'s output. ``A`` draws ``K`` from a
distribution :class:`TruncatedNegativeBinomial` or :class:`PoissonTrials`, runs ``Q`` ``K`` times independently and
returns the output with the highest score (nothing when ``K = 0``). :func:`private_search` does exactly this.

**The accounting.** With ``Q`` (λ, ε(λ))-RDP at every order:

- truncated negative binomial ``D_{η,γ}`` (their Thm. 2), for every ``λ > 1`` and ``λ̂ ≥ 1``:
  ``ε'(λ) = ε(λ) + (1+η)(1 − 1/λ̂)·ε(λ̂) + (1+η)·log(1/γ)/λ̂ + log E[K]/(λ−1)``; :func:`selection_rdp` takes the
  best ``λ̂`` on the order grid (and ``λ̂ = 1``) for each ``λ``. For pure ε-DP ``Q`` (``λ, λ̂ → ∞``) this is
  ``(2+η)·ε`` (:func:`pure_selection_epsilon`): ``3ε`` for the geometric distribution (``η = 1``, Liu & Talwar's
  random stopping), ``2ε`` for the logarithmic one (``η = 0``).
- Poisson(μ) (their Thm. 6): if ``Q`` is also (ε̂, δ̂)-DP with ``e^ε̂ ≤ 1 + 1/(λ−1)``,
  ``ε'(λ) = ε(λ) + μ·δ̂ + log(μ)/(λ−1)``; δ̂ at ``ε̂ = log(1 + 1/(λ−1))`` comes from ``Q``'s RDP curve by the
  conversion of Canonne, Kamath & Steinke (2020), the one :func:`dpgnn.privacy.rdp.rdp_to_epsilon` inverts.

The (ε, δ) of ``A`` is :func:`selection_epsilon` (RDP → (ε, δ) as everywhere in dpgnn). These are upper bounds
(sound); ``tests/privacy/test_selection.py`` checks them against the exact output distribution of ``A`` on finite
ordered output spaces (pure-DP worst cases and exact Rényi divergences of random pairs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgnn.privacy.rdp import check_orders, rdp_to_epsilon
from dpgnn.privacy.validation import check_delta

__all__ = [
    "TruncatedNegativeBinomial",
    "PoissonTrials",
    "selection_rdp",
    "selection_epsilon",
    "pure_selection_epsilon",
    "private_search",
    "score_rank",
    "SearchResult",
]


@dataclass(frozen=True)
class TruncatedNegativeBinomial:
    """The number of runs ``K ≥ 1`` with ``P[K = k] ∝ C(k+η−1, k)·(1−γ)^k`` (Papernot & Steinke, Def. 1).

    Attributes:
        eta: shape ``η > −1``; ``1`` is the geometric distribution (Liu & Talwar), ``0`` the logarithmic one.
        gamma: ``γ ∈ (0, 1)``; smaller γ means more runs (``E[K]`` grows like ``1/γ`` for ``η = 1``).
    """

    eta: float
    gamma: float

    def __post_init__(self) -> None:
        if not (isinstance(self.eta, (int, float)) and math.isfinite(self.eta) and self.eta > -1):
            raise ValueError(f"eta must be a finite number > -1, got {self.eta!r}")
        if not (isinstance(self.gamma, (int, float)) and 0 < self.gamma < 1):
            raise ValueError(f"gamma must be in (0, 1), got {self.gamma!r}")

    @classmethod
    def with_mean(cls, mean: float, eta: float = 1.0) -> TruncatedNegativeBinomial:
        """The distribution of shape ``eta`` whose expected number of runs is ``mean`` (> 1), found by bisection."""
        if not (isinstance(mean, (int, float)) and math.isfinite(mean) and mean > 1):
            raise ValueError(f"mean must be a finite number > 1, got {mean!r}")
        lo, hi = 1e-12, 1 - 1e-12  # E[K] falls from ∞ to 1 as γ goes from 0 to 1
        for _ in range(200):
            mid = (lo + hi) / 2
            if cls(eta, mid).mean() > mean:
                lo = mid
            else:
                hi = mid
        return cls(eta, (lo + hi) / 2)

    def mean(self) -> float:
        """``E[K]``: ``η(1−γ) / (γ(1 − γ^η))``, or ``(1/γ − 1) / log(1/γ)`` for ``η = 0``."""
        g, e = self.gamma, self.eta
        if e == 0:
            return (1 / g - 1) / math.log(1 / g)
        return e * (1 - g) / (g * (1 - g**e))

    def pgf(self, x: np.ndarray | float) -> np.ndarray:
        """``E[x^K]`` for ``x ∈ [0, 1]``: ``((1 − (1−γ)x)^{−η} − 1) / (γ^{−η} − 1)``, or
        ``log(1 − (1−γ)x) / log γ`` for ``η = 0``."""
        x = np.asarray(x, dtype=float)
        g, e = self.gamma, self.eta
        if e == 0:
            return np.log1p(-(1 - g) * x) / math.log(g)
        return np.expm1(-e * np.log1p(-(1 - g) * x)) / math.expm1(-e * math.log(g))

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of ``K`` (inverse transform: the probabilities of ``k = 1, 2, …`` summed until they pass a
        uniform draw)."""
        u = rng.random()
        k, cdf = 0, 0.0
        while cdf < u and k < 10**8:
            k += 1
            cdf += math.exp(self.log_pmf(k))
        return k

    def log_pmf(self, k: int) -> float:
        """``log P[K = k]``: ``C(k+η−1, k)(1−γ)^k / (γ^{−η} − 1)``, or ``(1−γ)^k / (k log(1/γ))`` for ``η = 0``
        (``lgamma`` is the log of ``|Γ|``, so ``η ∈ (−1, 0)``, where both factors are negative, is covered)."""
        g, e = self.gamma, self.eta
        if k < 1:
            return -math.inf
        if e == 0:
            return k * math.log1p(-g) - math.log(k) - math.log(math.log(1 / g))
        log_binom = math.lgamma(k + e) - math.lgamma(k + 1) - math.lgamma(e)
        return log_binom + k * math.log1p(-g) - math.log(abs(math.expm1(-e * math.log(g))))

    def describe(self) -> str:
        """The distribution in words for the ledger, with ``η``, ``γ`` and ``E[K]``."""
        return f"truncated negative binomial (η = {self.eta:g}, γ = {self.gamma:.4g}, E[K] = {self.mean():.3g})"


@dataclass(frozen=True)
class PoissonTrials:
    """``K ~ Poisson(μ)`` runs (``K = 0`` releases nothing) (Papernot & Steinke, §3.2).

    Attributes:
        mu: the expected number of runs ``μ > 0``.
    """

    mu: float

    def __post_init__(self) -> None:
        if not (isinstance(self.mu, (int, float)) and math.isfinite(self.mu) and self.mu > 0):
            raise ValueError(f"mu must be a finite number > 0, got {self.mu!r}")

    def mean(self) -> float:
        """``E[K] = μ``."""
        return float(self.mu)

    def pgf(self, x: np.ndarray | float) -> np.ndarray:
        """``E[x^K] = e^{μ(x − 1)}``."""
        return np.exp(self.mu * (np.asarray(x, dtype=float) - 1))

    def sample(self, rng: np.random.Generator) -> int:
        """One draw of ``K`` from ``rng`` (0 is possible: then nothing is released)."""
        return int(rng.poisson(self.mu))

    def describe(self) -> str:
        """The distribution in words for the ledger, e.g. ``"Poisson (μ = 10)"``."""
        return f"Poisson (μ = {self.mu:g})"


Trials = TruncatedNegativeBinomial | PoissonTrials


def _delta_at(orders: np.ndarray, rdp: np.ndarray, eps_hat: float) -> float:
    """The smallest δ̂ with ``(ε̂, δ̂)``-DP from an RDP curve (Canonne, Kamath & Steinke 2020, Prop. 12):
    ``min_α exp((α−1)(ε(α) − ε̂)) · (1 − 1/α)^{α−1} / α``, capped at 1."""
    with np.errstate(over="ignore", invalid="ignore"):
        log_d = (orders - 1) * (rdp - eps_hat) + (orders - 1) * np.log1p(-1 / orders) - np.log(orders)
    log_d = np.where(np.isfinite(log_d), log_d, np.inf)
    return float(min(1.0, math.exp(min(0.0, float(np.min(log_d))))))


def selection_rdp(base_rdp: Sequence[float], trials: Trials, orders: Sequence[float] | None = None) -> np.ndarray:
    """RDP curve of releasing the best of ``K ~ trials`` independent runs of ``Q``, from ``Q``'s RDP curve.

    Args:
        base_rdp: ``ε(λ)`` of one run ``Q`` at ``orders`` (the worst case over the search space: the curve of the
            least private configuration).
        trials: the distribution of the number of runs.
        orders: the RDP orders of ``base_rdp`` (default :data:`dpgnn.privacy.rdp.DEFAULT_ORDERS`).

    Returns:
        ``ε'(λ)`` at the same orders (Papernot & Steinke Thm. 2 for the truncated negative binomial, with the best
        ``λ̂`` of the grid and ``λ̂ = 1``; Thm. 6 for Poisson, ``inf`` at orders where its condition cannot be met).
    """
    a = check_orders(orders)
    eps = np.asarray(base_rdp, dtype=float).ravel()
    if eps.shape != a.shape:
        raise ValueError(f"base_rdp must have one value per order ({a.size}), got {eps.size}")
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("base_rdp values must be >= 0")
    log_mean = math.log(trials.mean())
    if isinstance(trials, TruncatedNegativeBinomial):
        e1 = 1 + trials.eta
        # the λ̂ term, minimised over the grid and λ̂ = 1 (where it is (1+η) log(1/γ)); independent of λ
        hat = e1 * (1 - 1 / a) * eps + e1 * math.log(1 / trials.gamma) / a
        best_hat = min(float(np.min(np.where(np.isfinite(hat), hat, np.inf))), e1 * math.log(1 / trials.gamma))
        return eps + best_hat + log_mean / (a - 1)
    out = np.empty_like(eps)
    for i, lam in enumerate(a):
        d_hat = _delta_at(a, eps, math.log1p(1 / (lam - 1)))
        out[i] = eps[i] + trials.mu * d_hat + log_mean / (lam - 1)
    return out


def selection_epsilon(
    base_rdp: Sequence[float], trials: Trials, delta: float, orders: Sequence[float] | None = None
) -> tuple[float, float]:
    """(ε, best order) of the whole search at ``delta``: :func:`selection_rdp` then the RDP → (ε, δ) conversion."""
    a = check_orders(orders)
    return rdp_to_epsilon(a, selection_rdp(base_rdp, trials, a), check_delta(delta))


def pure_selection_epsilon(epsilon: float, trials: TruncatedNegativeBinomial) -> float:
    """ε of the search when every run is pure ε-DP: ``(2 + η)·ε`` (Papernot & Steinke Thm. 2 with ``λ, λ̂ → ∞``;
    ``3ε`` for the geometric distribution, Liu & Talwar's Thm. 3.4)."""
    if not isinstance(trials, TruncatedNegativeBinomial):
        raise ValueError(
            "pure-DP selection has a closed form for the truncated negative binomial only; use "
            "selection_epsilon with the runs' RDP curve"
        )
    if not (isinstance(epsilon, (int, float)) and math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    return (2 + trials.eta) * float(epsilon)


@dataclass
class SearchResult:
    """What :func:`private_search` releases, and what it does not.

    Attributes:
        best: the output of the best run (``None`` when ``K = 0`` under Poisson).
        best_config: its configuration.
        best_score: its score.
        runs: ``K``, the number of runs drawn.
        ledger: the search's privacy statement (distribution, ``E[K]``, ε of one run, ε of the search, δ).
        scores: every run's ``(config, score)`` -- NOT private: for the audit trail of the experiment only.
    """

    best: Any
    best_config: dict[str, Any] | None
    best_score: float
    runs: int
    ledger: dict[str, Any]
    scores: list[tuple[dict[str, Any], float]]


def score_rank(score: float) -> float:
    """A run's score as the search ranks it: NaN (a run with nothing to score, e.g. no training step fits its ε)
    below every number."""
    return -math.inf if math.isnan(score) else float(score)


def private_search(
    run: Callable[[dict[str, Any], int], tuple[float, Any]],
    space: Callable[[np.random.Generator], dict[str, Any]],
    trials: Trials,
    *,
    base_rdp: Sequence[float],
    delta: float,
    seed: int = 0,
    orders: Sequence[float] | None = None,
) -> SearchResult:
    """Random search with a random number of runs; the best run is released with ε that includes the search.

    Args:
        run: ``run(config, run_seed) -> (score, output)``: one private training. Its score must be computed only
            from what the run already released or noised and accounted; NaN ranks below every number
            (:func:`score_rank`), so a NaN run is released only when no run has a number.
        space: ``space(rng) -> config``: one configuration drawn at random from the search space.
        trials: the distribution of ``K``.
        base_rdp: the RDP curve of one run at ``orders``, the worst over the space (every configuration's run must
            be at most this private-loss at every order).
        delta: δ of the released statement.
        seed: seeds ``K``, the configurations and each run (``run_seed`` = the run's index mixed with ``seed``).
        orders: RDP orders of ``base_rdp``.

    Returns:
        A :class:`SearchResult`; ``ledger["epsilon"]`` is the search's ε at ``delta`` and ``ledger["epsilon_run"]``
        one run's.
    """
    a = check_orders(orders)
    rng = np.random.default_rng([seed, 0x5E1EC7])
    k = trials.sample(rng)
    eps, order = selection_epsilon(base_rdp, trials, delta, a)
    eps_run, _ = rdp_to_epsilon(a, np.asarray(base_rdp, dtype=float), delta)
    best, best_cfg, best_score, scores = None, None, -math.inf, []
    for i in range(k):
        cfg = space(rng)
        score, out = run(cfg, int(rng.integers(2**31)))
        scores.append((cfg, float(score)))
        if i == 0 or score_rank(score) > score_rank(best_score):
            best, best_cfg, best_score = out, cfg, float(score)
    ledger = {
        "selection": trials.describe(),
        "expected_runs": trials.mean(),
        "runs": k,
        "delta": delta,
        "epsilon_run": eps_run,
        "epsilon": eps,
        "order": order,
        "guarantee": "sound",
        "accountant": "Papernot & Steinke (ICLR 2022) RDP of the best of K runs, then RDP → (ε, δ)",
        "search_included": True,
    }
    return SearchResult(best, best_cfg, best_score, k, ledger, scores)
