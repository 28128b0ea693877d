"""What the audit notebooks share: the series' name, its privacy units and artifacts, and the accounted-vs-audited
table, summary and figure drawn from the stored rows of every audit (notebooks 01, 02 and 04)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpgnn import plotting
from dpgnn.results import ResultStore

PAPER = "audit"

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
    """The ``setting`` of an audit row claiming ``eps``."""
    return "eps=inf" if math.isinf(eps) else f"eps={eps:g}"


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
