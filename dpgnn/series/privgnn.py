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
from dpgnn.privacy.privgnn import SOUND_ACCOUNTANT
from dpgnn.privacy.privgnn import statement_as_published as privgnn_statement
from dpgnn.privacy.privgnn import statement_sound as privgnn_sound_statement
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference, stand_in_for
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series import Series, load_or_skip, register
from dpgnn.sweep import CellSpec, check_train, grid, run_grid
from dpgnn.utils import make_generator, resolve_device, stable_seed, torch_global_seed

PAPER = "privgnn"
LAMS = list(P.LAMBDAS)
_ALL_EPS = ["amazon", "amazon2m", "reddit", "facebook", "arxiv", "credit"]

PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "eps_lambdas": LAMS,
        "fig7_queries": [10, 100, 200, 300, 500, 1000],
        "delta_cells": 6,
        "datasets": ["credit", "amazon"],
        "full_datasets": ["credit"],
        "lambdas": [0.2, 1.0],
        "queries": [200],
        "main_queries": 200,
        "k": 100,
        "table1_k": [],
        "gamma": 0.3,
        "teacher_epochs": 20,
        "student_epochs": 15,
        "runs": 1,
        "pate_teachers": 10,
        "noise_variants": ["posterior", "log_softmax"],
        "baselines": ["b1", "b2", "b3", "mlp", "b4"],
        # Table 5's PATE rows are Amazon's, which smoke keeps light; PATE runs in the paper profile
        "pate": False,
        "seed": 12345,
    },
    "test": {
        "eps_lambdas": [0.1, 1.0],
        "fig7_queries": [100, 1000],
        "delta_cells": 1,
        "datasets": ["credit"],
        "full_datasets": ["credit"],
        "lambdas": [1.0],
        "queries": [20],
        "main_queries": 20,
        "k": 20,
        "table1_k": [],
        "gamma": 0.3,
        "teacher_epochs": 3,
        "student_epochs": 3,
        "runs": 1,
        "pate_teachers": 4,
        "noise_variants": ["posterior"],
        "baselines": ["b1"],
        "pate": False,
        "seed": 0,
    },
    "paper": {
        "eps_lambdas": LAMS,
        "fig7_queries": [10, 100, 200, 300, 500, 1000],
        "delta_cells": 6,
        "datasets": ["amazon", "credit", "fb100-cornell5 (stand-in for facebook)"],
        "full_datasets": ["amazon", "credit", "fb100-cornell5 (stand-in for facebook)"],
        "lambdas": LAMS,
        "queries": [500, 1000],
        "main_queries": 1000,
        "k": None,
        "table1_k": [300],
        "gamma": None,
        "teacher_epochs": 200,
        "student_epochs": 200,
        "runs": 3,
        "pate_teachers": None,
        "noise_variants": ["posterior", "log_softmax"],
        "baselines": ["b1", "b2", "b3", "mlp", "b4"],
        "pate": True,
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
#: the figure and fidelity cells of notebooks 03/04 (``CELLS`` names, run by :func:`run_figures`)
FIGURE_ARTIFACTS = ("fig3", "fig5", "fig6", "authors_code", "authors_baselines", "b4_readings")
#: the reference artifacts of those cells (App. D.6's accuracy axis, ``fig7``, is stored with Fig. 3's cells)
FIGURE_REFERENCES = ("fig3", "fig7", "fig5", "fig6")
_FIGURE_TITLES = {"fig5": "Fig. 5 (App. D.1)", "fig6": "Fig. 6 (App. D.2): flipped portions"}
#: the figures :func:`plot` draws
FIGURES = (
    "fig2a",
    "fig2b",
    "fig7_eps",
    "fig3",
    "fig7_accuracy",
    "fig5_accuracy",
    "fig5_epsilon",
    "fig6_accuracy",
    "fig6_epsilon",
    "authors_code",
    "authors_baselines",
)


def _unknown(what: str, name: str, valid) -> ValueError:
    return ValueError(f"unknown PrivGNN {what} {name!r}; valid: {list(valid)}")


def run(
    cfg: Settings, store: ResultStore, artifact: str, *, device: str = "auto", force: bool = False, train: bool = True
):
    """Compute and store ``artifact``'s rows and return them.

    ``"epsilon"``: every ε table (:func:`run_epsilon`; a dict artifact → rows), or one of
    :data:`EPSILON_ARTIFACTS` (all are computed, that one is returned); the accountant trains nothing, so ``device``,
    ``force`` and ``train`` do not apply. ``"accuracy"``: every accuracy cell (:func:`run_accuracy`, resumable;
    ``force`` retrains, ``train=False`` only reads what is stored), or one of :data:`ACCURACY_ARTIFACTS` (the same
    cells, that table's rows returned). One of :data:`FIGURE_ARTIFACTS` (``fig3``, ``fig5``, ``fig6``,
    ``authors_code``, ``authors_baselines``, ``b4_readings``): that grid's cells (:func:`run_figures`)."""
    check_train(force, train)
    if artifact == "epsilon" or artifact in EPSILON_ARTIFACTS:
        out = run_epsilon(cfg, store)
        return out if artifact == "epsilon" else out[artifact]
    if artifact == "accuracy" or artifact in ACCURACY_ARTIFACTS:
        rows = run_accuracy(cfg, store, device=device, force=force, train=train)
        if artifact == "accuracy" or rows.empty:
            return rows
        return rows[rows["artifact"] == artifact].reset_index(drop=True)
    if artifact in FIGURE_ARTIFACTS:
        return run_figures(cfg, store, (artifact,), device=device, force=force, train=train)[artifact]
    raise _unknown(
        "artifact", artifact, ["epsilon", *EPSILON_ARTIFACTS, "accuracy", *ACCURACY_ARTIFACTS, *FIGURE_ARTIFACTS]
    )


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """The paper's numbers beside ours: an ε table (:func:`epsilon_side_by_side`), ``"accuracy"`` (every accuracy
    table) or one accuracy table (:func:`accuracy_side_by_side`), a figure's cells (``fig3``, ``fig7`` = App. D.6,
    ``fig5``, ``fig6``: :func:`figure_side_by_side`), ``authors_code`` (:func:`authors_code_side_by_side`) or
    ``authors_baselines`` (:func:`authors_baselines_side_by_side`) or ``b4_readings`` (:func:`b4_readings_table`)."""
    if artifact in EPSILON_ARTIFACTS:
        return epsilon_side_by_side(store, artifact)
    if artifact == "accuracy":
        return accuracy_side_by_side(store)
    if artifact in ACCURACY_ARTIFACTS:
        return accuracy_side_by_side(store, [artifact])
    if artifact in FIGURE_REFERENCES:
        return figure_side_by_side(store, artifact)
    if artifact == "authors_code":
        return authors_code_side_by_side(store)
    if artifact == "authors_baselines":
        return authors_baselines_side_by_side(store)
    if artifact == "b4_readings":
        return b4_readings_table(store)
    raise _unknown(
        "artifact",
        artifact,
        [
            *EPSILON_ARTIFACTS,
            "accuracy",
            *ACCURACY_ARTIFACTS,
            *FIGURE_REFERENCES,
            "authors_code",
            "authors_baselines",
            "b4_readings",
        ],
    )


def plot(store: ResultStore, artifact: str):
    """A figure from stored rows: ``"fig2a"`` (accuracy vs λ, Table 5), ``"fig2b"`` (ε vs λ), ``"fig7_eps"`` (ε vs
    |Q|), ``"fig3"``/``"fig7_accuracy"`` (:func:`plot_fig3`), ``"fig5_accuracy"``/``"fig5_epsilon"``/
    ``"fig6_accuracy"``/``"fig6_epsilon"`` (:func:`plot_methods`), ``"authors_code"`` (:func:`plot_authors_code`),
    ``"authors_baselines"`` (:func:`plot_authors_baselines`); a figure whose rows are not stored yet is an error."""
    if artifact == "fig2a":
        return plot_accuracy(store)
    if artifact == "fig2b":
        return _plot_fig2b(store)
    if artifact == "fig7_eps":
        return _plot_fig7_eps(store)
    if artifact not in FIGURES:
        raise _unknown("figure", artifact, FIGURES)
    if artifact in ("fig3", "fig7_accuracy"):
        figs = plot_fig3(store)
    elif artifact == "authors_code":
        figs = plot_authors_code(store)
    elif artifact == "authors_baselines":
        figs = plot_authors_baselines(store)
    else:
        figs = plot_methods(store, artifact[:4], _FIGURE_TITLES[artifact[:4]])
    if artifact not in figs:
        raise ValueError(f"nothing stored to draw {artifact!r} from yet (run its cells first)")
    return figs[artifact]


# ---------------------------------------------------------------------------------------------------------------
# Notebook 01: privacy budgets (pure computation)
# ---------------------------------------------------------------------------------------------------------------
def _eps_row(artifact: str, dataset: str, method: str, setting: str, value: float, **extra: Any) -> dict[str, Any]:
    return {
        "artifact": artifact,
        "dataset": dataset,
        "method": method,
        "setting": setting,
        "metric": "epsilon",
        "value": float(value),
        "run": 0,
        "level": "node",
        **extra,
    }


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
            pub = privgnn_statement(lam, q, gamma, info.delta_reproducing, info.classes, delta_sound=info.delta_stated)
            led = {"accountant": "autodp_rdp_acct", "noise_scale": 1 / lam, "sample_rate": gamma, "steps": q, **pub}
            common = dict(epsilon=eps, delta=info.delta_reproducing, gamma=gamma, queries=q, lam=lam, ledger=led)
            setting = setting_fmt.format(q=q, lam=lam, gamma=gamma)
            out[art].append(_eps_row(art, ds, "privgnn", setting, eps, **common))
            stated = privgnn_epsilon(lam, q, gamma, info.delta_stated)
            out[art].append(
                _eps_row(
                    art,
                    ds,
                    "privgnn (stated delta)",
                    setting,
                    stated,
                    **{**common, "epsilon": stated, "delta": info.delta_stated},
                )
            )
            for name, fn in (
                ("theorem 7 (paper closed form)", theorem7_epsilon),
                ("order-2 bound (valid closed form)", order2_epsilon),
            ):
                v = fn(lam, q, gamma, info.delta_reproducing)
                extra = {"issues": pub["issues"] + [invalid_t7]} if fn is theorem7_epsilon else {}
                out[art].append(
                    _eps_row(art, ds, name, setting, v, **{**common, "epsilon": v, "ledger": {**led, **extra}})
                )
            sound = pub["epsilon_sound"]
            led_s = {
                "accountant": SOUND_ACCOUNTANT,
                "noise_scale": 1 / lam,
                "sample_rate": gamma,
                "steps": q,
                **privgnn_sound_statement(lam, q, gamma, info.delta_stated, info.classes),
            }
            out[art].append(
                _eps_row(
                    art,
                    ds,
                    "privgnn (sound)",
                    setting,
                    sound,
                    **{**common, "epsilon": sound, "delta": info.delta_stated, "ledger": led_s},
                )
            )

    for c in grid(dataset=("amazon", "amazon2m", "reddit", "facebook"), queries=(500, 1000)):
        ds, q = c["dataset"], c["queries"]
        info = P.DATASETS[ds]
        privgnn_rows("table2_eps", ds, info.gamma, q, "Q={q},lam={lam:g}")
        for lam in lams:
            eps = pate_epsilon(lam, q, info.pate_delta).epsilon_data_independent
            led = {
                "accountant": "pate_moments_data_independent",
                **P.privacy_ledger("pate_g", lam=lam, queries=q, delta=info.pate_delta),
            }
            led = {k: v for k, v in led.items() if k not in ("epsilon", "epsilon_data_independent")}
            out["table2_eps"].append(
                _eps_row(
                    "table2_eps",
                    ds,
                    "pate_g",
                    f"Q={q},lam={lam:g}",
                    eps,
                    epsilon=eps,
                    delta=info.pate_delta,
                    queries=q,
                    lam=lam,
                    ledger=led,
                )
            )
    for c in grid(dataset=("reddit", "amazon2m"), gamma=(0.1, 0.3)):
        privgnn_rows("table3_eps", c["dataset"], c["gamma"], 1000, "gamma={gamma:g},lam={lam:g}")
    for ds in _ALL_EPS:
        privgnn_rows("table9_eps", ds, P.DATASETS[ds].gamma, 1000, "lam={lam:g}")
    for c in grid(dataset=("amazon", "amazon2m"), queries=cfg.fig7_queries):
        ds, q = c["dataset"], c["queries"]
        info = P.DATASETS[ds]
        eps = privgnn_epsilon(0.4, q, info.gamma, info.delta_reproducing)
        led = {
            "accountant": "autodp_rdp_acct",
            "noise_scale": 2.5,
            "sample_rate": info.gamma,
            "steps": q,
            **privgnn_statement(
                0.4, q, info.gamma, info.delta_reproducing, info.classes, delta_sound=info.delta_stated
            ),
        }
        out["fig7_eps"].append(
            _eps_row(
                "fig7_eps",
                ds,
                "privgnn",
                f"Q={q},lam=0.4",
                eps,
                epsilon=eps,
                delta=info.delta_reproducing,
                queries=q,
                lam=0.4,
                gamma=info.gamma,
                ledger=led,
            )
        )
    for art, rows in out.items():
        store.replace(art, rows)
    return {art: store.load(art) for art in out}


def delta_finding(cfg: Settings) -> pd.DataFrame:
    """For one printed ε per (γ, |Q|, stated δ) group: the δ that reproduces it vs the δ the paper states."""
    cells = [
        ("amazon/reddit/facebook/credit", 0.3, 1000, 0.4, 19.81, 1e-4),
        ("amazon/reddit/facebook", 0.3, 500, 0.4, 13.15, 1e-4),
        ("reddit (Table 3)", 0.1, 1000, 0.4, 5.20, 1e-4),
        ("amazon2m", 0.1, 1000, 0.4, 5.94, 1e-5),
        ("amazon2m", 0.1, 500, 0.4, 4.03, 1e-5),
        ("arxiv / amazon2m gamma=0.3", 0.3, 1000, 0.4, 22.11, 1e-5),
    ]
    rows = []
    for ds, g, q, lam, printed, stated in cells[: cfg.delta_cells]:
        d = implied_delta(printed, lam, q, g)
        rows.append(
            {
                "datasets": ds,
                "gamma": g,
                "queries": q,
                "lam": lam,
                "paper_epsilon": printed,
                "stated_delta": stated,
                "epsilon_at_stated_delta": privgnn_epsilon(lam, q, g, stated),
                "implied_delta": d,
                "implied / stated": d / stated,
            }
        )
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
    extra = [
        c
        for c in (
            "privgnn (stated delta)",
            "theorem 7 (paper closed form)",
            "order-2 bound (valid closed form)",
            "privgnn (sound)",
        )
        if c in rep
    ]
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
        lam=lambda r: r["setting"].str.split("lam=").str[1].astype(float)
    )
    f2b = plotting.lines(
        t2,
        x="lam",
        y="value",
        hue="method",
        col="dataset",
        logy=True,
        reference=ref,
        xlabel="λ",
        ylabel="ε",
        ncols=4,
        title="Fig. 2b: ε vs λ, |Q| = 1000 (◇ = paper)",
    )
    return f2b


