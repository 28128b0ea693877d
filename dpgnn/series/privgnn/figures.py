"""Notebook 03: Fig. 3 / App. D.6 (accuracy vs λ and |Q|), Fig. 5 (App. D.1) and Fig. 6 (App. D.2, the flipped
split), with PATE and the baselines beside PrivGNN."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from dpgnn import plotting
from dpgnn.fidelity import parse
from dpgnn.methods import privgnn as P
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series.privgnn import common
from dpgnn.series.privgnn.common import (
    PAPER,
    _acc_row,
    _privgnn_students,
    _run_seed,
    _seeded,
    _teachers,
)
from dpgnn.utils import make_generator, stable_seed


def _figure_cell_common(cell: dict[str, Any], dataset: str) -> tuple[int, float]:
    info = P.DATASETS[dataset]
    return (cell["k"] or info.k), (cell["gamma"] or info.gamma)


def _figure_cells(cfg: Settings, datasets: Sequence[str], extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "k": cfg.k,
            "gamma": cfg.gamma,
            "lambdas": list(cfg.figures.lambdas),
            "teacher_epochs": cfg.teacher_epochs,
            "student_epochs": cfg.student_epochs,
            "teacher": parse(cfg.teacher, "teacher"),
            "noise": list(cfg.figures.noise),
            **extra,
        }
        for n in datasets
        for r in range(cfg.runs)
    ]


def fig3_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 3 (|Q| ∈ ``fig3_queries`` × every λ) and App. D.6 (|Q| ∈ ``d6_queries`` at ``d6_lambda``): one cell
    per (dataset, run); its teachers answer the largest |Q| once and every |Q| is a prefix of that ordering."""
    return _figure_cells(
        cfg,
        cfg.figures.fig3_datasets,
        {
            "fig3_queries": list(cfg.figures.fig3_queries),
            "d6_queries": list(cfg.figures.d6_queries),
            "d6_lambda": cfg.figures.d6_lambda,
        },
    )


