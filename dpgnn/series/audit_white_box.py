"""Audit series, notebook 05: white-box audits with power (artifact ``white_box``).

Every central method's DP-SGD is audited with Dirac gradient canaries inserted into its own noisy steps
(:mod:`dpgnn.audit.whitebox`: ProGAP and GAP at node level, DP-GNN, DP-MLP, DRW, FDP), and GAP/ProGAP's
edge-level aggregation with a canary edge (:func:`dpgnn.audit.canary.audit_edge_aggregation`), each at its
accounted ε and with its noise multiplier halved under the same claim (the broken variant the audit must flag).

Stored rows (tidy, ``metric = "epsilon_lb"``): ``method`` = the audited method (label), ``setting`` ``eps=<claim>``
or ``eps=<claim>, noise x0.5``, ``epsilon`` = the claimed (accounted) ε, ``epsilon_accounted`` the same,
``epsilon_run`` the ε accounted for the noise actually used, ``broken`` (the halved-σ variant), ``privacy_unit``
(``node`` / ``feature`` / ``edge``), the trial counts and the test's rates; the ledger is the run's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpgnn import plotting
from dpgnn.results import ResultStore
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import stable_seed

if TYPE_CHECKING:
    from dpgnn.series.audit import AuditProfile

ARTIFACT = "white_box"
EDGE = "nap-edge"
NODE_METHODS = ("progap-node", "gap-node", "dp-gnn", "dp-mlp")
FEATURE_METHODS = ("drw", "fdp")
METHODS = NODE_METHODS + FEATURE_METHODS + (EDGE,)
LABEL = {
    "progap-node": "ProGAP node level",
    "gap-node": "GAP node level",
    "dp-gnn": "DP-GNN",
    "dp-mlp": "DP-MLP",
    "drw": "DRW (sound mode)",
    "fdp": "FDP (sound mode)",
    EDGE: "GAP/ProGAP edge level (NAP)",
}

# settings shared by every profile: full-batch runs (the white-box auditor knows each step's batch), one hop
_NODE_KW = {"hidden": 64, "lr": 0.01, "max_degree": 4, "depth": 1, "hops": 1}
_FEATURE_KW = {"num_layers": 1, "lr": 0.1, "fdp_degree": 1, "delta": 1e-3}


@dataclass(frozen=True)
class WhiteBoxProfile:
    """Notebook 05's settings, the ``white_box`` part of :class:`dpgnn.series.audit.AuditProfile`."""

    methods: list[str]
    """the audited methods (:data:`METHODS`)"""
    epsilons: list[float]
    """claimed ε audited at full noise"""
    halved_epsilons: list[float]
    """claimed ε audited with half the noise (the broken variant the audit must catch)"""
    power_epsilon: float
    """the claim of the power rows (more runs for DRW)"""
    graph_nodes: int
    """nodes of the random graph of the node-level audits"""
    features: int
    """node features of that graph"""
    epochs: int
    """training epochs of each audited run"""
    canaries: int
    """canary gradients per audited run"""
    runs: int
    """audited runs per cell"""
    drw_nodes: int
    """nodes of DRW's audit graph"""
    drw_classes: int
    """classes (and canaries) of DRW's audit graph"""
    drw_steps: int
    """DP-SGD steps of each audited DRW run"""
    drw_runs: int
    """audited DRW runs per cell"""
    drw_power_runs: int
    """audited DRW runs at :attr:`power_epsilon`"""
    edge_hops: int
    """aggregation hops of the edge-level (NAP) audit"""
    edge_trials: int
    """trials of the edge-level audit"""


