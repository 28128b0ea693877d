"""The LPGNN series' tables and figures, drawn from stored rows only."""

from __future__ import annotations

import json

import pandas as pd

from dpgnn import plotting
from dpgnn.nn.backbones import BACKBONES
from dpgnn.reference import load_reference
from dpgnn.report import paper_vs_ours, spread
from dpgnn.results import ResultStore
from dpgnn.series.common import fmt
from dpgnn.series.lpgnn.cells import _fmt
from dpgnn.series.lpgnn.profiles import _ALL, ARTIFACTS, PAPER


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """``ours ± CI`` beside ``paper ± CI`` with the difference and status per reported cell of ``artifact``."""
    if artifact not in ARTIFACTS:
        raise ValueError(f"unknown LPGNN artifact {artifact!r}; valid: {list(ARTIFACTS)}")
    rep = paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent)
    rep["ours"] = [fmt(v, s) for v, s in zip(rep["ours_value"], rep["ours_spread"])]
    rep["paper"] = [fmt(v, s) for v, s in zip(rep["paper_value"], rep["paper_spread"])]
    rep["diff"] = rep["diff"].round(1)
    return rep[["dataset", "method", "setting", "paper", "ours", "diff", "n_runs", "approx", "status"]]


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["dataset", "method", "setting"])["value"]
    out = g.agg(value="mean").reset_index()
    out["spread"] = [spread(v, "ci95_bootstrap") for _, v in g]
    parts = out["setting"].str.split(",")
    for i, key in enumerate(("eps_x", "eps_y")):
        out[key] = [float(p[i].split("=")[1]) for p in parts]
    for key in ("k_x", "k_y"):
        out[key] = [next((int(x.split("=")[1]) for x in p if x.startswith(key + "=")), None) for p in parts]
    return out


def _ref(artifact: str) -> pd.DataFrame:
    ref = load_reference(PAPER, artifact)
    return _summary(ref.assign(value=ref["value"])).drop(columns="spread") if len(ref) else ref


def _position(values: list[float]) -> dict[float, int]:
    return {v: i for i, v in enumerate(sorted(set(values)))}


def plot_fig_a(store: ResultStore):
    """Fig. A: accuracy vs ε_x (positions 0.01, 0.1, 1, 2, 3, ∞), one line per ε_y, a panel per backbone ×
    dataset."""
    df = _summary(store.load("fig_a"))
    ref = _ref("fig_a")
    pos = _position(list(df["eps_x"]) + list(ref["eps_x"]))
    for d in (df, ref):
        d["x"] = d["eps_x"].map(pos)
        d["hue"] = "ε_y=" + d["eps_y"].map(_fmt)
        d["panel"] = d["dataset"] + " — " + d["method"]
    ref = ref[ref["panel"].isin(df["panel"].unique())]
    panels = df.drop_duplicates("panel")  # a row per dataset (the paper's order), a column per backbone
    rank = {v: i for i, v in enumerate(_ALL + list(BACKBONES))}
    rows = sorted(
        panels[["dataset", "method", "panel"]].itertuples(index=False),
        key=lambda r: (rank.get(r.dataset, len(rank)), rank.get(r.method, len(rank))),
    )
    order = [r.panel for r in rows]
    return plotting.lines(
        df,
        x="x",
        y="value",
        err="spread",
        hue="hue",
        col="panel",
        reference=ref,
        col_order=order,
        ncols=panels["method"].nunique(),
        xticks={i: _fmt(v).replace("inf", "∞") for v, i in pos.items()},
        xlabel="ε_x",
        ylabel="test accuracy %",
        title="Fig. A: accuracy vs ε_x (lines: ours ± 95% CI; ◇ paper, SAGE)",
    )


def plot_k(store: ResultStore, artifact: str):
    """Fig. D (accuracy vs K_x, one line per ε_x) or Fig. E (accuracy vs K_y, one line per ε_y)."""
    key, hue = ("k_x", "eps_x") if artifact == "fig_d" else ("k_y", "eps_y")
    df = _summary(store.load(artifact))
    ref = _ref(artifact)
    for d in (df, ref):
        d["hue"] = f"{hue}=" + d[hue].map(_fmt)
    ref = ref[ref["dataset"].isin(df["dataset"].unique())]
    name = "Fig. D: effect of K_x (ε_y = 1)" if artifact == "fig_d" else "Fig. E: effect of K_y (ε_x = 1)"
    return plotting.lines(
        df,
        x=key,
        y="value",
        err="spread",
        hue="hue",
        col="dataset",
        reference=ref,
        xlabel=key,
        ylabel="test accuracy %",
        title=f"{name}; ◇ paper",
    )


def plot_table(store: ResultStore, artifact: str):
    """Tables B, C, F as figures: accuracy per method vs ε (ours ± CI, paper ◇)."""
    df = _summary(store.load(artifact))
    ref = _ref(artifact)
    x = "eps_y" if artifact == "table_f" else "eps_x"
    pos = _position(list(df[x]) + list(ref[x]))
    for d in (df, ref):
        d["x"] = d[x].map(pos)
    ref = ref[ref["dataset"].isin(df["dataset"].unique())]
    return plotting.lines(
        df,
        x="x",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        reference=ref,
        xticks={i: _fmt(v).replace("inf", "∞") for v, i in pos.items()},
        xlabel=x.replace("eps", "ε"),
        ylabel="test accuracy %",
        title=f"{artifact}: ours (± 95% CI) vs paper (◇)",
    )


def plot(store: ResultStore, artifact: str):
    """The paper's figure ``artifact`` from stored rows: Fig. A (:func:`plot_fig_a`), Fig. D/E (:func:`plot_k`),
    Tables B, C, F drawn as figures (:func:`plot_table`)."""
    if artifact == "fig_a":
        return plot_fig_a(store)
    if artifact in ("fig_d", "fig_e"):
        return plot_k(store, artifact)
    if artifact in ("table_b", "table_c", "table_f"):
        return plot_table(store, artifact)
    raise ValueError(f"unknown LPGNN artifact {artifact!r}; valid: {list(ARTIFACTS)}")


def ledger_summary(store: ResultStore, artifact: str) -> pd.DataFrame:
    """The distinct privacy statements behind an artifact's rows (ε_x, ε_y, per-node ε, δ, mechanisms)."""
    df = store.load(artifact)
    if df.empty:
        return df
    led = pd.DataFrame([json.loads(s) for s in df["ledger"]])
    cols = [c for c in ("mechanism", "eps_x", "eps_y", "epsilon", "delta", "m", "level") if c in led]
    return led[cols].drop_duplicates().reset_index(drop=True)
