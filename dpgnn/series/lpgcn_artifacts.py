"""LPGCN series: how each artifact is computed and drawn -- notebook 01's analytic variances (Fig. 1, 4, 5) and
mean features (Table 3), notebook 02's estimation error (Fig. 2, 3), notebook 03's node classification and link
prediction (Table 2, a configuration's node-classification runs trained together: :func:`batch_run`,
:func:`repeats_runner`) -- with their grid cells (:data:`CELLS`). :mod:`dpgnn.series.lpgcn` holds the profiles and
the series API that dispatches here.

The method (:mod:`dpgnn.methods.lpgcn`, torch) is imported inside the functions that compute: notebooks that only
read stored rows and draw start without torch.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from dpgnn import methods, plotting
from dpgnn.privacy.guarantee import SOUND, non_private, statement
from dpgnn.reference import load_reference
from dpgnn.results import ResultStore
from dpgnn.series import datasets_to_run, load_or_skip
from dpgnn.sweep import CellSpec, SiblingRunner, check_train, grid, run_grid
from dpgnn.utils import config_hash, resolve_device

if TYPE_CHECKING:
    from dpgnn.series.lpgcn import LPGCNProfile

PAPER = "lpgcn"
LEDGER_KEYS = (
    "level",
    "neighbouring",
    "mechanism",
    "epsilon",
    "epsilon_node_total",
    "delta",
    "sensitivity",
    "accountant",
    "guarantee",
    "not_covered",
    "accounted",
)
#: analytic rows (a mechanism's variance at ε, at a feature value or a dataset's mean x̄): nothing is released
#: privately, the statement is the mechanism's own
_ANALYTIC = statement(
    SOUND,
    "LDP: any two values of one feature",
    accounted="analytic variance of the epsilon-LDP mechanism at a given feature value (no private release)",
)
_DROP = ("history", "paper", "artifact", "config_hash", "versions")


def _setting(eps: float) -> str:
    return "eps=inf" if math.isinf(eps) else f"eps={eps:g}"


def _tidy(row: dict[str, Any]) -> dict[str, Any]:
    """Pack the flat privacy statement of a method row into the ``ledger`` column."""
    out = {k: v for k, v in row.items() if k not in _DROP}
    out["ledger"] = {k: row[k] for k in LEDGER_KEYS if k in row}
    for k in (
        "neighbouring",
        "mechanism",
        "epsilon_node_total",
        "sensitivity",
        "accountant",
        "guarantee",
        "not_covered",
        "accounted",
    ):
        out.pop(k, None)
    return out


@functools.lru_cache(maxsize=8)
def _data(name: str):
    """The prepared dataset, loaded once per process (the notebooks' kernel or a Dask worker) and reused by every
    cell that runs there."""
    from dpgnn.methods import lpgcn

    return lpgcn.prepare(name)


@functools.lru_cache(maxsize=8)
def _lp_split(name: str):
    from dpgnn.methods import lpgcn

    return lpgcn.split_for_link_prediction(_data(name), name)


# ---------------------------------------------------------------------------------------------------------------
# Notebook 01: analytic variances (Fig. 1, 4, 5) and the datasets' mean feature (Table 3)
# ---------------------------------------------------------------------------------------------------------------
def run_variance(cfg: LPGCNProfile, store: ResultStore) -> dict[str, pd.DataFrame]:
    """Compute Table 3 (x̄ from the data) and the variance curves of Fig. 1, 4, 5; store and return them."""
    from dpgnn.methods import lpgcn

    xbar_rows = []
    for name in cfg.datasets:
        data = load_or_skip(store, name, _data, artifact="table3")
        if data is None:
            continue
        xbar_rows.append(
            {
                "dataset": name,
                "method": "data",
                "setting": "normalised [0,1]",
                "metric": "mean_feature",
                "value": lpgcn.mean_feature(data),
                "num_features": data.num_features,
                "level": "none",
                "ledger": {"level": "none", **non_private("nothing (a statistic of the raw data)")},
            }
        )
    eps = cfg.variance_epsilons
    fig1 = lpgcn.variance_table(eps, "range")
    fig4 = lpgcn.variance_table(eps, 0.0)
    # Fig. 5 uses x̄ of each dataset: ours where the data is here, the paper's Table 3 value otherwise (labelled).
    ours = {r["dataset"]: r["value"] for r in xbar_rows}
    xbars = {name: ours.get(name) for name in lpgcn.DATASETS}
    xbars = {
        (n if v is not None else f"{n} (paper x̄)"): (v if v is not None else lpgcn.TABLE3_MEAN_FEATURE[n])
        for n, v in xbars.items()
    }
    fig5 = lpgcn.variance_table(eps, xbars)
    out = {"table3": pd.DataFrame(xbar_rows)}
    for name, df in (("fig1", fig1), ("fig4", fig4), ("fig5", fig5)):
        df = df.assign(
            dataset=df["label"].fillna("analytic") if "label" in df else "analytic",
            metric="variance",
            setting=[_setting(e) for e in df["epsilon"]],
            level="feature-ldp",
            delta=0.0,
            ledger=[{"level": "feature-ldp", **_ANALYTIC}] * len(df),
        )
        out[name] = df
    for name, df in out.items():  # pure computation: always recomputed, replaced whole (identical rows unchanged)
        store.replace(name, df.to_dict("records") if len(df) else [])
    return {name: store.load(name) for name in out}


def plot_fig1(store: ResultStore):
    """Fig. 1: the min/max band of each mechanism's variance over x ∈ [0, 1], from stored rows."""
    wide = store.load("fig1").pivot_table(index=["method", "epsilon"], columns="stat", values="value").reset_index()
    return plotting.bands(
        wide,
        x="epsilon",
        low="min",
        high="max",
        hue="method",
        order=["lm", "pm", "pgc"],
        xlabel="ε",
        ylabel="variance",
        title="Fig. 1: variance range over x ∈ [0, 1]",
    )


def plot_fig4(store: ResultStore):
    """Fig. 4: the variance at x = α, from stored rows."""
    return plotting.lines(
        store.load("fig4"),
        x="epsilon",
        y="value",
        hue="method",
        order=["lm", "pm", "pgc"],
        xlabel="ε",
        ylabel="variance",
        logy=True,
        title="Fig. 4: variance at x = α",
    )


def plot_fig5(store: ResultStore):
    """Fig. 5: the variance at each dataset's mean feature x̄, from stored rows."""
    return plotting.lines(
        store.load("fig5"),
        x="epsilon",
        y="value",
        hue="method",
        col="dataset",
        order=["lm", "pm", "pgc"],
        xlabel="ε",
        ylabel="variance",
        logy=True,
        title="Fig. 5: variance at each dataset's mean feature x̄",
    )


# ---------------------------------------------------------------------------------------------------------------
# Notebook 02: estimation error of the first graph convolution (Fig. 2, 3)
# ---------------------------------------------------------------------------------------------------------------
def _methods(cfg: LPGCNProfile) -> list[str]:
    return [m for m in cfg.methods if m != "raw"]


def fig2_cells(cfg: LPGCNProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """Fig. 2 cells: one per (dataset, method, ε)."""
    names = cfg.datasets if datasets is None else datasets
    return grid(dataset=names, method=_methods(cfg), epsilon=cfg.mae_epsilons, seed=[cfg.seed]) if names else []


def fig3_cells(cfg: LPGCNProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """Fig. 3 cells: one per (dataset, method) at ε = 1."""
    names = cfg.datasets if datasets is None else datasets
    return grid(dataset=names, method=_methods(cfg), epsilon=[1.0], seed=[cfg.seed]) if names else []


def fig2_cell(cfg: LPGCNProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One Fig. 2 cell: the MAE of the first graph convolution at one ε (on the CPU: the spec is ``cpu_only``)."""
    from dpgnn.methods import lpgcn

    df = lpgcn.mae_vs_epsilon(
        _data(cell["dataset"]), cell["dataset"], [cell["epsilon"]], [cell["method"]], seed=cell["seed"]
    )
    return [_tidy(r) | {"setting": _setting(cell["epsilon"])} for r in df.to_dict("records")]


def fig3_cell(cfg: LPGCNProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One Fig. 3 cell: MAE per degree at one ε (on the CPU: the spec is ``cpu_only``)."""
    from dpgnn.methods import lpgcn

    df = lpgcn.mae_vs_degree(
        _data(cell["dataset"]), cell["dataset"], cell["epsilon"], [cell["method"]], seed=cell["seed"]
    )
    return [_tidy(r) | {"setting": _setting(cell["epsilon"])} for r in df.to_dict("records")]


def run_estimation_error(
    cfg: LPGCNProfile, store: ResultStore, *, force: bool = False, train: bool = True
) -> dict[str, pd.DataFrame]:
    """Fig. 2 (MAE vs ε) and Fig. 3 (MAE vs degree at ε = 1) for every available dataset.

    ``train=False`` computes nothing and returns the stored rows (e.g. after ``dpgnn run``)."""
    if force and not train:
        raise ValueError("force=True recomputes cells, which train=False forbids; pass one of them")
    if not train:
        return {"fig2": store.load("fig2"), "fig3": store.load("fig3")}
    names = [n for n in cfg.datasets if load_or_skip(store, n, _data, artifact="fig2") is not None]
    for n in cfg.datasets:
        if n not in names:
            store.record_skip(n, "dataset unavailable (see fig2)", artifact="fig3")
    fig2 = (
        run_grid(
            store,
            "fig2",
            fig2_cells(cfg, names),
            functools.partial(fig2_cell, cfg),
            desc="Fig. 2 MAE vs ε",
            force=force,
            device="cpu",
        )
        if names
        else store.load("fig2")
    )
    fig3 = (
        run_grid(
            store,
            "fig3",
            fig3_cells(cfg, names),
            functools.partial(fig3_cell, cfg),
            desc="Fig. 3 MAE vs degree",
            force=force,
            device="cpu",
        )
        if names
        else store.load("fig3")
    )
    return {"fig2": fig2, "fig3": fig3}


def _stored_datasets(df: pd.DataFrame, datasets: list[str] | None) -> list[str]:
    return sorted(df["dataset"].unique()) if datasets is None else list(datasets)


def plot_fig2(store: ResultStore, datasets: list[str] | None = None):
    """Fig. 2: MAE vs ε per dataset (``datasets``: those stored when ``None``), the paper's values as ◇."""
    fig2 = store.load("fig2")
    datasets = _stored_datasets(fig2, datasets)
    fig2 = fig2[fig2["dataset"].isin(datasets)]
    ref = load_reference(PAPER, "fig2")
    ref = ref[ref["dataset"].isin(datasets)].assign(epsilon=1.0)
    return plotting.lines(
        fig2,
        x="epsilon",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        order=["lm", "pm", "pgc"],
        col_order=datasets,
        xlabel="ε",
        ylabel="MAE",
        reference=ref,
        title="Fig. 2: MAE of the first graph convolution (◇ = paper, read off its figure)",
    )


def plot_fig3(store: ResultStore, datasets: list[str] | None = None):
    """Fig. 3: MAE vs node degree at ε = 1 per dataset (``datasets``: those stored when ``None``)."""
    fig3 = store.load("fig3")
    datasets = _stored_datasets(fig3, datasets)
    fig3 = fig3[fig3["dataset"].isin(datasets)]
    return plotting.lines(
        fig3,
        x="degree",
        y="value",
        hue="method",
        col="dataset",
        order=["lm", "pm", "pgc"],
        col_order=datasets,
        xlabel="node degree",
        ylabel="MAE",
        title="Fig. 3: MAE vs degree, ε = 1",
    )


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03: node classification and link prediction (Table 2)
# ---------------------------------------------------------------------------------------------------------------
def table2_cells(cfg: LPGCNProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """One cell per (task, dataset, method, ε, run); RAW appears once per task (ε = ∞)."""
    datasets = cfg.table2_datasets if datasets is None else datasets
    if not datasets:
        return []
    epochs = {
        "node_classification": {
            "max_epochs": cfg.nc.max_epochs,
            "min_epochs": cfg.nc.min_epochs,
            "patience": cfg.nc.patience,
        },
        "link_prediction": {
            "max_epochs": cfg.lp.max_epochs,
            "min_epochs": cfg.lp.min_epochs,
            "check_every": cfg.lp.check_every,
            "patience": cfg.lp.patience,
        },
    }
    private = [m for m in cfg.methods if m != "raw"]
    settings = grid(method=private, epsilon=[float(e) for e in cfg.table2_epsilons]) if private else []
    if "raw" in cfg.methods:  # RAW has no ε: one setting, ε = ∞
        settings.append({"method": "raw", "epsilon": math.inf})
    return [
        {
            "task": c["task"],
            "dataset": c["dataset"],
            **c["setting"],
            "run": c["run"],
            "seed": cfg.seed,
            **epochs[c["task"]],
        }
        for c in grid(task=list(epochs), dataset=datasets, setting=settings, run=range(cfg.runs))
    ]


def _view(name: str, task: str):
    """The registered method's view of a dataset (cached): the prepared data for node classification, its fixed
    edge split for link prediction (what ``prepare`` / ``prepare_link_prediction`` return)."""
    return _data(name) if task == "node_classification" else _lp_split(name)


def _config(cell: dict[str, Any]) -> dict[str, Any]:
    """The registered method's configuration of a Table 2 cell (its run index included)."""
    keys = ("max_epochs", "min_epochs", "patience") + (("check_every",) if cell["task"] == "link_prediction" else ())
    return {"dataset": cell["dataset"], "epsilon": cell["epsilon"], "run": cell["run"], **{k: cell[k] for k in keys}}


def _row(cell: dict[str, Any], result: methods.RunResult) -> dict[str, Any]:
    """The stored row of one Table 2 run (the paper reports %)."""
    row = _tidy(result.extra["row"])
    row["value"] = 100.0 * row["value"]
    row["setting"] = _setting(cell["epsilon"])
    return row


def _spec(cell: dict[str, Any]):
    from dpgnn.methods import lpgcn

    return methods.get(*lpgcn.method_key(cell["method"], cell["task"]))


def table2_cell(cfg: LPGCNProfile, cell: dict[str, Any], device: str = "auto") -> dict[str, Any]:
    """One Table 2 run through the method registry: micro-F1 (node classification) or AUC (link prediction), in %."""
    result = _spec(cell).run(_view(cell["dataset"], cell["task"]), _config(cell), seed=cell["seed"], device=device)
    return _row(cell, result)


def seed_key(cell: dict[str, Any]) -> str:
    """The node-classification cells of one Table 2 configuration that differ only in their run index share this
    key (the engine's ``batch_key``); a link-prediction cell, trained one run at a time, has a key of its own (it
    stays a task of its own)."""
    drop = ("run",) if cell["task"] == "node_classification" else ()
    return config_hash({k: v for k, v in cell.items() if k not in drop})


def batch_run(cfg: LPGCNProfile, cells: list[dict[str, Any]], device: str = "auto") -> list[list[dict[str, Any]]]:
    """The rows of each of ``cells``, the runs of one configuration (one :func:`seed_key`): node classification's
    runs trained together (the method's ``run.repeats``, :func:`dpgnn.methods.lpgcn.repeats.
    run_node_classification_repeats`), each cell's row equal to its :func:`table2_cell`'s; link prediction one
    :func:`table2_cell` each. What the engine computes as one task."""
    first = cells[0]
    repeats = getattr(_spec(first).run, "repeats", None)
    if repeats is None or len(cells) == 1:
        return [[table2_cell(cfg, c, device)] for c in cells]
    if len({seed_key(c) for c in cells}) != 1:
        raise ValueError("batch_run trains the runs of one configuration; the cells differ in more than the run")
    view = _view(first["dataset"], first["task"])
    results = repeats(view, _config(first), seed=first["seed"], runs=[c["run"] for c in cells], device=device)
    return [[_row(c, res)] for c, res in zip(cells, results)]


def repeats_runner(cfg: LPGCNProfile, todo: list[dict[str, Any]], device: str = "auto") -> SiblingRunner:
    """The cell function :func:`run_table2` gives :func:`dpgnn.sweep.run_grid`: :func:`table2_cell`, except that a
    node-classification cell trains, in one :func:`batch_run`, with every other run of its configuration among
    ``todo`` that has not run yet (:class:`dpgnn.sweep.SiblingRunner`; each cell's row equal to its
    :func:`table2_cell`'s)."""
    return SiblingRunner(lambda cells: batch_run(cfg, cells, device), seed_key, todo)


def run_table2(
    cfg: LPGCNProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Table 2: micro-F1 (GCN) and AUC (VGAE) in %, ``cfg.runs`` runs per cell, resumable.

    ``train=False`` trains nothing and returns the stored rows (e.g. after ``dpgnn run``)."""
    check_train(force, train)
    if not train:
        return store.load("table2")
    stored = set() if force else store.done("table2")
    cells_of = functools.partial(table2_cells, cfg)
    names = datasets_to_run(store, list(cfg.table2_datasets), _data, artifact="table2", cells=cells_of, stored=stored)
    cells = table2_cells(cfg, names)
    if not cells:
        return store.load("table2")
    return run_grid(
        store,
        "table2",
        cells,
        repeats_runner(cfg, [c for c in cells if config_hash(c) not in stored], device),
        desc="Table 2 runs",
        force=force,
        device=str(resolve_device(device)),
    )


#: the grids of this series, cell by cell (:mod:`dpgnn.engine`); Fig. 1/4/5 and Table 3 are pure computation
#: that notebook 01 recomputes in seconds
CELLS = {
    "fig2": CellSpec(PAPER, "fig2", "fig2", fig2_cells, fig2_cell, cpu_only=True),
    "fig3": CellSpec(PAPER, "fig3", "fig3", fig3_cells, fig3_cell, cpu_only=True),
    "table2": CellSpec(PAPER, "table2", "table2", table2_cells, table2_cell, batch=batch_run, batch_key=seed_key),
}


def plot_table2(store: ResultStore):
    """Table 2 as a figure: mean ± std per method vs ε, one panel per (task, dataset), paper values as ◇."""
    df = store.load("table2")
    if df.empty:
        raise ValueError("no Table 2 results stored yet")
    agg = (
        df.groupby(["metric", "dataset", "method", "epsilon"])["value"]
        .agg(value="mean", spread=lambda s: s.std(ddof=0))
        .reset_index()
    )
    ref = load_reference(PAPER, "table2")
    ref = ref.assign(epsilon=ref["setting"].str.removeprefix("eps=").astype(float))
    eps = sorted(e for e in agg["epsilon"].unique() if math.isfinite(e))
    # RAW (ε = ∞) is drawn as a flat line across the ε range, as the paper repeats it in every column
    agg = pd.concat(
        [agg[agg["method"] != "raw"]] + [agg[agg["method"] == "raw"].assign(epsilon=e) for e in eps], ignore_index=True
    )
    ref = pd.concat(
        [ref[ref["method"] != "raw"]] + [ref[ref["method"] == "raw"].assign(epsilon=e) for e in eps], ignore_index=True
    )
    agg["panel"] = (
        agg["metric"].map({"micro_f1": "node cls. micro-F1 %", "auc": "link pred. AUC %"}) + " — " + agg["dataset"]
    )
    ref["panel"] = (
        ref["metric"].map({"micro_f1": "node cls. micro-F1 %", "auc": "link pred. AUC %"}) + " — " + ref["dataset"]
    )
    ref = ref[ref["panel"].isin(agg["panel"].unique())]
    return plotting.lines(
        agg,
        x="epsilon",
        y="value",
        err="spread",
        hue="method",
        col="panel",
        order=["lm", "pm", "pgc", "raw"],
        xlabel="ε",
        ylabel="%",
        reference=ref,
        ncols=4,
        title="Table 2: ours (lines, mean ± std) vs paper (◇)",
    )
