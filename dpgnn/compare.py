"""Cross-paper comparison: accuracy against ε, grouped by privacy unit, from the stored result rows.

The five papers protect different things, so their ε are not one currency:

=====================  ==========================================================================  ============
unit                   what one ε protects                                                          rows from
=====================  ==========================================================================  ============
``ldp-feature-entry``  one feature *entry* of one node, locally (LPGCN; a d-feature node spends d·ε) LPGCN Table 2
``ldp-node``           one node's whole feature vector + label, locally (ε = ε_x + ε_y)             LPGNN Fig. A
``node-features``      one node's features and label; edges public (DRW, FDP)                       DRW Fig. 2 / Table 1
``edge``               one edge (ProGAP/GAP edge level)                                             ProGAP Fig. 2
``node``               one node with its edges and label (ProGAP/GAP node level; PrivGNN: one      ProGAP Fig. 2,
                       private node)                                                                PrivGNN accuracy
=====================  ==========================================================================  ============

Curves of different units are never drawn on one axis: :func:`plot_accuracy_vs_epsilon` has one row of panels per
unit. ε is the value in each row's ledger: where the ledger carries a ``guarantee`` field (``sound`` or
``as_published``) it is kept in the ``guarantee`` column, otherwise the column reads ``as accounted in the ledger``
(the paper's accountant as reproduced).

Beside the stored paper-profile rows, :func:`run_edge_level` runs GAP and ProGAP at edge level on Cora (and
CiteSeer in the paper profile), which their paper does not use, so that the edge-level row has the Planetoid graphs
too (small runs in the smoke profile, labelled as ours).

Datasets shared by at least two series: Cora and CiteSeer (LPGCN, LPGNN, DRW); Facebook page-page (LPGNN
``facebook``); a Facebook100 university (ProGAP ``fb100-wisconsin87``); Amazon Computers (PrivGNN ``amazon``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from dpgnn.results import results_dir
from dpgnn.utils import ROOT

__all__ = [
    "UNITS",
    "SOURCES",
    "EDGE_LEVEL",
    "load_comparison",
    "run_edge_level",
    "best_method",
    "plot_accuracy_vs_epsilon",
    "plot_best_method",
]

UNITS = {
    "ldp-feature-entry": "local DP, ε per feature entry (LPGCN)",
    "ldp-node": "local DP, ε per node: features + labels (LPGNN)",
    "node-features": "node features & label, edges public (DRW, FDP)",
    "edge": "edge-level DP (GAP, ProGAP)",
    "node": "node-level DP (GAP, ProGAP, PrivGNN)",
}

#: (paper, artifact file, metric, unit, scale to %, method prefix); ``None`` unit = take the row's level
SOURCES: list[tuple[str, str, str, str | None, float, str]] = [
    ("lpgcn", "table2", "micro_f1", "ldp-feature-entry", 1.0, "LPGCN "),
    ("lpgnn", "fig_a", "accuracy", "ldp-node", 1.0, "LPGNN "),
    ("drw", "fig2", "test_f1_at_eps", "node-features", 1.0, ""),
    ("drw", "table1", "f1_micro", "node-features", 1.0, ""),
    ("progap", "fig2", "accuracy", None, 1.0, ""),
    ("privgnn", "accuracy", "accuracy", "node", 100.0, ""),
]
DATASETS = {
    "cora": "Cora",
    "citeseer": "CiteSeer",
    "facebook": "Facebook page-page",
    "fb100-wisconsin87": "Facebook100 Wisconsin87",
    "amazon": "Amazon Computers",
}
#: methods whose ε in the ledger is not a DP guarantee for the unit (the authors'-code variant of PrivGNN)
#: and DRW's ``drw-best`` (a per-ε selection over the DRW variants, not a method of its own)
EXCLUDE = {("privgnn", "privgnn_code"), ("drw", "drw-best")}


def _guarantee(ledger: Any) -> str:
    try:
        g = json.loads(ledger).get("guarantee") if isinstance(ledger, str) and ledger.startswith("{") else None
    except ValueError:
        g = None
    return str(g) if g else "as accounted in the ledger"


def _pareto(g: pd.DataFrame) -> pd.DataFrame:
    """LPGNN's (ε_x, ε_y) grid -> per method, the configurations that beat every cheaper one (total ε = ε_x + ε_y).

    Several splits share (almost) the same total; a practitioner with budget ε picks the best split with total
    ≤ ε, so only the configurations on that front are kept (real stored points, no interpolation).
    """
    keep = []
    for _, m in g.groupby(["unit", "dataset", "method", "private"]):
        best = -np.inf
        for idx, row in m.sort_values(["epsilon", "mean"], ascending=[True, False]).iterrows():
            if not row["private"] or row["mean"] > best:
                keep.append(idx)
                best = max(best, row["mean"]) if row["private"] else best
    return g.loc[keep]


def _summarise(
    df: pd.DataFrame, paper: str, metric: str, unit: str | None, scale: float, prefix: str, keep: set[str]
) -> pd.DataFrame | None:
    df = df[(df["metric"] == metric) & df["dataset"].isin(keep)]
    df = df[~df["method"].map(lambda m: (paper, m) in EXCLUDE)]
    if df.empty:
        return None
    df = df.assign(
        value=df["value"].astype(float) * scale,
        epsilon=df["epsilon"].astype(float).round(2),
        paper=paper,
        guarantee=df["ledger"].map(_guarantee) if "ledger" in df else "",
    )
    df["private"] = np.isfinite(df["epsilon"]) & (df["level"].astype(str) != "none")
    # an infinite ε at a private level (e.g. LPGNN with raw features but noisy labels) is neither a private
    # point nor the non-private reference
    df = df[df["private"] | (df["level"].astype(str) == "none")]
    if unit:
        df["unit"] = unit
    else:  # the source's own levels; its non-private rows serve as the reference line of each level
        levels = sorted(set(df.loc[df["private"], "level"].astype(str)))
        df = pd.concat(
            [df[df["private"]].assign(unit=df["level"].astype(str))]
            + [df[~df["private"]].assign(unit=lv) for lv in levels],
            ignore_index=True,
        )
    df["method"] = prefix + df["method"].astype(str)
    g = (
        df.groupby(["unit", "dataset", "paper", "method", "setting", "epsilon", "private", "guarantee"])["value"]
        .agg(["mean", "std", "size"])
        .reset_index()
    )
    if paper == "lpgnn":
        g = _pareto(g)
        g["method"] = g["method"] + " (best split)"
    return g.rename(columns={"mean": "score", "std": "score_std", "size": "runs"})


def load_comparison(
    profile: str = "paper",
    root: Path | None = None,
    datasets: Iterable[str] = tuple(DATASETS),
    extra: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Mean and std of the test score (in %) per (unit, dataset, method, ε) from ``results/<profile>/``.

    ``root`` defaults to the repository's committed ``results/``. LPGNN's grid is reduced to its front: the
    ``(ε_x, ε_y)`` splits that score better than every split with a smaller total (label
    ``LPGNN <backbone> (best split)``). Non-private rows (level ``none``) are kept as reference lines. ``extra``:
    result rows of our own runs (:func:`run_edge_level`), labelled ``<method> (this project, <profile>)``, unit =
    their level.
    """
    root = Path(root or ROOT / "results")
    keep = set(datasets)
    frames = []
    for paper, artifact, metric, unit, scale, prefix in SOURCES:
        path = results_dir(profile, paper, root) / f"{artifact}.csv"
        if path.exists():
            frames.append(_summarise(pd.read_csv(path, low_memory=False), paper, metric, unit, scale, prefix, keep))
    if extra is not None and len(extra):
        g = _summarise(extra, "compare", "accuracy", None, 1.0, "", keep)
        if g is not None:
            prof = ", ".join(sorted(set(extra["profile"].astype(str)))) if "profile" in extra else ""
            g["method"] = g["method"] + f" (this project{', ' + prof if prof else ''})"
            frames.append(g)
    frames = [f for f in frames if f is not None]
    if not frames:
        return pd.DataFrame(
            columns=[
                "unit",
                "dataset",
                "paper",
                "method",
                "epsilon",
                "private",
                "guarantee",
                "score",
                "score_std",
                "runs",
            ]
        )
    out = pd.concat(frames, ignore_index=True)
    out = out.groupby(["unit", "dataset", "paper", "method", "epsilon", "private", "guarantee"], as_index=False).agg(
        score=("score", "max"), score_std=("score_std", "first"), runs=("runs", "sum")
    )
    return out.sort_values(["unit", "dataset", "method", "epsilon"]).reset_index(drop=True)


