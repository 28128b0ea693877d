"""Randomisation mechanisms: local (per-feature ε-LDP) and central (Gaussian) noise, plus label randomised response.

Every mechanism object both adds noise and knows its privacy cost (:meth:`Mechanism.ledger`). The public contract,
used by notebooks, methods and external audits::

    m = get_mechanism(name, epsilon=..., low=0.0, high=1.0, **kw)
    m.perturb(x, generator=None)  # what a node sends (PGC: bits y ∈ {0,1}; LM/PM/Gaussian: noisy value; RR: labels)
    m(x, generator=None)          # server-side estimate of x  (= m.estimate(m.perturb(x, generator)))
    m.estimate(sent)              # server side alone (PGC: de-biasing, eq. 5; identity otherwise)
    m.variance(x)                 # analytic per-entry variance of m(x)

Inputs are torch tensors (any float dtype, any device; noise is drawn on the generator's device and moved to
``x.device``) or numpy arrays (returned as numpy). ``generator`` is a ``torch.Generator``, an int seed
(0 is a seed) or ``None`` (torch's global RNG). The same seed gives the same output.

Inputs outside ``[low, high]`` are **refused** with a ``ValueError`` (the privacy guarantee is only valid on the
declared domain, since the sensitivity is ``Δ = high − low``). Pass ``clip=True`` to clip them instead (a
``UserWarning`` says how many entries were clipped). NaN inputs are always refused.

Names are normalised (case, ``-``, ``_`` and spaces ignored); :func:`register_mechanism` adds new ones.
"""

from __future__ import annotations

import abc
import math
import numbers
import warnings
from typing import Any, ClassVar

import numpy as np
import torch

from dpgnn.privacy.analytic import analytic_gaussian_sigma, classic_gaussian_sigma
from dpgnn.privacy.validation import check_delta, check_epsilon, check_positive_finite, check_range

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
]

GeneratorLike = torch.Generator | int | None
ArrayLike = torch.Tensor | np.ndarray

_FLOAT_TYPES = (torch.float32, torch.float64)


# ----------------------------------------------------------------------------------------------------------------
# randomness helpers
# ----------------------------------------------------------------------------------------------------------------
def _resolve_generator(generator: GeneratorLike, device: torch.device) -> torch.Generator | None:
    if generator is None or isinstance(generator, torch.Generator):
        return generator
    if isinstance(generator, bool) or not isinstance(generator, (numbers.Integral, np.integer)):
        raise TypeError(f"generator must be a torch.Generator, an int seed (0 is a seed) or None, got {generator!r}")
    gen = torch.Generator(device=device)
    gen.manual_seed(int(generator))
    return gen