def _plot_fig7_eps(store: ResultStore):
    return plotting.lines(
        store.load("fig7_eps"),
        x="queries",
        y="value",
        hue="method",
        col="dataset",
        xlabel="|Q|",
        ylabel="ε",
        title="Fig. 7 (ε axis): λ = 0.4",
    )


# ---------------------------------------------------------------------------------------------------------------
# Notebook 02: accuracy (RQ1-RQ3, baselines)
# ---------------------------------------------------------------------------------------------------------------
def _run_seed(cfg: Settings, dataset: str, run: int) -> int:
    return stable_seed(PAPER, dataset, int(cfg.seed), P.SEEDS[run % len(P.SEEDS)], run)


#: the ledger of a ``privgnn_code`` row (built by the method, :func:`dpgnn.methods.privgnn.log_softmax_ledger`)
log_softmax_ledger = P.log_softmax_ledger


def _acc_row(artifact, dataset, method, setting, acc, run, seed, ledger, **extra):
    return {
        "artifact": artifact,
        "dataset": dataset,
        "method": method,
        "setting": setting,
        "metric": "accuracy",
        "value": float(acc),
        "run": run,
        "seed": seed,
        "level": ledger.get("level"),
        "epsilon": ledger.get("epsilon"),
        "delta": ledger.get("delta"),
        "ledger": {k: v for k, v in ledger.items() if k != "event"},
        **extra,
    }


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
    method_cfg = dict(
        gamma=gamma, teacher_epochs=te, student_epochs=se, delta=info.delta_reproducing, delta_sound=info.delta_stated
    )

    def privgnn_rows(post, kval, artifact_for):
        """Students of every (noise variant, λ, |Q|) on the teachers ``post``, in the order the rows were always
        computed (dropout masks come from the global generator, so the order is part of the numbers)."""
        for noise in cfg.noise_variants:
            spec = get_method(PAPER, "privgnn" if noise == "posterior" else "privgnn_code", "node")
            for lam in cfg.lambdas:
                for q in cfg.queries if full else [main_q]:
                    art, setting = artifact_for(q, lam)
                    if art is None:
                        continue
                    res = spec.run(
                        pd_,
                        {**method_cfg, "k": kval, "queries": q, "lam": lam},
                        seed=seed,
                        device=device,
                        teachers=post,
                    )
                    rows.append(
                        _acc_row(
                            art,
                            dataset,
                            spec.method,
                            setting,
                            res.test,
                            run,
                            seed,
                            res.ledger,
                            queries=q,
                            lam=lam,
                            **{**common, "k": kval},
                            teacher_accuracy=res.extra["teacher_accuracy"],
                            teacher_epochs_per_s=res.extra["teacher_epochs_per_s"],
                        )
                    )

    post = P.teachers_for(pd_, {**method_cfg, "k": k, "queries": qmax}, seed=seed, device=device)
    privgnn_rows(
        post, k, lambda q, lam: ("table5", f"lam={lam:g}") if q == main_q else ("table6", f"Q={q},lam={lam:g}")
    )
    if dataset == "credit":  # Table 9 reports Credit's PrivGNN accuracy
        for r in [r for r in rows if r["artifact"] == "table5"]:
            rows.append({**r, "artifact": "table9"})
    if not full:
        return rows
    rows += repeated_rows(rows, dataset, k, main_q)
    for k2 in cfg.table1_k:
        post2 = P.teachers_for(pd_, {**method_cfg, "k": k2, "queries": main_q}, seed=seed, device=device)
        privgnn_rows(
            post2, k2, lambda q, lam, k2=k2: ("table1", f"K={k2},lam={lam:g}") if q == main_q else (None, None)
        )
    for b in cfg.baselines:
        spec = get_method(PAPER, b, "none")
        if b == "b4":
            for lam in cfg.lambdas:
                res = spec.run(pd_, {"queries": main_q, "lam": lam, "student_epochs": se}, seed=seed, device=device)
                rows.append(
                    _acc_row(
                        "table9",
                        dataset,
                        "b4",
                        f"lam={lam:g}",
                        res.test,
                        run,
                        seed,
                        res.ledger,
                        lam=lam,
                        queries=main_q,
                        **common,
                    )
                )
            continue
        res = spec.run(pd_, {"epochs": se}, seed=seed, device=device)
        for art in BASELINE_ARTIFACTS[b]:
            rows.append(_acc_row(art, dataset, b, "non-private", res.test, run, seed, res.ledger, **common))
    if cfg.pate:
        pate_cfg = {
            **method_cfg,
            "queries": main_q,
            "num_teachers": cfg.pate_teachers or info.pate_teachers,
            "delta": info.pate_delta or info.delta_reproducing,
        }
        for kind in ("gnn", "mlp"):
            spec = get_method(PAPER, f"pate_{kind[0]}", "node")
            counts = P.votes_for(pd_, pate_cfg, seed=seed, kind=kind, device=device)
            for lam in cfg.lambdas:
                res = spec.run(pd_, {**pate_cfg, "lam": lam}, seed=seed, device=device, votes=counts)
                rows.append(
                    _acc_row(
                        "table5",
                        dataset,
                        spec.method,
                        f"lam={lam:g}",
                        res.test,
                        run,
                        seed,
                        res.ledger,
                        lam=lam,
                        queries=main_q,
                        pate_teachers=pate_cfg["num_teachers"],
                        **common,
                    )
                )
    return rows


