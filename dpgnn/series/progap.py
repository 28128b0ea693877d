"""ProGAP series (WSDM 2024): σ calibration tables, Table 2, Fig. 2 (accuracy vs ε), Fig. 3 (convergence),
Fig. 4 (accuracy vs depth) and the progressive vs layer-wise comparison.

None of the paper's datasets (Facebook UIUC, Reddit, ogbn-products, FB-100, WeNet) is mirrored offline: they run
where their files exist and are otherwise recorded as ``not_run``. Stand-ins are Facebook100 universities with
the same preprocessing (target year, one-hot features, classes filtered by size, 75/10/15 split), reported under
their own names (``fb100-…``), never the paper's.

Hyper-parameter selection follows docs/papers/progap.md#hyper-parameter-search-and-reporting: every configuration of the
profile's grid runs ``runs`` times, and for each (dataset, method, level, ε) the configuration with the highest MEAN
validation accuracy is reported with its test accuracy (%). All runs are stored in ``<artifact>_runs``; the selected
rows in ``<artifact>``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpgnn import methods, plotting
from dpgnn.data import DatasetUnavailable, dataset_available, load_dataset
from dpgnn.methods import progap as pg
from dpgnn.privacy import progap as privacy_progap
from dpgnn.profiles import Profile
from dpgnn.reference import load_reference
from dpgnn.report import bootstrap_ci_halfwidth, paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series import Series, common, load_or_skip, register
from dpgnn.series.common import fmt
from dpgnn.sweep import CellSpec, check_train, run_grid
from dpgnn.utils import config_hash, resolve_device

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


#: calibration fidelities of the ProGAP edge cells (:data:`dpgnn.privacy.progap.FIDELITIES`): ``paper`` (exact
#: Gaussian composition, our default) or ``authors_code`` (the official code's autodp RDP composition)
FIDELITIES = privacy_progap.FIDELITIES
#: the methods and level a non-default ``fidelity`` reaches (elsewhere both fidelities calibrate the same noise)
FIDELITY_METHODS = {("progap", "edge")}


def setting(level: str, eps: float, fidelity: str = "paper") -> str:
    """The reference ``setting`` of a cell, e.g. ``"edge eps=1"``; a non-default fidelity is a setting of its own
    (``"edge eps=1 [authors_code]"``), so its runs are selected and reported apart from the paper's calibration."""
    base = f"{level} eps={'inf' if math.isinf(eps) else f'{eps:g}'}"
    return base if fidelity == "paper" else f"{base} [{fidelity}]"


# ---------------------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _data(name: str, min_class_size: int | None = None):
    """A dataset loaded once per process (a notebook's kernel or a Dask worker) and reused by every cell that runs
    there: a Facebook100 stand-in (``min_class_size`` given) or one of the paper's datasets."""
    if min_class_size is not None:
        return load_dataset(name, variant="progap", min_class_size=int(min_class_size))
    reg, variant = PAPER_DATASETS[name]
    if not dataset_available(reg, variant):
        raise DatasetUnavailable(
            f"{name}: the raw files of {reg!r} are not available offline (stand-ins from Facebook100 run instead)"
        )
    return load_dataset(reg, variant)


def _load(cfg: ProGAPProfile, name: str):
    size = cfg.standins[name] if name in cfg.standins else None
    return _data(name, None if size is None else int(size))


def _loader(cfg: ProGAPProfile, cache: dict[str, Any] | None = None):
    return functools.partial(_load, cfg)


def available(cfg: ProGAPProfile, store: ResultStore, artifact: str, cache: dict[str, Any] | None = None) -> list[str]:
    """Datasets of the profile that load here (paper ones first, then stand-ins); the rest recorded not_run."""
    load = _loader(cfg)
    return [n for n in _names(cfg) if load_or_skip(store, n, load, artifact=artifact) is not None]


def _available(cfg: ProGAPProfile, name: str) -> bool:
    """Cheap check (file existence) for a paper dataset; stand-ins are loaded to find out."""
    if name in cfg.standins:
        return True
    reg, variant = PAPER_DATASETS[name]
    return dataset_available(reg, variant)


def _names(cfg: ProGAPProfile) -> list[str]:
    return list(cfg.datasets) + list(cfg.standins)


def _node_settings(cfg: ProGAPProfile, name: str) -> tuple[int, int]:
    if name in cfg.node_settings:
        b, d = cfg.node_settings[name]
        return int(b), int(d)
    return PAPER_NODE[name]


# ---------------------------------------------------------------------------------------------------------------
# one run
# ---------------------------------------------------------------------------------------------------------------
#: keys of a cell that say which run it is, not how to train it (the rest is the method's config)
BOOKKEEPING = ("dataset", "method", "level", "run", "seed", "history")


