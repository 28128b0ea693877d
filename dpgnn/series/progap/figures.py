"""Notebooks 03-05 of the ProGAP series: Fig. 2 (accuracy vs ε), Fig. 3 (convergence), Fig. 4 (accuracy vs
depth), each with its claim read from stored rows."""

from __future__ import annotations

import pandas as pd

from dpgnn import plotting
from dpgnn.results import ResultStore
from dpgnn.series.progap.cells import _fig2_cells, _fig3_cells, _fig4_cells, _names_for, _run, _store_selected
from dpgnn.series.progap.profiles import ProGAPProfile
from dpgnn.sweep import check_train

__all__ = [
    "run_fig2",
    "plot_fig2",
    "claim_progap_ge_gap",
    "run_fig3",
    "plot_fig3",
    "stage_jumps",
    "run_fig4",
    "plot_fig4",
    "depth_tradeoff",
]


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03: Fig. 2 accuracy vs ε (ProGAP vs GAP)
# ---------------------------------------------------------------------------------------------------------------
def run_fig2(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Fig. 2: run the missing ProGAP and GAP cells over the profile's budgets and store the selected rows."""
    check_train(force, train)
    names = _names_for(cfg, store, "fig2", train)
    runs = _run(cfg, store, "fig2_runs", _fig2_cells(cfg, names), None, device, force, "Fig. 2 runs", train)
    return _store_selected(store, "fig2", runs) if len(runs) else runs


def plot_fig2(store: ResultStore):
    """Fig. 2 from stored rows: test accuracy against ε, ProGAP and GAP, one panel per dataset and level."""
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
def run_fig3(
    cfg: ProGAPProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Fig. 3: run the missing K = 5 convergence cells (edge ε = 1, node ε = 8) with their per-epoch curves."""
    check_train(force, train)
    names = _names_for(cfg, store, "fig3", train)
    return _run(cfg, store, "fig3", _fig3_cells(cfg, names), None, device, force, "Fig. 3 runs", train)


def plot_fig3(store: ResultStore):
    """Fig. 3 from stored rows: train and validation accuracy per cumulative epoch, one panel per dataset and level."""
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
    """Fig. 4: run the missing depth-sweep cells and store the selected rows, one setting per (budget, K)."""
    check_train(force, train)
    names = _names_for(cfg, store, "fig4", train)
    runs = _run(cfg, store, "fig4_runs", _fig4_cells(cfg, names), None, device, force, "Fig. 4 runs", train)
    if runs.empty:
        return runs
    runs = runs.copy()
    runs["setting"] = runs["setting"] + ",K=" + runs["depth"].astype(int).astype(str)
    return _store_selected(store, "fig4", runs)


def plot_fig4(store: ResultStore):
    """Fig. 4 from stored rows: test accuracy against depth K, one line per budget, one panel per dataset and level."""
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
