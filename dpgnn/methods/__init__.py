"""The method registry: every method of the five papers, keyed by ``(paper, method, level)``, behind one contract.

A method is registered by its module with :func:`register`; :func:`get` resolves a key (importing every module of
this package once, on first use: the papers are those of the registered methods, so adding a method or a paper
is adding its module). The contract::

    spec = dpgnn.methods.get("progap", "progap", "edge")
    data = spec.prepare(dataset, **options)                  # the method's view of a dataset (cached by callers)
    result = spec.run(data, config, seed=0, device="auto")   # one training run -> RunResult

``config`` is a mapping of the method's hyper-parameters (the series' cell, minus the bookkeeping keys); ``run``
returns a :class:`RunResult`: validation/test metrics, the per-epoch history and the privacy ledger
(:mod:`dpgnn.privacy.guarantee` fields). Levels name the privacy unit: ``none`` (non-private), ``feature`` /
``label`` / ``feature+label`` (local DP of a node's features and/or label), ``edge``, ``node``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("none", "feature", "label", "feature+label", "edge", "node")


@dataclass
class RunResult:
    """One training run: ``metrics`` (``train``/``val``/``test`` in [0, 1], as the paper reports them: accuracy or
    micro-F1), the ``ledger`` (what was accounted and what the code guarantees), the per-epoch ``history``, wall
    ``seconds`` and method-specific ``extra`` outputs (steps taken, queries, the trained model, ...)."""

    metrics: dict[str, float]
    ledger: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def val(self) -> float:
        """Validation metric in [0, 1] (NaN when the method reports none)."""
        return float(self.metrics.get("val", float("nan")))

    @property
    def test(self) -> float:
        """Test metric in [0, 1] (accuracy or micro-F1, as the paper reports it)."""
        return float(self.metrics["test"])


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: ``run(data, config, *, seed, device) -> RunResult`` and ``prepare(dataset, **options)``
    (``None`` when the method takes a plain :class:`torch_geometric.data.Data`)."""

    paper: str
    method: str
    level: str
    run: Callable[..., RunResult]
    prepare: Callable[..., Any] | None = None
    description: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """``(paper, method, level)``: the method's key in the registry."""
        return (self.paper, self.method, self.level)


_REGISTRY: dict[tuple[str, str, str], MethodSpec] = {}
_LOADED = False


def _load() -> None:
    """Import every module of this package once (each registers its methods)."""
    global _LOADED
    if not _LOADED:
        for module in pkgutil.iter_modules(__path__):
            if not module.name.startswith("_"):
                importlib.import_module(f"{__name__}.{module.name}")
        _LOADED = True


def papers() -> list[str]:
    """The papers that have registered methods, sorted."""
    _load()
    return sorted({k[0] for k in _REGISTRY})


def _norm(paper: str, method: str, level: str) -> tuple[str, str, str]:
    key = tuple(str(v).strip().lower() for v in (paper, method, level))
    if not key[0].isidentifier():
        raise ValueError(f"paper must be a plain name such as 'lpgcn', got {paper!r}")
    if key[2] not in LEVELS:
        raise ValueError(f"unknown privacy level {level!r}; valid levels: {list(LEVELS)}")
    return key  # type: ignore[return-value]


def register(
    paper: str, method: str, level: str, *, prepare: Callable[..., Any] | None = None, description: str = ""
) -> Callable[[Callable[..., RunResult]], Callable[..., RunResult]]:
    """Decorator registering ``run`` under ``(paper, method, level)``; a key registered twice is an error
    (re-importing the same module re-registers the same function, which is allowed)."""

    def deco(run: Callable[..., RunResult]) -> Callable[..., RunResult]:
        key = _norm(paper, method, level)
        old = _REGISTRY.get(key)
        if old is not None and (old.run.__module__, old.run.__qualname__) != (run.__module__, run.__qualname__):
            raise ValueError(f"method {key} is already registered by {old.run.__module__}.{old.run.__qualname__}")
        _REGISTRY[key] = MethodSpec(*key, run=run, prepare=prepare, description=description)
        return run

    return deco


def _known(key: tuple[str, str, str], paper: str) -> tuple[str, str, str]:
    if key[0] not in papers():
        raise ValueError(f"unknown paper {paper!r}; valid papers: {papers()}")
    return key


def get(paper: str, method: str, level: str) -> MethodSpec:
    """The registered method ``(paper, method, level)`` (case-insensitive); lists the valid keys when unknown."""
    key = _known(_norm(paper, method, level), paper)
    if key not in _REGISTRY:
        valid = [f"{m}/{lv}" for p, m, lv in sorted(_REGISTRY) if p == key[0]]
        raise ValueError(f"unknown method {method!r} at level {level!r} for {paper}; valid: {valid}")
    return _REGISTRY[key]


def available(paper: str | None = None) -> list[tuple[str, str, str]]:
    """Every registered key (of one paper, or of all five), sorted."""
    chosen = [_known(_norm(paper, "x", "none"), paper)[0]] if paper is not None else papers()
    return sorted(k for k in _REGISTRY if k[0] in chosen)


def run(
    paper: str, method: str, level: str, data: Any, config: Mapping[str, Any], *, seed: int, device: str = "auto"
) -> RunResult:
    """Shorthand for ``get(paper, method, level).run(data, config, seed=seed, device=device)``."""
    return get(paper, method, level).run(data, config, seed=seed, device=device)


__all__ = ["LEVELS", "MethodSpec", "RunResult", "available", "get", "papers", "register", "run"]