def run_cell(data, cell: dict[str, Any], *, device: str = "auto") -> list[dict[str, Any]]:
    """Run one cell (dataset, method, level, epsilon, hyper-parameters, run) -> rows for val and test accuracy (%).

    The method is resolved in the registry (``dpgnn.methods.get("progap", method, level)``) and trained on the
    cell's config (every key but :data:`BOOKKEEPING`, in the vocabulary of
    :func:`dpgnn.methods.progap.method_config`); the seed is ``1000·seed + run``. Optional keys: ``edge_relation``
    (``"directed"``, the default and the paper's, or ``"undirected"``: the sound edge-level option, sensitivity √2)
    for ProGAP and GAP, ``fidelity`` (``"authors_code"``: the official code's calibration) for ProGAP; cells
    without them keep their config hash."""
    spec = methods.get(PAPER, cell["method"], cell["level"])
    return run_rows(cell, spec.run(data, _config(cell), seed=_seed(cell), device=device))


def _seed(cell: dict[str, Any]) -> int:
    return int(cell["seed"]) * 1000 + int(cell["run"])


def _config(cell: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cell.items() if k not in BOOKKEEPING}


def run_rows(cell: dict[str, Any], res: methods.RunResult) -> list[dict[str, Any]]:
    """The rows of one cell from its run (:func:`run_cell`): val and test accuracy (%), the curves with
    ``history``."""
    level, eps, e = cell["level"], float(cell["epsilon"]), int(cell["epochs"])
    led = {k: v for k, v in res.ledger.items()}
    base = {
        "level": level,
        "epsilon": led.get("epsilon"),
        "delta": led.get("delta"),
        "ledger": led,
        "setting": setting(level, eps, cell.get("fidelity", "paper")),
        "seconds": round(res.seconds, 3),
    }
    rows = [
        {**base, "metric": "val_acc", "value": 100 * res.metrics["val"]},
        {**base, "metric": "accuracy", "value": 100 * res.metrics["test"]},
    ]
    if cell.get("history"):
        for h in res.history:
            for m in ("train_acc", "val_acc"):
                rows.append(
                    {
                        **base,
                        "metric": f"curve_{m}",
                        "value": 100 * h[m],
                        "stage": h["stage"],
                        "epoch": h["epoch"],
                        "epoch_total": h["stage"] * e + h["epoch"],
                    }
                )
    return rows


def _method_cells(
    cfg: ProGAPProfile,
    name: str,
    method: str,
    level: str,
    eps: float,
    depths=None,
    runs: int | None = None,
    fidelity: str = "paper",
) -> list[dict]:
    epochs = cfg.epochs_node if level == "node" else [cfg.epochs_edge]
    b, d = _node_settings(cfg, name)
    if method in ("mlp", "dp-mlp"):
        depth_grid, layers = [0], [2]
    elif method == "gap":
        depth_grid, layers = depths or cfg.gap_hops, [1]
    elif method in ("graphsage", "edgerand"):
        depth_grid, layers = cfg.sage_layers, [2]
    elif method == "dp-gnn":  # one message-passing layer by construction; 2-layer base MLP as the GAP repo
        depth_grid, layers = [1], [2]
    else:
        depth_grid, layers = depths or cfg.depths, cfg.base_layers
    if method == "dp-mlp":
        epochs = cfg.epochs_node
    cells = []
    for depth in depth_grid:
        for bl_ in layers:
            for lr in cfg.lrs:
                for ep in epochs:
                    for run in range(cfg.runs if runs is None else runs):
                        cell = {
                            "dataset": name,
                            "method": method,
                            "level": level,
                            "epsilon": float(eps),
                            "depth": int(depth),
                            "base_layers": int(bl_),
                            "lr": float(lr),
                            "epochs": int(ep),
                            "run": run,
                            "seed": int(cfg.seed),
                        }
                        if level == "node":
                            cell.update(batch_size=b, max_degree=d)
                        if fidelity != "paper" and (method, level) in FIDELITY_METHODS:
                            cell["fidelity"] = fidelity  # only then: paper cells keep their config hash
                        cells.append(cell)
    return cells


#: Table 2, Fig. 2 and Fig. 4 share cells (ProGAP/GAP at edge ε=1 and node ε=8 are Table 2 cells and Fig. 2
#: points; Fig. 4's (budget, K) runs are Fig. 2's): a cell stored under one of these is copied, not trained again.
SHARED_RUNS = ("table2_runs", "fig2_runs", "fig4_runs")


