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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpgnn import plotting
from dpgnn.audit import argmax, canary, central, ldp, mia
from dpgnn.data.synthetic import csbm
from dpgnn.methods import privgnn as P
from dpgnn.profiles import Profile
from dpgnn.reference import load_reference
from dpgnn.report import paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series import Series, load_or_skip, register
from dpgnn.series import audit_white_box as white_box
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import stable_seed

PAPER = "audit"
_EPS = [0.5, 1.0, 2.0, 4.0, 8.0]
_LDP = list(ldp.MECHANISMS) + list(ldp.BROKEN)

#: Fig. 4 targets: the paper's noise placement (B1 and the student) and the authors' code's (``privgnn_code``)
_MIA_NOISE = ["posterior", "log_softmax"]


@dataclass(frozen=True)
class AuditProfile(Profile):
    """The settings of the audit notebooks (``dpgnn.profiles.settings("audit", profile)``)."""

    ldp_mechanisms: list[str]
    """LDP mechanisms audited (the correct ones and the deliberately broken ones)"""
    ldp_epsilons: list[float]
    """claimed ε of the LDP audits"""
    ldp_trials: int
    """trials per LDP audit"""
    edge_epsilons: list[float]
    """claimed ε of the edge-level audits"""
    edge_hops: list[int]
    """aggregation hops of the edge-level audits"""
    edge_trials: int
    """trials per edge-level audit"""
    node_epsilons: list[float]
    """claimed ε of the node-level (canary) audits (inf: the non-private control)"""
    node_canaries: int
    """canaries per node-level audit"""
    node_graph_nodes: int
    """nodes of the node-level audits' graph"""
    node_epochs: int
    """training epochs of the node-level audits"""
    query_lambdas: list[float]
    """PrivGNN's noise scales λ of the per-query audits"""
    query_classes: int
    """classes of the per-query audits"""
    query_trials: int
    """trials per query audit"""
    mia_datasets: list[str]
    """datasets of the membership inference of Fig. 4 (PrivGNN)"""
    mia_queries: int
    """public queries |Q| of the attacked students"""
    mia_k: int | None
    """teachers' neighbourhood size K (None: the main result's K of each dataset)"""
    mia_lambda: float
    """PrivGNN's noise scale λ of the attacked students"""
    mia_teacher_epochs: int
    """training epochs of the teachers"""
    mia_student_epochs: int
    """training epochs of the students"""
    mia_runs: int
    """runs per membership-inference cell"""
    mia_noise: list[str]
    """where the noise goes: posterior (the paper) or log_softmax (the authors' code)"""
    mia_published_datasets: list[str]
    """datasets attacked with the published attack implementation's protocol"""
    mia_shadow_datasets: list[str]
    """datasets of the shadow-design spread (fig4_shadows)"""
    mia_shadow_runs: int
    """runs per shadow-design cell"""
    mia_shadow_sizes: list[str]
    """shadow model sizes tried"""
    mia_shadow_epochs: list[int]
    """shadow model training epochs tried"""
    mia_shadow_protocols: list[str]
    """attack protocols tried"""
    central_methods: list[str]
    """central-DP training methods audited (notebook 04)"""
    central_epsilons: list[float]
    """claimed ε of the central-DP training audits"""
    central_canaries: int
    """canaries per central-DP training audit"""
    central_graph_nodes: int
    """nodes of the central-DP audits' graph"""
    central_epochs: int
    """training epochs of the central-DP audits"""
    central_controls: list[str]
    """methods also audited without noise (controls)"""
    central_broken: list[str]
    """methods also audited with their noise scaled down (the broken variant)"""
    central_broken_epsilon: float
    """claimed ε of the broken variants"""
    central_broken_factor: float
    """noise factor of the broken variants"""
    alpha: float
    """significance level of the Clopper-Pearson bounds"""
    seed: int
    """base seed of every cell"""
    white_box: white_box.WhiteBoxProfile
    """notebook 05's white-box audits (:mod:`dpgnn.series.audit_white_box`)"""


