"""The method contract (:mod:`dpgnn.methods`): Table 1's rows registered at their privacy levels
(:data:`LEVELS`), and :func:`run` through the registry."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from dpgnn.methods import RunResult, get, register
from dpgnn.methods.drw.paper import DP_METHODS, METHODS, PAPER, _method_key

if TYPE_CHECKING:
    from dpgnn.methods.drw.data import DRWData

#: privacy level of each method (:data:`dpgnn.methods.LEVELS`): the DP methods protect one node's features
LEVELS = {m: ("feature" if m in DP_METHODS else "none") for m in METHODS}
_BOOKKEEPING = ("dataset", "method", "setting", "seed")


def _trainer_options(trainer: Callable[..., dict[str, Any]]) -> tuple[str, ...]:
    from dpgnn.methods.drw.dp import DP_OPTIONS, train_dp

    if trainer is train_dp:
        return DP_OPTIONS
    return tuple(
        k
        for k, p in inspect.signature(trainer).parameters.items()
        if p.kind is p.KEYWORD_ONLY and k not in ("seed", "device")
    )


def _options(method: str, trainer: Callable[..., dict[str, Any]], config: Any) -> dict[str, Any]:
    """The trainer's keywords in ``config`` (a series cell's bookkeeping keys dropped); unknown ones are an error."""
    options = _trainer_options(trainer)
    kw = {k: v for k, v in dict(config).items() if k not in _BOOKKEEPING}
    unknown = sorted(set(kw) - set(options))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for DRW method {method!r}; valid: {sorted(options)}")
    return kw


def _run(method: str, data: DRWData, config: Any, seed: int, device: str) -> RunResult:
    """Train ``method`` on ``data`` with the hyper-parameters in ``config`` (:func:`train_dp` /
    :func:`train_nondp` keywords; a series cell's bookkeeping keys are ignored) and wrap the result."""
    from dpgnn.methods.drw.dp import train_dp
    from dpgnn.methods.drw.nondp import train_nondp

    trainer = train_nondp if method in ("gcn", "mlp") else train_dp
    res = trainer(data, method, seed=seed, device=device, **_options(method, trainer, config))
    return _result(data, res)


def _repeats(method: str, data: DRWData, config: Any, seeds: Sequence[int], device: str) -> list[RunResult]:
    """:func:`_run` of a DP ``method`` for each of ``seeds``, trained together
    (:func:`dpgnn.methods.drw.repeats.run_dp_repeats`; one seed at a time where it cannot batch)."""
    from dpgnn.methods.drw.dp import DPTrainConfig, train_dp
    from dpgnn.methods.drw.repeats import run_dp_repeats

    kw = _options(method, train_dp, config)
    cfg = DPTrainConfig(method=method, **kw)
    return [_result(data, res) for res in run_dp_repeats(data, cfg, list(seeds), device=device)]


def _prepare(name: str, data=None, *, scaling: str = "train_zscore") -> DRWData:
    """:func:`dpgnn.methods.drw.data.prepare` (the registered ``prepare``), imported when first called."""
    from dpgnn.methods.drw.data import prepare

    return prepare(name, data, scaling=scaling)


def _result(data: DRWData, res: dict[str, Any]) -> RunResult:
    """A trainer's result dict as a :class:`RunResult`."""
    extra = {k: v for k, v in res.items() if k not in ("train_f1", "val_f1", "test_f1", "ledger", "history", "seconds")}
    ledger = res["ledger"]
    if data.edge_input != "edge_index as given":
        ledger = {**ledger, "edge_input": data.edge_input}
    return RunResult(
        metrics={"train": res["train_f1"], "val": res["val_f1"], "test": res["test_f1"]},
        ledger=ledger,
        history=res["history"],
        seconds=res["seconds"],
        extra=extra,
    )


@register(PAPER, "gcn", "none", prepare=_prepare, description="non-private GCN on random-walk batches (Table 1)")
def run_gcn(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One run of the non-private GCN on random-walk batches (:func:`train_nondp`) as a :class:`RunResult`."""
    return _run("gcn", data, config, seed, device)


@register(PAPER, "mlp", "none", prepare=_prepare, description="non-private MLP on uniform node batches (Table 1)")
def run_mlp(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One run of the non-private MLP on uniform node batches (:func:`train_nondp`) as a :class:`RunResult`."""
    return _run("mlp", data, config, seed, device)


@register(
    PAPER,
    "drw",
    "feature",
    prepare=_prepare,
    description="DP-SGD on disjoint random-walk subgraphs, one walk per root (paper Alg. 1)",
)
def run_drw(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One DP run of DRW, one walk per root (:func:`train_dp`), as a :class:`RunResult`."""
    return _run("drw", data, config, seed, device)


@register(
    PAPER,
    "drw-d",
    "feature",
    prepare=_prepare,
    description="DRW with the subgraphs re-generated every resample_every steps",
)
def run_drw_d(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One DP run of DRW-D, walks re-drawn every ``resample_every`` steps (:func:`train_dp`), as a RunResult."""
    return _run("drw-d", data, config, seed, device)


@register(PAPER, "drw-r", "feature", prepare=_prepare, description="DRW with two walks per root")
def run_drw_r(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One DP run of DRW-R, two walks per root (:func:`train_dp`), as a :class:`RunResult`."""
    return _run("drw-r", data, config, seed, device)


@register(
    PAPER,
    "fdp",
    "feature",
    prepare=_prepare,
    description="FDP baseline (Daigavane et al.): degree-bounded K-hop neighbourhoods, sensitivity 2KC",
)
def run_fdp(data: DRWData, config: Any, *, seed: int, device: str = "auto") -> RunResult:
    """One DP run of the FDP baseline (:func:`train_dp`) as a :class:`RunResult`."""
    return _run("fdp", data, config, seed, device)


def run(d: DRWData, method: str, *, seed: int = 1234, device: str = "auto", **config: Any) -> RunResult:
    """One run of ``method`` resolved through the registry (``dpgnn.methods.get("drw", method, LEVELS[method])``)."""
    method = _method_key(method)
    return get(PAPER, method, LEVELS[method]).run(d, config, seed=seed, device=device)


def _with_repeats(method: str, fn: Callable[..., RunResult]) -> None:
    def repeats(data: DRWData, config: Any, *, seeds: Sequence[int], device: str = "auto") -> list[RunResult]:
        """``run`` for each of ``seeds``, trained together (:func:`dpgnn.methods.drw.repeats.run_dp_repeats`):
        one result per seed, each equal to its ``run``."""
        return _repeats(method, data, config, seeds, device)

    fn.repeats = repeats  # type: ignore[attr-defined]  (the series trains a configuration's seeds through it)


for _method, _fn in (("drw", run_drw), ("drw-d", run_drw_d), ("drw-r", run_drw_r), ("fdp", run_fdp)):
    _with_repeats(_method, _fn)