#: notebook 05's settings per profile: the ``white_box`` part of :data:`dpgnn.series.audit.PROFILES`
PROFILES: dict[str, WhiteBoxProfile] = {
    "smoke": WhiteBoxProfile(
        methods=list(METHODS),
        epsilons=[4.0],
        halved_epsilons=[2.0],
        power_epsilon=4.0,
        graph_nodes=200,
        features=64,
        epochs=3,
        canaries=4000,
        runs=2,
        drw_nodes=200,
        drw_classes=128,
        drw_steps=2,
        drw_runs=6,
        drw_power_runs=6,
        edge_hops=1,
        edge_trials=10_000,
    ),
    "test": WhiteBoxProfile(
        methods=["dp-mlp", "drw", EDGE],
        epsilons=[4.0],
        halved_epsilons=[2.0],
        power_epsilon=4.0,
        graph_nodes=100,
        features=32,
        epochs=3,
        canaries=1000,
        runs=2,
        drw_nodes=100,
        drw_classes=64,
        drw_steps=2,
        drw_runs=4,
        drw_power_runs=4,
        edge_hops=1,
        edge_trials=2_000,
    ),
    "paper": WhiteBoxProfile(
        methods=list(METHODS),
        epsilons=[1.0, 2.0, 4.0, 8.0],
        halved_epsilons=[2.0, 4.0],
        power_epsilon=4.0,
        graph_nodes=200,
        features=64,
        epochs=5,
        canaries=4000,
        runs=15,
        drw_nodes=200,
        drw_classes=128,
        drw_steps=3,
        drw_runs=100,
        drw_power_runs=300,
        edge_hops=1,
        edge_trials=40_000,
    ),
}


def setting(epsilon: float, noise_factor: float) -> str:
    """The ``setting`` of a row: the claim, and the broken variant's noise factor."""
    return f"eps={epsilon:g}" + ("" if noise_factor == 1.0 else f", noise x{noise_factor:g}")


def _white_box_input(c: dict[str, Any], graphs: dict) -> tuple[Any, dict[str, Any]]:
    """The graph (built once per shape, kept in ``graphs``) and the training settings of a white-box cell."""
    from dpgnn.audit import whitebox
    from dpgnn.data.synthetic import csbm

    method = c["method"]
    if method in FEATURE_METHODS:
        key = ("matching", c["graph_nodes"], c["classes"])
        if key not in graphs:
            graphs[key] = whitebox.matching_graph(
                c["graph_nodes"],
                num_features=16,
                num_classes=c["classes"],
                seed=stable_seed("white-box-graph", c["seed"]),
            )
        batch = c["graph_nodes"] // 2 if method == "drw" else c["graph_nodes"]
        return graphs[key], {**_FEATURE_KW, "steps": c["steps"], "batch": batch}
    key = ("csbm", c["graph_nodes"], c["features"])
    if key not in graphs:
        graphs[key] = csbm(
            num_nodes=c["graph_nodes"],
            num_features=c["features"],
            seed=stable_seed("white-box-graph", c["seed"]),
        )
    return graphs[key], {**_NODE_KW, "epochs": c["epochs"], "batch_size": c["graph_nodes"]}


def _audit_cell(c: dict[str, Any], graphs: dict) -> dict[str, Any]:
    """One method at one claim and noise factor (module docstring); returns the stored row."""
    from dpgnn.audit import canary, whitebox

    method, eps, factor = c["method"], float(c["epsilon"]), float(c["noise_factor"])
    if method == EDGE:
        r = canary.audit_edge_aggregation(
            eps, hops=c["hops"], trials=c["trials"], seed=c["seed"], alpha=c["alpha"], noise_factor=factor, copies=2000
        )
        extra = {
            "dataset": "random graph (40 nodes)",
            "privacy_unit": "edge",
            "trials": c["trials"],
            "hops": c["hops"],
            "sigma": r["sigma"],
        }
        claimed, run_eps = r["epsilon_claimed"], r["epsilon_accounted"]
    else:
        graph, kw = _white_box_input(c, graphs)
        r = whitebox.audit_white_box(
            method,
            graph,
            epsilon=eps,
            runs=c["runs"],
            canaries=c["canaries"],
            seed=c["seed"],
            noise_factor=factor,
            alpha=c["alpha"],
            **kw,
        )
        extra = {
            "dataset": "matching graph" if method in FEATURE_METHODS else "csbm",
            "privacy_unit": r["unit"],
            "runs": r["runs"],
            "canaries": r["canaries"],
            "steps_observed": r["steps_observed"],
            "canary_sensitivity": r["canary_sensitivity"],
            "trials_in": r["trials_in"],
            "trials_out": r["trials_out"],
        }
        claimed, run_eps = r["epsilon_claimed"], r["epsilon_run"]
    return {
        "method": LABEL[method],
        "setting": setting(eps, factor),
        "metric": "epsilon_lb",
        "value": r["epsilon_lb"],
        "run": 0,
        "level": extra["privacy_unit"],
        "epsilon": claimed,
        "delta": r["delta"],
        "epsilon_accounted": claimed,
        "epsilon_run": run_eps,
        "broken": factor != 1.0,
        "noise_factor": factor,
        "epsilon_point": r["epsilon_point"],
        "tpr": r["tpr"],
        "fpr": r["fpr"],
        "ledger": r["ledger"],
        **extra,
    }