PROFILES: dict[str, AuditProfile] = {
    "smoke": AuditProfile(
        ldp_mechanisms=_LDP,
        ldp_epsilons=_EPS,
        ldp_trials=100_000,
        edge_epsilons=[1.0, 4.0, 8.0],
        edge_hops=[2],
        edge_trials=1500,
        node_epsilons=[1.0, 8.0, math.inf],
        node_canaries=200,
        node_graph_nodes=600,
        node_epochs=20,
        query_lambdas=[0.5, 1.0, 2.0],
        query_classes=10,
        query_trials=100_000,
        mia_datasets=["amazon"],
        mia_queries=100,
        mia_k=50,
        mia_lambda=1.0,
        mia_teacher_epochs=5,
        mia_student_epochs=15,
        mia_runs=1,
        mia_noise=["posterior"],  # the authors'-code cells would double the notebook's smoke time
        mia_published_datasets=[],
        # the shadow designs' spread (fig4_shadows): one small run, the usual protocol
        mia_shadow_datasets=["amazon"],
        mia_shadow_runs=1,
        mia_shadow_sizes=["quarter", "target"],
        mia_shadow_epochs=[15],
        mia_shadow_protocols=["score"],
        central_methods=list(central.CENTRAL_METHODS),
        central_epsilons=[8.0],
        central_canaries=200,
        central_graph_nodes=300,
        central_epochs=30,
        central_controls=["progap-node", "drw"],
        central_broken=["dp-gnn"],
        central_broken_epsilon=0.1,
        central_broken_factor=1e-6,
        alpha=0.05,
        seed=12345,
        white_box=white_box.PROFILES["smoke"],
    ),
    # "test": the smallest end-to-end execution (tests/test_notebooks.py)
    "test": AuditProfile(
        ldp_mechanisms=["pgc", "broken_laplace"],
        ldp_epsilons=[1.0],
        ldp_trials=20_000,
        edge_epsilons=[4.0],
        edge_hops=[1],
        edge_trials=100,
        node_epsilons=[8.0],
        node_canaries=20,
        node_graph_nodes=100,
        node_epochs=2,
        query_lambdas=[1.0],
        query_classes=10,
        query_trials=20_000,
        mia_datasets=["credit"],
        mia_queries=20,
        mia_k=20,
        mia_lambda=1.0,
        mia_teacher_epochs=2,
        mia_student_epochs=3,
        mia_runs=1,
        mia_noise=_MIA_NOISE,
        mia_published_datasets=["credit"],
        mia_shadow_datasets=["credit"],
        mia_shadow_runs=1,
        mia_shadow_sizes=["quarter", "target"],
        mia_shadow_epochs=[3],
        mia_shadow_protocols=["score"],  # the published attack's fits cost minutes
        central_methods=["dp-gnn"],
        central_epsilons=[8.0],
        central_canaries=20,
        central_graph_nodes=60,
        central_epochs=2,
        central_controls=[],
        central_broken=["dp-gnn"],
        central_broken_epsilon=0.1,
        central_broken_factor=1e-6,
        alpha=0.05,
        seed=0,
        white_box=white_box.PROFILES["test"],
    ),
    "paper": AuditProfile(
        ldp_mechanisms=_LDP,
        ldp_epsilons=_EPS,
        ldp_trials=2_000_000,
        edge_epsilons=_EPS,
        edge_hops=[1, 2, 4],
        edge_trials=10_000,
        node_epsilons=_EPS + [math.inf],
        node_canaries=1000,
        node_graph_nodes=2000,
        node_epochs=50,
        query_lambdas=[0.1, 0.2, 0.4, 0.8, 1.0, 2.0],
        query_classes=10,
        query_trials=2_000_000,
        # Fig. 4: λ = 1 (App. C), |Q| = 1000 and the main-result K (docs/papers/privgnn.md#data-and-splits),
        # 200 epochs, 3 runs
        # Fig. 4 draws Amazon, ArXiv and Reddit (App. C); Credit is run for the text's "on all datasets"
        mia_datasets=["amazon", "arxiv", "reddit", "credit"],
        mia_queries=1000,
        mia_k=None,
        mia_lambda=1.0,
        mia_teacher_epochs=200,
        mia_student_epochs=200,
        mia_runs=3,
        mia_noise=_MIA_NOISE,
        # the published attack implementation's protocol (dpgnn.audit.mia), on Fig. 4's dataset
        mia_published_datasets=["amazon"],
        # how far the attacker's open choices move Fig. 4 (fig4_shadows): every shadow size, 50 / 200 (the targets')
        # / 500 (the official code's) epochs, both protocols, against the same targets
        mia_shadow_datasets=["amazon"],
        mia_shadow_runs=3,
        mia_shadow_sizes=list(mia.SHADOW_SIZES),
        mia_shadow_epochs=[50, 200, 500],
        mia_shadow_protocols=list(mia.PROTOCOLS),
        central_methods=list(central.CENTRAL_METHODS),
        central_epsilons=_EPS,
        central_canaries=1000,
        central_graph_nodes=1000,
        central_epochs=50,
        central_controls=["progap-node", "drw"],
        central_broken=["progap-node", "dp-gnn"],
        central_broken_epsilon=0.1,
        central_broken_factor=1e-6,
        alpha=0.05,
        seed=12345,
        white_box=white_box.PROFILES["paper"],
    ),
}


