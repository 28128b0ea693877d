"""Audit series, notebook 02: central DP mechanisms -- canary-edge audits of GAP/ProGAP's aggregate perturbation
(artifact ``edge``), one-run canary audits of node-level DP-SGD (``node``) and audits of one PrivGNN query
(``query``)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from dpgnn.results import ResultStore
from dpgnn.series.audit.common import _setting
from dpgnn.series.audit.profiles import AuditProfile
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import stable_seed


def run_edge(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Canary-edge audits of K NAP aggregations (GAP/ProGAP edge level) at the calibrated σ."""

    def cell(c):
        from dpgnn.audit import canary

        r = canary.audit_edge_aggregation(
            c["epsilon"], hops=c["hops"], trials=c["trials"], seed=c["seed"], alpha=c["alpha"]
        )
        return {
            "dataset": "random graph (40 nodes)",
            "method": f"progap/gap NAP, K={c['hops']}",
            "setting": _setting(c["epsilon"]),
            "metric": "epsilon_lb",
            "value": r["epsilon_lb"],
            "run": 0,
            "level": "edge",
            "delta": r["delta"],
            "epsilon_accounted": r["epsilon_accounted"],
            "epsilon_point": r["epsilon_point"],
            "sigma": r["sigma"],
            "tpr": r["tpr"],
            "fpr": r["fpr"],
            "ledger": r["ledger"],
        }

    cells = grid(
        epsilon=[float(e) for e in cfg.edge.epsilons],
        hops=list(cfg.edge.hops),
        trials=[cfg.edge.trials],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "edge", cells, cell, desc="edge audits", force=force)


def run_node(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """One-run canary audits of node-level DP-SGD (the DP-MLP stage of ProGAP/GAP) on a small CSBM graph;
    ε = ∞ is the same training without noise (the audit's positive control)."""
    cache: dict[int, Any] = {}

    def graph(n):
        from dpgnn.data.synthetic import csbm

        if n not in cache:
            cache[n] = csbm(num_nodes=n, num_features=16, seed=stable_seed("audit-graph", cfg.seed))
        return cache[n]

    def cell(c):
        from dpgnn.audit import canary

        r = canary.audit_dpsgd_one_run(
            graph(c["graph_nodes"]),
            epsilon=c["epsilon"],
            num_canaries=c["canaries"],
            seed=c["seed"],
            epochs=c["epochs"],
            alpha=c["alpha"],
        )
        return {
            "dataset": f"csbm-{c['graph_nodes']}",
            "method": "dp-mlp (DP-Adam stage)" if math.isfinite(c["epsilon"]) else "mlp (non-private control)",
            "setting": _setting(c["epsilon"]),
            "metric": "epsilon_lb",
            "value": r["epsilon_lb"],
            "run": 0,
            "level": "node",
            "delta": r["delta"],
            "epsilon_accounted": r["epsilon_accounted"],
            "noise_multiplier": r["noise_multiplier"],
            "guesses": r["guesses"],
            "correct": r["correct"],
            "canaries_in": r["canaries_in"],
            "test_acc": r["test_acc"],
            "ledger": r["ledger"],
        }

    cells = grid(
        epsilon=[float(e) for e in cfg.node.epsilons],
        canaries=[cfg.node.canaries],
        graph_nodes=[cfg.node.graph_nodes],
        epochs=[cfg.node.epochs],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "node", cells, cell, desc="node audits (DP-SGD one run)", force=force)


def run_query(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Audit of one PrivGNN query (noisy argmax of a teacher posterior) against the accountant's per-query λ, with
    the noise on posteriors (the paper) and on log-softmax (the authors' code)."""

    def cell(c):
        from dpgnn.audit import argmax

        r = argmax.audit_noisy_argmax(
            c["lam"],
            num_classes=c["classes"],
            trials=c["trials"],
            seed=c["seed"],
            noise_on=c["noise_on"],
            alpha=c["alpha"],
        )
        name = "privgnn noisy argmax" + (" (log-softmax, authors' code)" if c["noise_on"] == "log_softmax" else "")
        return {
            "dataset": f"worst-case posteriors, c={c['classes']}",
            "method": name,
            "setting": f"lam={c['lam']:g}",
            "metric": "epsilon_lb",
            "value": r["epsilon_lb"],
            "run": 0,
            "level": "node",
            "epsilon": float(c["lam"]),
            "delta": 0.0,
            "epsilon_point": r["epsilon_point"],
            "tpr": r["tpr"],
            "fpr": r["fpr"],
            "epsilon_if_l1_sensitivity_2": r["epsilon_if_l1_sensitivity_2"],
            "ledger": {
                "level": "node",
                "mechanism": f"Laplace(1/lam) on {c['noise_on']}, argmax",
                "epsilon": float(c["lam"]),
                "delta": 0.0,
                "accountant": "PrivGNN base event: Laplace, L1 sensitivity 1",
                **argmax.query_statement(float(c["lam"]), c["classes"], c["noise_on"]),
            },
        }

    cells = grid(
        lam=[float(v) for v in cfg.query.lambdas],
        noise_on=["posterior", "log_softmax"],
        classes=[cfg.query.classes],
        trials=[cfg.query.trials],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "query", cells, cell, desc="PrivGNN query audits", force=force)