def cells(cfg: AuditProfile) -> list[dict[str, Any]]:
    """The grid: every method at every ``white_box.epsilons`` claim, and halved noise at every
    ``white_box.halved_epsilons``; ordered so that an interrupted run has stored what the audit must show first (every
    method at
    ``white_box.power_epsilon``, then the halved-σ variants, then the other claims)."""
    unknown = sorted(set(cfg.white_box.methods) - set(METHODS))
    if unknown:
        raise ValueError(f"white_box.methods: unknown {unknown}; valid: {list(METHODS)}")
    power = float(cfg.white_box.power_epsilon)
    out = _method_cells(cfg)
    for c in out:  # DRW/FDP: 128 canaries a run (one per class) where a node-level run has 4000
        if c["method"] in FEATURE_METHODS and c["epsilon"] == power and c["noise_factor"] == 1.0:
            c["runs"] = cfg.white_box.drw_power_runs

    def rank(c: dict[str, Any]) -> int:
        return 0 if c["noise_factor"] == 1.0 and c["epsilon"] == power else 1 if c["noise_factor"] != 1.0 else 2

    return sorted(out, key=rank)  # stable: method order kept within each rank


def _method_cells(cfg: AuditProfile) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for method in cfg.white_box.methods:
        if method == EDGE:
            size = {"hops": cfg.white_box.edge_hops, "trials": cfg.white_box.edge_trials}
        elif method in FEATURE_METHODS:
            size = {
                "graph_nodes": cfg.white_box.drw_nodes,
                "classes": cfg.white_box.drw_classes,
                "steps": cfg.white_box.drw_steps,
                "runs": cfg.white_box.drw_runs,
                "canaries": cfg.white_box.drw_classes,
            }
        else:
            size = {
                "graph_nodes": cfg.white_box.graph_nodes,
                "features": cfg.white_box.features,
                "epochs": cfg.white_box.epochs,
                "runs": cfg.white_box.runs,
                "canaries": cfg.white_box.canaries,
            }
        base = {k: [v] for k, v in size.items()} | {"method": [method], "alpha": [cfg.alpha], "seed": [cfg.seed]}
        out += grid(epsilon=[float(e) for e in cfg.white_box.epsilons], noise_factor=[1.0], **base)
        out += grid(epsilon=[float(e) for e in cfg.white_box.halved_epsilons], noise_factor=[0.5], **base)
    return out