UNITS = {
    "ldp": "LDP (one node's feature / vector / label)",
    "edge": "edge-level DP",
    "node": "node-level DP",
    "feature": "feature-level DP (one node's features; DRW/FDP)",
    "query": "PrivGNN: one query (node level, per step)",
}
ARTIFACTS = ("ldp", "edge", "node", "query")
#: every artifact with audited ε rows (the figure and the summary of notebook 04)
ALL_ARTIFACTS = ("ldp", "edge", "node", "central", "query")
_UNIT_ORDER = ("ldp", "edge", "node", "feature", "query")


def _setting(eps: float) -> str:
    return "eps=inf" if math.isinf(eps) else f"eps={eps:g}"


# ---------------------------------------------------------------------------------------------------------------
# Notebook 01: local mechanisms
# ---------------------------------------------------------------------------------------------------------------
def run_ldp(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Distinguishing-test audit of every local mechanism at every ε (one stored row per cell), each at confidence
    ``1 − alpha/cells`` so that the whole grid holds with confidence ``1 − alpha``."""

    def cell(c):
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
    n_cells = len(cfg.ldp_mechanisms) * len(cfg.ldp_epsilons)
    cells = grid(
        method=list(cfg.ldp_mechanisms),
        epsilon=[float(e) for e in cfg.ldp_epsilons],
        trials=[cfg.ldp_trials],
        alpha=[cfg.alpha / n_cells],
        seed=[cfg.seed],
    )
    return run_grid(store, "ldp", cells, cell, desc="LDP audits", force=force)


# ---------------------------------------------------------------------------------------------------------------
# Notebook 02: central DP (edge-level aggregation, node-level DP-SGD)
# ---------------------------------------------------------------------------------------------------------------
def run_edge(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Canary-edge audits of K NAP aggregations (GAP/ProGAP edge level) at the calibrated σ."""

    def cell(c):
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
        epsilon=[float(e) for e in cfg.edge_epsilons],
        hops=list(cfg.edge_hops),
        trials=[cfg.edge_trials],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "edge", cells, cell, desc="edge audits", force=force)


def run_node(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """One-run canary audits of node-level DP-SGD (the DP-MLP stage of ProGAP/GAP) on a small CSBM graph;
    ε = ∞ is the same training without noise (the audit's positive control)."""
    cache: dict[int, Any] = {}

    def graph(n):
        if n not in cache:
            cache[n] = csbm(num_nodes=n, num_features=16, seed=stable_seed("audit-graph", cfg.seed))
        return cache[n]

    def cell(c):
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
        epsilon=[float(e) for e in cfg.node_epsilons],
        canaries=[cfg.node_canaries],
        graph_nodes=[cfg.node_graph_nodes],
        epochs=[cfg.node_epochs],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "node", cells, cell, desc="node audits (DP-SGD one run)", force=force)


