"""The audit series' run profiles: one frozen :class:`AuditProfile` per name (``smoke``, ``test``, ``paper``), with
a nested part per group of audits: :class:`LDPAudit` (notebook 01), :class:`EdgeAudit`, :class:`NodeAudit` and
:class:`QueryAudit` (02), :class:`MIAAudit` with its :class:`ShadowDesigns` (03), :class:`CentralAudit` (04) and
:class:`~dpgnn.series.audit_white_box.WhiteBoxProfile` (05).

Read as ``cfg.ldp.trials``, ``cfg.mia.shadows.runs``; overridden as ``settings("audit", profile,
**{"mia.datasets": ["amazon"]})`` (:func:`dpgnn.profiles.settings`). The cells copy the values they need, so their
config hashes do not depend on this layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpgnn.audit import catalog
from dpgnn.profiles import Profile
from dpgnn.series import audit_white_box as white_box

_EPS = [0.5, 1.0, 2.0, 4.0, 8.0]
_LDP = list(catalog.MECHANISMS) + list(catalog.BROKEN)

#: Fig. 4 targets: the paper's noise placement (B1 and the student) and the authors' code's (``privgnn_code``)
MIA_NOISE = ["posterior", "log_softmax"]


@dataclass(frozen=True)
class LDPAudit:
    """Notebook 01's distinguishing tests of the local mechanisms."""

    mechanisms: list[str]
    """LDP mechanisms audited (the correct ones and the deliberately broken ones)"""
    epsilons: list[float]
    """claimed ε of the LDP audits"""
    trials: int
    """trials per LDP audit"""


@dataclass(frozen=True)
class EdgeAudit:
    """Notebook 02's canary-edge audits of GAP/ProGAP's aggregate perturbation (edge level)."""

    epsilons: list[float]
    """claimed ε of the edge-level audits"""
    hops: list[int]
    """aggregation hops of the edge-level audits"""
    trials: int
    """trials per edge-level audit"""


@dataclass(frozen=True)
class NodeAudit:
    """Notebook 02's one-run canary audits of node-level DP-SGD (the DP-MLP stage)."""

    epsilons: list[float]
    """claimed ε of the node-level (canary) audits (inf: the non-private control)"""
    canaries: int
    """canaries per node-level audit"""
    graph_nodes: int
    """nodes of the node-level audits' graph"""
    epochs: int
    """training epochs of the node-level audits"""


@dataclass(frozen=True)
class QueryAudit:
    """Notebook 02's audits of one PrivGNN query (noisy argmax of a teacher posterior)."""

    lambdas: list[float]
    """PrivGNN's noise scales λ of the per-query audits"""
    classes: int
    """classes of the per-query audits"""
    trials: int
    """trials per query audit"""


@dataclass(frozen=True)
class ShadowDesigns:
    """Notebook 03's spread over the attacker's open choices (artifact ``fig4_shadows``), against the targets of
    :class:`MIAAudit`."""

    datasets: list[str]
    """datasets of the shadow-design spread"""
    runs: int
    """runs per shadow-design cell"""
    sizes: list[str]
    """shadow model sizes tried (:data:`dpgnn.audit.catalog.SHADOW_SIZES`)"""
    epochs: list[int]
    """shadow model training epochs tried"""
    protocols: list[str]
    """attack protocols tried (:data:`dpgnn.audit.catalog.PROTOCOLS`)"""


@dataclass(frozen=True)
class MIAAudit:
    """Notebook 03's membership inference of PrivGNN's Fig. 4 (App. C)."""

    datasets: list[str]
    """datasets of the membership inference of Fig. 4 (PrivGNN)"""
    queries: int
    """public queries |Q| of the attacked students"""
    k: int | None
    """teachers' neighbourhood size K (None: the main result's K of each dataset)"""
    lam: float
    """PrivGNN's noise scale λ of the attacked students"""
    teacher_epochs: int
    """training epochs of the teachers"""
    student_epochs: int
    """training epochs of the students"""
    runs: int
    """runs per membership-inference cell"""
    noise: list[str]
    """where the noise goes: posterior (the paper) or log_softmax (the authors' code)"""
    published_datasets: list[str]
    """datasets attacked with the published attack implementation's protocol"""
    shadows: ShadowDesigns
    """the shadow designs tried against the same targets (``fig4_shadows``)"""


@dataclass(frozen=True)
class CentralAudit:
    """Notebook 04's canary audits of central DP training through the methods' entry points."""

    methods: list[str]
    """central-DP training methods audited (:data:`dpgnn.audit.catalog.CENTRAL_METHODS`)"""
    epsilons: list[float]
    """claimed ε of the central-DP training audits"""
    canaries: int
    """canaries per central-DP training audit"""
    graph_nodes: int
    """nodes of the central-DP audits' graph"""
    epochs: int
    """training epochs of the central-DP audits"""
    controls: list[str]
    """methods also audited without noise (controls)"""
    broken: list[str]
    """methods also audited with their noise scaled down (the broken variant)"""
    broken_epsilon: float
    """claimed ε of the broken variants"""
    broken_factor: float
    """noise factor of the broken variants"""


@dataclass(frozen=True)
class AuditProfile(Profile):
    """The settings of the audit notebooks (``dpgnn.profiles.settings("audit", profile)``)."""

    ldp: LDPAudit
    """notebook 01's LDP audits"""
    edge: EdgeAudit
    """notebook 02's edge-level audits"""
    node: NodeAudit
    """notebook 02's node-level DP-SGD audits"""
    query: QueryAudit
    """notebook 02's PrivGNN query audits"""
    mia: MIAAudit
    """notebook 03's membership inference (Fig. 4) and its shadow designs"""
    central: CentralAudit
    """notebook 04's central-DP training audits"""
    alpha: float
    """significance level of the Clopper-Pearson bounds"""
    seed: int
    """base seed of every cell"""
    white_box: white_box.WhiteBoxProfile
    """notebook 05's white-box audits (:mod:`dpgnn.series.audit_white_box`)"""