def run_white_box(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Artifact ``white_box``: every cell of :func:`cells` (resumable, one stored row per cell)."""
    graphs: dict = {}
    return run_grid(store, ARTIFACT, cells(cfg), lambda c: _audit_cell(c, graphs), desc="white-box audits", force=force)


def white_box_table(store: ResultStore, power_epsilon: float | None = None) -> pd.DataFrame:
    """Per stored cell: the claim beside the audit. ``ratio`` = audited / claimed; ``flagged``: audited above the
    claim; ``power`` (correct runs at ``power_epsilon``): audited ≥ half the claim; ``verdict``: what the row shows
    (a correct run must never be flagged, a halved-σ run must be)."""
    df = store.load(ARTIFACT)
    cols = ["unit", "method", "claimed", "noise_factor", "epsilon_run", "audited_lb", "ratio", "flagged", "verdict"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame(
        {
            "unit": df["privacy_unit"],
            "method": df["method"],
            "claimed": df["epsilon"].astype(float),
            "noise_factor": df["noise_factor"].astype(float),
            "epsilon_run": df["epsilon_run"],
            "audited_lb": df["value"].astype(float),
        }
    )
    out["ratio"] = out["audited_lb"] / out["claimed"]
    out["flagged"] = out["audited_lb"] > out["claimed"]
    broken = out["noise_factor"] != 1.0
    out["verdict"] = np.where(
        broken,
        np.where(out["flagged"], "halved sigma flagged", "halved sigma MISSED"),
        np.where(out["flagged"], "correct run FLAGGED", "not flagged"),
    )
    if power_epsilon is not None:
        at = ~broken & np.isclose(out["claimed"], power_epsilon, rtol=1e-2)
        out.loc[at & (out["ratio"] >= 0.5) & ~out["flagged"], "verdict"] = "not flagged, tight (>= 0.5 eps)"
    return out[cols].sort_values(["unit", "method", "noise_factor", "claimed"]).reset_index(drop=True)


def plot_white_box(store: ResultStore):
    """Accounted ε (x) against the white-box audited lower bound (y), one panel per privacy unit: each method's
    correct runs as a line, its halved-σ variants as red crosses (at the claim they broke), the diagonal above which
    an audit flags the claim and the half-diagonal that marks a tight audit."""
    t = white_box_table(store)
    units = [u for u in ("node", "feature", "edge") if (t["unit"] == u).any()] or ["node"]
    fig, axes = plotting.plt.subplots(1, len(units), figsize=(4.0 * len(units), 3.8), squeeze=False)
    for ax, unit in zip(axes[0], units):
        sub = t[t["unit"] == unit]
        top = max([1.0] + list(sub["claimed"]) + list(sub["audited_lb"]))
        ax.plot([0, top], [0, top], color="#7f7f7f", ls="--", lw=1, label="audited = accounted")
        ax.plot([0, top], [0, top / 2], color="#7f7f7f", ls=":", lw=1, label="audited = accounted / 2")
        for i, (method, g) in enumerate(sub.groupby("method", sort=False)):
            colour = f"C{i}"
            ok = g[g["noise_factor"] == 1.0].sort_values("claimed")
            bad = g[g["noise_factor"] != 1.0]
            ax.plot(ok["claimed"], ok["audited_lb"], marker="o", ms=4, lw=1.2, color=colour, label=str(method))
            if len(bad):
                ax.plot(
                    bad["claimed"],
                    bad["audited_lb"],
                    marker="x",
                    ms=8,
                    mew=2,
                    ls="none",
                    color=colour,
                    markeredgecolor="#d62728",
                )
        ax.plot([], [], marker="x", ms=8, mew=2, ls="none", color="#d62728", label="noise x0.5, same claim")
        ax.set_title(
            {"node": "node-level DP", "feature": "feature-level DP (DRW/FDP)", "edge": "edge-level DP (NAP)"}[unit],
            fontsize=9,
        )
        ax.set_xlabel("accounted ε (the claim)")
        ax.set_ylabel("white-box audited ε (lower bound, 95%)")
        ax.legend(fontsize=6, loc="upper left")
    fig.suptitle("White-box audits: correct runs stay below the diagonal, halved noise rises above it", fontsize=10)
    fig.tight_layout()
    return fig


def summary(store: ResultStore, power_epsilon: float) -> pd.DataFrame:
    """One row per method: the best audited/claimed ratio of the correct runs, whether a correct run is flagged,
    whether every halved-σ run is flagged, and whether the audit is tight (≥ 0.5 ε at ``power_epsilon``)."""
    t = white_box_table(store, power_epsilon)
    if t.empty:
        return pd.DataFrame(columns=["unit", "method", "max_ratio", "correct_flagged", "halved_flagged", "tight"])
    ok, bad = t[t["noise_factor"] == 1.0], t[t["noise_factor"] != 1.0]
    at = ok[np.isclose(ok["claimed"], power_epsilon, rtol=1e-2)]
    rows = []
    for (unit, method), g in ok.groupby(["unit", "method"], sort=False):
        b, p = bad[bad["method"] == method], at[at["method"] == method]
        rows.append(
            {
                "unit": unit,
                "method": method,
                "max_ratio": round(float(g["ratio"].max()), 3),
                "correct_flagged": bool(g["flagged"].any()),
                "halved_flagged": bool(len(b)) and bool(b["flagged"].all()),
                "tight": bool(len(p)) and bool((p["ratio"] >= 0.5).any()),
            }
        )
    return pd.DataFrame(rows)


__all__ = [
    "ARTIFACT",
    "METHODS",
    "PROFILES",
    "cells",
    "run_white_box",
    "white_box_table",
    "plot_white_box",
    "summary",
    "setting",
]