def run_query(cfg: AuditProfile, store: ResultStore, *, force: bool = False) -> pd.DataFrame:
    """Audit of one PrivGNN query (noisy argmax of a teacher posterior) against the accountant's per-query λ, with
    the noise on posteriors (the paper) and on log-softmax (the authors' code)."""

    def cell(c):
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
        lam=[float(v) for v in cfg.query_lambdas],
        noise_on=["posterior", "log_softmax"],
        classes=[cfg.query_classes],
        trials=[cfg.query_trials],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    return run_grid(store, "query", cells, cell, desc="PrivGNN query audits", force=force)


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
    (ε = ∞) and the broken controls (noise × ``central_broken_factor`` under the claim ``central_broken_epsilon``)."""
    cache: dict[int, Any] = {}

    def graph(n):
        if n not in cache:
            cache[n] = csbm(num_nodes=n, num_features=16, seed=stable_seed("audit-central-graph", cfg.seed))
        return cache[n]

    def cell(c):
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
        canaries=[cfg.central_canaries],
        graph_nodes=[cfg.central_graph_nodes],
        epochs=[cfg.central_epochs],
        alpha=[cfg.alpha],
        seed=[cfg.seed],
    )
    cells = grid(
        method=list(cfg.central_methods), epsilon=[float(e) for e in cfg.central_epsilons], noise_factor=[1.0], **base
    )
    if cfg.central_controls:
        cells += grid(method=list(cfg.central_controls), epsilon=[math.inf], noise_factor=[1.0], **base)
    if cfg.central_broken:
        cells += grid(
            method=list(cfg.central_broken),
            epsilon=[float(cfg.central_broken_epsilon)],
            noise_factor=[float(cfg.central_broken_factor)],
            **base,
        )
    return run_grid(store, "central", cells, cell, desc="central DP canary audits", force=force)


def audit_table(store: ResultStore, artifacts: tuple[str, ...] = ALL_ARTIFACTS) -> pd.DataFrame:
    """Accounted ε beside audited ε for every stored cell: ``tight`` (lower bound ≥ 0.7 × accounted) and
    ``flagged`` (lower bound above the accounted ε: the mechanism or its accounting is broken)."""
    frames = []
    for art in artifacts:
        df = store.load(art)
        if len(df):
            frames.append(df.assign(unit=df["privacy_unit"] if art == "central" else art))
    if not frames:
        return pd.DataFrame(columns=["unit", "method", "accounted", "audited_lb", "tight", "flagged"])
    df = pd.concat(frames, ignore_index=True)
    acc = df["epsilon_accounted"] if "epsilon_accounted" in df else df["epsilon"]
    acc = acc.fillna(df["epsilon"]).astype(float)
    out = pd.DataFrame(
        {
            "unit": df["unit"],
            "method": df["method"],
            "claimed": df["epsilon"].astype(float),
            "accounted": acc,
            "delta": df["delta"].astype(float),
            "audited_lb": df["value"].astype(float),
        }
    )
    if "epsilon_point" in df:
        out["audited_point"] = df["epsilon_point"].astype(float)
    out["broken"] = df["broken"].fillna(False).astype(bool) if "broken" in df else False
    out["ratio"] = out["audited_lb"] / out["accounted"]
    out["tight"] = out["ratio"] >= 0.7
    out["flagged"] = out["audited_lb"] > out["accounted"]
    return out.sort_values(["unit", "method", "claimed"]).reset_index(drop=True)


def audit_side_by_side(store: ResultStore, artifacts: tuple[str, ...] = ALL_ARTIFACTS) -> pd.DataFrame:
    """One row per method: the claim (accounted ε) beside the audit, summarised — what the notebooks show last.
    ``ratio`` = audited / accounted (0 for the non-private control, whose accounted ε is ∞)."""
    t = audit_table(store, artifacts)
    if t.empty:
        return t
    return (
        t.groupby(["unit", "method"], sort=False)
        .agg(
            cells=("claimed", "size"),
            max_audited=("audited_lb", "max"),
            max_ratio=("ratio", "max"),
            min_ratio=("ratio", "min"),
            tight_cells=("tight", "sum"),
            flagged_cells=("flagged", "sum"),
            broken=("broken", "any"),
        )
        .reset_index()
    )


def plot_accounted_vs_audited(store: ResultStore, artifacts: tuple[str, ...] = ALL_ARTIFACTS):
    """The figure none of the papers has: accounted ε (x) against the audited lower bound (y) per privacy unit,
    the diagonal y = x marking where a correct mechanism's audit must stay below."""
    t = audit_table(store, artifacts)
    units = [u for u in _UNIT_ORDER if (t["unit"] == u).any()] or list(artifacts[:1])
    fig, axes = plotting.plt.subplots(1, len(units), figsize=(3.8 * len(units), 3.8), squeeze=False)
    for ax, unit in zip(axes[0], units):
        sub = t[(t["unit"] == unit) & np.isfinite(t["accounted"])]
        ctrl = t[(t["unit"] == unit) & ~np.isfinite(t["accounted"])]
        top = max([1.0] + list(sub["accounted"]))
        ax.plot([0, top], [0, top], color="#7f7f7f", ls="--", lw=1, label="audited = accounted")
        for method, g in sub.groupby("method", sort=False):
            g = g.sort_values("accounted")
            if g["broken"].any():  # a broken variant under audit: red crosses, flagged when above the diagonal
                ax.plot(
                    g["accounted"],
                    g["audited_lb"],
                    marker="x",
                    ms=7,
                    mew=2,
                    ls="none",
                    color="#d62728",
                    label=f"{method}" + (" FLAGGED" if g["flagged"].any() else ""),
                )
            else:
                ax.plot(g["accounted"], g["audited_lb"], marker="o", ms=4, lw=1.2, label=str(method))
        for _, r in ctrl.iterrows():
            ax.axhline(r["audited_lb"], color="#d62728", ls=":", lw=1, label=f"{r['method']} (ε = ∞)")
        ax.set_title(UNITS.get(unit, unit), fontsize=9)
        ax.set_xlabel("accounted ε (upper bound)")
        ax.set_ylabel("audited ε (lower bound, 95%)")
        ax.legend(fontsize=6, loc="best")
    fig.suptitle("Accounted vs audited ε (a correct mechanism stays on or below the diagonal)", fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03: PrivGNN's membership-inference attacks (Fig. 4)
# ---------------------------------------------------------------------------------------------------------------
def _prepared():
    """A loader of PrivGNN datasets that prepares each once (per call of a run function)."""
    cache: dict[str, Any] = {}

    def load(name):
        if name not in cache:
            cache[name] = P.prepare(name)
        return cache[name]

    return load


def _mia_ledgers(c: dict[str, Any], info) -> dict[str, dict[str, Any]]:
    """Per Fig. 4 target (``b1``, ``privgnn``, ``privgnn_code``), the ledger of the cell's student settings."""
    led_p = P.privacy_ledger(
        "privgnn",
        lam=c["lam"],
        queries=c["queries"],
        gamma=info.gamma,
        delta=info.delta_reproducing,
        num_classes=info.classes,
        delta_sound=info.delta_stated,
        standardized=c["dataset"] in P.STANDARDIZED,
    )
    led_p = {k2: v for k2, v in led_p.items() if k2 != "event"}
    return {"b1": P.privacy_ledger("b1"), "privgnn": led_p, "privgnn_code": P.log_softmax_ledger(led_p)}


def _mia_row(r: dict[str, Any], ledgers: dict[str, dict[str, Any]], *, metric: str, k: int) -> dict[str, Any]:
    """A stored row from one attack row of :mod:`dpgnn.audit.mia` (``setting`` = the attack)."""
    private = r["method"] != "b1"
    led = ledgers[r["method"]]
    diag = {k2: v for k2, v in r.items() if k2 not in ("attack", "method", "value")}
    return {
        "method": r["method"],
        "setting": r["attack"],
        "metric": metric,
        "value": r["value"],
        "level": "node" if private else "none",
        "epsilon": led["epsilon"] if private else math.inf,
        "delta": led["delta"] if private else 0.0,
        "k_used": k,
        "ledger": led,
        **diag,
    }


def run_mia(cfg: AuditProfile, store: ResultStore, *, device: str = "auto", force: bool = False) -> pd.DataFrame:
    """Attack-1 / Attack-2 AUROC against B1 and the PrivGNN student (λ = ``mia_lambda``), per dataset and run;
    with ``"log_softmax"`` in ``mia_noise`` also against the authors'-code student (``privgnn_code``). Rows carry
    the targets' diagnostics (:func:`dpgnn.audit.mia.run_attacks`: pseudo-label accuracy, member / non-member
    confidence, test accuracy)."""
    load = _prepared()

    names = [n for n in cfg.mia_datasets if load_or_skip(store, n, load, artifact="fig4") is not None]

    def cell(c):
        info = P.DATASETS[c["dataset"]]
        k = c["k"] or info.k
        published = c.get("protocol") == "rebmigraph"
        if published:  # every target, both noise placements, one set of teachers
            opts = {"noise_on": tuple(c["noise_on"]), "protocol": "rebmigraph"}
        elif c.get("noise_on") == "log_softmax":
            opts = {"noise_on": "log_softmax", "targets": ("privgnn",)}
        else:
            opts = {}
        rows = mia.run_attacks(
            load(c["dataset"]),
            queries=c["queries"],
            k=k,
            gamma=info.gamma,
            lam=c["lam"],
            seed=stable_seed(c["seed"], c["dataset"], c["run"]),
            teacher_epochs=c["teacher_epochs"],
            student_epochs=c["student_epochs"],
            shadow_epochs=c["student_epochs"],
            device=device,
            **opts,
        )
        metric = "auroc_published" if published else "auroc"
        return [_mia_row(r, _mia_ledgers(c, info), metric=metric, k=k) for r in rows]

    base = dict(
        dataset=names,
        run=list(range(cfg.mia_runs)),
        queries=[cfg.mia_queries],
        k=[cfg.mia_k],
        lam=[cfg.mia_lambda],
        teacher_epochs=[cfg.mia_teacher_epochs],
        student_epochs=[cfg.mia_student_epochs],
        seed=[cfg.seed],
    )
    noise = list(cfg.mia_noise)
    if not noise or set(noise) - set(_MIA_NOISE):
        raise ValueError(f"mia_noise must be a non-empty subset of {_MIA_NOISE}, got {noise!r}")
    # "posterior": the paper's student and B1; "log_softmax": the authors'-code student (rows ``privgnn_code``), in
    # cells of their own (the paper cells keep their config hashes)
    # "rebmigraph": the published attack protocol (metric ``auroc_published``), one cell per (dataset, run) with
    # every target and noise placement
    published = [n for n in cfg.mia_published_datasets if n in names]
    cells = (
        (
            (grid(**base) if "posterior" in noise else [])
            + (grid(**base, noise_on=["log_softmax"]) if "log_softmax" in noise else [])
            + (grid(**{**base, "dataset": published}, noise_on=[noise], protocol=["rebmigraph"]) if published else [])
        )
        if names
        else []
    )
    if not cells:
        return store.load("fig4")
    return run_grid(store, "fig4", cells, cell, desc="PrivGNN MI attacks", force=force)


def mia_side_by_side(profile: str) -> pd.DataFrame:
    """Fig. 4 as the paper reports it (Amazon) beside ours."""
    return paper_vs_ours(PAPER, "fig4", profile)


def mia_protocols(store: ResultStore) -> pd.DataFrame:
    """Per dataset, attack and target: the paper's value, ours with the usual score AUROC, and ours with the
    published attack protocol (``auroc_published``: the batched hard-label AUROC, :mod:`dpgnn.audit.mia`) beside
    that attack's score AUROC (means over runs, with the run counts)."""
    df = store.load("fig4")
    keys = ["dataset", "method", "setting"]
    if df.empty:
        return pd.DataFrame(
            columns=keys
            + ["paper", "paper ±", "score AUROC", "runs", "published protocol", "its score AUROC", "published runs"]
        )
    score = df[df["metric"] == "auroc"].groupby(keys)["value"].agg(["mean", "size"])
    score.columns = ["score AUROC", "runs"]
    pub = df[df["metric"] == "auroc_published"]
    cols = [score]
    if len(pub):
        g = pub.groupby(keys)
        cols.append(
            pd.DataFrame(
                {
                    "published protocol": g["value"].mean(),
                    "its score AUROC": g["score_auroc"].mean(),
                    "published runs": g.size(),
                }
            )
        )
    out = pd.concat(cols, axis=1).reset_index()
    ref = load_reference(PAPER, "fig4")[keys + ["value", "tolerance"]].rename(
        columns={"value": "paper", "tolerance": "paper ±"}
    )
    return ref.merge(out, on=keys, how="right")[keys + ["paper", "paper ±"] + [c for c in out if c not in keys]].round(
        3
    )


#: one colour per Fig. 4 target in every MIA figure
_MIA_COLOURS = {"b1": "#1f77b4", "privgnn": "#ff7f0e", "privgnn_code": "#9467bd"}


def plot_mia(store: ResultStore):
    """Fig. 4: AUROC of Attack-1 and Attack-2 per dataset for B1, the paper's student and (where run) the
    authors'-code student (mean over runs; 0.5 = random guess), the paper's values as ◇ on their bars with the
    report's agreement band (the text's bounds, for Attack-1)."""
    df = store.load("fig4")
    df = df[df["metric"] == "auroc"] if len(df) else df
    ref = load_reference(PAPER, "fig4").set_index(["dataset", "method", "setting"])
    fig, axes = plotting.plt.subplots(1, 2, figsize=(8, 3.4), squeeze=False, sharey=True)
    for ax, attack in zip(axes[0], ("attack1", "attack2")):
        sub = df[df["setting"] == attack] if len(df) else df
        if not len(sub):
            continue
        m = sub.groupby(["dataset", "method"])["value"].mean().unstack("method")
        methods = [c for c in _MIA_COLOURS if c in m.columns]
        m[methods].plot.bar(ax=ax, rot=0, color=[_MIA_COLOURS[c] for c in methods], legend=False)
        for bars, method in zip(list(ax.containers), methods):  # the bar containers, one per target
            for bar, dataset in zip(bars, m.index):
                if (dataset, method, attack) in ref.index:
                    r = ref.loc[(dataset, method, attack)]
                    ax.errorbar(
                        bar.get_x() + bar.get_width() / 2,
                        r["value"],
                        yerr=r["tolerance"],
                        fmt="D",
                        color=plotting.PALETTE["paper"],
                        capsize=3,
                        zorder=3,
                        label="paper (± agreement band)",
                    )
        ax.set_xlabel("")
    handles, labels = axes[0][0].get_legend_handles_labels()
    keep = dict(zip(labels, handles))  # one legend entry per label (the paper's marker is drawn per bar)
    if keep:
        axes[0][0].legend(keep.values(), keep.keys(), fontsize=7, loc="upper right")
    return _finish_mia_figure(
        fig, axes, "per dataset", "PrivGNN Fig. 4: membership inference (λ = 1; ◇ paper)", legend=None
    )


def plot_mia_protocols(store: ResultStore, dataset: str = "amazon"):
    """Fig. 4 on ``dataset`` under both attack protocols: per attack, each target's AUROC with the usual score
    AUROC and with the published batched hard-label one (:func:`mia_protocols`), the paper's values as ◇ with the
    report's agreement band (the text's bounds, for Attack-1)."""
    tab = mia_protocols(store)
    tab = tab[tab["dataset"] == dataset]
    fig, axes = plotting.plt.subplots(1, 2, figsize=(8.5, 3.4), squeeze=False, sharey=True)
    for ax, attack in zip(axes[0], ("attack1", "attack2")):
        sub = tab[tab["setting"] == attack].set_index("method")
        sub = sub.reindex([m for m in ("b1", "privgnn", "privgnn_code") if m in sub.index])
        cols = [c for c in ("score AUROC", "published protocol") if c in sub]
        if len(sub) and cols:
            sub[cols].plot.bar(ax=ax, rot=0, color=["#1f77b4", "#2ca02c"][: len(cols)], legend=attack == "attack1")
            xs = range(len(sub))
            ax.errorbar(
                xs,
                sub["paper"],
                yerr=sub["paper ±"],
                fmt="D",
                color="black",
                capsize=3,
                zorder=3,
                label="paper (± agreement band)",
            )
        ax.set_xlabel("")
    return _finish_mia_figure(
        fig,
        axes,
        dataset,
        "PrivGNN Fig. 4 under two attack protocols (◇ paper)",
        legend=dict(fontsize=7, loc="upper right"),
    )


def _finish_mia_figure(fig, axes, dataset: str, title: str, *, legend: dict[str, Any] | None):
    """Per attack panel: the random-guess line, AUROC axis and title; the legend (``legend``: its options, None:
    the caller drew it) on the first panel."""
    for ax, attack in zip(axes[0], ("attack1", "attack2")):
        ax.axhline(0.5, color="#7f7f7f", ls="--", lw=1)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"MI {attack.replace('attack', 'Attack-')} ({dataset})", fontsize=9)
        ax.set_ylabel("AUROC")
    if legend is not None and axes[0][0].get_legend_handles_labels()[0]:
        axes[0][0].legend(**legend)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03: how far the attacker's open choices move Fig. 4 (shadow designs, fig4_shadows)
