"""Audit series, notebook 01: distinguishing tests of the local mechanisms (LDP), the broken negative control
included (artifact ``ldp``)."""

from __future__ import annotations

import pandas as pd

from dpgnn.results import ResultStore
from dpgnn.series.audit.common import _setting
from dpgnn.series.audit.profiles import AuditProfile
from dpgnn.sweep import grid, run_grid


def run_ldp(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Distinguishing-test audit of every local mechanism at every ε (one stored row per cell), each at confidence
    ``1 − alpha/cells`` so that the whole grid holds with confidence ``1 − alpha``."""

    def cell(c):
        from dpgnn.audit import ldp

        r = ldp.audit_mechanism(c["method"], c["epsilon"], trials=c["trials"], seed=c["seed"], alpha=c["alpha"])
        return {
            "dataset": "worst-case inputs",
            "setting": _setting(c["epsilon"]),
            "metric": "epsilon_lb",
            "value": r["epsilon_lb"],
            "run": 0,
            "level": "ldp",
            "delta": r["delta"],
            "epsilon_point": r["epsilon_point"],
            "tpr": r["tpr"],
            "fpr": r["fpr"],
            "threshold": r["threshold"],
            "label": r["label"],
            "unit": r["unit"],
            "broken": c["method"] in ldp.BROKEN,
            "ledger": {
                "level": "ldp",
                **ldp.guarantee_statement(c["method"]),
                "mechanism": c["method"],
                "epsilon": c["epsilon"],
                "delta": r["delta"],
                "accountant": "mechanism's LDP guarantee",
                "audit": "threshold test, Clopper-Pearson",
                "alpha": c["alpha"],
            },
        }

    # family-wise confidence over the grid (Bonferroni): the tight audits sit at ε itself, so with a per-cell 95%
    # level about one correct cell in 70 would cross its claim by chance; at alpha / cells none should (95% overall)
    n_cells = len(cfg.ldp.mechanisms) * len(cfg.ldp.epsilons)
    cells = grid(
        method=list(cfg.ldp.mechanisms),
        epsilon=[float(e) for e in cfg.ldp.epsilons],
        trials=[cfg.ldp.trials],
        alpha=[cfg.alpha / n_cells],
        seed=[cfg.seed],
    )
    return run_grid(store, "ldp", cells, cell, desc="LDP audits", force=force)
