"""Empirical privacy audits: ε lower bounds measured from what a mechanism or a trained model releases.

- :mod:`dpgnn.audit.bounds`  — ε from TPR/FPR with Clopper–Pearson bounds; the one-run audit (Steinke et al. 2023)
- :mod:`dpgnn.audit.ldp`     — distinguishing tests of the local mechanisms (LM, PM, PGC, multi-bit, RR, baselines)
- :mod:`dpgnn.audit.canary`  — canary audits of central DP training (DP-SGD one-run) and of edge-level aggregation
- :mod:`dpgnn.audit.whitebox` — white-box Dirac gradient canaries in every DP-SGD step of the methods (tight audits)
- :mod:`dpgnn.audit.mia`     — PrivGNN's membership-inference Attack-1 / Attack-2 (shadow model → attack → AUROC)
- :mod:`dpgnn.audit.catalog` — what the audits cover, by name (mechanisms, methods, shadow designs), without torch

An accountant's ε is an upper bound; an audit's ε is a lower bound with a confidence level. A correct mechanism has
``audited ≤ accounted``; an audit above the claim (beyond its confidence) flags a broken mechanism or accountant.
"""

from dpgnn.audit.bounds import (
    clopper_pearson,
    epsilon_from_rates,
    epsilon_lower_bound,
    epsilon_lower_bounds,
    one_run_epsilon_lower_bound,
    one_run_p_value,
)

__all__ = [
    "clopper_pearson",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "epsilon_lower_bounds",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
]