#: the datasets of Table 1 (Sec. 5.2) and Table 6 (App. A), whose rows at the dataset's K (Table 1) and at
#: |Q| = 1000 (Table 6) repeat Table 5's configuration and Table 5's numbers
REPEATS_TABLE5 = ("amazon", "amazon2m", "reddit", "facebook")


def repeated_rows(rows: list[dict[str, Any]], dataset: str, k: int, main_q: int) -> list[dict[str, Any]]:
    """Table 5's PrivGNN rows of ``rows`` listed again as Table 1's row ``K=<k>`` and Table 6's row
    ``Q=<main_q>``: the paper prints Table 5's numbers in both (e.g. Amazon, K 750, |Q| 1000: 0.40 … 0.83 in all
    three tables), for the same configuration, so the same students answer for them. Only for the datasets of
    :data:`REPEATS_TABLE5` (and their stand-ins); ``[]`` otherwise."""
    if dataset not in REPEATS_TABLE5 and stand_in_for(PAPER, dataset) not in REPEATS_TABLE5:
        return []
    out = []
    for r in rows:
        if r["artifact"] == "table5" and r["method"] in ("privgnn", "privgnn_code") and r["queries"] == main_q:
            out.append({**r, "artifact": "table1", "setting": f"K={k},lam={r['lam']:g}"})
            out.append({**r, "artifact": "table6", "setting": f"Q={main_q},lam={r['lam']:g}"})
    return out


#: the tables each non-private baseline's accuracy is reported in (B2 is Table 7's "GNN" row too)
BASELINE_ARTIFACTS = {
    "b1": ("table5", "table8"),
    "b2": ("table5", "table8", "table7"),
    "b3": ("table8",),
    "mlp": ("table7",),
}


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
    fixed = {
        "seed": cfg.seed,
        "k": cfg.k,
        "gamma": cfg.gamma,
        "queries": list(cfg.queries),
        "lambdas": list(cfg.lambdas),
        "teacher_epochs": cfg.teacher_epochs,
        "student_epochs": cfg.student_epochs,
        "table1_k": list(cfg.table1_k),
        "baselines": list(cfg.baselines),
        "pate": cfg.pate,
        "noise_variants": list(cfg.noise_variants),
    }
    return [{**c, **fixed, "full": c["dataset"] in cfg.full_datasets} for c in grid(dataset=names, run=range(cfg.runs))]


