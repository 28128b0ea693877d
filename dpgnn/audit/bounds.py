"""Empirical ε lower bounds from membership guesses: Clopper–Pearson bounds and the one-run audit.

An (ε, δ)-DP mechanism M bounds every test that tells two neighbouring inputs apart (Kairouz, Oh & Viswanath 2015;
Jagielski, Ullman & Oprea 2020, Sec. 3): for any rejection region with false-positive rate FPR and false-negative
rate FNR,

    TPR ≤ e^ε · FPR + δ   and   TNR ≤ e^ε · FNR + δ,

so ``ε ≥ ln((TPR − δ)/FPR)`` and ``ε ≥ ln((TNR − δ)/FNR)``. Rates measured from finitely many trials only give
this bound with a confidence level: :func:`epsilon_lower_bound` plugs a **lower** Clopper–Pearson bound on
TPR (TNR) and an **upper** bound on FPR (FNR), each one-sided at ``alpha/4`` (union bound over the four rates: the
joint statement holds with probability ≥ 1 − alpha), so the reported ε is a lower bound with confidence ≥ 1 − alpha.

:func:`one_run_epsilon_lower_bound` is the audit of Steinke, Nasr & Jagielski (NeurIPS 2023, "Privacy auditing
with one (1) training run", Theorem 3.1 / Proposition 5.2 with the δ term of their Algorithm): ``m`` canaries are
each included independently with probability 1/2, the auditor guesses ``r`` of them (abstaining on the rest) and
``v`` guesses are right; under (ε, δ)-DP,
``P[V ≥ v] ≤ P[Binomial(r, e^ε/(1+e^ε)) ≥ v] + 2mδ · max_{1≤i≤v} P[v − i ≤ Binomial(r, q) < v]/i``,
and the lower bound is the largest ε this p-value rejects at level ``alpha``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = [
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "epsilon_lower_bounds",
    "EpsilonBound",
    "threshold_audit",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
    "one_run_guess_audit",
]


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or int(value) < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}")
    return int(value)


def _alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha (1 - confidence) must be in (0, 1), got {alpha!r}")
    return float(alpha)


def _delta(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    return float(delta)


def clopper_pearson(successes: int, trials: int, alpha: float = 0.05, side: str = "two-sided") -> tuple[float, float]:
    """Exact (Clopper–Pearson) confidence interval of a binomial proportion from scipy's beta quantiles.

    ``side="two-sided"`` puts ``alpha/2`` in each tail; ``"lower"`` returns ``(lower bound at level 1 − alpha, 1)``
    and ``"upper"`` returns ``(0, upper bound at level 1 − alpha)``. Identical to
    ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="exact")`` for the two-sided interval.
    """
    k, n = _count(successes, "successes"), _count(trials, "trials")
    if n == 0:
        raise ValueError("trials must be >= 1")
    if k > n:
        raise ValueError(f"successes ({k}) must not exceed trials ({n})")
    a = _alpha(alpha)
    if side not in ("two-sided", "lower", "upper"):
        raise ValueError(f"side must be 'two-sided', 'lower' or 'upper', got {side!r}")
    tail = a / 2.0 if side == "two-sided" else a
    lo = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1.0 - tail, k + 1, n - k))
    if side == "lower":
        return lo, 1.0
    if side == "upper":
        return 0.0, hi
    return lo, hi


def epsilon_from_rates(tpr: float, fpr: float, delta: float = 0.0) -> float:
    """The ε that rates ``(tpr, fpr)`` imply for one test and its complement (no sampling error):
    ``max(ln((TPR − δ)/FPR), ln((1 − FPR − δ)/(1 − TPR)), 0)``; ``inf`` when a ratio has a zero denominator and a
    positive numerator (a perfect distinguisher)."""
    for name, v in (("tpr", tpr), ("fpr", fpr)):
        if not (isinstance(v, numbers.Real) and 0.0 <= float(v) <= 1.0):
            raise ValueError(f"{name} must be a rate in [0, 1], got {v!r}")
    d = _delta(delta)

    def ratio(num: float, den: float) -> float:
        if num <= 0.0:
            return 0.0
        return math.inf if den <= 0.0 else max(0.0, math.log(num / den))

    return max(ratio(float(tpr) - d, float(fpr)), ratio(1.0 - float(fpr) - d, 1.0 - float(tpr)))


@dataclass(frozen=True)
class EpsilonBound:
    """An empirical ε lower bound with what it was computed from."""

    epsilon_lb: float  # lower bound, confidence ≥ 1 − alpha
    epsilon_point: float  # the plug-in estimate from the observed rates
    tpr: float
    fpr: float
    tpr_low: float
    fpr_high: float
    trials_in: int
    trials_out: int
    alpha: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        """The bound and its inputs as a plain dict (a result row's columns)."""
        return asdict(self)


def epsilon_lower_bound(tp: int, fn: int, fp: int, tn: int, *, delta: float = 0.0, alpha: float = 0.05) -> EpsilonBound:
    """ε lower bound (confidence ≥ 1 − alpha) from a test's confusion counts on two neighbouring inputs.

    ``tp``/``fn``: trials run on the "in" input (D) that the test did / did not flag; ``fp``/``tn``: the same on
    the "out" input (D'). Both directions of the test are used (its complement is a test too); each of the four
    rates gets a one-sided Clopper–Pearson bound at ``alpha/4`` (union bound over the four), so the returned
    ``epsilon_lb`` holds with probability ≥ 1 − alpha.
    """
    tp, fn, fp, tn = (_count(v, n) for v, n in ((tp, "tp"), (fn, "fn"), (fp, "fp"), (tn, "tn")))
    n_in, n_out = tp + fn, fp + tn
    if n_in == 0 or n_out == 0:
        raise ValueError("both inputs need at least one trial (tp + fn >= 1 and fp + tn >= 1)")
    a, d = _alpha(alpha), _delta(delta)
    q = a / 4.0
    tpr_lo = clopper_pearson(tp, n_in, q, "lower")[0]
    fpr_hi = clopper_pearson(fp, n_out, q, "upper")[1]
    tnr_lo = clopper_pearson(tn, n_out, q, "lower")[0]
    fnr_hi = clopper_pearson(fn, n_in, q, "upper")[1]

    def ln_ratio(num: float, den: float) -> float:
        return 0.0 if num - d <= 0.0 else max(0.0, math.log((num - d) / den))

    lb = max(ln_ratio(tpr_lo, fpr_hi), ln_ratio(tnr_lo, fnr_hi))
    return EpsilonBound(
        epsilon_lb=lb,
        epsilon_point=epsilon_from_rates(tp / n_in, fp / n_out, d),
        tpr=tp / n_in,
        fpr=fp / n_out,
        tpr_low=tpr_lo,
        fpr_high=fpr_hi,
        trials_in=n_in,
        trials_out=n_out,
        alpha=a,
        delta=d,
    )


def epsilon_lower_bounds(
    tp: np.ndarray, n_in: int, fp: np.ndarray, n_out: int, *, delta: float = 0.0, alpha: float = 0.05
) -> np.ndarray:
    """Vectorised :func:`epsilon_lower_bound` over many tests on the same trials (``tp``, ``fp`` arrays of counts
    of trials flagged "in" on the in/out input): the ``epsilon_lb`` of each, same bounds and union bound."""
    tp, fp = np.asarray(tp, dtype=float), np.asarray(fp, dtype=float)
    a, d = _alpha(alpha), _delta(delta)
    q = a / 4.0
    fn, tn = n_in - tp, n_out - fp

    def low(k, n):  # one-sided lower CP bound at level 1 - q
        with np.errstate(all="ignore"):
            return np.where(k <= 0, 0.0, stats.beta.ppf(q, np.maximum(k, 1e-12), n - k + 1))

    def high(k, n):  # one-sided upper CP bound at level 1 - q
        with np.errstate(all="ignore"):
            return np.where(k >= n, 1.0, stats.beta.ppf(1.0 - q, k + 1, np.maximum(n - k, 1e-12)))

    def ln_ratio(num, den):
        with np.errstate(all="ignore"):
            return np.where(num - d <= 0.0, 0.0, np.maximum(0.0, np.log(np.maximum(num - d, 1e-300) / den)))

    return np.maximum(ln_ratio(low(tp, n_in), high(fp, n_out)), ln_ratio(low(tn, n_out), high(fn, n_in)))


def _counts_at(stat_in: np.ndarray, stat_out: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number of trials with statistic ≥ t, per threshold t, on each side."""
    s_in, s_out = np.sort(stat_in), np.sort(stat_out)
    tp = s_in.size - np.searchsorted(s_in, thresholds, side="left")
    fp = s_out.size - np.searchsorted(s_out, thresholds, side="left")
    return tp, fp


def threshold_audit(
    stat_in: np.ndarray, stat_out: np.ndarray, *, delta: float = 0.0, alpha: float = 0.05, max_thresholds: int = 512
) -> tuple[float, EpsilonBound]:
    """The distinguishing test "statistic ≥ t" between trials on the in and the out input, honestly measured.

    The first half of each side's trials chooses ``t`` (the largest vectorised bound over at most
    ``max_thresholds`` candidates); the second half measures that one test (:func:`epsilon_lower_bound`), so the
    confidence level is not spent on the choice. Returns ``(t, bound)``.
    """
    stat_in, stat_out = np.asarray(stat_in, dtype=float), np.asarray(stat_out, dtype=float)
    if stat_in.size < 2 or stat_out.size < 2:
        raise ValueError("need at least 2 trials per side (half choose the test, half measure it)")
    h_in, h_out = stat_in.size // 2, stat_out.size // 2
    sel_in, sel_out, ev_in, ev_out = stat_in[:h_in], stat_out[:h_out], stat_in[h_in:], stat_out[h_out:]
    pooled = np.unique(np.concatenate([sel_in, sel_out]))
    if pooled.size > max_thresholds:
        pooled = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, max_thresholds)))
    tp, fp = _counts_at(sel_in, sel_out, pooled)
    lbs = epsilon_lower_bounds(tp, sel_in.size, fp, sel_out.size, delta=delta, alpha=alpha)
    t = float(pooled[int(np.argmax(lbs))])
    tp_e, fp_e = (int(v[0]) for v in _counts_at(ev_in, ev_out, np.array([t])))
    return t, epsilon_lower_bound(tp_e, ev_in.size - tp_e, fp_e, ev_out.size - fp_e, delta=delta, alpha=alpha)


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P[≥ v correct of r guesses] under the null hypothesis that training is (ε, δ)-DP (Steinke et al. 2023).

    ``m`` canaries, each included with probability 1/2; ``r`` guesses (abstentions excluded); ``v`` correct.
    """
    m, r, v = _count(m, "m"), _count(r, "r"), _count(v, "v")
    if not v <= r <= m:
        raise ValueError(f"need 0 <= v <= r <= m, got v={v}, r={r}, m={m}")
    if not (isinstance(epsilon, numbers.Real) and float(epsilon) >= 0.0):
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    d = _delta(delta)
    q = 1.0 / (1.0 + math.exp(-float(epsilon)))  # accuracy of ε-DP randomized response
    beta = float(stats.binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if d > 0.0 and v > 0:
        i = np.arange(1, v + 1)
        # P[v - i <= Bin < v] = cdf(v - 1) - cdf(v - i - 1)
        window = stats.binom.cdf(v - 1, r, q) - stats.binom.cdf(v - i - 1, r, q)
        beta += 2.0 * m * d * float(np.max(window / i))
    return min(beta, 1.0)


def one_run_epsilon_lower_bound(
    m: int, r: int, v: int, *, delta: float = 0.0, alpha: float = 0.05, tol: float = 1e-6
) -> float:
    """Largest ε whose null hypothesis "(ε, δ)-DP" is rejected at level ``alpha`` by ``v`` correct of ``r``
    guesses on ``m`` canaries (bisection on :func:`one_run_p_value`, which grows with ε); 0 if none is."""
    a = _alpha(alpha)
    if one_run_p_value(m, r, v, 0.0, delta) >= a:
        return 0.0
    lo, hi = 0.0, 1.0
    while one_run_p_value(m, r, v, hi, delta) < a:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return math.inf
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if one_run_p_value(m, r, v, mid, delta) < a:
            lo = mid
        else:
            hi = mid
    return lo


def one_run_guess_audit(
    scores: np.ndarray,
    included: np.ndarray,
    *,
    guesses: tuple[int, ...] | list[int],
    delta: float = 0.0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """One-run audit from canary membership scores (higher = more likely included).

    For each ``k`` in ``guesses`` the auditor guesses the ``k`` highest-scoring canaries "in" and the ``k`` lowest
    "out" (``r = 2k`` guesses); each candidate is tested at level ``alpha/len(guesses)`` (Bonferroni), so the
    largest of the bounds holds with confidence ≥ 1 − alpha. Returns the best bound with its ``k``, ``r``, ``v``.
    """
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included, dtype=bool)
    if s.shape != inc.shape or s.ndim != 1:
        raise ValueError("scores and included must be vectors of the same length (one entry per canary)")
    m = s.size
    ks = sorted({int(k) for k in guesses})
    if not ks or ks[0] < 1 or 2 * ks[-1] > m:
        raise ValueError(f"guesses must be integers in [1, m/2] = [1, {m // 2}], got {guesses!r}")
    order = np.argsort(-s, kind="stable")
    best = {"epsilon_lb": 0.0, "k": ks[0], "r": 0, "v": 0, "m": m}
    for k in ks:
        v = int(inc[order[:k]].sum() + (~inc[order[m - k :]]).sum())
        lb = one_run_epsilon_lower_bound(m, 2 * k, v, delta=delta, alpha=alpha / len(ks))
        if lb > best["epsilon_lb"] or best["r"] == 0:
            best = {"epsilon_lb": lb, "k": k, "r": 2 * k, "v": v, "m": m}
    return best