# ---------------------------------------------------------------------------------------------------------------
def run_mia_shadows(
    cfg: AuditProfile, store: ResultStore, *, device: str = "auto", force: bool = False
) -> pd.DataFrame:
    """Artifact ``fig4_shadows``: per (dataset, run) of ``mia_shadow_datasets`` the Fig. 4 targets (B1 and both
    students, the settings of :func:`run_mia`) trained once and attacked with every shadow design of
    ``mia_shadow_sizes`` × ``mia_shadow_epochs`` × ``mia_shadow_protocols``, plus the oracle and confidence
    references (:func:`dpgnn.audit.mia.shadow_sensitivity`). Rows as in ``fig4`` (``metric`` ``auroc`` or
    ``auroc_published``) with ``design``, ``shadow``, ``shadow_epochs`` and ``protocol``."""
    load = _prepared()

    names = [n for n in cfg.mia_shadow_datasets if load_or_skip(store, n, load, artifact="fig4_shadows") is not None]

    def cell(c):
        info = P.DATASETS[c["dataset"]]
        k = c["k"] or info.k
        rows = mia.shadow_sensitivity(
            load(c["dataset"]),
            queries=c["queries"],
            k=k,
            gamma=info.gamma,
            lam=c["lam"],
            seed=stable_seed(c["seed"], c["dataset"], c["run"]),
            teacher_epochs=c["teacher_epochs"],
            student_epochs=c["student_epochs"],
            shadow_sizes=tuple(c["sizes"]),
            shadow_epochs=tuple(c["shadow_epochs"]),
            protocols=tuple(c["protocols"]),
            noise_on=tuple(c["noise_on"]),
            device=device,
        )
        ledgers = _mia_ledgers(c, info)
        return [
            _mia_row(r, ledgers, metric="auroc" if r["protocol"] == "score" else "auroc_published", k=k) for r in rows
        ]

    noise = list(cfg.mia_noise)
    if not noise or set(noise) - set(_MIA_NOISE):
        raise ValueError(f"mia_noise must be a non-empty subset of {_MIA_NOISE}, got {noise!r}")
    cells = (
        grid(
            dataset=names,
            run=list(range(cfg.mia_shadow_runs)),
            queries=[cfg.mia_queries],
            k=[cfg.mia_k],
            lam=[cfg.mia_lambda],
            teacher_epochs=[cfg.mia_teacher_epochs],
            student_epochs=[cfg.mia_student_epochs],
            seed=[cfg.seed],
            noise_on=[noise],
            sizes=[list(cfg.mia_shadow_sizes)],
            shadow_epochs=[list(cfg.mia_shadow_epochs)],
            protocols=[list(cfg.mia_shadow_protocols)],
        )
        if names
        else []
    )
    if not cells:
        return store.load("fig4_shadows")
    return run_grid(store, "fig4_shadows", cells, cell, desc="PrivGNN MI shadow designs", force=force)