def cell_run(cfg: ProGAPProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One cell of any ProGAP grid (:func:`run_cell` on the dataset loaded once per process)."""
    return run_cell(_load(cfg, cell["dataset"]), cell, device=device)


def _sibling_key(cell: dict[str, Any]) -> str:
    """The cells of one configuration that differ only in their run index share this key."""
    return config_hash({k: v for k, v in cell.items() if k != "run"})


class RepeatsRunner:
    """The cell function :func:`_run` gives :func:`dpgnn.sweep.run_grid`: :func:`cell_run`, except that a cell
    whose method trains runs together (its registered ``run`` has a ``repeats``: ProGAP, its layer-wise ablation,
    GAP) trains, in one batched call, its own run and every other run of its configuration among ``todo`` (the
    cells the grid still has to compute) that has not run yet. The siblings' rows are kept until run_grid asks for
    them (it asks in grid order, where a configuration's runs follow each other), so a cell's rows are its own
    run's whichever call computed them (each equal to its one-at-a-time run up to float rounding); the first
    cell of a batch carries the batch's wall time (``cell_seconds``), the others almost none."""

    def __init__(self, cfg: ProGAPProfile, todo: list[dict[str, Any]], device: str = "auto") -> None:
        self.cfg, self.device = cfg, device
        self.pending: dict[str, dict[str, dict[str, Any]]] = {}  # sibling key -> {config hash: cell}
        for c in todo:
            self.pending.setdefault(_sibling_key(c), {})[config_hash(c)] = c
        self.ready: dict[str, list[dict[str, Any]]] = {}

    def __call__(self, cell: dict[str, Any]) -> list[dict[str, Any]]:
        h = config_hash(cell)
        if h in self.ready:
            return self.ready.pop(h)
        group = self.pending.get(_sibling_key(cell), {})
        group.pop(h, None)
        siblings = [cell, *group.values()]
        group.clear()
        rows = batch_run(self.cfg, siblings, self.device)
        for c, r in zip(siblings[1:], rows[1:]):
            self.ready[config_hash(c)] = r
        return rows[0]


def batch_run(cfg: ProGAPProfile, cells: list[dict[str, Any]], device: str = "auto") -> list[list[dict[str, Any]]]:
    """The rows of each of ``cells``, runs of one configuration (one :func:`_sibling_key`): trained in one batched
    call when the method has a ``repeats`` (ProGAP, its layer-wise ablation, GAP), else one :func:`cell_run` each.
    What the engine computes as one task and :class:`RepeatsRunner` as one batch."""
    first = cells[0]
    repeats = getattr(methods.get(PAPER, first["method"], first["level"]).run, "repeats", None)
    if repeats is None or len(cells) == 1:
        return [cell_run(cfg, c, device) for c in cells]
    results = repeats(_load(cfg, first["dataset"]), _config(first), seeds=[_seed(c) for c in cells], device=device)
    return [run_rows(c, res) for c, res in zip(cells, results)]


def _run(
    cfg: ProGAPProfile,
    store: ResultStore,
    artifact: str,
    cells: list[dict],
    cache: Any,
    device: str,
    force: bool,
    desc: str,
    train: bool = True,
) -> pd.DataFrame:
    if not cells or not train:
        return store.load(artifact)
    share = SHARED_RUNS if artifact in SHARED_RUNS else ()
    stored = set() if force else set().union(*(store.done(a) for a in (artifact, *share)))
    runner = RepeatsRunner(cfg, [c for c in cells if config_hash(c) not in stored], device)
    return run_grid(
        store, artifact, cells, runner, desc=desc, force=force, share=share, device=str(resolve_device(device))
    )


def _names_for(cfg: ProGAPProfile, store: ResultStore, artifact: str, train: bool) -> list[str]:
    """The datasets to run (``train``: those that load here, the rest recorded not_run) or to show (all)."""
    return available(cfg, store, artifact) if train else _names(cfg)


def _table2_cells(cfg: ProGAPProfile, names: list[str] | None = None) -> list[dict]:
    names = _names(cfg) if names is None else names
    return [
        c
        for name in names
        for level, methods in TABLE2_METHODS.items()
        for method in methods + ["progap-layerwise"]
        for c in _method_cells(cfg, name, method, level, TABLE2_EPS[level], fidelity=_fidelity(cfg))
    ]


def _fidelity(cfg: ProGAPProfile) -> str:
    fidelity = cfg.fidelity
    if fidelity not in FIDELITIES:
        raise ValueError(f"fidelity must be one of {FIDELITIES}, got {fidelity!r}")
    return fidelity


def _fig2_cells(cfg: ProGAPProfile, names: list[str] | None = None) -> list[dict]:
    names = _names(cfg) if names is None else names
    cells = []
    for name in names:
        for method in ("progap", "gap"):
            for level, grid_ in (("edge", cfg.edge_epsilons), ("node", cfg.node_epsilons)):
                for eps in grid_:
                    cells += _method_cells(cfg, name, method, level, eps, runs=cfg.sweep_runs)
            if method == "progap":
                cells += _method_cells(cfg, name, method, "none", math.inf, runs=cfg.sweep_runs)
    return cells


def _fig4_cells(cfg: ProGAPProfile, names: list[str] | None = None) -> list[dict]:
    names = _names(cfg) if names is None else names
    return [
        c
        for name in names
        for level, budgets in (("edge", cfg.fig4.edge_budgets), ("node", cfg.fig4.node_budgets))
        for eps in budgets
        for k in cfg.fig4.depths
        for c in _method_cells(cfg, name, "progap", level, eps, depths=[k], runs=cfg.sweep_runs)
    ]


_GRIDS = {"table2_runs": _table2_cells, "fig2_runs": _fig2_cells, "fig4_runs": _fig4_cells}


def coverage(cfg: ProGAPProfile, store: ResultStore, artifact: str = "table2_runs") -> pd.DataFrame:
    """How much of ``cfg``'s grid for ``artifact`` is stored, per (dataset, method, level, setting): hyper-parameter
    configurations with at least one run, and runs, each against the grid's count. Pass the full profile (no
    overrides) to see how far a reduced run is from the paper's grid: selection only ever covers what is stored."""
    if artifact not in _GRIDS:
        raise ValueError(f"artifact must be one of {sorted(_GRIDS)}, got {artifact!r}")
    names = [
        n
        for n in list(cfg.datasets) + list(cfg.standins)
        if n in cfg.standins or n in set(store.load(artifact).get("dataset", pd.Series(dtype=str)))
    ]
    grid_ = _GRIDS[artifact](cfg, names)
    if not grid_:
        return pd.DataFrame()
    done = store.done(artifact)
    cells = pd.DataFrame(grid_).assign(stored=[config_hash(c) in done for c in grid_])
    fid = cells["fidelity"].fillna("paper") if "fidelity" in cells.columns else ["paper"] * len(cells)
    cells["setting"] = [setting(lv, e, f) for lv, e, f in zip(cells["level"], cells["epsilon"], fid)]
    keys = [k for k in _CONFIG_KEYS if k in cells.columns]
    cells["config"] = ["|".join(map(str, r)) for r in cells[keys].itertuples(index=False)]
    g = cells.groupby(["dataset", "method", "level", "setting"])
    out = pd.DataFrame(
        {
            "configs_stored": g.apply(lambda d: d.loc[d["stored"], "config"].nunique(), include_groups=False),
            "configs_in_grid": g["config"].nunique(),
            "runs_stored": g["stored"].sum(),
            "runs_in_grid": g.size(),
        }
    ).reset_index()
    return out


_CONFIG_KEYS = ("depth", "base_layers", "lr", "epochs", "batch_size", "max_degree")


def config_label(runs: pd.DataFrame) -> list[str]:
    """The configuration of each run as one string, ``"depth|base_layers|lr|epochs|batch_size|max_degree"`` (the
    keys present; a missing value reads ``nan``): the key :func:`select_best` groups and breaks ties by."""
    keys = [k for k in _CONFIG_KEYS if k in runs.columns]
    return ["|".join(map(str, r)) for r in runs[keys].itertuples(index=False)]


def select_best(runs: pd.DataFrame, by: tuple[str, ...] = ("dataset", "method", "level", "setting")) -> pd.DataFrame:
    """docs/papers/progap.md#hyper-parameter-search-and-reporting: per ``by`` group, the configuration with the highest
    mean validation accuracy; its test rows (:func:`dpgnn.series.common.select_best` on the ``val_acc`` rows).

    Ties go to the first configuration in the order of :func:`config_label` strings (``groupby`` order of the
    string, e.g. ``"10|…"`` before ``"2|…"``), as the stored paper selections were made. A non-default fidelity is
    part of ``setting``, so its runs are selected apart. Each selected row gets a config hash of (config, run,
    group)."""
    if runs.empty:
        return runs
    runs = runs.assign(config=config_label(runs))
    test = common.select_best(runs, list(by), ["config"], val_metric="val_acc", test_metric="accuracy")
    return test.drop(columns=["config_hash"]).assign(
        config_hash=[
            config_hash({"selected": c, "run": r, "g": [str(x) for x in g]})
            for c, r, g in zip(test["config"], test["run"], test[list(by)].values.tolist())
        ]
    )


def _store_selected(
    store: ResultStore, artifact: str, runs: pd.DataFrame, by=("dataset", "method", "level", "setting")
) -> pd.DataFrame:
    sel = select_best(runs, by)
    # a selected row is a copy of a run row: it keeps the run's ``versions`` (the code that computed the value);
    # ``timestamp`` is the time of the selection
    drop = [c for c in ("paper", "artifact", "profile", "timestamp") if c in sel.columns]
    store.replace(artifact, sel.drop(columns=drop).to_dict("records") if len(sel) else [])
    return store.load(artifact)


def summary(df: pd.DataFrame, by=("dataset", "method", "setting")) -> pd.DataFrame:
    """Mean ± 95% bootstrap CI half-width (the paper's convention) per group."""
    if df.empty:
        return df
    g = df.groupby(list(by))["value"]
    return g.agg(mean="mean", ci=lambda v: bootstrap_ci_halfwidth(v), runs="size").reset_index()


# ---------------------------------------------------------------------------------------------------------------
# Notebook 01: σ calibration (pure computation)
# ---------------------------------------------------------------------------------------------------------------
SPEC_NODE = {
    "train_nodes": 19_804,
    "batch_size": 256,
    "delta": 1e-5,
    "epochs": [5, 10],
    "depths": [1, 2, 3],
    "epsilons": [2.0, 8.0, 32.0],
}


def run_calibration(cfg: ProGAPProfile, store: ResultStore) -> pd.DataFrame:
    """docs/papers/progap.md#edge-level-privacy edge σ table (δ = 1e-7) and docs/papers/progap.md#node-level-privacy
    node z table, with the paper's bound at each calibrated noise."""
    rows = []
    for k in cfg.calibration.depths:
        for eps in _EDGE_EPS:
            led = pg.privacy_ledger(
                "edge", depth=k, delta=1e-7, target_epsilon=eps, accountant="exact_gaussian", rtol=1e-6
            )
            base = {
                "dataset": "analytic",
                "method": "progap",
                "level": "edge",
                "setting": f"K={k},eps={eps:g}",
                "epsilon": led["epsilon"],
                "delta": 1e-7,
                "depth": k,
                "target": eps,
                "ledger": led,
                "run": 0,
                "seed": 0,
            }
            rows.append({**base, "metric": "sigma", "value": led["noise_multiplier"]})
            rows.append({**base, "metric": "epsilon_paper_bound", "value": led["epsilon_paper_bound"]})
            # the sound option for undirected graphs: one friendship moves two aggregate rows (sensitivity √2)
            und = pg.privacy_ledger(
                "edge",
                depth=k,
                delta=1e-7,
                target_epsilon=eps,
                accountant="exact_gaussian",
                rtol=1e-6,
                edge_relation="undirected",
            )
            rows.append({**base, "metric": "sigma_nap_undirected", "value": und["sigma_nap"], "ledger": und})
    for e, k in cfg.calibration.node:
        for eps in SPEC_NODE["epsilons"]:
            led = pg.privacy_ledger(
                "node",
                depth=k,
                delta=SPEC_NODE["delta"],
                target_epsilon=eps,
                train_nodes=SPEC_NODE["train_nodes"],
                batch_size=SPEC_NODE["batch_size"],
                epochs=e,
                max_degree=100,
                accountant="autodp",
                rtol=1e-5,
            )
            base = {
                "dataset": "analytic",
                "method": "progap",
                "level": "node",
                "setting": f"K={k},E={e},eps={eps:g}",
                "epsilon": led["epsilon"],
                "delta": SPEC_NODE["delta"],
                "depth": k,
                "target": eps,
                "ledger": led,
                "run": 0,
                "seed": 0,
            }
            rows.append({**base, "metric": "noise_multiplier", "value": led["noise_multiplier"]})
            rows.append({**base, "metric": "epsilon_paper_bound", "value": led["epsilon_paper_bound"]})
    for r in rows:
        r["config_hash"] = config_hash({k: r[k] for k in ("level", "setting", "metric")})
    store.replace("calibration", rows)
    return store.load("calibration")


def calibration_table(store: ResultStore, level: str = "edge") -> pd.DataFrame:
    df = store.load("calibration")
    df = df[df["level"] == level]
    metric = "sigma" if level == "edge" else "noise_multiplier"
    if df.empty:
        print(f"no {level}-level calibration rows in this profile")
        return pd.DataFrame(columns=["ours", "Thm bound at ours", "reference (autodp 0.2.3.1)", "diff"])
    wide = df.pivot_table(index="setting", columns="metric", values="value", aggfunc="first")
    wide = wide.rename(
        columns={
            metric: "ours",
            "epsilon_paper_bound": "Thm bound at ours",
            "sigma_nap_undirected": "NAP std, undirected edge (sound: ours x sqrt 2)",
        }
    )
    ref = load_reference(PAPER, "calibration")
    ref = ref[ref["metric"] == metric].set_index("setting")["value"]
    wide["reference (autodp 0.2.3.1)"] = ref.reindex(wide.index)
    wide["diff"] = wide["ours"] - wide["reference (autodp 0.2.3.1)"]
    return wide


def calibration_fidelities(depths=(1, 2, 3), epsilon: float = 1.0, delta: float = 1e-7) -> pd.DataFrame:
    """Edge-level σ at ``epsilon``/``delta`` per depth K under both fidelities: ``paper`` (exact Gaussian
    composition, our default) and ``authors_code`` (the official code's autodp RDP composition, measured side by
    side: 4.977 / 7.038 / 8.620 for K = 1 / 2 / 3 at ε = 1, δ = 1e-7), with the noise ratio."""
    rows = []
    for k in depths:
        ours = pg.privacy_ledger("edge", depth=int(k), delta=delta, target_epsilon=epsilon)
        auth = pg.privacy_ledger("edge", depth=int(k), delta=delta, target_epsilon=epsilon, fidelity="authors_code")
        rows.append(
            {
                "K": int(k),
                "sigma_paper (exact)": round(ours["sigma_nap"], 3),
                "sigma_authors_code (autodp RDP)": round(auth["sigma_nap"], 3),
                "eps_paper": ours["epsilon"],
                "eps_authors_code": auth["epsilon"],
                "noise ratio": round(auth["sigma_nap"] / ours["sigma_nap"], 4),
            }
        )
    return pd.DataFrame(rows)


def plot_calibration(store: ResultStore):
    df = store.load("calibration")
    e = df[(df["level"] == "edge") & (df["metric"] == "sigma")].copy()
    e["K"] = "K=" + e["depth"].astype(str)
    return plotting.lines(
        e,
        x="target",
        y="value",
        hue="K",
        xlabel="target ε (δ = 1e-7)",
        ylabel="σ",
        logx=True,
        title="Edge-level σ calibrated by the exact Gaussian accountant",
    )


# ---------------------------------------------------------------------------------------------------------------
# Notebook 02: Table 2 and progressive vs layer-wise
# ---------------------------------------------------------------------------------------------------------------
def run_table2(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Table 2 and progressive vs layer-wise: run the missing cells (``train=False``: none, select from the stored
    ones) and store the selected rows."""
    check_train(force, train)
    names = _names_for(cfg, store, "table2", train)
    if train:
        for n in set(cfg.datasets) - set(names):
            store.record_skip(n, "dataset unavailable offline (see table2)", artifact="layerwise")
    runs = _run(cfg, store, "table2_runs", _table2_cells(cfg, names), None, device, force, "Table 2 runs", train)
    if runs.empty:
        return runs
    prog = runs[~runs["method"].isin(["progap-layerwise"])]
    _store_selected(store, "table2", prog)
    # progressive vs layer-wise compares the paper's calibration only (a non-default fidelity has no layer-wise runs)
    paper_fid = runs["fidelity"].fillna("paper").eq("paper") if "fidelity" in runs.columns else True
    lw = runs[runs["method"].isin(["progap", "progap-layerwise"]) & paper_fid].copy()
    lw["method"] = lw["method"].map({"progap": "progressive", "progap-layerwise": "layerwise"})
    _store_selected(store, "layerwise", lw)
    return store.load("table2")


def table2_side_by_side(store: ResultStore, artifact: str = "table2") -> pd.DataFrame:
    """The paper's cells (one column per paper dataset) beside ours (one column per dataset we ran, stand-ins
    labelled), mean ± 95% CI of the selected configuration's test accuracy; one row per (setting, method), a
    non-default fidelity in a setting of its own. The report's per-cell status: :func:`dpgnn.report.paper_vs_ours`."""
    ref = load_reference(PAPER, artifact)
    ours = store.load(artifact)
    if len(ours):
        ours = ours[ours["metric"] == "accuracy"]
    out = ref.assign(cell=[fmt(m, s) for m, s in zip(ref["value"], ref["spread"])]).pivot_table(
        index=["setting", "method"], columns="dataset", values="cell", aggfunc="first"
    )
    out.columns = [f"paper: {c}" for c in out.columns]
    if len(ours):
        s = summary(ours)
        s["cell"] = [fmt(m, c) for m, c in zip(s["mean"], s["ci"])]
        mine = s.pivot_table(index=["setting", "method"], columns="dataset", values="cell", aggfunc="first")
        mine.columns = [f"ours: {c}" + (" (stand-in)" if c not in PAPER_DATASETS else "") for c in mine.columns]
        out = out.join(mine, how="outer")
    return out.fillna("")


def plot_table2(store: ResultStore, artifact: str = "table2"):
    """Our Table 2 (or progressive vs layer-wise) cells as points: mean ± 95% CI per setting, one panel per
    dataset."""
    res = store.load(artifact)
    res = res[res["metric"] == "accuracy"] if len(res) else res
    title = "Table 2 (ours)" if artifact == "table2" else "Progressive vs layer-wise (ours)"
    return plotting.lines(
        summary(res).assign(x=lambda d: d["setting"]),
        x="x",
        y="mean",
        err="ci",
        hue="method",
        col="dataset",
        xlabel="setting",
        ylabel="test accuracy (%)",
        title=title,
        connect=False,
    )


#: Measured by running the authors' official ProGAP code beside ours on ``fb100-wisconsin87`` at edge
#: level, ε = 1 (lr 0.01, 1-layer base, 100 epochs per stage; mean ± std over runs, %): the official code, ours
#: with the paper's calibration, and ours with the official σ (8.620 at K = 3), per depth K.
AUTHORS_CODE_MEASURED = {
    "dataset": "fb100-wisconsin87",
    "epsilon": 1.0,
    "official": {2: (73.3, 0.4), 3: (73.9, 0.7)},
    "ours_paper": {2: (73.7, 0.5), 3: (75.0, 0.5)},
    "ours_official_sigma": {3: (74.7, 0.7)},
}


def fidelity_comparison(store: ResultStore, depths=(2, 3)) -> pd.DataFrame:
    """ProGAP edge level on the stand-in of :data:`AUTHORS_CODE_MEASURED`, per depth K: the σ of both
    calibrations, the official code's accuracy and ours as measured beside it, and ours from this profile's
    stored Table 2 runs under each fidelity (mean ± std over the runs of the configuration with the best mean
    validation accuracy at that K; "—" where none are stored, e.g. outside the paper profile)."""
    m = AUTHORS_CODE_MEASURED
    eps = m["epsilon"]
    runs = store.load("table2_runs")
    if len(runs):
        runs = runs[(runs["dataset"] == m["dataset"]) & (runs["method"] == "progap") & (runs["level"] == "edge")]
    sel = select_best(runs, by=("dataset", "method", "level", "setting", "depth")) if len(runs) else runs
    rows = []
    for k in depths:
        row: dict[str, Any] = {"K": int(k)}
        for fid in FIDELITIES:
            led = pg.privacy_ledger("edge", depth=int(k), delta=1e-7, target_epsilon=eps, fidelity=fid)
            row[f"σ {fid}"] = round(led["sigma_nap"], 3)
        row["official code (measured)"] = fmt(*m["official"].get(k, (None, None)))
        row["ours, paper σ (measured)"] = fmt(*m["ours_paper"].get(k, (None, None)))
        row["ours, official σ (measured)"] = fmt(*m["ours_official_sigma"].get(k, (None, None)))
        for fid in FIDELITIES:
            v = sel[(sel["depth"] == k) & (sel["setting"] == setting("edge", eps, fid))]["value"] if len(sel) else []
            row[f"ours, fidelity={fid} (stored)"] = fmt(v.mean(), v.std()) if len(v) else "—"
            row[f"runs {fid}"] = len(v)
        rows.append(row)
    return pd.DataFrame(rows).set_index("K")


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03: Fig. 2 accuracy vs ε (ProGAP vs GAP)
# ---------------------------------------------------------------------------------------------------------------
def run_fig2(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    check_train(force, train)
    names = _names_for(cfg, store, "fig2", train)
    runs = _run(cfg, store, "fig2_runs", _fig2_cells(cfg, names), None, device, force, "Fig. 2 runs", train)
    return _store_selected(store, "fig2", runs) if len(runs) else runs


def plot_fig2(store: ResultStore):
    df = store.load("fig2")
    priv = df[df["level"] != "none"]
    agg = priv.groupby(["dataset", "level", "method", "setting"])["value"].agg(["mean", "std"]).reset_index()
    agg["eps"] = agg["setting"].str.split("eps=").str[1].astype(float)
    agg["panel"] = agg["dataset"] + " — " + agg["level"] + " level"
    return plotting.lines(
        agg,
        x="eps",
        y="mean",
        err="std",
        hue="method",
        col="panel",
        order=["gap", "progap"],
        xlabel="ε",
        ylabel="test accuracy (%)",
        logx=True,
        title="Fig. 2: accuracy vs ε (stand-ins; paper datasets not available offline)",
    )


def claim_progap_ge_gap(store: ResultStore) -> pd.DataFrame:
    """Per (dataset, level, ε): mean ProGAP − mean GAP accuracy (the paper's claim: ≥ 0)."""
    df = store.load("fig2")
    df = df[df["level"] != "none"]
    m = df.groupby(["dataset", "level", "setting", "method"])["value"].mean().unstack("method")
    m["progap - gap"] = m["progap"] - m["gap"]
    m["progap >= gap"] = m["progap - gap"] >= 0
    return m.reset_index()


# ---------------------------------------------------------------------------------------------------------------
# Notebook 04: Fig. 3 convergence (K = 5)
# ---------------------------------------------------------------------------------------------------------------
def _fig3_cells(cfg: ProGAPProfile, names: list[str] | None = None) -> list[dict]:
    names = _names(cfg) if names is None else names
    cells = []
    for name in names:
        b, d = _node_settings(cfg, name)
        for level, eps, e in (("edge", 1.0, cfg.convergence.epochs_edge), ("node", 8.0, cfg.convergence.epochs_node)):
            cell = {
                "dataset": name,
                "method": "progap",
                "level": level,
                "epsilon": eps,
                "depth": 5,
                "base_layers": int(cfg.base_layers[0]),
                "lr": float(cfg.lrs[0]),
                "epochs": int(e),
                "run": 0,
                "seed": int(cfg.seed),
                "history": True,
            }
            if level == "node":
                cell.update(batch_size=b, max_degree=d)
            cells.append(cell)
    return cells


def run_fig3(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    check_train(force, train)
    names = _names_for(cfg, store, "fig3", train)
    return _run(cfg, store, "fig3", _fig3_cells(cfg, names), None, device, force, "Fig. 3 runs", train)


def plot_fig3(store: ResultStore):
    df = store.load("fig3")
    df = df[df["metric"].astype(str).str.startswith("curve_")].copy()
    df["panel"] = df["dataset"] + " — " + df["level"] + " level"
    df["curve"] = df["metric"].str.removeprefix("curve_")
    return plotting.lines(
        df,
        x="epoch_total",
        y="value",
        hue="curve",
        col="panel",
        order=["train_acc", "val_acc"],
        xlabel="cumulative epoch (stages of equal length)",
        ylabel="accuracy (%)",
        title="Fig. 3: convergence per stage, K = 5 (edge ε=1, node ε=8)",
    )


def stage_jumps(store: ResultStore) -> pd.DataFrame:
    """Best validation accuracy per stage (the paper: accuracy jumps at each new stage, then saturates)."""
    df = store.load("fig3")
    df = df[df["metric"] == "curve_val_acc"]
    return df.groupby(["dataset", "level", "stage"])["value"].max().unstack("stage")


# ---------------------------------------------------------------------------------------------------------------
# Notebook 05: Fig. 4 accuracy vs depth for three budgets per level
# ---------------------------------------------------------------------------------------------------------------
def run_fig4(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    check_train(force, train)
    names = _names_for(cfg, store, "fig4", train)
    runs = _run(cfg, store, "fig4_runs", _fig4_cells(cfg, names), None, device, force, "Fig. 4 runs", train)
    if runs.empty:
        return runs
    runs = runs.copy()
    runs["setting"] = runs["setting"] + ",K=" + runs["depth"].astype(int).astype(str)
    return _store_selected(store, "fig4", runs)


def plot_fig4(store: ResultStore):
    df = store.load("fig4")
    agg = df.groupby(["dataset", "level", "setting", "depth"])["value"].agg(["mean", "std"]).reset_index()
    agg["budget"] = agg["setting"].str.split(",").str[0]
    agg["panel"] = agg["dataset"] + " — " + agg["level"] + " level"
    return plotting.lines(
        agg,
        x="depth",
        y="mean",
        err="std",
        hue="budget",
        col="panel",
        xlabel="depth K",
        ylabel="test accuracy (%)",
        title="Fig. 4: accuracy vs depth for three budgets",
    )


def depth_tradeoff(store: ResultStore) -> pd.DataFrame:
    """Mean accuracy per (dataset, level, budget) and K, with the best K: the paper's claim is that the best
    depth grows with the budget (deeper helps at large ε, hurts or saturates at small ε)."""
    df = store.load("fig4")
    df = df.assign(budget=df["setting"].str.split(",").str[0])
    m = df.groupby(["dataset", "level", "budget", "depth"])["value"].mean().unstack("depth")
    m["best K"] = m.idxmax(axis=1)
    return m


# ---------------------------------------------------------------------------------------------------------------
# the series API (dpgnn.series.common): run / side_by_side / plot per artifact
# ---------------------------------------------------------------------------------------------------------------
ARTIFACTS = ("calibration", "table2", "layerwise", "fig2", "fig3", "fig4")


def _artifact(artifact: str) -> str:
    if artifact not in ARTIFACTS:
        raise ValueError(f"unknown ProGAP artifact {artifact!r}; valid: {list(ARTIFACTS)}")
    return artifact


def run(
    cfg: ProGAPProfile,
    store: ResultStore,
    artifact: str,
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> pd.DataFrame:
    """Compute ``artifact``'s missing cells and return its stored rows (``calibration``: pure computation, always
    recomputed; ``table2`` and ``layerwise`` come from the same runs). ``train=False`` trains nothing and selects
    from the stored runs only."""
    artifact = _artifact(artifact)
    if artifact == "calibration":
        return run_calibration(cfg, store)
    if artifact in ("table2", "layerwise"):
        run_table2(cfg, store, device=device, force=force, train=train)
        return store.load(artifact)
    fn = {"fig2": run_fig2, "fig3": run_fig3, "fig4": run_fig4}[artifact]
    return fn(cfg, store, device=device, force=force, train=train)


def side_by_side(store: ResultStore, artifact: str = "table2") -> pd.DataFrame:
    """The paper's cells beside ours: ``calibration`` the σ / z tables of both levels (ours, the reference value,
    the difference); the other artifacts the paper's columns beside ours (:func:`table2_side_by_side`)."""
    artifact = _artifact(artifact)
    if artifact == "calibration":
        return pd.concat({lv: calibration_table(store, lv) for lv in ("edge", "node")}, names=["level", "setting"])
    return table2_side_by_side(store, artifact)


def plot(store: ResultStore, artifact: str):
    """The artifact's figure drawn from stored rows only."""
    artifact = _artifact(artifact)
    if artifact in ("table2", "layerwise"):
        return plot_table2(store, artifact)
    return {"calibration": plot_calibration, "fig2": plot_fig2, "fig3": plot_fig3, "fig4": plot_fig4}[artifact](store)


#: the grids of this series, cell by cell (:mod:`dpgnn.engine`); a cell of Table 2, Fig. 2 or Fig. 4 runs once and
#: is stored under each of their run artifacts that has it. The calibration tables are pure computation.
CELLS = {
    name: CellSpec(
        PAPER,
        name,
        store,
        fn,
        cell_run,
        share=SHARED_RUNS if store in SHARED_RUNS else (),
        available=_available,
        batch=batch_run,
        batch_key=_sibling_key,
    )
    for name, store, fn in (
        ("table2", "table2_runs", _table2_cells),
        ("fig2", "fig2_runs", _fig2_cells),
        ("fig3", "fig3", _fig3_cells),
        ("fig4", "fig4_runs", _fig4_cells),
    )
}


__all__ = [
    "PROFILES",
    "coverage",
    "run_calibration",
    "calibration_table",
    "calibration_fidelities",
    "plot_calibration",
    "run_table2",
    "table2_side_by_side",
    "plot_table2",
    "fidelity_comparison",
    "AUTHORS_CODE_MEASURED",
    "FIDELITIES",
    "run",
    "side_by_side",
    "plot",
    "ARTIFACTS",
    "config_label",
    "run_fig2",
    "plot_fig2",
    "claim_progap_ge_gap",
    "run_fig3",
    "plot_fig3",
    "stage_jumps",
    "run_fig4",
    "plot_fig4",
    "depth_tradeoff",
    "select_best",
    "summary",
    "run_cell",
    "cell_run",
    "RepeatsRunner",
    "CELLS",
    "paper_vs_ours",
]


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='ProGAP: "Progressive Graph Neural Networks with Differential Privacy Guarantees"',
        kind="paper",
        order=5,
        citation="Sajadmanesh & Gatica-Perez, WSDM 2024",
        docs="docs/papers/progap.md",
        reference="progap.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
    )
)