def _seeded(fn):
    """Run a cell with torch's global RNG (dropout masks) forked and seeded from the cell itself, so a cell gives
    the same rows whatever ran before it in the process (the caller's RNG state is restored)."""

    @functools.wraps(fn)
    def wrapper(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
        with torch_global_seed(stable_seed(PAPER, fn.__name__, cell["dataset"], cell["run"], int(cfg.seed)), device):
            return fn(cfg, cell, device)

    return wrapper


@_seeded
def run_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Every accuracy row of one (dataset, run) cell (see :func:`_accuracy_cell`); dropout masks
    come from the cell's own seed, so rerunning a cell gives the same rows."""
    return _accuracy_cell(cfg, _data(cell["dataset"]), cell["dataset"], cell["run"], device)


def run_accuracy(
    cfg: Settings, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
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
    return run_grid(
        store,
        "accuracy",
        cells,
        functools.partial(run_cell, cfg, device=device),
        desc="PrivGNN accuracy",
        force=force,
        device=str(resolve_device(device)),
    )


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
    cols = [
        "artifact",
        "dataset",
        "method",
        "setting",
        "paper_value",
        "ours_value",
        "ours_spread",
        "n_runs",
        "diff",
        "status",
    ]
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
    return plotting.lines(
        agg,
        x="lam",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        reference=ref,
        xlabel="λ",
        ylabel="accuracy",
        title="Fig. 2a / Table 5: accuracy vs λ (◇ = paper)",
    )


# ---------------------------------------------------------------------------------------------------------------
# Notebook 03 (Fig. 3 / App. D.6, Fig. 5, Fig. 6) and notebook 04 (fidelity="authors_code"), issue #18
# ---------------------------------------------------------------------------------------------------------------
#: settings of the figure and fidelity cells, merged into :data:`PROFILES` (so notebooks and the CLI can override
#: them). ``figure_lambdas``: the λ grid of the figure and fidelity cells; ``teacher``: the teachers of the figure
#: cells, ``"paper"`` (Algorithm 1, our default) or
#: ``"authors_code"`` (:func:`dpgnn.methods.privgnn.authors_code_teacher_posteriors`, unsound); ``figure_noise``:
#: noise variants of the figure cells (``log_softmax`` = the authors' code, rows ``*_code``); ``d6_queries`` at
#: ``d6_lambda``: App. D.6 / Fig. 7's accuracy axis; ``fidelity_*``: the authors'-code teacher cells
#: (``fidelity_student="authors_code"``: their students are the official code's too; ``fidelity_epochs``: the
#: epochs of the authors'-code teachers and of that student, ``None`` = the profile's ``teacher_epochs`` /
#: ``student_epochs``; the official code runs 500, :data:`dpgnn.methods.privgnn.AUTHORS_CODE_EPOCHS`);
#: ``fidelity_baselines_*``: the authors'-code baseline cells (:func:`authors_baselines_cells`), whose
#: ``fidelity_split_*`` PrivGNN students (K, ``None`` = the profile's; |Q|, at the dataset's K only; noise variants)
#: are trained on the official split too. ``b4_*``: the readings of B4 (:func:`b4_readings_cells`).
FIGURE_SETTINGS: dict[str, dict[str, Any]] = {
    # smoke: one λ (= D.6's, so the |Q| = 50 student serves Fig. 3 and D.6) keeps notebook 03 near 20 s of CPU
    "smoke": {
        "teacher": "paper",
        "figure_noise": ["posterior"],
        "figure_lambdas": [0.4],
        "fig3_datasets": ["amazon"],
        "fig3_queries": [25, 50],
        "d6_queries": [25, 50],
        "d6_lambda": 0.4,
        "fig5_datasets": ["credit"],
        "fig6_datasets": ["amazon"],
        "figure_queries": 40,
        "figure_pate_teachers": 3,
        "fidelity_datasets": ["credit"],
        "fidelity_queries": [20],
        "fidelity_k": [50],
        "fidelity_runs": 1,
        "fidelity_pair": True,
        "fidelity_noise": ["log_softmax"],
        "fidelity_student": "paper",
        "fidelity_epochs": None,
        # the baseline cells load Amazon twice (~18 s): not in the smoke budget; the test profile runs them
        "fidelity_baselines_datasets": [],
        "fidelity_baselines_runs": 1,
        "fidelity_split_k": [],
        "fidelity_split_queries": [],
        "fidelity_split_noise": [],
        "b4_datasets": ["credit"],
        "b4_runs": 1,
        "b4_reading_queries": [50],
        "b4_reading_lambdas": [1.0],
    },
    "test": {
        "teacher": "paper",
        "figure_noise": ["posterior"],
        "figure_lambdas": [1.0],
        "fig3_datasets": ["credit"],
        "fig3_queries": [10, 20],
        "d6_queries": [5, 20],
        "d6_lambda": 0.4,
        "fig5_datasets": ["credit"],
        "fig6_datasets": ["credit"],
        "figure_queries": 20,
        "figure_pate_teachers": 3,
        "fidelity_datasets": ["credit"],
        "fidelity_queries": [10],
        "fidelity_k": [20],
        "fidelity_runs": 1,
        "fidelity_pair": True,
        "fidelity_noise": ["posterior"],
        "fidelity_student": "paper",
        "fidelity_epochs": None,
        "fidelity_baselines_datasets": ["amazon"],
        "fidelity_baselines_runs": 1,
        "fidelity_split_k": [None],
        "fidelity_split_queries": [20],
        "fidelity_split_noise": ["log_softmax"],
        "b4_datasets": ["credit"],
        "b4_runs": 1,
        "b4_reading_queries": [10],
        "b4_reading_lambdas": [1.0],
    },
    "paper": {
        "teacher": "paper",
        "figure_noise": ["posterior", "log_softmax"],
        "figure_lambdas": LAMS,
        "fig3_datasets": ["amazon"],
        "fig3_queries": [500, 1000],
        "d6_queries": [10, 100, 200, 300, 500, 1000],
        "d6_lambda": 0.4,
        "fig5_datasets": ["credit"],
        "fig6_datasets": ["amazon"],
        "figure_queries": 1000,
        "figure_pate_teachers": None,
        "fidelity_datasets": ["amazon"],
        # the official code end to end at Table 6's |Q| 500 (its teachers and student, 500 epochs, noise on
        # log-softmax); the authors'-code teachers are sequential: 31 min of this 2-core CPU per run alone
        # (78 min while sharing it). The paper-mode rows of the same runs are the accuracy grid's (no pairing
        # needed). Table 1's K 300 was run the same way: --set 'fidelity_k=[300]' --set 'fidelity_queries=[1000]'
        "fidelity_queries": [500],
        "fidelity_k": [None],
        "fidelity_runs": 2,
        "fidelity_pair": False,
        "fidelity_noise": ["log_softmax"],
        "fidelity_student": "authors_code",
        "fidelity_epochs": 500,
        "fidelity_baselines_datasets": ["amazon"],
        "fidelity_baselines_runs": 3,
        # PrivGNN's authors'-code students on the official split, at Table 6's |Q| 500 and Table 1's K 300 (the
        # teachers cost ~13 min of this CPU per run: 500 at K 750 and 1000 at K 300)
        "fidelity_split_k": [None, 300],
        "fidelity_split_queries": [500],
        "fidelity_split_noise": ["log_softmax"],
        # B4's readings on Table 9's datasets with the accuracy grid's runs (seeds): hard labels at every λ,
        # and λ 1 / 0.5 with |Q| 100 ... 500 (Table 9's ε row read as |Q|·λ)
        "b4_datasets": ["credit", "amazon"],
        "b4_runs": 3,
        "b4_reading_queries": [100, 200, 300, 400, 500],
        "b4_reading_lambdas": [1.0, 0.5],
    },
}
for _name, _extra in FIGURE_SETTINGS.items():
    PROFILES[_name].update(_extra)

#: method names per (teacher, noise): the paper's teachers with noise on posteriors (``privgnn``, as the paper
#: states) or on log-softmax (``privgnn_code``, the authors' code), and the same with the authors'-code teachers
METHOD_NAMES = {
    ("paper", "posterior"): "privgnn",
    ("paper", "log_softmax"): "privgnn_code",
    ("authors_code", "posterior"): "privgnn_authors_teacher",
    ("authors_code", "log_softmax"): "privgnn_authors_code",
}
#: method names of the rows whose student is also the official code's
#: (:func:`dpgnn.methods.privgnn.authors_code_student`,
#: ``fidelity_student="authors_code"``), per noise variant: ``privgnn_official`` is the official code end to end
OFFICIAL_NAMES = {"posterior": "privgnn_official_posterior", "log_softmax": "privgnn_official"}


def _check_teacher(teacher: str) -> str:
    if teacher not in P.FIDELITIES:
        raise ValueError(f"teacher must be one of {P.FIDELITIES}, got {teacher!r}")
    return teacher


def _teachers(
    pd_: P.PrivGNNData, teacher: str, num_queries: int, *, k: int, gamma: float, seed: int, epochs: int, device: str
) -> P.TeacherOutput:
    """The |Q| teachers' posteriors in the chosen mode, from the same per-(run, K) seed as the accuracy cell (so a
    figure cell's paper-mode teachers have the subsamples and initialisations of the stored Table 5/6 rows' teachers;
    their dropout masks come from the global RNG, which the accuracy grid does not seed per cell)."""
    fn = P.teacher_posteriors if _check_teacher(teacher) == "paper" else P.authors_code_teacher_posteriors
    return fn(pd_, num_queries, k=k, gamma=gamma, seed=stable_seed(seed, "teachers", k), epochs=epochs, device=device)


def _privgnn_ledger(
    pd_: P.PrivGNNData,
    dataset: str,
    *,
    lam: float,
    queries: int,
    gamma: float,
    noise: str,
    teacher: str,
    student: str = "paper",
) -> dict[str, Any]:
    info = P.DATASETS[dataset]
    led = P.privacy_ledger(
        "privgnn",
        lam=lam,
        queries=queries,
        gamma=gamma,
        delta=info.delta_reproducing,
        num_classes=pd_.num_classes,
        delta_sound=info.delta_stated,
        standardized=pd_.standardized,
    )
    if noise == "log_softmax":
        led = log_softmax_ledger(led)
    if teacher == "authors_code":
        led = P.authors_code_ledger(
            led, lam=lam, queries=queries, num_classes=pd_.num_classes, noise_on=noise, student=student
        )
    return led


def _privgnn_students(
    pd_: P.PrivGNNData,
    dataset: str,
    post: P.TeacherOutput,
    points,
    *,
    seed: int,
    k: int,
    gamma: float,
    teacher: str,
    student_epochs: int,
    device: str,
    suffix: str = "",
    student: str = "paper",
) -> list[dict[str, Any]]:
    """One student per ``(artifact, noise, lam, q, setting)`` point, on the first ``q`` noisy labels; the labels
    and the student seed are drawn exactly as in :func:`_accuracy_cell` (only the dropout masks differ). Students
    shared by two points (e.g. Fig. 3 and App. D.6 at λ = 0.4) are trained once. ``student="authors_code"``
    (authors'-code teachers only): the official student (:func:`dpgnn.methods.privgnn.authors_code_student`, which
    continues the teachers' Adam), rows :data:`OFFICIAL_NAMES`."""
    if student == "authors_code" and not isinstance(post, P.AuthorsTeacherOutput):
        raise ValueError(
            "the official student continues the authors'-code teachers' optimizer: use "
            "teacher='authors_code' with student='authors_code'"
        )
    rows, done = [], {}
    for art, noise, lam, q, setting, run in points:
        key = (noise, lam, q)
        if key not in done:
            labels = P.noisy_argmax(
                post.posteriors, lam, make_generator(stable_seed(seed, "noise", lam, k)), noise_on=noise
            )
            sd = stable_seed(seed, ("student", noise, lam, q, k))
            if student == "authors_code":
                done[key] = P.authors_code_student(
                    pd_,
                    P.query_nodes(pd_, q),
                    labels[:q],
                    seed=sd,
                    epochs=student_epochs,
                    optimizer_state=post.optimizer_state,
                    device=device,
                )["accuracy"]
            else:
                done[key] = P.train_student(
                    pd_, P.query_nodes(pd_, q), labels[:q], seed=sd, epochs=student_epochs, device=device
                )["accuracy"]
        led = _privgnn_ledger(
            pd_, dataset, lam=lam, queries=q, gamma=gamma, noise=noise, teacher=teacher, student=student
        )
        t_acc = float((post.posteriors[:q].argmax(1) == pd_.y_pub[P.query_nodes(pd_, q)]).float().mean())
        extra = {"optimizer_steps": post.optimizer_steps} if isinstance(post, P.AuthorsTeacherOutput) else {}
        name = OFFICIAL_NAMES[noise] if student == "authors_code" else METHOD_NAMES[(teacher, noise)]
        rows.append(
            _acc_row(
                art,
                dataset,
                name + suffix,
                setting,
                done[key],
                run,
                seed,
                led,
                queries=q,
                lam=lam,
                k=k,
                gamma=gamma,
                fidelity=teacher,
                teacher_accuracy=t_acc,
                teacher_seconds=post.seconds,
                **extra,
            )
        )
    return rows


def _figure_cell_common(cell: dict[str, Any], dataset: str) -> tuple[int, float]:
    info = P.DATASETS[dataset]
    return (cell["k"] or info.k), (cell["gamma"] or info.gamma)


def _figure_cells(cfg: Settings, key: str, extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "k": cfg.k,
            "gamma": cfg.gamma,
            "lambdas": list(cfg.figure_lambdas),
            "teacher_epochs": cfg.teacher_epochs,
            "student_epochs": cfg.student_epochs,
            "teacher": _check_teacher(cfg.teacher),
            "noise": list(cfg.figure_noise),
            **extra,
        }
        for n in cfg[key]
        for r in range(cfg.runs)
    ]


def fig3_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 3 (|Q| ∈ ``fig3_queries`` × every λ) and App. D.6 (|Q| ∈ ``d6_queries`` at ``d6_lambda``): one cell
    per (dataset, run); its teachers answer the largest |Q| once and every |Q| is a prefix of that ordering."""
    return _figure_cells(
        cfg,
        "fig3_datasets",
        {"fig3_queries": list(cfg.fig3_queries), "d6_queries": list(cfg.d6_queries), "d6_lambda": cfg.d6_lambda},
    )


@_seeded
def run_fig3_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Rows ``fig3`` (setting ``Q=..,lam=..``) and ``fig7`` (App. D.6: ``Q=..,lam=0.4``) of one (dataset, run)."""
    dataset, run = cell["dataset"], cell["run"]
    pd_ = _data(dataset)
    seed = _run_seed(cfg, dataset, run)
    k, gamma = _figure_cell_common(cell, dataset)
    qmax = max(cell["fig3_queries"] + cell["d6_queries"])
    post = _teachers(
        pd_, cell["teacher"], qmax, k=k, gamma=gamma, seed=seed, epochs=cell["teacher_epochs"], device=device
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
        pd_,
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
    cfg: Settings, cell: dict[str, Any], pd_: P.PrivGNNData, dataset: str, artifact: str, suffix: str, device: str
) -> list[dict[str, Any]]:
    """PrivGNN, PATE-M, PATE-G (|Q| = ``cell["queries"]``, every λ) and B1/B2 of one (dataset, run), with the
    seeds of :func:`_accuracy_cell`; methods named ``<method><suffix>``."""
    info = P.DATASETS[dataset]
    run, q, se = cell["run"], cell["queries"], cell["student_epochs"]
    seed = _run_seed(cfg, dataset, run)
    k, gamma = _figure_cell_common(cell, dataset)
    post = _teachers(pd_, cell["teacher"], q, k=k, gamma=gamma, seed=seed, epochs=cell["teacher_epochs"], device=device)
    rows = _privgnn_students(
        pd_,
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
            pd_,
            q,
            kind=kind,
            num_teachers=n_t,
            seed=stable_seed(seed, "pate", kind),
            epochs=cell["teacher_epochs"],
            device=device,
        )
        for lam in cell["lambdas"]:
            labels = P.pate_labels(counts, lam, make_generator(stable_seed(seed, "pate-noise", kind, lam)))
            acc = P.train_student(
                pd_,
                P.query_nodes(pd_, q),
                labels[:q],
                seed=stable_seed(seed, ("pate", kind, lam)),
                epochs=se,
                device=device,
            )["accuracy"]
            led = P.privacy_ledger(
                f"pate_{kind[0]}", lam=lam, queries=q, delta=delta, counts=counts.numpy(), standardized=pd_.standardized
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
        acc = fn(pd_, seed=stable_seed(seed, b), epochs=se, device=device)["accuracy"]
        rows.append(_acc_row(artifact, dataset, f"{b}{suffix}", "non-private", acc, run, seed, none, **common))
    return rows


def fig5_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 5 (App. D.1, informative node features): PrivGNN, PATE-M, PATE-G, B1, B2 at |Q| = ``figure_queries``."""
    return _figure_cells(
        cfg, "fig5_datasets", {"queries": cfg.figure_queries, "pate_teachers": cfg.figure_pate_teachers}
    )


@_seeded
def run_fig5_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    return _private_and_baselines(cfg, cell, _data(cell["dataset"]), cell["dataset"], "fig5", "", device)


@functools.lru_cache(maxsize=4)
def _flipped(name: str) -> P.PrivGNNData:
    return P.flip(_data(name))


def fig6_cells(cfg: Settings) -> list[dict[str, Any]]:
    """Fig. 6 (App. D.2): the same methods on the flipped split (:func:`dpgnn.methods.privgnn.flip`)."""
    return _figure_cells(
        cfg, "fig6_datasets", {"queries": cfg.figure_queries, "flip": True, "pate_teachers": cfg.figure_pate_teachers}
    )


@_seeded
def run_fig6_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    return _private_and_baselines(cfg, cell, _flipped(cell["dataset"]), cell["dataset"], "fig6", "_flip", device)


def authors_code_cells(cfg: Settings) -> list[dict[str, Any]]:
    """The authors'-code teacher cells (``fidelity="authors_code"``): one per (dataset, K, run). ``fidelity_pair``:
    also train the paper's teachers in the cell (same seeds), so the cell holds its own paired comparison (the
    paper profile leaves it off: its paper-mode rows are the accuracy grid's)."""
    student = _check_teacher(cfg.get("fidelity_student", "paper"))
    official = {}  # only when set, so the cells stored before these options keep their config hashes
    if student != "paper":
        official["student"] = student
    if cfg.get("fidelity_epochs") is not None:
        official["authors_epochs"] = int(cfg.fidelity_epochs)
    return [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "k": k,
            "gamma": cfg.gamma,
            "lambdas": list(cfg.figure_lambdas),
            "queries": sorted(cfg.fidelity_queries),
            "main_queries": cfg.main_queries,
            "teacher_epochs": cfg.teacher_epochs,
            "student_epochs": cfg.student_epochs,
            "teacher": "authors_code",
            "noise": list(cfg.fidelity_noise),
            "pair": bool(cfg.fidelity_pair),
            **official,
        }
        for n in cfg.fidelity_datasets
        for k in cfg.fidelity_k
        for r in range(cfg.fidelity_runs)
    ]


def mirrored_cell(dataset: str, k: int, q: int, lam: float, main_queries: int) -> str:
    """The paper cell a ``fidelity`` row mirrors, ``"<artifact>:<setting>"``: Table 5 at the main |Q| and the
    dataset's K, Table 6 at |Q| = 500, Table 1 at another K and the main |Q|; ``fidelity:K=..,Q=..,lam=..`` when
    the paper has no such cell."""
    info = P.DATASETS[dataset]
    if q == main_queries:
        return f"table5:lam={lam:g}" if k == info.k else f"table1:K={k},lam={lam:g}"
    if q == 500 and k == info.k:
        return f"table6:Q={q},lam={lam:g}"
    return f"fidelity:K={k},Q={q},lam={lam:g}"


@_seeded
def run_authors_code_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Students on the authors'-code teachers' labels (methods ``privgnn_authors_teacher`` /
    ``privgnn_authors_code``; with ``pair`` also the paper's teachers: ``privgnn`` / ``privgnn_code``), artifact
    ``fidelity`` (never compared directly: the paper has no such cell) with setting ``K=..,Q=..,lam=..`` and
    ``mirrors`` naming the paper cell (:func:`mirrored_cell`). Noise draws and student seeds are those of
    :func:`_accuracy_cell`, so the teacher is the only difference."""
    dataset, run = cell["dataset"], cell["run"]
    pd_ = _data(dataset)
    info = P.DATASETS[dataset]
    seed = _run_seed(cfg, dataset, run)
    k = cell["k"] or info.k
    gamma = cell["gamma"] or info.gamma
    rows = []
    for teacher in ["authors_code", "paper"] if cell["pair"] else ["authors_code"]:
        authors = teacher == "authors_code"
        epochs = cell.get("authors_epochs") if authors else None
        student = cell.get("student", "paper") if authors else "paper"
        post = _teachers(
            pd_,
            teacher,
            max(cell["queries"]),
            k=k,
            gamma=gamma,
            seed=seed,
            epochs=epochs or cell["teacher_epochs"],
            device=device,
        )
        points = [
            ("fidelity", n, lam, q, f"K={k},Q={q},lam={lam:g}", run)
            for q in cell["queries"]
            for lam in cell["lambdas"]
            for n in cell["noise"]
        ]
        se = (epochs or cell["student_epochs"]) if student == "authors_code" else cell["student_epochs"]
        for r in _privgnn_students(
            pd_,
            dataset,
            post,
            points,
            seed=seed,
            k=k,
            gamma=gamma,
            teacher=teacher,
            student_epochs=se,
            device=device,
            student=student,
        ):
            if authors and epochs:
                r["teacher_epochs"] = epochs
            r["student_epochs"] = se
            r["mirrors"] = mirrored_cell(dataset, k, r["queries"], r["lam"], cell["main_queries"])
            rows.append(r)
    return rows


def authors_baselines_cells(cfg: Settings) -> list[dict[str, Any]]:
    """The authors'-code baseline cells, one per (dataset, run): B1/B2/B3 on the official code's split and PATE-G
    with its untrained teachers; then one cell per (dataset, K of ``fidelity_split_k``, run) of PrivGNN's students
    on the official split (``part = "split_students"``; K ``None`` = the profile's, with every |Q| of
    ``fidelity_split_queries``; another K at the main |Q|), all run by :func:`run_authors_baselines_cell`."""
    cells = [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "lambdas": list(cfg.figure_lambdas),
            "queries": cfg.main_queries,
            "student_epochs": cfg.student_epochs,
            "pate_teachers": cfg.pate_teachers or P.DATASETS[n].pate_teachers,
        }
        for n in cfg.fidelity_baselines_datasets
        for r in range(cfg.fidelity_baselines_runs)
    ]
    for n in cfg.fidelity_baselines_datasets:
        info = P.DATASETS[n]
        for k in cfg.fidelity_split_k:  # a K's runs before the next K: a cut run keeps whole K's first
            qs = sorted(cfg.fidelity_split_queries) if k is None else [cfg.main_queries]
            cells += [
                {
                    "dataset": n,
                    "run": r,
                    "seed": cfg.seed,
                    "part": "split_students",
                    "k": k or cfg.k or info.k,
                    "queries": qs,
                    "main_queries": cfg.main_queries,
                    "noise": list(cfg.fidelity_split_noise),
                    "lambdas": list(cfg.figure_lambdas),
                    "gamma": cfg.gamma or info.gamma,
                    "teacher_epochs": cfg.teacher_epochs,
                    "student_epochs": cfg.student_epochs,
                }
                for r in range(cfg.fidelity_baselines_runs)
            ]
    return cells


@_seeded
def run_authors_baselines_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Rows (artifact ``fidelity``, ``mirrors`` = the paper cell) of two things the official code does:

    - ``b1/b2/b3_authors_split``: the non-private baselines on the official code's split
      (:func:`dpgnn.methods.privgnn.authors_code_split`: public test overlapping the private and public-train nodes;
      one split per run), with the overlap shares (``test_in_private``, ``test_in_train``, ``train_in_private``);
    - ``privgnn_authors_split`` / ``privgnn_code_authors_split`` (cells with ``part = "split_students"``,
      :func:`_split_students`): PrivGNN's students on that split;
    - ``pate_g_authors_code``: PATE-G whose teachers vote untrained, as the official code resets them after training
      (:func:`dpgnn.methods.privgnn.pate_votes`); partitions, noise and student seeds are those of the accuracy
      grid's PATE-G rows of the same run, so the teachers are the only difference."""
    if cell.get("part") == "split_students":
        return _split_students(cfg, cell, device)
    dataset, run = cell["dataset"], cell["run"]
    info = P.DATASETS[dataset]
    seed = _run_seed(cfg, dataset, run)
    se = cell["student_epochs"]
    rows: list[dict[str, Any]] = []
    if dataset in P.AUTHORS_SPLITS:
        pd_split, overlap = _authors_split(dataset, seed)
        for b in ("b1", "b2", "b3"):
            res = get_method(PAPER, b, "none").run(pd_split, {"epochs": se}, seed=seed, device=device)
            for art in BASELINE_ARTIFACTS[b]:
                if art in ("table5", "table8"):
                    rows.append(
                        _acc_row(
                            "fidelity",
                            dataset,
                            f"{b}_authors_split",
                            "non-private",
                            res.test,
                            run,
                            seed,
                            res.ledger,
                            mirrors=f"{art}:non-private",
                            split="authors_code",
                            student_epochs=se,
                            **overlap,
                        )
                    )
    pate_cfg = {
        "gamma": info.gamma,
        "student_epochs": se,
        "delta": info.pate_delta or info.delta_reproducing,
        "queries": cell["queries"],
        "num_teachers": cell["pate_teachers"],
        "fidelity": "authors_code",
    }
    pd_ = _data(dataset)
    counts = P.votes_for(pd_, pate_cfg, seed=seed, kind="gnn", device=device)
    spec = get_method(PAPER, "pate_g", "node")
    for lam in cell["lambdas"]:
        res = spec.run(pd_, {**pate_cfg, "lam": lam}, seed=seed, device=device, votes=counts)
        rows.append(
            _acc_row(
                "fidelity",
                dataset,
                "pate_g_authors_code",
                f"lam={lam:g}",
                res.test,
                run,
                seed,
                res.ledger,
                mirrors=f"table5:lam={lam:g}",
                fidelity="authors_code",
                lam=lam,
                queries=cell["queries"],
                pate_teachers=cell["pate_teachers"],
                student_epochs=se,
                top_vote_share=float(counts.max(1).values.sum() / counts.sum()),
            )
        )
    return rows


def _authors_split(dataset: str, seed: int) -> tuple[P.PrivGNNData, dict[str, float]]:
    """The run's official split (:func:`dpgnn.methods.privgnn.authors_code_split`) and its overlap shares, from one
    load of the graph."""
    graph = P.authors_code_graph(dataset)
    overlap = P.split_overlap(*P.authors_code_split_nodes(dataset, graph.y.long(), seed=seed))
    return P.authors_code_split(dataset, seed=seed, data=graph), overlap


def _split_students(cfg: Settings, cell: dict[str, Any], device: str) -> list[dict[str, Any]]:
    """PrivGNN's students on the official split (``privgnn_authors_split`` / ``privgnn_code_authors_split``): the
    paper's teachers at ``k`` answer the largest |Q| once, and each (noise, λ, |Q|) student is drawn as in
    :func:`_privgnn_students`; the split is the run's (:func:`dpgnn.methods.privgnn.authors_code_split`), and the
    ledger says the accounting does not cover it (:func:`dpgnn.methods.privgnn.authors_split_ledger`)."""
    dataset, run, k = cell["dataset"], cell["run"], cell["k"]
    if dataset not in P.AUTHORS_SPLITS:
        return []
    seed = _run_seed(cfg, dataset, run)
    pd_split, overlap = _authors_split(dataset, seed)
    post = _teachers(
        pd_split,
        "paper",
        max(cell["queries"]),
        k=k,
        gamma=cell["gamma"],
        seed=seed,
        epochs=cell["teacher_epochs"],
        device=device,
    )
    points = [
        ("fidelity", noise, lam, q, f"K={k},Q={q},lam={lam:g}", run)
        for noise in cell["noise"]
        for lam in cell["lambdas"]
        for q in cell["queries"]
    ]
    rows = []
    for r in _privgnn_students(
        pd_split,
        dataset,
        post,
        points,
        seed=seed,
        k=k,
        gamma=cell["gamma"],
        teacher="paper",
        student_epochs=cell["student_epochs"],
        device=device,
        suffix="_authors_split",
    ):
        rows.append(
            {
                **r,
                "ledger": P.authors_split_ledger(r["ledger"]),
                "split": "authors_code",
                "mirrors": mirrored_cell(dataset, k, r["queries"], r["lam"], cell["main_queries"]),
                "teacher_epochs": cell["teacher_epochs"],
                **overlap,
            }
        )
    return rows


def authors_baselines_side_by_side(store: ResultStore) -> pd.DataFrame:
    """Per (dataset, mirrored paper cell): the paper's value, ours as in the accuracy grid (our split, trained
    teachers) and the authors'-code rows (:func:`run_authors_baselines_cell`), mean over runs, with n."""
    a = store.load("authors_baselines")
    if a.empty:
        return a
    a = a.assign(
        paper_method=a["method"].str.replace("_authors_split", "").str.replace("_authors_code", ""),
        paper_artifact=a["mirrors"].str.split(":").str[0],
    )
    ours = store.load("accuracy")
    ref = load_reference(PAPER)
    out = []
    for (ds, mirrors, pm, method), g in a.groupby(["dataset", "mirrors", "paper_method", "method"]):
        art, setting = mirrors.split(":", 1)
        grid_rows = (
            ours[
                (ours["dataset"] == ds)
                & (ours["artifact"] == art)
                & (ours["method"] == pm)
                & (ours["setting"] == setting)
            ]
            if len(ours)
            else ours
        )
        paper = ref[
            (ref["dataset"] == ds) & (ref["artifact"] == art) & (ref["method"] == pm) & (ref["setting"] == setting)
        ]["value"]
        out.append(
            {
                "dataset": ds,
                "paper cell": mirrors,
                "method": pm,
                "paper": float(paper.iloc[0]) if len(paper) else float("nan"),
                "ours": float(grid_rows["value"].mean()) if len(grid_rows) else float("nan"),
                "authors' code": float(g["value"].mean()),
                "what differs": "split" if method.endswith("_authors_split") else "untrained teachers",
                "n_runs": int(g["run"].nunique()),
            }
        )
    return pd.DataFrame(out).round(3)


def plot_authors_baselines(store: ResultStore):
    """Accuracy vs λ, paper ◇: PATE-G with trained (ours) and untrained (the official code) teachers
    (``authors_baselines``); PrivGNN's students on our split and on the official one, one panel per paper cell
    family (``authors_split_students``)."""
    tab = authors_baselines_side_by_side(store)
    if tab.empty:
        return {}
    long = tab.melt(
        id_vars=["dataset", "paper cell", "method"],
        value_vars=["ours", "authors' code", "paper"],
        var_name="variant",
        value_name="value",
    ).dropna(subset=["value"])
    long = long[long["paper cell"].str.contains("lam=")]
    long = long.assign(
        lam=long["paper cell"].str.split("lam=").str[1].astype(float),
        family=long["paper cell"].str.replace(r",?lam=[^,]*$", "", regex=True),
    )
    figs = {}
    pate = long[long["method"] == "pate_g"].assign(teachers=lambda d: d["variant"])
    if len(pate):
        ref = pate[pate["teachers"] == "paper"].assign(teachers="ours")  # drawn beside our series (matched by hue)
        figs["authors_baselines"] = plotting.lines(
            pate[pate["teachers"] != "paper"],
            x="lam",
            y="value",
            hue="teachers",
            col="dataset",
            reference=ref if len(ref) else None,
            xlabel="λ",
            ylabel="accuracy",
            title="PATE-G: trained teachers (ours) vs the official code's untrained teachers (◇ = paper)",
        )
    st = long[long["method"].isin(["privgnn", "privgnn_code"])]
    if len(st):
        st = st.assign(
            split=st["variant"].map({"ours": "our split", "authors' code": "official split", "paper": "paper"})
            + " · "
            + st["method"],
            panel=st["dataset"] + " " + st["family"],
        )
        # the paper's values beside the official split's authors'-code students, the rows they are compared with
        ref = st[(st["variant"] == "paper") & (st["method"] == "privgnn_code")].assign(
            split="official split · privgnn_code"
        )
        figs["authors_split_students"] = plotting.lines(
            st[st["variant"] != "paper"],
            x="lam",
            y="value",
            hue="split",
            col="panel",
            reference=ref,
            xlabel="λ",
            ylabel="accuracy",
            title="PrivGNN's students on our disjoint split and on the official overlapping split (◇ = paper)",
        )
    return figs


# ---------------------------------------------------------------------------------------------------------------
# B4 (Table 9, App. D.5): readings of the paper's words, as B4 is not in the authors' code (issue #18)
# ---------------------------------------------------------------------------------------------------------------
def b4_readings_cells(cfg: Settings) -> list[dict[str, Any]]:
    """One cell per (dataset of ``b4_datasets``, run of ``b4_runs``), with the accuracy grid's run seeds (run r
    here draws the same noise as the grid's soft-label B4 of run r): the readings of B4 that
    :func:`run_b4_readings_cell` trains."""
    return [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "lambdas": list(cfg.lambdas),
            "queries": cfg.main_queries,
            "reading_queries": list(cfg.b4_reading_queries),
            "reading_lambdas": list(cfg.b4_reading_lambdas),
            "student_epochs": cfg.student_epochs,
        }
        for n in cfg.b4_datasets
        for r in range(cfg.b4_runs)
    ]


@_seeded
def run_b4_readings_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Rows (artifact ``b4_readings``, method ``b4``) of the two readings of B4 that the paper's soft labels
    (the accuracy grid's ``table9`` rows) leave open (docs/papers/privgnn.md#baselines):

    - ``labels=hard,lam=λ``: the argmax of the same noisy one-hot vector, |Q| = the main queries, every λ;
    - ``labels=soft,Q=q,lam=λ``: λ fixed and the columns read as |Q| (Table 9's ε row 100 ... 500 = |Q|·λ at
      λ 1), soft labels as the paper words them.

    B4 reads the public ground truth: not a private mechanism of the private graph (ε = ∞ in the ledger)."""
    dataset, run = cell["dataset"], cell["run"]
    pd_ = _data(dataset)
    seed = _run_seed(cfg, dataset, run)
    spec = get_method(PAPER, "b4", "none")
    points = [("hard", cell["queries"], lam) for lam in cell["lambdas"]] + [
        ("soft", q, lam) for lam in cell["reading_lambdas"] for q in cell["reading_queries"]
    ]
    rows = []
    for labels, q, lam in points:
        res = spec.run(
            pd_,
            {"queries": q, "lam": lam, "student_epochs": cell["student_epochs"], "labels": labels},
            seed=seed,
            device=device,
        )
        sett = f"labels=hard,lam={lam:g}" if labels == "hard" else f"labels=soft,Q={q},lam={lam:g}"
        rows.append(
            _acc_row(
                "b4_readings",
                dataset,
                "b4",
                sett,
                res.test,
                run,
                seed,
                res.ledger,
                labels=labels,
                queries=q,
                lam=lam,
                student_epochs=cell["student_epochs"],
            )
        )
    return rows


def b4_readings_table(store: ResultStore) -> pd.DataFrame:
    """Per dataset with stored readings: B4 as Table 9 prints it (λ 0.1 … 1), ours with soft labels (the accuracy
    grid's ``table9`` rows) and the readings of :func:`run_b4_readings_cell`, mean over runs; a column per
    Table 9 column, ``lam=λ`` or, for the "λ fixed" readings, ``Q=|Q|`` (the order of the paper's columns)."""
    read = store.load("b4_readings")
    if read.empty:
        return read
    acc = store.load("accuracy")
    lam = read["setting"].str.extract(r"lam=([\d.]+)")[0]
    q = read["setting"].str.extract(r"Q=(\d+)")[0]
    hard = read["labels"] == "hard"
    ref = load_reference(PAPER, "table9")
    ref = ref[ref["method"] == "b4"]
    frames = [
        ref.assign(reading="paper (Table 9)", column=ref["setting"]),
        read[hard].assign(reading="hard labels (argmax)", column="lam=" + lam[hard]),
        read[~hard].assign(reading="λ " + lam[~hard] + " fixed, columns |Q|", column="Q=" + q[~hard]),
    ]
    if len(acc):
        soft = acc[(acc["artifact"] == "table9") & (acc["method"] == "b4")]
        frames.insert(1, soft.assign(reading="soft labels (the paper's words)", column=soft["setting"]))
    long = pd.concat(frames, ignore_index=True)
    long = long[long["dataset"].isin(set(read["dataset"]))]
    order = {name: i for i, name in enumerate(dict.fromkeys(long["reading"]))}
    wide = long.pivot_table(index=["dataset", "reading"], columns="column", values="value", aggfunc="mean")
    wide = wide[sorted(wide.columns, key=lambda c: (c.split("=")[0] != "lam", float(c.split("=")[1])))]
    wide.columns.name = None
    wide = wide.reset_index()
    wide = wide.assign(_order=wide["reading"].map(order)).sort_values(["dataset", "_order"]).drop(columns="_order")
    return wide.round(3).reset_index(drop=True)


CELLS.update(
    {
        "fig3": CellSpec(PAPER, "fig3", "fig3", fig3_cells, run_fig3_cell),
        "fig5": CellSpec(PAPER, "fig5", "fig5", fig5_cells, run_fig5_cell),
        "fig6": CellSpec(PAPER, "fig6", "fig6", fig6_cells, run_fig6_cell),
        "authors_code": CellSpec(PAPER, "authors_code", "authors_code", authors_code_cells, run_authors_code_cell),
        "authors_baselines": CellSpec(
            PAPER, "authors_baselines", "authors_baselines", authors_baselines_cells, run_authors_baselines_cell
        ),
        "b4_readings": CellSpec(PAPER, "b4_readings", "b4_readings", b4_readings_cells, run_b4_readings_cell),
    }
)


def run_figures(
    cfg: Settings,
    store: ResultStore,
    which: tuple[str, ...] = ("fig3", "fig5", "fig6"),
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> dict[str, pd.DataFrame]:
    """The cells of ``which`` (``CELLS`` names, incl. ``authors_code``), resumable; ``train=False`` only loads."""
    check_train(force, train)
    out = {}
    for name in which:
        spec = CELLS[name]
        if train:
            cells = [c for c in spec.cells(cfg) if load_or_skip(store, c["dataset"], _data, artifact=name) is not None]
            if cells:
                run_grid(
                    store,
                    spec.store,
                    cells,
                    functools.partial(spec.run, cfg, device=device),
                    desc=name,
                    force=force,
                    device=str(resolve_device(device)),
                )
        out[name] = store.load(spec.store)
    return out


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


def authors_code_side_by_side(store: ResultStore) -> pd.DataFrame:
    """Per (dataset, mirrored paper cell): the paper's value, the paper-mode teachers (``privgnn``,
    ``privgnn_code``: the cell's own paired rows, and for runs without them the accuracy grid's rows of the same
    runs), the authors'-code teachers (``privgnn_authors_teacher``, ``privgnn_authors_code``) and the official code
    end to end (``privgnn_official``: its teachers and student), mean over runs, with n; and the share of queries
    the teachers answer right before noise, per teacher mode (``teachers paper`` / ``teachers authors_code``)."""
    a = store.load("authors_code")
    if a.empty:
        return a
    a = a[a["artifact"] == "fidelity"]
    paper_names = ["privgnn", "privgnn_code"]
    own = a[a["method"].isin(paper_names)]
    keys = a[["dataset", "mirrors", "run"]].drop_duplicates()
    missing = keys.merge(own[["dataset", "mirrors", "run"]].drop_duplicates(), how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"].drop(columns="_merge")
    grid_rows = pd.DataFrame()
    if len(missing):  # e.g. the paper profile: the accuracy grid's rows of the same (cell, run)
        acc = store.load("accuracy")
        if len(acc):
            acc = acc.assign(mirrors=acc["artifact"] + ":" + acc["setting"])
            grid_rows = acc[acc["method"].isin(paper_names)].merge(missing, on=["dataset", "mirrors", "run"])
    both = pd.concat([a[~a["method"].isin(paper_names)], own, grid_rows], ignore_index=True)
    wide = both.pivot_table(index=["dataset", "mirrors"], columns="method", values="value", aggfunc="mean")
    teach = both.assign(
        mode=both["method"].isin(paper_names).map({True: "teachers paper", False: "teachers authors_code"})
    )
    teach = teach.pivot_table(index=["dataset", "mirrors"], columns="mode", values="teacher_accuracy", aggfunc="mean")
    n = a.groupby(["dataset", "mirrors"])["run"].nunique().rename("n_runs")
    ref = load_reference(PAPER)
    ref = ref[ref["method"] == "privgnn"]
    ref = ref.assign(mirrors=ref["artifact"] + ":" + ref["setting"]).set_index(["dataset", "mirrors"])["value"]
    out = wide.join(teach).join(n).join(ref.rename("paper"), how="left").reset_index()
    order = [
        "dataset",
        "mirrors",
        "paper",
        "privgnn",
        "privgnn_authors_teacher",
        "privgnn_code",
        "privgnn_authors_code",
        "privgnn_official_posterior",
        "privgnn_official",
        "teachers paper",
        "teachers authors_code",
        "n_runs",
    ]
    return out[[c for c in order if c in out]].round(3)


def plot_authors_code(store: ResultStore):
    """Accuracy vs λ of the paper's and the authors'-code teachers (both noise variants), one panel per
    (dataset, |Q|, K), paper ◇ where the mirrored cell has a printed value."""
    df = store.load("authors_code")
    if df.empty:
        return {}
    tab = authors_code_side_by_side(store)
    methods = [
        c
        for c in (
            "privgnn",
            "privgnn_authors_teacher",
            "privgnn_code",
            "privgnn_authors_code",
            "privgnn_official_posterior",
            "privgnn_official",
        )
        if c in tab
    ]
    long = tab.melt(
        id_vars=["dataset", "mirrors"],
        value_vars=methods + (["paper"] if "paper" in tab else []),
        var_name="method",
        value_name="value",
    ).dropna(subset=["value"])
    long = long.assign(
        lam=long["mirrors"].str.split("lam=").str[1].astype(float),
        panel=long["dataset"]
        + " "
        + long["mirrors"].str.split(":").str[0]
        + long["mirrors"].str.extract(r"(Q=\d+|K=\d+)")[0].fillna("").radd(" "),
    )
    # the printed value is the paper's PrivGNN: drawn as "privgnn (paper)" (the reference is matched by hue)
    ref = long[long["method"] == "paper"].assign(method="privgnn")
    ours = long[long["method"] != "paper"]
    return {
        "authors_code": plotting.lines(
            ours,
            x="lam",
            y="value",
            hue="method",
            col="panel",
            reference=ref if len(ref) else None,
            xlabel="λ",
            ylabel="accuracy",
            title="Paper teachers vs the authors'-code teachers (◇ = paper)",
        )
    }


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='PrivGNN: "Releasing Graph Neural Networks with Differential Privacy Guarantees"',
        kind="paper",
        order=3,
        citation="Olatunji, Funke & Khosla, TMLR (06/2023)",
        docs="docs/papers/privgnn.md",
        reference="privgnn.csv",
        profiles=PROFILES,
        cells=CELLS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
    )
)
