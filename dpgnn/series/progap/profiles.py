"""The ProGAP series' constants and typed profiles: the paper's datasets and node-level settings, the profiles'
grids, Table 2's methods and budgets, and the ``setting`` label of a cell."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpgnn.fidelity import FIDELITIES, Fidelity, parse
from dpgnn.profiles import Profile

__all__ = [
    "PAPER",
    "PAPER_DATASETS",
    "PAPER_NODE",
    "Fig4",
    "Convergence",
    "Calibration",
    "ProGAPProfile",
    "PROFILES",
    "TABLE2_METHODS",
    "TABLE2_EPS",
    "ORDER",
    "FIDELITIES",
    "FIDELITY_METHODS",
    "setting",
]

PAPER = "progap"

#: the paper's datasets -> (registry name, variant)
PAPER_DATASETS = {
    "facebook": ("facebook", "progap"),
    "reddit": ("reddit", "progap"),
    "amazon": ("amazon", "progap"),
    "fb-100": ("fb100", "progap"),
    "wenet": ("wenet", None),
}
#: docs/papers/progap.md#node-level-privacy per-dataset node-level settings (batch size B, degree bound D)
PAPER_NODE = {
    "facebook": (256, 100),
    "reddit": (2048, 400),
    "amazon": (4096, 50),
    "fb-100": (4096, 100),
    "wenet": (1024, 400),
}

_EDGE_EPS = [0.25, 0.5, 1.0, 2.0, 4.0]
_NODE_EPS = [2.0, 4.0, 8.0, 16.0, 32.0]


@dataclass(frozen=True)
class Fig4:
    """The depth sweep of Fig. 4 (accuracy against the number of stages)."""

    depths: list[int]
    """ProGAP depths (stages)"""
    edge_budgets: list[float]
    """edge-level ε of its panels"""
    node_budgets: list[float]
    """node-level ε of its panels"""


@dataclass(frozen=True)
class Convergence:
    """The convergence curves of notebook 04 (accuracy per epoch)."""

    epochs_edge: int
    """epochs of the edge-level run"""
    epochs_node: int
    """epochs of the node-level run"""


@dataclass(frozen=True)
class Calibration:
    """The privacy calibration tables of notebook 01 (pure computation)."""

    depths: list[int]
    """depths of the edge-level calibration"""
    node: list[list[int]]
    """node-level [epochs, depth] pairs"""


@dataclass(frozen=True)
class ProGAPProfile(Profile):
    """The settings of the ProGAP notebooks and grids (``dpgnn.profiles.settings("progap", profile)``)."""

    datasets: list[str]
    """the paper's datasets (recorded not run where unavailable)"""
    standins: dict[str, int]
    """stand-in dataset -> its minimum class size (shown beside the paper, never compared)"""
    node_settings: dict[str, list[int]]
    """stand-in dataset -> node-level [batch size B, degree bound D] (the paper's datasets: :data:`PAPER_NODE`)"""
    runs: int
    """runs per Table 2 cell"""
    sweep_runs: int
    """runs per Fig. 2 / Fig. 4 cell"""
    seed: int
    """base seed of every cell"""
    lrs: list[float]
    """learning rates searched by validation"""
    base_layers: list[int]
    """encoder/head layers searched by validation"""
    depths: list[int]
    """ProGAP depths (stages) searched by validation"""
    gap_hops: list[int]
    """GAP's aggregation hops searched by validation"""
    sage_layers: list[int]
    """GraphSAGE layers searched by validation"""
    epochs_edge: int
    """training epochs at edge level (and non-private)"""
    epochs_node: list[int]
    """training epochs at node level, searched by validation"""
    edge_epsilons: list[float]
    """edge-level ε of Fig. 2"""
    node_epsilons: list[float]
    """node-level ε of Fig. 2"""
    fig4: Fig4
    """the depth sweep of Fig. 4"""
    convergence: Convergence
    """the convergence curves of notebook 04"""
    calibration: Calibration
    """the calibration tables of notebook 01"""
    fidelity: str
    """Table 2's ProGAP edge cells: ``paper`` or ``authors_code`` (the official calibration), :data:`FIDELITIES`"""