@_seeded
def run_fig3_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Rows ``fig3`` (setting ``Q=..,lam=..``) and ``fig7`` (App. D.6: ``Q=..,lam=0.4``) of one (dataset, run)."""
    dataset, run = cell["dataset"], cell["run"]
    graphs = common._data(dataset)
    seed = _run_seed(cfg, dataset, run)
    k, gamma = _figure_cell_common(cell, dataset)
    qmax = max(cell["fig3_queries"] + cell["d6_queries"])
    post = _teachers(
        graphs, cell["teacher"], qmax, k=k, gamma=gamma, seed=seed, epochs=cell["teacher_epochs"], device=device
    )
    points = [
        ("fig3", n, lam, q, f"Q={q},lam={lam:g}", run)
        for n in cell["noise"]
        for q in cell["fig3_queries"]
        for lam in cell["lambdas"]
    ]
    points += [
        ("fig7", n, cell["d6_lambda"], q, f"Q={q},lam={cell['d6_lambda']:g}", run)
        for n in cell["noise"]
        for q in cell["d6_queries"]
    ]
    return _privgnn_students(
        graphs,
        dataset,
        post,
        points,
        seed=seed,
        k=k,
        gamma=gamma,
        teacher=cell["teacher"],
        student_epochs=cell["student_epochs"],
        device=device,
    )


def _private_and_baselines(
    cfg: Settings, cell: dict[str, Any], graphs: P.PrivGNNData, dataset: str, artifact: str, suffix: str, device: str
) -> list[dict[str, Any]]:
    """PrivGNN, PATE-M, PATE-G (|Q| = ``cell["queries"]``, every λ) and B1/B2 of one (dataset, run), with the
    seeds of :func:`~dpgnn.series.privgnn.accuracy._accuracy_cell`; methods named ``<method><suffix>``."""
    info = P.DATASETS[dataset]
    run, q, se = cell["run"], cell["queries"], cell["student_epochs"]
    seed = _run_seed(cfg, dataset, run)
    k, gamma = _figure_cell_common(cell, dataset)
    post = _teachers(
        graphs, cell["teacher"], q, k=k, gamma=gamma, seed=seed, epochs=cell["teacher_epochs"], device=device
    )
    rows = _privgnn_students(
        graphs,
        dataset,
        post,
        [(artifact, n, lam, q, f"lam={lam:g}", run) for n in cell["noise"] for lam in cell["lambdas"]],
        seed=seed,
        k=k,
        gamma=gamma,
        teacher=cell["teacher"],
        student_epochs=se,
        device=device,
        suffix=suffix,
    )
    common = dict(k=k, gamma=gamma, queries=q)
    n_t = cell["pate_teachers"] or info.pate_teachers
    delta = info.pate_delta or info.delta_reproducing
    for kind in ("gnn", "mlp"):
        counts = P.pate_votes(
            graphs,
            q,
            kind=kind,
            num_teachers=n_t,
            seed=stable_seed(seed, "pate", kind),
            epochs=cell["teacher_epochs"],
            device=device,
        )
        jobs = [
            (
                P.query_nodes(graphs, q),
                P.pate_labels(counts, lam, make_generator(stable_seed(seed, "pate-noise", kind, lam)))[:q],
                stable_seed(seed, ("pate", kind, lam)),
            )
            for lam in cell["lambdas"]
        ]
        students = P.train_students(graphs, jobs, epochs=se, device=device)  # the sequential numbers, in one batch
        for lam, student in zip(cell["lambdas"], students):
            acc = student["accuracy"]
            led = P.privacy_ledger(
                f"pate_{kind[0]}",
                lam=lam,
                queries=q,
                delta=delta,
                counts=counts.numpy(),
                standardized=graphs.standardized,
            )
            rows.append(
                _acc_row(
                    artifact,
                    dataset,
                    f"pate_{kind[0]}{suffix}",
                    f"lam={lam:g}",
                    acc,
                    run,
                    seed,
                    led,
                    lam=lam,
                    pate_teachers=n_t,
                    fidelity="paper",
                    **common,
                )
            )
    none = P.privacy_ledger("b1")
    for b, fn in (("b1", P.baseline_b1), ("b2", P.baseline_b2)):
        acc = fn(graphs, seed=stable_seed(seed, b), epochs=se, device=device)["accuracy"]
        rows.append(_acc_row(artifact, dataset, f"{b}{suffix}", "non-private", acc, run, seed, none, **common))
    return rows


def fig5_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 5 (App. D.1, informative node features): PrivGNN, PATE-M, PATE-G, B1, B2 at |Q| = ``figure_queries``."""
    return _figure_cells(
        cfg, cfg.figures.fig5_datasets, {"queries": cfg.figures.queries, "pate_teachers": cfg.figures.pate_teachers}
    )


@_seeded
def run_fig5_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """The rows of one Fig. 5 cell (:func:`fig5_cells`): PrivGNN, PATE-M, PATE-G, B1 and B2 of one (dataset, run)."""
    return _private_and_baselines(cfg, cell, common._data(cell["dataset"]), cell["dataset"], "fig5", "", device)


@functools.lru_cache(maxsize=4)
def _flipped(name: str) -> P.PrivGNNData:
    return P.flip(common._data(name))


def fig6_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 6 (App. D.2): the same methods on the flipped split (:func:`dpgnn.methods.privgnn.flip`)."""
    return _figure_cells(
        cfg,
        cfg.figures.fig6_datasets,
        {"queries": cfg.figures.queries, "flip": True, "pate_teachers": cfg.figures.pate_teachers},
    )


@_seeded
def run_fig6_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """The rows of one Fig. 6 cell (:func:`fig6_cells`): Fig. 5's methods on the flipped split, named ``*_flip``."""
    return _private_and_baselines(cfg, cell, _flipped(cell["dataset"]), cell["dataset"], "fig6", "_flip", device)


def figure_side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """Paper beside ours for ``fig3``, ``fig7`` (App. D.6), ``fig5`` or ``fig6`` (cells the paper only draws read
    ``not_run`` with the paper's value empty; ours is still shown)."""
    spec = {"fig7": "fig3"}.get(artifact, artifact)
    ours = store.load(spec)
    ours = ours[ours["artifact"] == artifact] if len(ours) else ours
    rep = compare(load_reference(PAPER, artifact), ours, profile=store.profile, skipped=store.skipped())
    cols = [
        "dataset",
        "method",
        "setting",
        "paper_value",
        "ours_value",
        "ours_spread",
        "n_runs",
        "diff",
        "status",
        "note",
    ]
    return rep[cols].round(3)