#: Our own small runs: GAP and ProGAP at edge level on Cora/CiteSeer (which their paper does not use), per profile.
EDGE_LEVEL = {
    "test": {"datasets": ("cora",), "methods": ("progap", "gap"), "epsilons": (1.0,), "epochs": 5, "runs": 1},
    "smoke": {"datasets": ("cora",), "methods": ("progap", "gap"), "epsilons": (1.0, 4.0), "epochs": 30, "runs": 1},
    "paper": {
        "datasets": ("cora", "citeseer"),
        "methods": ("progap", "gap"),
        "epsilons": (0.25, 0.5, 1.0, 2.0, 4.0),
        "epochs": 100,
        "runs": 3,
    },
}


def run_edge_level(
    profile: str, *, device: str = "auto", force: bool = False, root: Path | None = None, seed: int = 0
) -> pd.DataFrame:
    """Run (resumably) :data:`EDGE_LEVEL` [profile]: GAP/ProGAP edge-level on the Planetoid graphs, depth 2,
    through :func:`dpgnn.series.progap.run_cell` (ledger: ProGAP's accountant); stored as
    ``results/<profile>/compare/edge_level.csv``. Returns the stored rows."""
    from dpgnn.data import load_dataset
    from dpgnn.results import ResultStore
    from dpgnn.series import progap as progap_series
    from dpgnn.sweep import run_grid

    if profile not in EDGE_LEVEL:
        raise ValueError(f"unknown profile {profile!r}; valid: {sorted(EDGE_LEVEL)}")
    cfg = EDGE_LEVEL[profile]
    cells = [
        dict(
            dataset=ds,
            method=m,
            level="edge",
            epsilon=float(e),
            depth=2,
            lr=0.01,
            base_layers=1,
            epochs=cfg["epochs"],
            seed=seed,
            run=r,
        )
        for ds in cfg["datasets"]
        for m in cfg["methods"]
        for e in cfg["epsilons"]
        for r in range(cfg["runs"])
    ]
    data = {ds: load_dataset(ds) for ds in cfg["datasets"]}
    store = ResultStore("compare", profile, root=root)
    return run_grid(
        store, "edge_level", cells, lambda c: progap_series.run_cell(data[c["dataset"]], c, device=device), force=force
    )