PROFILES: dict[str, ProGAPProfile] = {
    "smoke": ProGAPProfile(
        datasets=list(PAPER_DATASETS),  # the paper's (not_run where unavailable)
        standins={"fb100-amherst41": 100},  # stand-in name -> min class size
        node_settings={"fb100-amherst41": [128, 50]},  # stand-in -> [batch size, degree bound]
        runs=2,
        sweep_runs=1,
        seed=12345,  # runs: Table 2; sweep_runs: Fig. 2 / Fig. 4
        lrs=[0.01],
        base_layers=[1],
        depths=[2],
        gap_hops=[2],
        sage_layers=[2],
        epochs_edge=30,
        epochs_node=[5],
        edge_epsilons=[0.5, 1.0, 4.0],
        node_epsilons=[2.0, 8.0, 32.0],
        fig4=Fig4(depths=[1, 3], edge_budgets=[0.25, 1.0, 4.0], node_budgets=[2.0, 8.0, 32.0]),
        convergence=Convergence(epochs_edge=20, epochs_node=5),
        calibration=Calibration(depths=[1, 2, 3, 4, 5], node=[[5, 1], [10, 3]]),
        fidelity="paper",  # Table 2's ProGAP edge cells: "paper" or "authors_code" (the official calibration)
    ),
    "test": ProGAPProfile(
        datasets=["facebook"],
        standins={"fb100-caltech36": 50},
        node_settings={"fb100-caltech36": [64, 20]},
        runs=1,
        sweep_runs=1,
        seed=0,
        lrs=[0.01],
        base_layers=[1],
        depths=[1],
        gap_hops=[1],
        sage_layers=[1],
        epochs_edge=3,
        epochs_node=[1],
        edge_epsilons=[1.0],
        node_epsilons=[8.0],
        fig4=Fig4(depths=[1, 2], edge_budgets=[1.0], node_budgets=[8.0]),
        convergence=Convergence(epochs_edge=2, epochs_node=1),
        calibration=Calibration(depths=[1], node=[]),
        fidelity="paper",
    ),
    "paper": ProGAPProfile(
        datasets=list(PAPER_DATASETS),
        standins={"fb100-wisconsin87": 1000, "fb100-present": 10_000},
        node_settings={"fb100-wisconsin87": [256, 100], "fb100-present": [4096, 100]},
        runs=10,
        sweep_runs=10,
        seed=12345,
        lrs=[0.01, 0.05],
        base_layers=[1, 2],
        depths=[1, 2, 3, 4, 5],
        gap_hops=[1, 2, 3, 4, 5],
        sage_layers=[1, 2, 3, 4, 5],
        epochs_edge=100,
        epochs_node=[5, 10],
        edge_epsilons=_EDGE_EPS,
        node_epsilons=_NODE_EPS,
        fig4=Fig4(depths=[1, 2, 3, 4, 5], edge_budgets=[0.25, 1.0, 4.0], node_budgets=[2.0, 8.0, 32.0]),
        convergence=Convergence(epochs_edge=100, epochs_node=10),
        calibration=Calibration(depths=[1, 2, 3, 4, 5], node=[[e, k] for e in (5, 10) for k in (1, 2, 3)]),
        fidelity="paper",
    ),
}

TABLE2_METHODS = {
    "none": ["graphsage", "gap", "progap"],
    "edge": ["mlp", "edgerand", "gap", "progap"],
    "node": ["dp-mlp", "dp-gnn", "gap", "progap"],
}
TABLE2_EPS = {"none": math.inf, "edge": 1.0, "node": 8.0}
#: the series' methods in display order (each registered in dpgnn.methods under ("progap", method, level))
ORDER = ["mlp", "dp-mlp", "graphsage", "edgerand", "dp-gnn", "gap", "progap", "progap-layerwise"]


# FIDELITIES (:data:`dpgnn.fidelity.FIDELITIES`, imported above): the calibrations of the ProGAP edge cells,
# ``paper`` (exact Gaussian composition, our default) or ``authors_code`` (the official code's autodp RDP composition)
#: the methods and level a non-default ``fidelity`` reaches (elsewhere both fidelities calibrate the same noise)
FIDELITY_METHODS = {("progap", "edge")}


def setting(level: str, eps: float, fidelity: Fidelity | str = Fidelity.PAPER) -> str:
    """The reference ``setting`` of a cell, e.g. ``"edge eps=1"``; a non-default fidelity is a setting of its own
    (``"edge eps=1 [authors_code]"``), so its runs are selected and reported apart from the paper's calibration."""
    base = f"{level} eps={'inf' if math.isinf(eps) else f'{eps:g}'}"
    fidelity = parse(fidelity, "fidelity")
    return base if fidelity is Fidelity.PAPER else f"{base} [{fidelity}]"