def ours_table(store: ResultStore, artifact: str, store_artifact: str | None = None) -> pd.DataFrame:
    """Our mean ± std per (dataset, method, setting) of one artifact (all methods, also those without a paper
    value, e.g. ``privgnn_code``)."""
    df = store.load(store_artifact or artifact)
    if df.empty:
        return df
    df = df[df["artifact"] == artifact]
    return df.groupby(["dataset", "method", "setting"])["value"].agg(["mean", "std", "size"]).round(3).reset_index()


def plot_fig3(store: ResultStore):
    """Fig. 3 (accuracy vs λ for each |Q|) and App. D.6 (accuracy vs |Q| at λ = 0.4, log x), paper ◇."""
    df = store.load("fig3")
    if df.empty:  # nothing stored yet (e.g. train=False before `dpgnn run`): nothing to draw
        return {}
    df = df.assign(curve=df["method"] + ", |Q|=" + df["queries"].astype(int).astype(str))
    f3 = df[df["artifact"] == "fig3"]
    agg = f3.groupby(["dataset", "curve", "lam"])["value"].agg(value="mean", spread="std").reset_index()
    ref = load_reference(PAPER, "fig3").dropna(subset=["value"])
    ref = ref.assign(
        lam=ref["setting"].str.split("lam=").str[1].astype(float),
        curve=ref["method"] + ", |Q|=" + ref["setting"].str.extract(r"Q=(\d+)")[0],
    )
    ref = ref[ref["dataset"].isin(agg["dataset"])]
    fig3 = plotting.lines(
        agg,
        x="lam",
        y="value",
        err="spread",
        hue="curve",
        col="dataset",
        reference=ref,
        xlabel="λ",
        ylabel="accuracy",
        title="Fig. 3: accuracy vs λ for |Q| (◇ = paper)",
    )
    f7 = df[df["artifact"] == "fig7"]
    agg7 = f7.groupby(["dataset", "method", "queries"])["value"].agg(value="mean", spread="std").reset_index()
    ref7 = load_reference(PAPER, "fig7").dropna(subset=["value"])
    ref7 = ref7[ref7["dataset"].isin(agg7["dataset"])].assign(
        queries=lambda r: r["setting"].str.extract(r"Q=(\d+)")[0].astype(int)
    )
    fig7 = plotting.lines(
        agg7,
        x="queries",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        reference=ref7,
        logx=True,
        xlabel="|Q|",
        ylabel="accuracy",
        title="App. D.6 / Fig. 7: accuracy vs |Q| at λ = 0.4 (◇ = paper)",
    )
    return {"fig3": fig3, "fig7_accuracy": fig7}


def plot_methods(store: ResultStore, artifact: str, title: str):
    """Fig. 5a / Fig. 6: accuracy vs λ per method (B1/B2 flat), and (Fig. 5b) ε vs λ of the private methods."""
    df = store.load(artifact)
    if df.empty:  # nothing stored yet: nothing to draw
        return {}
    lams = sorted(df["lam"].dropna().unique())
    flat = df[df["setting"] == "non-private"]
    acc = pd.concat([df[df["setting"] != "non-private"]] + [flat.assign(lam=x) for x in lams], ignore_index=True)
    agg = acc.groupby(["dataset", "method", "lam"])["value"].agg(value="mean", spread="std").reset_index()
    ref = load_reference(PAPER, artifact).dropna(subset=["value"])
    ref = ref[ref["setting"].str.startswith("lam=") & ref["dataset"].isin(agg["dataset"])]
    ref = ref.assign(lam=ref["setting"].str[4:].astype(float))
    figs = {
        f"{artifact}_accuracy": plotting.lines(
            agg,
            x="lam",
            y="value",
            err="spread",
            hue="method",
            col="dataset",
            reference=ref,
            xlabel="λ",
            ylabel="accuracy",
            title=title,
        )
    }
    eps = df[(df["setting"] != "non-private") & df["epsilon"].astype(float).map(math.isfinite)]
    if len(eps):
        e = (
            eps.groupby(["dataset", "method", "lam"])["epsilon"]
            .mean()
            .reset_index()
            .rename(columns={"epsilon": "value"})
        )
        figs[f"{artifact}_epsilon"] = plotting.lines(
            e,
            x="lam",
            y="value",
            hue="method",
            col="dataset",
            logy=True,
            xlabel="λ",
            ylabel="ε (as published)",
            title=f"{title}: privacy budget vs λ",
        )
    return figs
