"""The ProGAP series' cells: datasets loaded once per process, one cell's run and rows, the grids of Table 2 and
Figs. 2-4, batched repeats (:func:`batch_run`, :func:`repeats_runner`), coverage and the selection of the best
configuration (docs/papers/progap.md#hyper-parameter-search-and-reporting)."""

from __future__ import annotations

import functools
import math
from typing import Any

import pandas as pd

from dpgnn import methods
from dpgnn.data import DatasetUnavailable, dataset_available, load_dataset
from dpgnn.fidelity import Fidelity, parse
from dpgnn.report import bootstrap_ci_halfwidth
from dpgnn.results import ResultStore
from dpgnn.series import common, load_or_skip
from dpgnn.series.progap.profiles import (
    FIDELITY_METHODS,
    PAPER,
    PAPER_DATASETS,
    PAPER_NODE,
    TABLE2_EPS,
    TABLE2_METHODS,
    ProGAPProfile,
    setting,
)
from dpgnn.sweep import SiblingRunner, run_grid
from dpgnn.utils import config_hash, resolve_device

__all__ = [
    "available",
    "BOOKKEEPING",
    "run_cell",
    "run_rows",
    "SHARED_RUNS",
    "cell_run",
    "repeats_runner",
    "batch_run",
    "coverage",
    "config_label",
    "select_best",
    "summary",
]


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
        "setting": setting(level, eps, cell.get("fidelity", Fidelity.PAPER)),
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
    fidelity: Fidelity = Fidelity.PAPER,
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
                        if fidelity is not Fidelity.PAPER and (method, level) in FIDELITY_METHODS:
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


def repeats_runner(cfg: ProGAPProfile, todo: list[dict[str, Any]], device: str = "auto") -> SiblingRunner:
    """The cell function :func:`_run` gives :func:`dpgnn.sweep.run_grid`: :func:`cell_run`, except that a cell
    whose method trains runs together (its registered ``run`` has a ``repeats``: ProGAP, its layer-wise ablation,
    GAP) trains, in one :func:`batch_run`, its own run and every other run of its configuration among ``todo``
    (:class:`dpgnn.sweep.SiblingRunner`; each run's rows equal to its one-at-a-time run up to float rounding)."""
    return SiblingRunner(lambda cells: batch_run(cfg, cells, device), _sibling_key, todo)


def batch_run(cfg: ProGAPProfile, cells: list[dict[str, Any]], device: str = "auto") -> list[list[dict[str, Any]]]:
    """The rows of each of ``cells``, runs of one configuration (one :func:`_sibling_key`): trained in one batched
    call when the method has a ``repeats`` (ProGAP, its layer-wise ablation, GAP), else one :func:`cell_run` each.
    What the engine computes as one task and :func:`repeats_runner` as one batch."""
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
    runner = repeats_runner(cfg, [c for c in cells if config_hash(c) not in stored], device)
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


def _fidelity(cfg: ProGAPProfile) -> Fidelity:
    """The profile's ``fidelity`` setting as a :class:`dpgnn.fidelity.Fidelity` (a string from a profile override
    is parsed here, once)."""
    return parse(cfg.fidelity, "fidelity")


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
    paper = Fidelity.PAPER
    fid = cells["fidelity"].fillna(paper) if "fidelity" in cells.columns else [paper] * len(cells)
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