PROFILES: dict[str, AuditProfile] = {
    "smoke": AuditProfile(
        ldp=LDPAudit(mechanisms=_LDP, epsilons=_EPS, trials=100_000),
        edge=EdgeAudit(epsilons=[1.0, 4.0, 8.0], hops=[2], trials=1500),
        node=NodeAudit(epsilons=[1.0, 8.0, math.inf], canaries=200, graph_nodes=600, epochs=20),
        query=QueryAudit(lambdas=[0.5, 1.0, 2.0], classes=10, trials=100_000),
        mia=MIAAudit(
            datasets=["amazon"],
            queries=100,
            k=50,
            lam=1.0,
            teacher_epochs=5,
            student_epochs=15,
            runs=1,
            noise=["posterior"],  # the authors'-code cells would double the notebook's smoke time
            published_datasets=[],
            # the shadow designs' spread (fig4_shadows): one small run, the usual protocol
            shadows=ShadowDesigns(
                datasets=["amazon"], runs=1, sizes=["quarter", "target"], epochs=[15], protocols=["score"]
            ),
        ),
        central=CentralAudit(
            methods=list(catalog.CENTRAL_METHODS),
            epsilons=[8.0],
            canaries=200,
            graph_nodes=300,
            epochs=30,
            controls=["progap-node", "drw"],
            broken=["dp-gnn"],
            broken_epsilon=0.1,
            broken_factor=1e-6,
        ),
        alpha=0.05,
        seed=12345,
        white_box=white_box.PROFILES["smoke"],
    ),
    # "test": the smallest end-to-end execution (tests/test_notebooks.py)
    "test": AuditProfile(
        ldp=LDPAudit(mechanisms=["pgc", "broken_laplace"], epsilons=[1.0], trials=20_000),
        edge=EdgeAudit(epsilons=[4.0], hops=[1], trials=100),
        node=NodeAudit(epsilons=[8.0], canaries=20, graph_nodes=100, epochs=2),
        query=QueryAudit(lambdas=[1.0], classes=10, trials=20_000),
        mia=MIAAudit(
            datasets=["credit"],
            queries=20,
            k=20,
            lam=1.0,
            teacher_epochs=2,
            student_epochs=3,
            runs=1,
            noise=MIA_NOISE,
            published_datasets=["credit"],
            # the published attack's fits cost minutes: the usual protocol only
            shadows=ShadowDesigns(
                datasets=["credit"], runs=1, sizes=["quarter", "target"], epochs=[3], protocols=["score"]
            ),
        ),
        central=CentralAudit(
            methods=["dp-gnn"],
            epsilons=[8.0],
            canaries=20,
            graph_nodes=60,
            epochs=2,
            controls=[],
            broken=["dp-gnn"],
            broken_epsilon=0.1,
            broken_factor=1e-6,
        ),
        alpha=0.05,
        seed=0,
        white_box=white_box.PROFILES["test"],
    ),
    "paper": AuditProfile(
        ldp=LDPAudit(mechanisms=_LDP, epsilons=_EPS, trials=2_000_000),
        edge=EdgeAudit(epsilons=_EPS, hops=[1, 2, 4], trials=10_000),
        node=NodeAudit(epsilons=_EPS + [math.inf], canaries=1000, graph_nodes=2000, epochs=50),
        query=QueryAudit(lambdas=[0.1, 0.2, 0.4, 0.8, 1.0, 2.0], classes=10, trials=2_000_000),
        # Fig. 4: λ = 1 (App. C), |Q| = 1000 and the main-result K (docs/papers/privgnn.md#data-and-splits),
        # 200 epochs, 3 runs
        mia=MIAAudit(
            # Fig. 4 draws Amazon, ArXiv and Reddit (App. C); Credit is run for the text's "on all datasets"
            datasets=["amazon", "arxiv", "reddit", "credit"],
            queries=1000,
            k=None,
            lam=1.0,
            teacher_epochs=200,
            student_epochs=200,
            runs=3,
            noise=MIA_NOISE,
            # the published attack implementation's protocol (dpgnn.audit.mia), on Fig. 4's dataset
            published_datasets=["amazon"],
            # how far the attacker's open choices move Fig. 4 (fig4_shadows): every shadow size, 50 / 200 (the
            # targets') / 500 (the official code's) epochs, both protocols, against the same targets
            shadows=ShadowDesigns(
                datasets=["amazon"],
                runs=3,
                sizes=list(catalog.SHADOW_SIZES),
                epochs=[50, 200, 500],
                protocols=list(catalog.PROTOCOLS),
            ),
        ),
        central=CentralAudit(
            methods=list(catalog.CENTRAL_METHODS),
            epsilons=_EPS,
            canaries=1000,
            graph_nodes=1000,
            epochs=50,
            controls=["progap-node", "drw"],
            broken=["progap-node", "dp-gnn"],
            broken_epsilon=0.1,
            broken_factor=1e-6,
        ),
        alpha=0.05,
        seed=12345,
        white_box=white_box.PROFILES["paper"],
    ),
}

__all__ = [
    "MIA_NOISE",
    "PROFILES",
    "AuditProfile",
    "CentralAudit",
    "EdgeAudit",
    "LDPAudit",
    "MIAAudit",
    "NodeAudit",
    "QueryAudit",
    "ShadowDesigns",
]
