"""Audit series: empirical ε lower bounds of every mechanism beside the accounted ε, and PrivGNN's MI attacks.

Notebooks ``notebooks/audit/``: 01 the local mechanisms (LDP distinguishing tests, the broken negative control),
02 central DP (canary-edge audit of GAP/ProGAP's aggregate perturbation, one-run canary audit of node-level DP-SGD,
one PrivGNN query), 03 PrivGNN's Attack-1/Attack-2 (Fig. 4), 04 canary audits of central DP *training* through the
methods' entry points (ProGAP node level, DP-GNN, DRW, FDP; :mod:`dpgnn.audit.central`) and the figure none of the
papers has (accounted vs audited ε per privacy unit), 05 white-box audits with Dirac gradient canaries in every DP-SGD
step and a canary edge in NAP (artifact ``white_box``, :mod:`dpgnn.series.audit_white_box`). Results live under
``results/<profile>/audit/``; figures are drawn from the stored rows only.

Stored rows (tidy): ``artifact`` ``ldp`` / ``edge`` / ``node`` have ``metric = "epsilon_lb"`` (the audited lower
bound, confidence ``1 − alpha``), ``epsilon`` = the accounted (claimed) ε, ``method`` = the mechanism, ``setting``
``eps=<claimed>``; artifact ``central`` has the same with ``privacy_unit`` (``node`` / ``feature``) and, for the
broken controls, ``epsilon_run`` (the ε accounted for the noise actually used); artifact ``fig4`` has
``metric = "auroc"`` with ``setting`` ``attack1``/``attack2``; ``fig4_shadows`` the same rows per shadow design
(``design``, ``shadow``, ``shadow_epochs``, ``protocol``).

One module per notebook: :mod:`~dpgnn.series.audit.ldp_mechanisms` (01), :mod:`~dpgnn.series.audit.central_dp`
(02), :mod:`~dpgnn.series.audit.privgnn_mia` (03), :mod:`~dpgnn.series.audit.central_dp_training` (04) and
:mod:`dpgnn.series.audit_white_box` (05); :mod:`~dpgnn.series.audit.profiles` holds the typed profiles (a nested
part per group of audits: ``cfg.ldp.trials``, ``cfg.mia.shadows.runs``) and :mod:`~dpgnn.series.audit.common` the
accounted-vs-audited table and figure the notebooks share. Every public name is importable from here.
"""

from __future__ import annotations

from dpgnn.series import Series, register
from dpgnn.series.audit.central_dp import run_edge, run_node, run_query
from dpgnn.series.audit.central_dp_training import (
    CENTRAL_DATASET,
    CENTRAL_KW,
    central_label,
    drw_noise_multiplier,
    run_central,
)
from dpgnn.series.audit.common import (
    ALL_ARTIFACTS,
    ARTIFACTS,
    PAPER,
    UNITS,
    audit_side_by_side,
    audit_table,
    plot_accounted_vs_audited,
)
from dpgnn.series.audit.ldp_mechanisms import run_ldp
from dpgnn.series.audit.privgnn_mia import (
    mia_protocols,
    mia_shadow_range,
    mia_side_by_side,
    plot_mia,
    plot_mia_protocols,
    plot_mia_shadows,
    run_mia,
    run_mia_shadows,
)
from dpgnn.series.audit.profiles import (
    MIA_NOISE,
    PROFILES,
    AuditProfile,
    CentralAudit,
    EdgeAudit,
    LDPAudit,
    MIAAudit,
    NodeAudit,
    QueryAudit,
    ShadowDesigns,
)
from dpgnn.series.ledgers import audit_guarantees

#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title="Audits: empirical lower bounds on ε, and PrivGNN's membership inference",
        kind="study",
        order=6,
        docs="docs/audits.md",
        reference="audit.csv",
        profiles=PROFILES,
        artifacts=ALL_ARTIFACTS,
        guarantees=audit_guarantees,
    )
)

__all__ = [
    "ALL_ARTIFACTS",
    "ARTIFACTS",
    "CENTRAL_DATASET",
    "CENTRAL_KW",
    "MIA_NOISE",
    "PAPER",
    "PROFILES",
    "SERIES",
    "UNITS",
    "AuditProfile",
    "CentralAudit",
    "EdgeAudit",
    "LDPAudit",
    "MIAAudit",
    "NodeAudit",
    "QueryAudit",
    "ShadowDesigns",
    "audit_side_by_side",
    "audit_table",
    "central_label",
    "drw_noise_multiplier",
    "mia_protocols",
    "mia_shadow_range",
    "mia_side_by_side",
    "plot_accounted_vs_audited",
    "plot_mia",
    "plot_mia_protocols",
    "plot_mia_shadows",
    "run_central",
    "run_edge",
    "run_ldp",
    "run_mia",
    "run_mia_shadows",
    "run_node",
    "run_query",
]