_SHADOW_COLUMNS = [
    "dataset",
    "method",
    "setting",
    "metric",
    "paper",
    "paper ±",
    "default",
    "shadow min",
    "shadow max",
    "min design",
    "max design",
    "oracle",
    "confidence",
    "its score min",
    "its score max",
    "runs",
    "paper reached",
]


def mia_shadow_range(store: ResultStore) -> pd.DataFrame:
    """Per Fig. 4 cell (dataset, target, attack) and metric: the paper's value and band, our default design
    (quarter-size shadow trained as long as the target), the lowest and highest AUROC over every shadow design (each
    a mean over runs; which designs), the oracle attack and the confidence threshold (no shadow), for the published
    metric the range of the same attack models' score AUROC (``its score min`` / ``max``), the run count, and
    ``paper reached``: whether the paper's band meets the designs' range [min, max] of the row's metric."""
    df = store.load("fig4_shadows")
    if df.empty:
        return pd.DataFrame(columns=_SHADOW_COLUMNS)
    keys = ["dataset", "method", "setting", "metric"]
    sh = df[df["design"] == "shadow"].copy()
    sh["design name"] = sh["shadow"].astype(str) + "/" + sh["shadow_epochs"].astype(int).astype(str) + " ep"
    if "score_auroc" not in sh:
        sh["score_auroc"] = np.nan
    sh["default"] = (sh["shadow"] == "quarter") & (sh["shadow_epochs"] == sh["student_epochs"])
    means = sh.groupby(keys + ["design name", "default"])[["value", "score_auroc"]].mean().reset_index()
    out = []
    for key, g in means.groupby(keys):
        lo, hi = g.loc[g["value"].idxmin()], g.loc[g["value"].idxmax()]
        default = g[g["default"]]
        sel = df[(df[keys] == pd.Series(key, index=keys)).all(axis=1)]
        ref = {d: sel.loc[sel["design"] == d, "value"].mean() for d in ("oracle", "confidence")}
        out.append(
            dict(
                zip(keys, key),
                default=default["value"].mean() if len(default) else np.nan,
                **{
                    "shadow min": lo["value"],
                    "shadow max": hi["value"],
                    "min design": lo["design name"],
                    "max design": hi["design name"],
                    "oracle": ref["oracle"],
                    "confidence": ref["confidence"],
                    "its score min": g["score_auroc"].min(),
                    "its score max": g["score_auroc"].max(),
                    "runs": int(sel["run"].nunique()),
                },
            )
        )
    tab = pd.DataFrame(out)
    ref = load_reference(PAPER, "fig4")[["dataset", "method", "setting", "value", "tolerance"]].rename(
        columns={"value": "paper", "tolerance": "paper ±"}
    )
    tab = ref.merge(tab, on=["dataset", "method", "setting"], how="right")
    band_lo, band_hi = tab["paper"] - tab["paper ±"], tab["paper"] + tab["paper ±"]
    tab["paper reached"] = (band_lo <= tab["shadow max"]) & (band_hi >= tab["shadow min"]) & tab["paper"].notna()
    return tab[_SHADOW_COLUMNS].round(3).reset_index(drop=True)