def best_method(comp: pd.DataFrame, budgets: Iterable[float] = (0.5, 1, 2, 4, 8, 16, 32)) -> pd.DataFrame:
    """For each unit, dataset and budget ε: the method with the highest stored score at any ε' ≤ budget.

    A method counts at a budget only through a configuration that fits the budget; ties go to the first method in
    name order. Rows without a private configuration under the budget are left out.
    """
    rows = []
    priv = comp[comp["private"]]
    for (unit, ds), g in priv.groupby(["unit", "dataset"]):
        for b in budgets:
            fit = g[g["epsilon"] <= b + 1e-9]
            if fit.empty:
                continue
            per = fit.sort_values(["score", "method"], ascending=[False, True]).iloc[0]
            rows.append(
                dict(
                    unit=unit,
                    dataset=ds,
                    budget=float(b),
                    method=per["method"],
                    score=float(per["score"]),
                    epsilon=float(per["epsilon"]),
                    paper=per["paper"],
                )
            )
    return pd.DataFrame(rows, columns=["unit", "dataset", "budget", "method", "score", "epsilon", "paper"])


def plot_accuracy_vs_epsilon(comp: pd.DataFrame) -> plt.Figure:
    """One row of panels per privacy unit, one panel per dataset; dashed lines = the non-private score."""
    units = [u for u in UNITS if u in set(comp.loc[comp["private"], "unit"])]
    if not units:
        raise ValueError("no private result rows to compare (is results/<profile>/ empty?)")
    ncol = max(comp[comp["unit"] == u]["dataset"].nunique() for u in units)
    fig, axes = plt.subplots(len(units), ncol, figsize=(3.4 * ncol, 2.8 * len(units)), squeeze=False)
    for i, unit in enumerate(units):
        sub = comp[comp["unit"] == unit]
        for j, ds in enumerate(sorted(sub["dataset"].unique())):
            ax = axes[i, j]
            d = sub[sub["dataset"] == ds]
            for method, m in d[d["private"]].groupby("method"):
                ax.errorbar(
                    m["epsilon"], m["score"], yerr=m["score_std"].fillna(0), marker="o", ms=3, capsize=2, label=method
                )
            for _, m in d[~d["private"]].groupby("method"):
                ax.axhline(m["score"].max(), ls="--", lw=0.8, color="grey")
            ax.set_xscale("log")
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_title(f"{DATASETS.get(ds, ds)}", fontsize=9)
            ax.set_xlabel("ε", fontsize=8)
            ax.legend(fontsize=6)
        axes[i, 0].set_ylabel(f"{UNITS[unit]}\nscore (%)", fontsize=8)
        for j in range(sub["dataset"].nunique(), ncol):
            axes[i, j].axis("off")
    fig.suptitle(
        "Score against ε, one row per privacy unit\n(ε of different rows are different guarantees; "
        "dashed: non-private)",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def plot_best_method(best: pd.DataFrame) -> plt.Figure:
    """Which method to use at which ε: one strip per (unit, dataset), coloured by the best method, score printed."""
    if best.empty:
        raise ValueError("no budgets with a private result")
    strips = best[["unit", "dataset"]].drop_duplicates().values.tolist()
    budgets = sorted(best["budget"].unique())
    methods = sorted(best["method"].unique())
    colours = {m: plt.cm.tab20(i % 20) for i, m in enumerate(methods)}
    fig, ax = plt.subplots(figsize=(1.1 * len(budgets) + 4.5, 0.45 * len(strips) + 1.6))
    for r, (unit, ds) in enumerate(strips):
        for b in budgets:
            hit = best[(best["unit"] == unit) & (best["dataset"] == ds) & (best["budget"] == b)]
            if hit.empty:
                continue
            h = hit.iloc[0]
            k = budgets.index(b)
            ax.add_patch(plt.Rectangle((k, r), 0.95, 0.9, color=colours[h["method"]]))
            ax.text(k + 0.47, r + 0.45, f"{h['score']:.0f}", ha="center", va="center", fontsize=7)
    ax.set_xlim(0, len(budgets))
    ax.set_ylim(len(strips), 0)
    ax.set_xticks(np.arange(len(budgets)) + 0.47, [f"ε ≤ {b:g}" for b in budgets], fontsize=8)
    ax.set_yticks(np.arange(len(strips)) + 0.45, [f"{DATASETS.get(d, d)} · {u}" for u, d in strips], fontsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[m]) for m in methods]
    ax.legend(handles, methods, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(
        "Which method at which budget (best stored score with ε' ≤ budget; rows of different units are "
        "different guarantees)",
        fontsize=8,
    )
    fig.tight_layout()
    return fig
