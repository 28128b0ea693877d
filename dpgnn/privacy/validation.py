"""Argument checks shared by the package: every bad parameter raises before any number is produced.

Two families. The ``check_epsilon``/``check_delta``/``check_positive_finite``/``check_sample_rate``/``check_count``
checks of the privacy algebra accept any real scalar (numpy and torch 0-d included) and raise ``TypeError`` for a
non-number, ``ValueError`` for a number out of range. The configuration checks :func:`check_int`,
:func:`check_positive`, :func:`check_fraction` and :func:`check_choice`, used by the methods and the paper
statements (``dpgnn.privacy.<paper>``), raise ``ValueError`` for every bad value, with the parameter's name.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = [
    "check_epsilon",
    "check_delta",
    "check_positive_finite",
    "check_sample_rate",
    "check_count",
    "check_range",
    "check_int",
    "check_positive",
    "check_fraction",
    "check_choice",
]


def _is_real(value: Any) -> bool:
    # bool is an int subclass; True/False are never a privacy parameter.
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Real):
        return True
    # 0-d numpy / torch scalars
    try:
        import numpy as np

        if isinstance(value, np.ndarray) and value.ndim == 0 and np.issubdtype(value.dtype, np.number):
            return not np.issubdtype(value.dtype, np.bool_)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass
    try:
        import torch

        if isinstance(value, torch.Tensor) and value.ndim == 0 and not value.dtype == torch.bool:
            return not value.is_complex()
    except ImportError:  # pragma: no cover
        pass
    return False


def _as_float(value: Any, name: str) -> float:
    if not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    return float(value)


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """``epsilon`` as a float in (0, inf); infinity is refused (it is the absence of a mechanism)."""
    eps = _as_float(epsilon, name)
    if math.isnan(eps):
        raise ValueError(f"{name} must be a finite number > 0, got nan")
    if math.isinf(eps):
        raise ValueError(
            f"{name}={eps} is not a privacy budget of any mechanism: {name} must be finite and > 0 "
            "(use no mechanism for the non-private RAW baseline)"
        )
    if eps <= 0:
        raise ValueError(f"{name} must be > 0 (and finite), got {eps}")
    return eps


def check_delta(delta: Any, name: str = "delta") -> float:
    """``delta`` as a float in the open interval (0, 1)."""
    d = _as_float(delta, name)
    if not (0.0 < d < 1.0):  # also rejects nan
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {d}")
    return d


def check_positive_finite(value: Any, name: str) -> float:
    """``value`` as a float in (0, inf)."""
    v = _as_float(value, name)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v}")
    return v


def check_sample_rate(value: Any, name: str = "sample_rate") -> float:
    """A sampling probability in (0, 1]."""
    q = _as_float(value, name)
    if not (0.0 < q <= 1.0):
        raise ValueError(f"{name} must lie in (0, 1], got {q}")
    return q


def check_count(value: Any, name: str = "count") -> int:
    """A repetition count: an integer >= 1 (floats with an integral value such as 10.0 are accepted)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif _is_real(value) and float(value).is_integer():
        n = int(float(value))
    else:
        raise TypeError(f"{name} must be an integer >= 1, got {value!r}")
    if n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {n}")
    return n


def check_range(low: Any, high: Any) -> tuple[float, float]:
    """Finite bounds with ``low < high``."""
    lo = _as_float(low, "low")
    hi = _as_float(high, "high")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"low and high must be finite, got low={lo}, high={hi}")
    if not lo < hi:
        raise ValueError(f"low must be < high, got low={lo}, high={hi}")
    return lo, hi


def check_int(value: Any, name: str, minimum: int = 0) -> int:
    """An integer (Python or numpy; not bool, not a float) ``>= minimum``, else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive(value: Any, name: str) -> float:
    """A finite number ``> 0`` as a float, else ``ValueError``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_fraction(value: Any, name: str = "delta") -> float:
    """A number in the open interval (0, 1) as a float (e.g. a δ), else ``ValueError``."""
    v = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return v


def check_choice(value: Any, choices: tuple, name: str) -> Any:
    """``value`` if it is one of ``choices``, else ``ValueError`` listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value