def plot_mia_shadows(store: ResultStore, dataset: str = "amazon"):
    """Per attack, each target's AUROC over the shadow designs (bar from the lowest to the highest design mean, ●
    our default design, ▲ the oracle attack) under both metrics, the paper's value as ◇ with its band."""
    tab = mia_shadow_range(store)
    tab = tab[tab["dataset"] == dataset]
    fig, axes = plotting.plt.subplots(1, 2, figsize=(8.5, 3.6), squeeze=False, sharey=True)
    colours = {"auroc": "#1f77b4", "auroc_published": "#2ca02c"}
    labels = {"auroc": "score AUROC", "auroc_published": "published metric"}
    for ax, attack in zip(axes[0], ("attack1", "attack2")):
        sub = tab[tab["setting"] == attack]
        methods = [m for m in ("b1", "privgnn", "privgnn_code") if (sub["method"] == m).any()]
        for i, method in enumerate(methods):
            rows = sub[sub["method"] == method]
            for j, (metric, colour) in enumerate(colours.items()):
                r = rows[rows["metric"] == metric]
                if not len(r):
                    continue
                r = r.iloc[0]
                x = i + (j - 0.5) * 0.25
                first = i == 0 and attack == "attack1"
                ax.vlines(
                    x,
                    r["shadow min"],
                    r["shadow max"],
                    color=colour,
                    lw=6,
                    alpha=0.5,
                    label=f"{labels[metric]}: shadow designs" if first else None,
                )
                ax.plot(x, r["default"], "o", color=colour, ms=5)
                ax.plot(
                    x,
                    r["oracle"],
                    "^",
                    color=colour,
                    ms=6,
                    mfc="none",
                    label=f"{labels[metric]}: oracle" if first else None,
                )
            paper = rows.dropna(subset=["paper"])
            if len(paper):
                ax.errorbar(
                    i,
                    paper["paper"].iloc[0],
                    yerr=paper["paper ±"].iloc[0],
                    fmt="D",
                    color="black",
                    capsize=3,
                    label="paper (± band)" if i == 0 and attack == "attack1" else None,
                )
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods)
    return _finish_mia_figure(
        fig,
        axes,
        dataset,
        "Fig. 4 over the attacker's open choices (shadow size × training length; ● default)",
        legend=dict(fontsize=6, loc="lower left"),
    )


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
    )
)
