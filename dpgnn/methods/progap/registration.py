"""ProGAP's methods in the registry (:mod:`dpgnn.methods`), and the config vocabulary shared by all of them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch_geometric.data import Data

from dpgnn.methods import RunResult, register
from dpgnn.methods.progap.config import ProGAPConfig
from dpgnn.methods.progap.train import train_progap
from dpgnn.privacy.progap import LEVELS

__all__ = ["PAPER", "method_config"]

PAPER = "progap"


def method_config(
    config: Mapping[str, Any],
    level: str,
    allowed: Sequence[str],
    *,
    fixed: Mapping[str, Any] | None = None,
    unused: Sequence[str] = (),
) -> dict[str, Any]:
    """``config`` checked against a method's keys: every key must be in ``allowed``, ``fixed`` (the method's
    architecture fixes it, and a given value must equal it) or ``unused`` (a setting of the level that the method
    has no use for, e.g. the degree bound of a method that never reads the graph: dropped), and a ``level`` in it
    must be the registered one.

    The vocabulary shared by ProGAP's methods (the series' cells use it): ``epsilon``, ``delta``, ``noise``,
    ``depth`` (ProGAP's K, GAP's hops, GraphSAGE's and DP-GNN's message-passing layers, 0 for an MLP),
    ``base_layers``, ``hidden``, ``lr``, ``epochs``, ``batch_size``, ``max_degree``, ``clip``, ``accountant``,
    ``edge_relation``, ``fidelity``. Returns the config without ``level``."""
    cfg = dict(config)
    if "level" in cfg and str(cfg.pop("level")).lower() != level:
        raise ValueError(f"config level {config['level']!r} differs from the method's level {level!r}")
    fixed = dict(fixed or {})
    unknown = sorted(set(cfg) - set(allowed) - set(fixed) - set(unused))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}; valid: {sorted(set(allowed) | set(fixed) | set(unused))}")
    for k in unused:
        cfg.pop(k, None)
    for k, v in fixed.items():
        if k in cfg and cfg.pop(k) != v:
            raise ValueError(f"{k} is fixed to {v!r} by the method's architecture, got {config[k]!r}")
    return cfg


_PROGAP_KEYS = (
    "epsilon",
    "delta",
    "noise",
    "depth",
    "hidden",
    "base_layers",
    "head_layers",
    "lr",
    "epochs",
    "batch_size",
    "max_degree",
    "clip",
    "dropout",
    "activation",
    "accountant",
    "edge_relation",
    "fidelity",
)


def _progap_runner(level: str, layerwise: bool):
    def config_of(config: Mapping[str, Any]) -> ProGAPConfig:
        cfg = method_config(config, level, _PROGAP_KEYS)
        if level == "none":  # the non-private model: no budget (a cell's ε = inf is its label, not a setting)
            cfg.pop("epsilon", None)
        return ProGAPConfig(level=level, layerwise=layerwise, **cfg)

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        return train_progap(data, config_of(config), seed=seed, device=device).to_run_result()

    def repeats(
        data: Data, config: Mapping[str, Any], *, seeds: Sequence[int], device: str = "auto"
    ) -> list[RunResult]:
        """``run`` for each of ``seeds``, trained together (:func:`dpgnn.methods.repeats.train_progap_repeats`;
        one seed at a time where that cannot, e.g. with dropout): one result per seed, each ``run``'s up to float
        rounding."""
        from dpgnn.methods.repeats import repeats_supported, train_progap_repeats

        cfg = config_of(config)
        if not repeats_supported(cfg):
            return [train_progap(data, cfg, seed=s, device=device).to_run_result() for s in seeds]
        return [r.to_run_result() for r in train_progap_repeats(data, cfg, seeds, device=device)]

    run.__name__ = run.__qualname__ = f"run_progap{'_layerwise' if layerwise else ''}_{level}"
    run.repeats = repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together through it)
    return run


for _level_name in LEVELS:
    for _layerwise in (False, True):
        _name = "progap-layerwise" if _layerwise else "progap"
        register(
            PAPER,
            _name,
            _level_name,
            description=(
                "ProGAP, "
                + ("earlier bases frozen (the layer-wise ablation), " if _layerwise else "")
                + {
                    "none": "non-private",
                    "edge": "edge-level DP (K NAP queries)",
                    "node": "node-level DP (K NAP queries + K+1 DP-Adam stages)",
                }[_level_name]
            ),
        )(_progap_runner(_level_name, _layerwise))
