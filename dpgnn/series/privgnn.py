"""PrivGNN series ("Releasing Graph Neural Networks with Differential Privacy Guarantees", TMLR 2023).

Notebook 01: every ε table (Tables 2, 3, 9; Fig. 2b; Fig. 7's ε axis) computed by the accountant, the δ finding,
Theorem 7 beside it. Notebook 02: accuracy (RQ1 Table 5 / Fig. 2a, RQ2 Table 1, RQ3 Table 6, baselines Tables 7-9)
on the datasets available offline.

The series API (:mod:`dpgnn.series.common`): ``run(cfg, store, artifact)`` computes and stores the rows of an
artifact under ``results/<profile>/privgnn/`` (the ε tables -- ``"epsilon"`` or one of :data:`EPSILON_ARTIFACTS`,
pure computation, replaced whole -- or the accuracy cells -- ``"accuracy"`` or one of :data:`ACCURACY_ARTIFACTS`,
resumable, one cell per dataset and run); ``side_by_side(store, artifact)`` puts the paper's numbers beside ours
and ``plot(store, figure)`` draws Fig. 2a/2b/7 from stored rows only. PrivGNN searches no hyper-parameter grid
(K, γ, λ are the paper's), so there is no ``select_best``. The methods are resolved through
:func:`dpgnn.methods.get` (``("privgnn", method, level)``); ``run_epsilon``/``run_accuracy``,
``epsilon_side_by_side``/``accuracy_side_by_side`` and ``plot_epsilon``/``plot_accuracy`` are what the API
dispatches to.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import pandas as pd
import torch

from dpgnn import plotting
from dpgnn.methods import get as get_method
from dpgnn.methods import privgnn as P
from dpgnn.privacy.pate import (
    implied_delta,
    order2_epsilon,
    pate_epsilon,
    privgnn_epsilon,
    theorem7_epsilon,
)
from dpgnn.privacy.privgnn import statement_as_published as privgnn_statement
from dpgnn.privacy.privgnn import statement_sound as privgnn_sound_statement
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.sweep import CellSpec, check_train, grid, run_grid
from dpgnn.utils import make_generator, resolve_device, stable_seed

PAPER = "privgnn"
LAMS = list(P.LAMBDAS)
_ALL_EPS = ["amazon", "amazon2m", "reddit", "facebook", "arxiv", "credit"]

PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "eps_lambdas": LAMS, "fig7_queries": [10, 100, 200, 300, 500, 1000], "delta_cells": 6,
        "datasets": ["credit", "amazon"], "full_datasets": ["credit"], "lambdas": [0.2, 1.0], "queries": [200],
        "main_queries": 200, "k": 100, "table1_k": [], "gamma": 0.3, "teacher_epochs": 20, "student_epochs": 15,
        "runs": 1,
        "pate_teachers": 10, "noise_variants": ["posterior", "log_softmax"], "baselines": ["b1", "b2", "b3", "mlp",
                                                                                          "b4"],
        # Table 5's PATE rows are Amazon's, which smoke keeps light; PATE runs in the paper profile
        "pate": False, "seed": 12345,
    },
    "test": {
        "eps_lambdas": [0.1, 1.0], "fig7_queries": [100, 1000], "delta_cells": 1,
        "datasets": ["credit"], "full_datasets": ["credit"], "lambdas": [1.0], "queries": [20], "main_queries": 20, "k": 20, "table1_k": [],
        "gamma": 0.3, "teacher_epochs": 3, "student_epochs": 3, "runs": 1, "pate_teachers": 4,
        "noise_variants": ["posterior"], "baselines": ["b1"], "pate": False, "seed": 0,
    },
    "paper": {
        "eps_lambdas": LAMS, "fig7_queries": [10, 100, 200, 300, 500, 1000], "delta_cells": 6,
        "datasets": ["amazon", "credit", "fb100-cornell5 (stand-in for facebook)"],
        "full_datasets": ["amazon", "credit", "fb100-cornell5 (stand-in for facebook)"], "lambdas": LAMS,
        "queries": [500, 1000], "main_queries": 1000, "k": None, "table1_k": [300], "gamma": None,
        "teacher_epochs": 200, "student_epochs": 200, "runs": 3, "pate_teachers": None,
        "noise_variants": ["posterior", "log_softmax"], "baselines": ["b1", "b2", "b3", "mlp", "b4"], "pate": True,
        "seed": 12345,
    },
}


# ---------------------------------------------------------------------------------------------------------------
# the series API
# ---------------------------------------------------------------------------------------------------------------
#: the ε artifacts (Tables 2, 3, 9 and Fig. 7's ε axis), computed together by :func:`run_epsilon`
EPSILON_ARTIFACTS = ("table2_eps", "table3_eps", "table9_eps", "fig7_eps")
#: the paper's accuracy tables, whose rows live in the one stored artifact ``"accuracy"`` (:func:`run_accuracy`)
ACCURACY_ARTIFACTS = ("table1", "table5", "table6", "table7", "table8", "table9")
#: the figures :func:`plot` draws
FIGURES = ("fig2a", "fig2b", "fig7_eps")


def _unknown(what: str, name: str, valid) -> ValueError:
    return ValueError(f"unknown PrivGNN {what} {name!r}; valid: {list(valid)}")


def run(cfg: Settings, store: ResultStore, artifact: str, *, device: str = "auto", force: bool = False,
        train: bool = True):
    """Compute and store ``artifact``'s rows and return them.

    ``"epsilon"``: every ε table (:func:`run_epsilon`; a dict artifact → rows), or one of
    :data:`EPSILON_ARTIFACTS` (all are computed, that one is returned); the accountant trains nothing, so ``device``,
    ``force`` and ``train`` do not apply. ``"accuracy"``: every accuracy cell (:func:`run_accuracy`, resumable;
    ``force`` retrains, ``train=False`` only reads what is stored), or one of :data:`ACCURACY_ARTIFACTS` (the same
    cells, that table's rows returned)."""
    check_train(force, train)
    if artifact == "epsilon" or artifact in EPSILON_ARTIFACTS:
        out = run_epsilon(cfg, store)
        return out if artifact == "epsilon" else out[artifact]
    if artifact == "accuracy" or artifact in ACCURACY_ARTIFACTS:
        rows = run_accuracy(cfg, store, device=device, force=force, train=train)
        if artifact == "accuracy" or rows.empty:
            return rows
        return rows[rows["artifact"] == artifact].reset_index(drop=True)
    raise _unknown("artifact", artifact, ["epsilon", *EPSILON_ARTIFACTS, "accuracy", *ACCURACY_ARTIFACTS])


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """The paper's numbers beside ours: an ε table (:func:`epsilon_side_by_side`), ``"accuracy"`` (every accuracy
    table) or one accuracy table (:func:`accuracy_side_by_side`)."""
    if artifact in EPSILON_ARTIFACTS:
        return epsilon_side_by_side(store, artifact)
    if artifact == "accuracy":
        return accuracy_side_by_side(store)
    if artifact in ACCURACY_ARTIFACTS:
        return accuracy_side_by_side(store, [artifact])
    raise _unknown("artifact", artifact, [*EPSILON_ARTIFACTS, "accuracy", *ACCURACY_ARTIFACTS])


def plot(store: ResultStore, artifact: str):
    """A figure from stored rows: ``"fig2a"`` (accuracy vs λ, Table 5), ``"fig2b"`` (ε vs λ), ``"fig7_eps"`` (ε vs
    |Q|)."""
    if artifact == "fig2a":
        return plot_accuracy(store)
    if artifact == "fig2b":
        return _plot_fig2b(store)
    if artifact == "fig7_eps":
        return _plot_fig7_eps(store)
    raise _unknown("figure", artifact, FIGURES)


# ---------------------------------------------------------------------------------------------------------------
# Notebook 01: privacy budgets (pure computation)
# ---------------------------------------------------------------------------------------------------------------
def _eps_row(artifact: str, dataset: str, method: str, setting: str, value: float, **extra: Any) -> dict[str, Any]:
    return {"artifact": artifact, "dataset": dataset, "method": method, "setting": setting, "metric": "epsilon",
            "value": float(value), "run": 0, "level": "node", **extra}


def run_epsilon(cfg: Settings, store: ResultStore) -> dict[str, pd.DataFrame]:
    """ε of every PrivGNN/PATE-G cell of Tables 2, 3, 9 (δ that reproduces them), the same with the stated δ, and
    Theorem 7 / order-2 closed forms beside them; the sound ε of the algorithm as run (``privgnn (sound)``: noisy
    argmax with the exact per-query ε₀ for the dataset's classes, at the stated δ); Fig. 7's ε vs |Q|. Replaced
    whole on every call."""
    lams = list(cfg.eps_lambdas)
    out: dict[str, list[dict[str, Any]]] = {"table2_eps": [], "table3_eps": [], "table9_eps": [], "fig7_eps": []}
    invalid_t7 = "Theorem 7 converts order-2 RDP with the order-3 term (not a valid conversion)"

    def privgnn_rows(art, ds, gamma, q, setting_fmt):
        info = P.DATASETS[ds]
        for lam in lams:
            eps = privgnn_epsilon(lam, q, gamma, info.delta_reproducing)
            pub = privgnn_statement(lam, q, gamma, info.delta_reproducing, info.classes,
                                    delta_sound=info.delta_stated)
            led = {"accountant": "autodp_rdp_acct", "noise_scale": 1 / lam, "sample_rate": gamma, "steps": q,
                   **pub}
            common = dict(epsilon=eps, delta=info.delta_reproducing, gamma=gamma, queries=q, lam=lam, ledger=led)
            setting = setting_fmt.format(q=q, lam=lam, gamma=gamma)
            out[art].append(_eps_row(art, ds, "privgnn", setting, eps, **common))
            stated = privgnn_epsilon(lam, q, gamma, info.delta_stated)
            out[art].append(_eps_row(art, ds, "privgnn (stated delta)", setting, stated,
                                     **{**common, "epsilon": stated, "delta": info.delta_stated}))
            for name, fn in (("theorem 7 (paper closed form)", theorem7_epsilon),
                             ("order-2 bound (valid closed form)", order2_epsilon)):
                v = fn(lam, q, gamma, info.delta_reproducing)
                extra = {"issues": pub["issues"] + [invalid_t7]} if fn is theorem7_epsilon else {}
                out[art].append(_eps_row(art, ds, name, setting, v, **{**common, "epsilon": v,
                                                                       "ledger": {**led, **extra}}))
            sound = pub["epsilon_sound"]
            led_s = {"accountant": "autodp general Poisson amplification of pure DP (tight conversion)",
                     "noise_scale": 1 / lam, "sample_rate": gamma, "steps": q,
                     **privgnn_sound_statement(lam, q, gamma, info.delta_stated, info.classes)}
            out[art].append(_eps_row(art, ds, "privgnn (sound)", setting, sound,
                                     **{**common, "epsilon": sound, "delta": info.delta_stated, "ledger": led_s}))

    for c in grid(dataset=("amazon", "amazon2m", "reddit", "facebook"), queries=(500, 1000)):
        ds, q = c["dataset"], c["queries"]
        info = P.DATASETS[ds]
        privgnn_rows("table2_eps", ds, info.gamma, q, "Q={q},lam={lam:g}")
        for lam in lams:
            eps = pate_epsilon(lam, q, info.pate_delta).epsilon_data_independent
            led = {"accountant": "pate_moments_data_independent",
                   **P.privacy_ledger("pate_g", lam=lam, queries=q, delta=info.pate_delta)}
            led = {k: v for k, v in led.items() if k not in ("epsilon", "epsilon_data_independent")}
            out["table2_eps"].append(_eps_row("table2_eps", ds, "pate_g", f"Q={q},lam={lam:g}", eps,
                                              epsilon=eps, delta=info.pate_delta, queries=q, lam=lam, ledger=led))
    for c in grid(dataset=("reddit", "amazon2m"), gamma=(0.1, 0.3)):
        privgnn_rows("table3_eps", c["dataset"], c["gamma"], 1000, "gamma={gamma:g},lam={lam:g}")
    for ds in _ALL_EPS:
        privgnn_rows("table9_eps", ds, P.DATASETS[ds].gamma, 1000, "lam={lam:g}")
    for c in grid(dataset=("amazon", "amazon2m"), queries=cfg.fig7_queries):
        ds, q = c["dataset"], c["queries"]
        info = P.DATASETS[ds]
        eps = privgnn_epsilon(0.4, q, info.gamma, info.delta_reproducing)
        led = {"accountant": "autodp_rdp_acct", "noise_scale": 2.5, "sample_rate": info.gamma, "steps": q,
               **privgnn_statement(0.4, q, info.gamma, info.delta_reproducing, info.classes,
                                   delta_sound=info.delta_stated)}
        out["fig7_eps"].append(_eps_row("fig7_eps", ds, "privgnn", f"Q={q},lam=0.4", eps, epsilon=eps,
                                        delta=info.delta_reproducing, queries=q, lam=0.4, gamma=info.gamma,
                                        ledger=led))
    for art, rows in out.items():
        store.replace(art, rows)
    return {art: store.load(art) for art in out}


def delta_finding(cfg: Settings) -> pd.DataFrame:
    """For one printed ε per (γ, |Q|, stated δ) group: the δ that reproduces it vs the δ the paper states."""
    cells = [("amazon/reddit/facebook/credit", 0.3, 1000, 0.4, 19.81, 1e-4),
             ("amazon/reddit/facebook", 0.3, 500, 0.4, 13.15, 1e-4),
             ("reddit (Table 3)", 0.1, 1000, 0.4, 5.20, 1e-4),
             ("amazon2m", 0.1, 1000, 0.4, 5.94, 1e-5),
             ("amazon2m", 0.1, 500, 0.4, 4.03, 1e-5),
             ("arxiv / amazon2m gamma=0.3", 0.3, 1000, 0.4, 22.11, 1e-5)]
    rows = []
    for ds, g, q, lam, printed, stated in cells[: cfg.delta_cells]:
        d = implied_delta(printed, lam, q, g)
        rows.append({"datasets": ds, "gamma": g, "queries": q, "lam": lam, "paper_epsilon": printed,
                     "stated_delta": stated, "epsilon_at_stated_delta": privgnn_epsilon(lam, q, g, stated),
                     "implied_delta": d, "implied / stated": d / stated})
    return pd.DataFrame(rows)


def epsilon_side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """Paper ε beside ours (accountant, reproducing δ), the stated-δ value and Theorem 7, with the status; then the
    sound ε of the algorithm as run (stated δ, exact per-query ε₀ for the dataset's classes) and its ratio to the
    paper's printed ε."""
    ours = store.load(artifact)
    rep = compare(load_reference(PAPER, artifact), ours, profile=store.profile, skipped=store.skipped())
    wide = ours.pivot_table(index=["dataset", "setting"], columns="method", values="value", aggfunc="first")
    rep = rep.merge(wide.reset_index(), on=["dataset", "setting"], how="left")
    keep = ["dataset", "method", "setting", "paper_value", "ours_value", "diff", "status"]
    extra = [c for c in ("privgnn (stated delta)", "theorem 7 (paper closed form)",
                         "order-2 bound (valid closed form)", "privgnn (sound)") if c in rep]
    rep.loc[rep["method"] != "privgnn", extra] = float("nan")
    if "privgnn (sound)" in rep:
        rep["sound / paper"] = rep["privgnn (sound)"] / rep["paper_value"]
        extra.append("sound / paper")
    return rep[keep + extra].round(3)


def plot_epsilon(store: ResultStore):
    """Fig. 2b (ε vs λ, |Q| = 1000, log y) and Fig. 7's ε axis (ε vs |Q| at λ = 0.4)."""
    return {"fig2b": _plot_fig2b(store), "fig7_eps": _plot_fig7_eps(store)}


def _plot_fig2b(store: ResultStore):
    t2 = store.load("table2_eps")
    t2 = t2[(t2["queries"] == 1000) & t2["method"].isin(["privgnn", "pate_g", "theorem 7 (paper closed form)"])]
    ref = load_reference(PAPER, "table2_eps")
    ref = ref[ref["setting"].str.startswith("Q=1000")].assign(
        lam=lambda r: r["setting"].str.split("lam=").str[1].astype(float))
    f2b = plotting.lines(t2, x="lam", y="value", hue="method", col="dataset", logy=True, reference=ref,
                         xlabel="λ", ylabel="ε", ncols=4, title="Fig. 2b: ε vs λ, |Q| = 1000 (◇ = paper)")
    return f2b


def _plot_fig7_eps(store: ResultStore):
    return plotting.lines(store.load("fig7_eps"), x="queries", y="value", hue="method", col="dataset",
                          xlabel="|Q|", ylabel="ε", title="Fig. 7 (ε axis): λ = 0.4")


# ---------------------------------------------------------------------------------------------------------------
# Notebook 02: accuracy (RQ1-RQ3, baselines)
# ---------------------------------------------------------------------------------------------------------------
def _run_seed(cfg: Settings, dataset: str, run: int) -> int:
    return stable_seed(PAPER, dataset, int(cfg.seed), P.SEEDS[run % len(P.SEEDS)], run)


#: the ledger of a ``privgnn_code`` row (built by the method, :func:`dpgnn.methods.privgnn.log_softmax_ledger`)
log_softmax_ledger = P.log_softmax_ledger


def _acc_row(artifact, dataset, method, setting, acc, run, seed, ledger, **extra):
    return {"artifact": artifact, "dataset": dataset, "method": method, "setting": setting, "metric": "accuracy",
            "value": float(acc), "run": run, "seed": seed, "level": ledger.get("level"),
            "epsilon": ledger.get("epsilon"), "delta": ledger.get("delta"),
            "ledger": {k: v for k, v in ledger.items() if k != "event"}, **extra}


def _accuracy_cell(cfg: Settings, pd_: P.PrivGNNData, dataset: str, run: int, device: str) -> list[dict[str, Any]]:
    """Everything of one (dataset, run): teachers once for the largest |Q| (prefix + λ reuse), all students."""
    info = P.DATASETS[dataset]
    full = dataset in cfg.full_datasets  # otherwise only the main PrivGNN rows (smoke keeps big graphs light)
    seed = _run_seed(cfg, dataset, run)
    gamma = cfg.gamma or info.gamma
    k = cfg.k or info.k
    main_q = cfg.main_queries
    qmax = max(cfg.queries) if full else main_q
    te, se = cfg.teacher_epochs, cfg.student_epochs
    rows: list[dict[str, Any]] = []
    common = dict(k=k, gamma=gamma, teacher_epochs=te, student_epochs=se, main_queries=main_q)

    # the methods' config (dpgnn.methods.get(PAPER, method, level)); the run seed is the cell's
    method_cfg = dict(gamma=gamma, teacher_epochs=te, student_epochs=se, delta=info.delta_reproducing,
                      delta_sound=info.delta_stated)

    def privgnn_rows(post, kval, artifact_for):
        """Students of every (noise variant, λ, |Q|) on the teachers ``post``, in the order the rows were always
        computed (dropout masks come from the global generator, so the order is part of the numbers)."""
        for noise in cfg.noise_variants:
            spec = get_method(PAPER, "privgnn" if noise == "posterior" else "privgnn_code", "node")
            for lam in cfg.lambdas:
                for q in (cfg.queries if full else [main_q]):
                    art, setting = artifact_for(q, lam)
                    if art is None:
                        continue
                    res = spec.run(pd_, {**method_cfg, "k": kval, "queries": q, "lam": lam}, seed=seed,
                                   device=device, teachers=post)
                    rows.append(_acc_row(art, dataset, spec.method, setting, res.test, run, seed, res.ledger,
                                         queries=q, lam=lam, **{**common, "k": kval},
                                         teacher_accuracy=res.extra["teacher_accuracy"],
                                         teacher_epochs_per_s=res.extra["teacher_epochs_per_s"]))

    post = P.teachers_for(pd_, {**method_cfg, "k": k, "queries": qmax}, seed=seed, device=device)
    privgnn_rows(post, k, lambda q, lam: (("table5", f"lam={lam:g}") if q == main_q else
                                          ("table6", f"Q={q},lam={lam:g}")))
    if dataset == "credit":  # Table 9 reports Credit's PrivGNN accuracy
        for r in [r for r in rows if r["artifact"] == "table5"]:
            rows.append({**r, "artifact": "table9"})
    if not full:
        return rows
    for k2 in cfg.table1_k:
        post2 = P.teachers_for(pd_, {**method_cfg, "k": k2, "queries": main_q}, seed=seed, device=device)
        privgnn_rows(post2, k2, lambda q, lam, k2=k2: (("table1", f"K={k2},lam={lam:g}") if q == main_q
                                                       else (None, None)))
    for b in cfg.baselines:
        spec = get_method(PAPER, b, "none")
        if b == "b4":
            for lam in cfg.lambdas:
                res = spec.run(pd_, {"queries": main_q, "lam": lam, "student_epochs": se}, seed=seed, device=device)
                rows.append(_acc_row("table9", dataset, "b4", f"lam={lam:g}", res.test, run, seed, res.ledger,
                                     lam=lam, queries=main_q, **common))
            continue
        res = spec.run(pd_, {"epochs": se}, seed=seed, device=device)
        for art in BASELINE_ARTIFACTS[b]:
            rows.append(_acc_row(art, dataset, b, "non-private", res.test, run, seed, res.ledger, **common))
    if cfg.pate:
        pate_cfg = {**method_cfg, "queries": main_q, "num_teachers": cfg.pate_teachers or info.pate_teachers,
                    "delta": info.pate_delta or info.delta_reproducing}
        for kind in ("gnn", "mlp"):
            spec = get_method(PAPER, f"pate_{kind[0]}", "node")
            counts = P.votes_for(pd_, pate_cfg, seed=seed, kind=kind, device=device)
            for lam in cfg.lambdas:
                res = spec.run(pd_, {**pate_cfg, "lam": lam}, seed=seed, device=device, votes=counts)
                rows.append(_acc_row("table5", dataset, spec.method, f"lam={lam:g}", res.test, run, seed, res.ledger,
                                     lam=lam, queries=main_q, pate_teachers=pate_cfg["num_teachers"], **common))
    return rows


#: the tables each non-private baseline's accuracy is reported in (B2 is Table 7's "GNN" row too)
BASELINE_ARTIFACTS = {"b1": ("table5", "table8"), "b2": ("table5", "table8", "table7"), "b3": ("table8",),
                      "mlp": ("table7",)}


@functools.lru_cache(maxsize=8)
def _data(name: str) -> P.PrivGNNData:
    """The prepared dataset, loaded once per process (a notebook's kernel or a Dask worker) and reused by every
    cell that runs there."""
    return P.prepare(name)


def accuracy_cells(cfg: Settings, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """One cell per (dataset, run): its teachers are trained once and reused across λ and |Q| inside the cell."""
    names = list(cfg.datasets if datasets is None else datasets)
    if not names:
        return []
    fixed = {"seed": cfg.seed, "k": cfg.k, "gamma": cfg.gamma, "queries": list(cfg.queries),
             "lambdas": list(cfg.lambdas), "teacher_epochs": cfg.teacher_epochs, "student_epochs": cfg.student_epochs,
             "table1_k": list(cfg.table1_k), "baselines": list(cfg.baselines), "pate": cfg.pate,
             "noise_variants": list(cfg.noise_variants)}
    return [{**c, **fixed, "full": c["dataset"] in cfg.full_datasets}
            for c in grid(dataset=names, run=range(cfg.runs))]


def run_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Every accuracy row of one (dataset, run) cell (see :func:`_accuracy_cell`)."""
    return _accuracy_cell(cfg, _data(cell["dataset"]), cell["dataset"], cell["run"], device)


def run_accuracy(cfg: Settings, store: ResultStore, *, device: str = "auto", force: bool = False,
                 train: bool = True) -> pd.DataFrame:
    """All accuracy rows, one resumable cell per (dataset, run); unavailable datasets are recorded as not_run.

    ``train=False`` trains nothing and returns the stored rows (e.g. after ``dpgnn run``)."""
    check_train(force, train)
    if not train:
        return store.load("accuracy")
    torch.set_num_threads(max(1, torch.get_num_threads()))
    names = [n for n in cfg.datasets if load_or_skip(store, n, _data) is not None]
    cells = accuracy_cells(cfg, names)
    if not cells:
        return store.load("accuracy")
    return run_grid(store, "accuracy", cells, functools.partial(run_cell, cfg, device=device),
                    desc="PrivGNN accuracy", force=force, device=str(resolve_device(device)))


#: the grid of this series, cell by cell (:mod:`dpgnn.engine`); the ε tables are pure computation
CELLS = {"accuracy": CellSpec(PAPER, "accuracy", "accuracy", accuracy_cells, run_cell, skip_as="*")}


def accuracy_side_by_side(store: ResultStore, artifacts: list[str] | None = None) -> pd.DataFrame:
    """Paper accuracy beside ours (mean over runs, n_runs) for the given artifacts, with status."""
    ours = store.load("accuracy")
    ref = load_reference(PAPER)
    ref = ref[ref["metric"] == "accuracy"]
    if artifacts:
        ref = ref[ref["artifact"].isin(artifacts)]
    rep = compare(ref, ours, profile=store.profile, skipped=store.skipped())
    cols = ["artifact", "dataset", "method", "setting", "paper_value", "ours_value", "ours_spread", "n_runs", "diff",
            "status"]
    return rep[cols].round(3)


def plot_accuracy(store: ResultStore):
    """Fig. 2a-style: student accuracy vs λ per method and dataset (B1/B2 as flat lines), paper ◇ for Amazon."""
    df = store.load("accuracy")
    df = df[df["artifact"] == "table5"]
    if df.empty:
        raise ValueError("no accuracy rows stored yet")
    lams = sorted(df["lam"].dropna().unique())
    flat = df[df["method"].isin(["b1", "b2"])]
    df = pd.concat([df[~df["method"].isin(["b1", "b2"])]] + [flat.assign(lam=x) for x in lams], ignore_index=True)
    agg = df.groupby(["dataset", "method", "lam"])["value"].agg(value="mean", spread="std").reset_index()
    ref = load_reference(PAPER, "table5")
    ref = ref[ref["setting"].str.startswith("lam=")].assign(lam=lambda r: r["setting"].str[4:].astype(float))
    return plotting.lines(agg, x="lam", y="value", err="spread", hue="method", col="dataset", reference=ref,
                          xlabel="λ", ylabel="accuracy", title="Fig. 2a / Table 5: accuracy vs λ (◇ = paper)")
