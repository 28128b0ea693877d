"""Audit series, notebook 03: PrivGNN's membership-inference attacks (Fig. 4, artifact ``fig4``) and how far the
attacker's open choices move them (shadow designs, artifact ``fig4_shadows``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpgnn import plotting
from dpgnn.methods import privgnn as P
from dpgnn.reference import load_reference
from dpgnn.report import paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.series.audit.common import PAPER
from dpgnn.series.audit.profiles import MIA_NOISE, AuditProfile
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import stable_seed


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
    """Attack-1 / Attack-2 AUROC against B1 and the PrivGNN student (λ = ``mia.lam``), per dataset and run;
    with ``"log_softmax"`` in ``mia.noise`` also against the authors'-code student (``privgnn_code``). Rows carry
    the targets' diagnostics (:func:`dpgnn.audit.mia.run_attacks`: pseudo-label accuracy, member / non-member
    confidence, test accuracy)."""
    load = _prepared()

    names = [n for n in cfg.mia.datasets if load_or_skip(store, n, load, artifact="fig4") is not None]

    def cell(c):
        from dpgnn.audit import mia

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
        run=list(range(cfg.mia.runs)),
        queries=[cfg.mia.queries],
        k=[cfg.mia.k],
        lam=[cfg.mia.lam],
        teacher_epochs=[cfg.mia.teacher_epochs],
        student_epochs=[cfg.mia.student_epochs],
        seed=[cfg.seed],
    )
    noise = list(cfg.mia.noise)
    if not noise or set(noise) - set(MIA_NOISE):
        raise ValueError(f"mia.noise must be a non-empty subset of {MIA_NOISE}, got {noise!r}")
    # "posterior": the paper's student and B1; "log_softmax": the authors'-code student (rows ``privgnn_code``), in
    # cells of their own (the paper cells keep their config hashes)
    # "rebmigraph": the published attack protocol (metric ``auroc_published``), one cell per (dataset, run) with
    # every target and noise placement
    published = [n for n in cfg.mia.published_datasets if n in names]
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
    """Artifact ``fig4_shadows``: per (dataset, run) of ``mia.shadows.datasets`` the Fig. 4 targets (B1 and both
    students, the settings of :func:`run_mia`) trained once and attacked with every shadow design of
    ``mia.shadows.sizes`` × ``mia.shadows.epochs`` × ``mia.shadows.protocols``, plus the oracle and confidence
    references (:func:`dpgnn.audit.mia.shadow_sensitivity`). Rows as in ``fig4`` (``metric`` ``auroc`` or
    ``auroc_published``) with ``design``, ``shadow``, ``shadow_epochs`` and ``protocol``."""
    load = _prepared()

    names = [n for n in cfg.mia.shadows.datasets if load_or_skip(store, n, load, artifact="fig4_shadows") is not None]

    def cell(c):
        from dpgnn.audit import mia

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

    noise = list(cfg.mia.noise)
    if not noise or set(noise) - set(MIA_NOISE):
        raise ValueError(f"mia.noise must be a non-empty subset of {MIA_NOISE}, got {noise!r}")
    cells = (
        grid(
            dataset=names,
            run=list(range(cfg.mia.shadows.runs)),
            queries=[cfg.mia.queries],
            k=[cfg.mia.k],
            lam=[cfg.mia.lam],
            teacher_epochs=[cfg.mia.teacher_epochs],
            student_epochs=[cfg.mia.student_epochs],
            seed=[cfg.seed],
            noise_on=[noise],
            sizes=[list(cfg.mia.shadows.sizes)],
            shadow_epochs=[list(cfg.mia.shadows.epochs)],
            protocols=[list(cfg.mia.shadows.protocols)],
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