def _uniform(shape: torch.Size, gen: torch.Generator | None, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """U[0, 1) samples drawn on the generator's device (or ``device`` for the global RNG), moved to ``device``."""
    where = gen.device if gen is not None else device
    return torch.rand(shape, generator=gen, device=where, dtype=dtype).to(device)


def _normal(shape: torch.Size, gen: torch.Generator | None, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    where = gen.device if gen is not None else device
    return torch.randn(shape, generator=gen, device=where, dtype=dtype).to(device)


def _exponential(
    shape: torch.Size, gen: torch.Generator | None, device: torch.device, dtype: torch.dtype
) -> torch.Tensor:
    where = gen.device if gen is not None else device
    return torch.empty(shape, device=where, dtype=dtype).exponential_(1.0, generator=gen).to(device)


def _randint(low: int, high: int, shape: torch.Size, gen: torch.Generator | None, device: torch.device) -> torch.Tensor:
    where = gen.device if gen is not None else device
    return torch.randint(low, high, shape, generator=gen, device=where, dtype=torch.long).to(device)


# ----------------------------------------------------------------------------------------------------------------
# base class
# ----------------------------------------------------------------------------------------------------------------
class Mechanism(abc.ABC):
    """Base class of feature mechanisms acting independently on every entry of a tensor.

    Subclasses implement :meth:`_perturb`, :meth:`_estimate` and :meth:`_variance` on float tensors already checked
    to lie in ``[low, high]``; the base class handles numpy/torch conversion, dtype, range checks and generators.

    Attributes: ``name`` (canonical registry name), ``epsilon``, ``delta`` (``0.0`` for pure ε-DP), ``low``,
    ``high``, ``sensitivity``, ``neighbouring``, ``guarantee``.
    """

    name: ClassVar[str] = ""
    #: text of the neighbouring relation the guarantee refers to
    neighbouring: ClassVar[str] = "LDP: any two input values of one node's feature in [low, high]"

    def __init__(self, epsilon: float, low: float = 0.0, high: float = 1.0, *, clip: bool = False) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.low, self.high = check_range(low, high)
        if not isinstance(clip, bool):
            raise TypeError(f"clip must be a bool, got {clip!r}")
        self.clip = clip
        self.delta = 0.0

    # -- derived quantities ------------------------------------------------------------------------------------
    @property
    def span(self) -> float:
        """Δ = high − low (the feature range)."""
        return self.high - self.low

    @property
    def sensitivity(self) -> float:
        """Sensitivity used for calibration (Δ = high − low for the local mechanisms)."""
        return self.span

    @property
    def guarantee(self) -> str:
        return f"{self.epsilon:g}-LDP per feature entry"

    def ledger(self) -> dict[str, Any]:
        """The privacy facts to store beside any result produced with this mechanism."""
        return {
            "mechanism": self.name,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "low": self.low,
            "high": self.high,
            "sensitivity": self.sensitivity,
            "neighbouring": self.neighbouring,
            "guarantee": self.guarantee,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, low={self.low:g}, high={self.high:g})"

    # -- input handling ----------------------------------------------------------------------------------------
    def _to_tensor(self, x: Any, arg: str) -> tuple[torch.Tensor, bool, torch.dtype]:
        """Return a float tensor (float32/float64), whether the input was numpy, and the dtype to return."""
        was_numpy = isinstance(x, np.ndarray)
        if was_numpy:
            t = torch.from_numpy(np.ascontiguousarray(x))
        elif isinstance(x, torch.Tensor):
            t = x
        else:
            raise TypeError(f"{arg} must be a torch.Tensor or a numpy array, got {type(x).__name__}")
        if t.dtype == torch.bool or t.is_complex():
            raise TypeError(f"{arg} must hold real numbers, got dtype {t.dtype}")
        out_dtype = t.dtype if t.is_floating_point() else torch.get_default_dtype()
        work = t if t.dtype in _FLOAT_TYPES else t.to(torch.float32 if out_dtype not in _FLOAT_TYPES else out_dtype)
        return work, was_numpy, out_dtype

    @staticmethod
    def _from_tensor(t: torch.Tensor, was_numpy: bool, out_dtype: torch.dtype) -> ArrayLike:
        t = t.to(out_dtype)
        return t.cpu().numpy() if was_numpy else t

    def _check_domain(self, x: torch.Tensor, arg: str = "x") -> torch.Tensor:
        if torch.isnan(x).any():
            raise ValueError(
                f"{arg} contains NaN; mechanisms need numbers in [low, high] = [{self.low:g}, {self.high:g}]"
            )
        if x.numel() == 0:
            return x
        if not (math.isfinite(self.low) and math.isfinite(self.high)) and bool(torch.isinf(x).any()):
            raise ValueError(f"{arg} contains infinite values")
        outside = (x < self.low) | (x > self.high)
        if bool(outside.any()):
            n_out = int(outside.sum())
            lo, hi = float(x.min()), float(x.max())
            if not self.clip:
                raise ValueError(
                    f"{arg} has {n_out} entries outside [low, high] = [{self.low:g}, {self.high:g}] "
                    f"(min={lo:g}, max={hi:g}); normalise the features to the declared range, declare a wider "
                    "range, or pass clip=True to clip them"
                )
            warnings.warn(
                f"{self.name}: clipped {n_out} entries of {arg} to [low, high] = [{self.low:g}, {self.high:g}] "
                f"(min={lo:g}, max={hi:g})",
                UserWarning,
                stacklevel=3,
            )
            x = x.clamp(self.low, self.high)
        return x

    # -- public API --------------------------------------------------------------------------------------------
    def perturb(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        """Node side: the randomised report of every entry of ``x`` (what leaves the node)."""
        t, was_numpy, out_dtype = self._to_tensor(x, "x")
        t = self._check_domain(t, "x")
        gen = _resolve_generator(generator, t.device)
        return self._from_tensor(self._perturb(t, gen), was_numpy, out_dtype)

    def estimate(self, sent: ArrayLike) -> ArrayLike:
        """Server side: turn the reports ``sent`` into unbiased estimates of the inputs."""
        t, was_numpy, out_dtype = self._to_tensor(sent, "sent")
        if torch.isnan(t).any():
            raise ValueError("sent contains NaN")
        return self._from_tensor(self._estimate(t), was_numpy, out_dtype)

    def __call__(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        """Unbiased server-side estimate of ``x``: ``estimate(perturb(x, generator))``."""
        t, was_numpy, out_dtype = self._to_tensor(x, "x")
        t = self._check_domain(t, "x")
        gen = _resolve_generator(generator, t.device)
        return self._from_tensor(self._estimate(self._perturb(t, gen)), was_numpy, out_dtype)

    def variance(self, x: ArrayLike) -> ArrayLike:
        """Analytic variance of ``m(x)`` for every entry of ``x`` (same shape as ``x``)."""
        t, was_numpy, out_dtype = self._to_tensor(x, "x")
        t = self._check_domain(t, "x")
        return self._from_tensor(self._variance(t), was_numpy, out_dtype)

    # -- to implement ------------------------------------------------------------------------------------------
    @abc.abstractmethod
    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor: ...

    def _estimate(self, sent: torch.Tensor) -> torch.Tensor:
        return sent

    @abc.abstractmethod
    def _variance(self, x: torch.Tensor) -> torch.Tensor: ...


# ----------------------------------------------------------------------------------------------------------------
# local mechanisms (LPGCN paper, appendix A)
# ----------------------------------------------------------------------------------------------------------------
class LaplaceMechanism(Mechanism):
    """Laplace mechanism (LM), LPGCN paper appendix A.1, eqs. (9)–(10).

    ``y* = x + Lap(Δ/ε)`` independently per entry, no clipping of the output.

    - Neighbouring relation: LDP — any two values ``x, x'`` in ``[low, high]`` of one node's feature.
    - Sensitivity: ``Δ = high − low`` (L1, per entry).
    - Guarantee: ε-LDP per feature entry (a node with ``d`` features spends ``d·ε``).
    - Variance (eq. 10): ``2 (Δ/ε)²``, independent of ``x``.
    - ``perturb`` returns the noisy value, ``estimate`` is the identity.
    """

    name = "laplace"

    @property
    def scale(self) -> float:
        """Laplace scale b = Δ/ε."""
        return self.span / self.epsilon

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        # Lap(b) = b (E1 − E2) with E1, E2 ~ Exp(1) independent: exact, never infinite.
        e1 = _exponential(x.shape, gen, x.device, x.dtype)
        e2 = _exponential(x.shape, gen, x.device, x.dtype)
        return x + self.scale * (e1 - e2)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full_like(x, 2.0 * self.scale**2)


class PiecewiseMechanism(Mechanism):
    """Piecewise mechanism (PM) of Wang et al. (ICDE 2019), LPGCN paper appendix A.3, eqs. (21)–(27).

    ``t = 2(x−α)/Δ − 1 ∈ [−1, 1]``; ``C = (e^{ε/2}+1)/(e^{ε/2}−1)``; ``ℓ(t) = (C+1)/2·t − (C−1)/2``,
    ``r(t) = ℓ(t) + C − 1``; ``t*`` has density ``p = (e^ε − e^{ε/2})/(2e^{ε/2}+2)`` on ``[ℓ, r]`` and ``p/e^ε``
    on ``[−C, ℓ) ∪ (r, C]`` (eq. 22); the report is ``y* = Δ(t*+1)/2 + α`` (eq. 26), unbiased for ``x``.
    Sampling is exact: the piece is drawn by its probability mass (left ``(ℓ+C)p/e^ε``, centre ``(C−1)p``,
    right ``(C−r)p/e^ε``) and the value uniformly inside it.

    - Neighbouring relation: LDP — any two values in ``[low, high]`` of one node's feature.
    - Sensitivity: the density ratio between any two inputs is at most ``e^ε`` (domain ``Δ = high − low``).
    - Guarantee: ε-LDP per feature entry.
    - Variance (eq. 27): ``(x − (α+β)/2)²/(e^{ε/2}−1) + Δ²/4 · (e^{ε/2}+3)/(3(e^{ε/2}−1)²)``.
    - ``perturb`` returns ``y*`` (the noisy value, in ``[α + Δ(1−C)/2, α + Δ(1+C)/2]``), ``estimate`` is the identity.
    """

    name = "piecewise"

    @property
    def C(self) -> float:
        """Half-width of the output domain of t*: (e^{ε/2}+1)/(e^{ε/2}−1) = coth(ε/4)."""
        return 1.0 / math.tanh(self.epsilon / 4.0)

    @property
    def p(self) -> float:
        """High density level of t* (eq. 22): (e^ε − e^{ε/2})/(2e^{ε/2}+2) = e^{ε/2}/(2C)."""
        return math.exp(self.epsilon / 2.0) / (2.0 * self.C) if self.epsilon < 1400 else math.inf

    def _t(self, x: torch.Tensor) -> torch.Tensor:
        return 2.0 * (x - self.low) / self.span - 1.0

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        C = self.C
        t = self._t(x)
        left = (C + 1.0) / 2.0 * t - (C - 1.0) / 2.0
        right = left + C - 1.0
        low_density = math.exp(-self.epsilon / 2.0) / (2.0 * C)  # p / e^ε
        mass_left = (left + C) * low_density
        mass_right = (C - right) * low_density
        u_piece = _uniform(x.shape, gen, x.device, x.dtype)
        u_inside = _uniform(x.shape, gen, x.device, x.dtype)
        in_left = u_piece < mass_left
        in_right = u_piece >= 1.0 - mass_right
        start = torch.where(in_left, torch.full_like(t, -C), torch.where(in_right, right, left))
        stop = torch.where(in_left, left, torch.where(in_right, torch.full_like(t, C), right))
        t_star = start + u_inside * (stop - start)
        return self.span * (t_star + 1.0) / 2.0 + self.low

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        em1 = math.expm1(self.epsilon / 2.0)
        t = self._t(x)
        var_t = t**2 / em1 + (em1 + 4.0) / (3.0 * em1**2)
        return self.span**2 / 4.0 * var_t

    def pdf(self, y: ArrayLike, x: float) -> torch.Tensor:
        """Density of the report ``y*`` at ``y`` given the input ``x`` (for audits of the LDP ratio)."""
        x_t = self._check_domain(torch.as_tensor([float(x)], dtype=torch.float64), "x")
        y_t = torch.as_tensor(y, dtype=torch.float64)
        C = self.C
        t = float(self._t(x_t))
        left = (C + 1.0) / 2.0 * t - (C - 1.0) / 2.0
        right = left + C - 1.0
        t_star = 2.0 * (y_t - self.low) / self.span - 1.0
        jac = 2.0 / self.span
        high = math.exp(self.epsilon / 2.0) / (2.0 * C)
        low = math.exp(-self.epsilon / 2.0) / (2.0 * C)
        dens = torch.where(
            (t_star >= left) & (t_star <= right),
            torch.tensor(high, dtype=torch.float64),
            torch.tensor(low, dtype=torch.float64),
        )
        dens = torch.where((t_star < -C) | (t_star > C), torch.zeros_like(dens), dens)
        return dens * jac


class PGCMechanism(Mechanism):
    """1-bit mechanism of PGC, LPGCN paper eqs. (3), (5), (7) (a rescaled Duchi et al. mechanism; alias ``duchi``).

    Node side (eq. 3): ``y ∈ {0,1}`` with ``P(y=1) = 1/(e^ε+1) + (x−α)/Δ · (e^ε−1)/(e^ε+1)``.
    Server side (eq. 5): ``y* = ((e^ε+1)·y − 1)/(e^ε−1) · Δ + α``, an unbiased estimate of ``x``.

    - Neighbouring relation: LDP — any two values in ``[low, high]`` of one node's feature.
    - Sensitivity: ``P(y|x)`` ranges over ``[1/(e^ε+1), e^ε/(e^ε+1)]`` for ``x ∈ [α, β]`` (domain ``Δ = β − α``).
    - Guarantee: ε-LDP per feature entry (Theorem 1 of the paper; ratio of output probabilities ≤ e^ε).
    - Variance (eq. 7): ``Δ² e^ε/(e^ε−1)² + (x−α)(β−x)``.
    - ``perturb`` returns the bits (same float dtype as ``x``); ``estimate`` de-biases bits (eq. 5).
    """

    name = "pgc"

    def prob_one(self, x: ArrayLike) -> ArrayLike:
        """Exact ``P(y = 1 | x)`` of eq. (3), per entry."""
        t, was_numpy, out_dtype = self._to_tensor(x, "x")
        t = self._check_domain(t, "x")
        return self._from_tensor(self._prob_one(t), was_numpy, out_dtype)

    def _prob_one(self, x: torch.Tensor) -> torch.Tensor:
        th = math.tanh(self.epsilon / 2.0)  # (e^ε−1)/(e^ε+1)
        return (1.0 - th) / 2.0 + (x - self.low) / self.span * th

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        u = _uniform(x.shape, gen, x.device, x.dtype)
        return (u < self._prob_one(x)).to(x.dtype)

    def _estimate(self, sent: torch.Tensor) -> torch.Tensor:
        if bool(((sent != 0) & (sent != 1)).any()):
            raise ValueError("sent must hold the PGC bits y in {0, 1}")
        coth = 1.0 / math.tanh(self.epsilon / 2.0)  # (e^ε+1)/(e^ε−1)
        inv = 1.0 / math.expm1(self.epsilon)  # 1/(e^ε−1)
        return (sent * coth - inv) * self.span + self.low

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        base = self.span**2 / (4.0 * math.sinh(self.epsilon / 2.0) ** 2)  # Δ² e^ε/(e^ε−1)²
        return base + (x - self.low) * (self.high - x)


# ----------------------------------------------------------------------------------------------------------------
# labels
# ----------------------------------------------------------------------------------------------------------------
class RandomizedResponse(Mechanism):
    """Generalised randomised response on labels (LPGNN paper; docs/papers/lpgnn.md#label-randomised-response),
    ``c = num_classes``.

    Keeps the true label with probability ``e^ε/(e^ε + c − 1)``, otherwise outputs one of the other ``c − 1``
    labels uniformly at random. :meth:`transition_matrix` gives ``P[i, j] = P(out = j | in = i)``.

    - Neighbouring relation: LDP — any two labels of one node.
    - Sensitivity: the ratio ``P(out|y)/P(out|y')`` is at most ``e^ε`` for every output.
    - Guarantee: ε-LDP per label.
    - ``perturb`` and ``m(x)`` return the noisy labels (``estimate`` is the identity: no unbiased *label*
      exists; use the transition matrix for forward correction).
    - ``variance(labels)`` returns the per-class indicator variance of the one-hot report,
      ``P(out=k|y)(1 − P(out=k|y))``, with shape ``labels.shape + (c,)``.

    ``low``/``high`` are accepted for a uniform factory signature and ignored: the domain is ``{0, …, c−1}``
    (``m.low = 0``, ``m.high = c − 1``). Labels must be an integer tensor/array.
    """

    name = "rr"
    neighbouring = "LDP: any two labels of one node"

    def __init__(
        self, epsilon: float, low: float = 0.0, high: float = 1.0, *, num_classes: int = None, clip: bool = False
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if num_classes is None:
            raise TypeError("rr requires num_classes (an integer >= 2)")
        if isinstance(num_classes, bool) or not isinstance(num_classes, (numbers.Integral, np.integer)):
            raise TypeError(f"num_classes must be an integer >= 2, got {num_classes!r}")
        if int(num_classes) < 2:
            raise ValueError(f"num_classes must be an integer >= 2, got {num_classes}")
        if clip:
            raise ValueError("clip=True is not supported for labels: labels outside [0, num_classes) are an error")
        self.clip = False
        self.num_classes = int(num_classes)
        self.low, self.high = 0.0, float(self.num_classes - 1)
        self.delta = 0.0

    @property
    def keep_probability(self) -> float:
        """e^ε/(e^ε + c − 1)."""
        return 1.0 / (1.0 + (self.num_classes - 1) * math.exp(-self.epsilon))

    @property
    def sensitivity(self) -> float:
        return 1.0

    @property
    def guarantee(self) -> str:
        return f"{self.epsilon:g}-LDP per label"

    def ledger(self) -> dict[str, Any]:
        out = super().ledger()
        out["num_classes"] = self.num_classes
        return out

    def __repr__(self) -> str:
        return f"RandomizedResponse(epsilon={self.epsilon:g}, num_classes={self.num_classes})"

    def transition_matrix(self) -> torch.Tensor:
        """``c × c`` float64 matrix ``P[i, j] = P(out = j | in = i)`` (rows sum to 1)."""
        c = self.num_classes
        p = self.keep_probability
        mat = torch.full((c, c), (1.0 - p) / (c - 1), dtype=torch.float64)
        mat.fill_diagonal_(p)
        return mat

    def _labels(self, y: Any, arg: str) -> tuple[torch.Tensor, bool]:
        was_numpy = isinstance(y, np.ndarray)
        if was_numpy:
            t = torch.from_numpy(np.ascontiguousarray(y))
        elif isinstance(y, torch.Tensor):
            t = y
        else:
            raise TypeError(f"{arg} must be a torch.Tensor or a numpy array of integer labels, got {type(y).__name__}")
        if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
            raise TypeError(f"{arg} must hold integer labels in [0, {self.num_classes}), got dtype {t.dtype}")
        if t.numel() and bool(((t < 0) | (t >= self.num_classes)).any()):
            raise ValueError(
                f"{arg} has labels outside [0, num_classes) = [0, {self.num_classes}) "
                f"(min={int(t.min())}, max={int(t.max())})"
            )
        return t.long(), was_numpy

    @staticmethod
    def _back(t: torch.Tensor, was_numpy: bool) -> ArrayLike:
        return t.cpu().numpy() if was_numpy else t

    def perturb(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        y, was_numpy = self._labels(x, "x")
        gen = _resolve_generator(generator, y.device)
        return self._back(self._perturb(y, gen), was_numpy)

    def __call__(self, x: ArrayLike, generator: GeneratorLike = None) -> ArrayLike:
        return self.perturb(x, generator)

    def estimate(self, sent: ArrayLike) -> ArrayLike:
        y, was_numpy = self._labels(sent, "sent")
        return self._back(y, was_numpy)

    def variance(self, x: ArrayLike) -> ArrayLike:
        y, was_numpy = self._labels(x, "x")
        probs = self.transition_matrix().to(y.device)[y]
        return self._back(probs * (1.0 - probs), was_numpy)

    def _perturb(self, y: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        keep = _uniform(y.shape, gen, y.device, torch.float64) < self.keep_probability
        shift = _randint(1, self.num_classes, y.shape, gen, y.device)
        return torch.where(keep, y, (y + shift) % self.num_classes)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:  # pragma: no cover - variance() is overridden
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------------------------
# central Gaussian mechanisms
# ----------------------------------------------------------------------------------------------------------------
class GaussianMechanism(Mechanism):
    """Gaussian mechanism with the classic calibration (Dwork & Roth 2014, Theorem A.1).

    ``y = x + N(0, σ²)`` per entry with ``σ = Δ₂ √(2 ln(1.25/δ)) / ε``.

    - Neighbouring relation: any two inputs ``x, x'`` with ``‖x − x'‖₂ ≤ sensitivity`` (the caller states what
      a neighbouring dataset changes: an edge, a node, one example).
    - Sensitivity: ``sensitivity`` = Δ₂, the L2 sensitivity (required).
    - Guarantee: (ε, δ)-DP; the classic bound is proven for ε < 1 only, so ε ≥ 1 is refused (use
      ``analytic_gaussian``).
    - Variance: σ² per entry. ``perturb`` returns the noisy value; ``estimate`` is the identity.

    ``low``/``high`` are optional here (default: unbounded). When given, inputs outside are refused like for
    the local mechanisms; they do not enter σ (the L2 sensitivity is explicit).
    """

    name = "gaussian"
    neighbouring = "inputs at L2 distance <= sensitivity (as stated by the caller)"

    def __init__(
        self,
        epsilon: float,
        low: float | None = None,
        high: float | None = None,
        *,
        delta: float = None,
        sensitivity: float = None,
        clip: bool = False,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        if delta is None:
            raise TypeError(f"{self.name} requires delta, a float in (0, 1)")
        if sensitivity is None:
            raise TypeError(f"{self.name} requires sensitivity, the L2 sensitivity (a finite float > 0)")
        self.delta = check_delta(delta)
        self.l2_sensitivity = check_positive_finite(sensitivity, "sensitivity")
        if low is None and high is None:
            self.low, self.high = -math.inf, math.inf
        else:
            if low is None or high is None:
                raise TypeError("pass both low and high (or neither) to a Gaussian mechanism")
            self.low, self.high = check_range(low, high)
        if not isinstance(clip, bool):
            raise TypeError(f"clip must be a bool, got {clip!r}")
        self.clip = clip
        self.sigma = self._calibrate()

    def _calibrate(self) -> float:
        return classic_gaussian_sigma(self.epsilon, self.delta, self.l2_sensitivity)

    @property
    def sensitivity(self) -> float:
        return self.l2_sensitivity

    @property
    def noise_multiplier(self) -> float:
        """σ / Δ₂."""
        return self.sigma / self.l2_sensitivity

    @property
    def guarantee(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-DP"

    def ledger(self) -> dict[str, Any]:
        out = super().ledger()
        out["sigma"] = self.sigma
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(epsilon={self.epsilon:g}, delta={self.delta:g}, "
            f"sensitivity={self.l2_sensitivity:g}, sigma={self.sigma:.6g})"
        )

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        return x + self.sigma * _normal(x.shape, gen, x.device, x.dtype)

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        return torch.full_like(x, self.sigma**2)


class AnalyticGaussianMechanism(GaussianMechanism):
    """Gaussian mechanism with the analytic calibration of Balle & Wang (ICML 2018, Theorem 8 / Algorithm 1).

    σ is the smallest value (bisection to a relative 1e-12, rounded up) such that
    ``Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ``; valid for every ε > 0.

    - Neighbouring relation: any two inputs at L2 distance ≤ ``sensitivity``.
    - Sensitivity: ``sensitivity`` = Δ₂ (required).
    - Guarantee: (ε, δ)-DP (tight for the Gaussian mechanism).
    - Variance: σ² per entry.
    """

    name = "analytic_gaussian"

    def _calibrate(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.l2_sensitivity)


# ----------------------------------------------------------------------------------------------------------------
# registry
# ----------------------------------------------------------------------------------------------------------------
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
