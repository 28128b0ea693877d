"""The mechanisms' base class (:class:`Mechanism`: domain checks, generators, numpy in and out) and the
randomness helpers every mechanism draws with."""

from __future__ import annotations

import abc
import math
import numbers
import warnings
from typing import Any, ClassVar

import numpy as np
import torch

from dpgnn.privacy.validation import check_epsilon, check_range

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
        """The guarantee in words, for ledgers: ``"<ε>-LDP per feature entry"`` for the local mechanisms."""
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
