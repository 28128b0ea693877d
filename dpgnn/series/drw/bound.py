"""The sampling-probability bound and the ε of one step per sampler (notebook 03, artifact ``bound``; a figure
none of the papers has): pure accounting from the paper's Tables 3-4."""

from __future__ import annotations

import pandas as pd

from dpgnn import plotting
from dpgnn.data.random_walks import sampler_bound
from dpgnn.methods import drw
from dpgnn.privacy.fdp import fdp_epsilon, max_affected
from dpgnn.privacy.guarantee import SOUND, statement
from dpgnn.reference import load_reference
from dpgnn.results import ResultStore
from dpgnn.series.drw.profiles import PAPER, DRWProfile
from dpgnn.series.drw.table1 import (
    _table1_vs_paper,
)

#: the sampling-bound rows are pure accounting of one step (no data is trained on): the bound is the statement
_BOUND_STATEMENT = statement(
    SOUND,
    "replace one node's features (feature-level, graph public)",
    accounted="one subsampled Gaussian step at the sampler's inclusion bound q",
)


def run_bound(cfg: DRWProfile, store: ResultStore) -> pd.DataFrame:
    """q and the ε of ONE step per sampler, dataset, depth and noise, from the paper's Tables 3-4 (pure math)."""
    rows = []
    for name in cfg.bound_datasets:
        n, delta = drw.NUM_TRAIN[name], drw.DELTA[name]
        for layers in (1, 2):
            for sampler in ("drw", "drw-r", "fdp"):
                b = drw.batch_size(name, sampler, layers)
                if sampler == "fdp":
                    k = max_affected(cfg.fdp_degree, layers)
                    q = b / n
                else:
                    k, q = 1, sampler_bound(sampler, b, n, layers)
                for z in cfg.bound_noises:
                    if sampler == "fdp":
                        eps1 = fdp_epsilon(1, z, n, b, k, delta)[0]
                    else:
                        eps1 = drw.drw_epsilon(z, q, 1, delta)
                    base = {
                        "dataset": name,
                        "method": sampler,
                        "setting": f"L={layers}",
                        "num_layers": layers,
                        "num_train": n,
                        "batch": b,
                        "max_affected": k,
                        "noise_multiplier": z,
                        "delta": delta,
                        "level": "feature",
                        "ledger": {
                            "level": "feature",
                            "sampling_rate": q,
                            "noise_multiplier": z,
                            "delta": delta,
                            "steps": 1,
                            "accountant": "autodp" if k == 1 else "fdp-hypergeometric",
                            **_BOUND_STATEMENT,
                        },
                    }
                    rows.append({**base, "metric": "q", "value": q, "epsilon": eps1})
                    rows.append({**base, "metric": "eps_one_step", "value": eps1, "epsilon": eps1})
    store.replace("bound", rows)
    return store.load("bound")


def plot_bound(store: ResultStore):
    """The sampling-bound figure from the stored ``bound`` rows: q per sampler and the ε of one step, by training
    nodes."""
    df = store.load("bound")
    if df.empty:
        raise ValueError("no bound rows stored yet")
    q = df[df["metric"] == "q"].drop_duplicates(["dataset", "method", "setting"])
    q = q.assign(panel="q bound, " + q["setting"])
    e = df[df["metric"] == "eps_one_step"]
    e = e.assign(panel="ε of one step, " + e["setting"] + ", z=" + e["noise_multiplier"].map(lambda v: f"{v:g}"))
    both = pd.concat([q, e], ignore_index=True)
    return plotting.lines(
        both,
        x="num_train",
        y="value",
        hue="method",
        col="panel",
        logx=True,
        order=["drw", "drw-r", "fdp"],
        xlabel="training nodes N (log)",
        ylabel="value",
        ncols=4,
        title="Sampling-probability bound q = B/⌈N/(1+R·L)⌉ (FDP: B/N) and ε per step (paper's B, δ)",
    )


def bound_side_by_side(store: ResultStore) -> pd.DataFrame:
    """Per dataset: q of DRW (1 layer) and ε of one step beside the paper's Table 1 gain of DRW over FDP."""
    df = store.load("bound")
    sub = df[(df["metric"] == "q") & (df["num_layers"] == 1)].drop_duplicates(["dataset", "method"])
    q = sub.pivot(index="dataset", columns="method", values="value").add_prefix("q ")
    e = df[(df["metric"] == "eps_one_step") & (df["num_layers"] == 1)]
    zmax = e["noise_multiplier"].max()
    e = e[e["noise_multiplier"] == zmax].pivot(index="dataset", columns="method", values="value")
    e = e.add_prefix(f"ε/step z={zmax:g} ")
    ref = load_reference(PAPER, "table1")
    ref = ref[ref["setting"] == "1-layer"].pivot(index="dataset", columns="method", values="value")
    gain = (ref["drw"] - ref["fdp"]).rename("paper: DRW − FDP (1 layer, F1 pts)")
    out = q.join(e).join(gain, how="left").reset_index()
    out["num_train"] = out["dataset"].map(drw.NUM_TRAIN)
    ours = _table1_vs_paper(store)
    ours = ours[ours["setting"] == "1-layer"].pivot(index="dataset", columns="method", values="ours_value")
    if {"drw", "fdp"} <= set(ours.columns):
        out = out.merge((ours["drw"] - ours["fdp"]).rename("ours: DRW − FDP").reset_index(), on="dataset", how="left")
    return out.sort_values("num_train")
