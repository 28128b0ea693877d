"""Audit series, notebook 04: one-run canary audits of central DP *training* through the methods' entry points
(ProGAP node level, DP-GNN, DRW, FDP; :mod:`dpgnn.audit.central`), with the non-private and the broken controls
(artifact ``central``)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from dpgnn.results import ResultStore
from dpgnn.series.audit.common import _setting
from dpgnn.series.audit.profiles import AuditProfile
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import stable_seed

#: per-method settings of the central-DP canary audits (hyper-parameters that let the non-private control memorise
#: the canaries on the small graph; the private runs use the same ones). ``epochs`` comes from the profile.
CENTRAL_KW: dict[str, dict[str, Any]] = {
    "progap-node": {"depth": 1, "batch_size": 64, "max_degree": 10, "hidden": 64, "lr": 0.05},
    "dp-gnn": {"batch_size": 64, "max_degree": 10, "hidden": 64, "lr": 0.05},
    "drw": {"num_layers": 2, "hidden": 64, "lr": 0.1, "batch": 32, "lr_nondp": 0.05},
    "fdp": {"num_layers": 2, "hidden": 64, "lr": 0.1, "batch": 32, "lr_nondp": 0.05},
}


def drw_noise_multiplier(epsilon: float) -> float:
    """DRW/FDP train with a fixed noise multiplier z until the target ε (Ayle et al. §4); the audits use
    ``z = 4/√ε`` so that every ε trains tens to thousands of steps (a fixed z = 1 trains no step at ε ≤ 1 on the
    audit graph, where one step of the subsampled Gaussian already costs more). ε = ∞ (the non-private control)
    has no noise; 1.0 is passed and unused."""
    return 4.0 / math.sqrt(epsilon) if math.isfinite(epsilon) else 1.0


#: the ``dataset`` of every central audit row (sizes per profile are in the ``graph_nodes``/``canaries`` columns)
CENTRAL_DATASET = "csbm + canaries"
_CENTRAL_LABEL = {
    "progap-node": "ProGAP node level",
    "dp-gnn": "DP-GNN",
    "drw": "DRW (sound mode)",
    "fdp": "FDP (sound mode)",
}


def central_label(method: str, epsilon: float, noise_factor: float) -> str:
    """The ``method`` column of a central audit row: the method, or its control."""
    name = _CENTRAL_LABEL[method]
    if math.isinf(epsilon):
        return name + " non-private control"
    return name if noise_factor == 1.0 else f"{name}, noise x{noise_factor:g} (broken)"


def run_central(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """One-run canary audits of central DP training through each method's entry point
    (:func:`dpgnn.audit.central.audit_central`) on a CSBM graph: every method at every ε, the non-private controls
    (ε = ∞) and the broken controls (noise × ``central.broken_factor`` under the claim ``central.broken_epsilon``)."""
    cache: dict[int, Any] = {}

    def graph(n):
        from dpgnn.data.synthetic import csbm

        if n not in cache:
            cache[n] = csbm(num_nodes=n, num_features=16, seed=stable_seed("audit-central-graph", cfg.seed))
        return cache[n]

    def cell(c):
        from dpgnn.audit import central

        kw = dict(CENTRAL_KW[c["method"]])
        if c["method"] in ("drw", "fdp"):
            kw["steps_nondp"] = 10 * c["epochs"]
            kw["noise_multiplier"] = drw_noise_multiplier(c["epsilon"])
        else:
            kw["epochs"] = c["epochs"]
        r = central.audit_central(
            c["method"],
            graph(c["graph_nodes"]),
            epsilon=c["epsilon"],
            num_canaries=c["canaries"],
            seed=c["seed"],
            noise_factor=c["noise_factor"],
            alpha=c["alpha"],
            **kw,
        )
        broken = c["noise_factor"] != 1.0
        return {
            "dataset": CENTRAL_DATASET,
            "method": central_label(c["method"], c["epsilon"], c["noise_factor"]),
            "setting": _setting(c["epsilon"]),
            "metric": "epsilon_lb",
            "value": r["epsilon_lb"],
            "run": 0,
            "level": r["unit"] if math.isfinite(c["epsilon"]) else "none",
            "privacy_unit": r["unit"],
            "epsilon": r["epsilon_claimed"],
            "delta": r["delta"],
            "epsilon_accounted": r["epsilon_claimed"],
            "epsilon_run": r["epsilon_accounted"],
            "broken": broken,
            "noise_multiplier": r["noise_multiplier"],
            "guesses": r["guesses"],
            "correct": r["correct"],
            "canaries_in": r["canaries_in"],
            "utility": r["utility"],
            "score_gap": r["score_gap"],
            "ledger": r["ledger"],
        }

    base = dict(
        canaries=[cfg.central.canaries],
        graph_nodes=[cfg.central.graph_nodes],
        epochs=[cfg.central.epochs],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    cells = grid(
        method=list(cfg.central.methods), epsilon=[float(e) for e in cfg.central.epsilons], noise_factor=[1.0], **base
    )
    if cfg.central.controls:
        cells += grid(method=list(cfg.central.controls), epsilon=[math.inf], noise_factor=[1.0], **base)
    if cfg.central.broken:
        cells += grid(
            method=list(cfg.central.broken),
            epsilon=[float(cfg.central.broken_epsilon)],
            noise_factor=[float(cfg.central.broken_factor)],
            **base,
        )
    return run_grid(store, "central", cells, cell, desc="central DP canary audits", force=force)
