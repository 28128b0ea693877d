"""Notebook 02 (accuracy): RQ1 Table 5 / Fig. 2a, RQ2 Table 1, RQ3 Table 6 and the baselines of Tables 7-9, one
resumable cell per (dataset, run)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpgnn import plotting
from dpgnn.methods import get as get_method
from dpgnn.methods import privgnn as P
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference, stand_in_for
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series import datasets_to_run
from dpgnn.series.privgnn import common
from dpgnn.series.privgnn.common import (
    BASELINE_ARTIFACTS,
    PAPER,
    _acc_row,
    _run_seed,
    _seeded,
)
from dpgnn.sweep import check_train, grid, run_grid
from dpgnn.utils import resolve_device


@dataclass(frozen=True)
class _Cell:
    """What every row of one accuracy cell (dataset, run) shares."""

    dataset: str
    run: int
    seed: int
    #: every table (else only the main PrivGNN rows: smoke keeps big graphs light)
    full: bool
    main_queries: int
    #: the row columns of every row: K, γ, epochs, main |Q|
    common: dict[str, Any]
    #: the methods' config (dpgnn.methods.get(PAPER, method, level)); the run seed is the cell's
    method_cfg: dict[str, Any]


def _accuracy_cell(cfg: Settings, graphs: P.PrivGNNData, dataset: str, run: int, device: str) -> list[dict[str, Any]]:
    """Everything of one (dataset, run): teachers once for the largest |Q| (prefix + λ reuse), all students. The
    steps run in a fixed order (dropout masks come from the global generator, so the order is part of the
    numbers)."""
    info = P.DATASETS[dataset]
    k, gamma, main_q = cfg.k or info.k, cfg.gamma or info.gamma, cfg.main_queries
    te, se = cfg.teacher_epochs, cfg.student_epochs
    cell = _Cell(
        dataset,
        run,
        _run_seed(cfg, dataset, run),
        dataset in cfg.full_datasets,
        main_q,
        dict(k=k, gamma=gamma, teacher_epochs=te, student_epochs=se, main_queries=main_q),
        dict(
            gamma=gamma,
            teacher_epochs=te,
            student_epochs=se,
            delta=info.delta_reproducing,
            delta_sound=info.delta_stated,
        ),
    )
    qmax = max(cfg.queries) if cell.full else main_q
    post = P.teachers_for(graphs, {**cell.method_cfg, "k": k, "queries": qmax}, seed=cell.seed, device=device)
    rows: list[dict[str, Any]] = []
    rows += _student_rows(
        cfg,
        graphs,
        cell,
        post,
        k,
        lambda q, lam: ("table5", f"lam={lam:g}") if q == main_q else ("table6", f"Q={q},lam={lam:g}"),
        device,
    )
    if dataset == "credit":  # Table 9 reports Credit's PrivGNN accuracy
        rows += [{**r, "artifact": "table9"} for r in rows if r["artifact"] == "table5"]
    if not cell.full:
        return rows
    rows += repeated_rows(rows, dataset, k, main_q)
    for k2 in cfg.table1_k:
        post2 = P.teachers_for(graphs, {**cell.method_cfg, "k": k2, "queries": main_q}, seed=cell.seed, device=device)
        rows += _student_rows(
            cfg,
            graphs,
            cell,
            post2,
            k2,
            lambda q, lam, k2=k2: ("table1", f"K={k2},lam={lam:g}") if q == main_q else (None, None),
            device,
        )
    rows += _baseline_rows(cfg, graphs, cell, device)
    if cfg.pate:
        rows += _pate_rows(cfg, graphs, cell, device)
    return rows


def _student_rows(
    cfg: Settings, graphs: P.PrivGNNData, cell: _Cell, post: P.TeacherOutput, k: int, artifact_for, device: str
) -> list[dict[str, Any]]:
    """Students of every (noise variant, λ, |Q|) on the teachers ``post``, in the order the rows were always
    computed; ``artifact_for(q, lam)`` names each row's (artifact, setting), ``(None, None)`` skips it. The
    students train in one batch (:func:`dpgnn.methods.privgnn.privgnn_students`, the numbers of the runs one by
    one), then each run builds its row from its own."""
    runs = []
    for noise in cfg.noise_variants:
        method = "privgnn" if noise == "posterior" else "privgnn_code"
        for lam in cfg.lambdas:
            for q in cfg.queries if cell.full else [cell.main_queries]:
                if artifact_for(q, lam)[0] is not None:
                    runs.append((method, {**cell.method_cfg, "k": k, "queries": q, "lam": lam}))
    students = P.privgnn_students(graphs, runs, seed=cell.seed, teachers=post, device=device)
    rows = []
    for (method, config), student in zip(runs, students):
        spec = get_method(PAPER, method, "node")
        q, lam = config["queries"], config["lam"]
        art, setting = artifact_for(q, lam)
        res = spec.run(graphs, config, seed=cell.seed, device=device, teachers=post, student=student)
        rows.append(
            _acc_row(
                art,
                cell.dataset,
                spec.method,
                setting,
                res.test,
                cell.run,
                cell.seed,
                res.ledger,
                queries=q,
                lam=lam,
                **{**cell.common, "k": k},
                teacher_accuracy=res.extra["teacher_accuracy"],
                teacher_epochs_per_s=res.extra["teacher_epochs_per_s"],
            )
        )
    return rows


def _baseline_rows(cfg: Settings, graphs: P.PrivGNNData, cell: _Cell, device: str) -> list[dict[str, Any]]:
    """The non-private baselines of ``cfg.baselines`` (B4 at every λ), in their listed order."""
    rows = []
    for b in cfg.baselines:
        spec = get_method(PAPER, b, "none")
        if b == "b4":
            for lam in cfg.lambdas:
                b4_cfg = {"queries": cell.main_queries, "lam": lam, "student_epochs": cfg.student_epochs}
                res = spec.run(graphs, b4_cfg, seed=cell.seed, device=device)
                rows.append(
                    _acc_row(
                        "table9",
                        cell.dataset,
                        "b4",
                        f"lam={lam:g}",
                        res.test,
                        cell.run,
                        cell.seed,
                        res.ledger,
                        lam=lam,
                        queries=cell.main_queries,
                        **cell.common,
                    )
                )
            continue
        res = spec.run(graphs, {"epochs": cfg.student_epochs}, seed=cell.seed, device=device)
        for art in BASELINE_ARTIFACTS[b]:
            rows.append(
                _acc_row(art, cell.dataset, b, "non-private", res.test, cell.run, cell.seed, res.ledger, **cell.common)
            )
    return rows


def _pate_rows(cfg: Settings, graphs: P.PrivGNNData, cell: _Cell, device: str) -> list[dict[str, Any]]:
    """Table 5's PATE-G and PATE-M rows at every λ (votes once per kind)."""
    info = P.DATASETS[cell.dataset]
    pate_cfg = {
        **cell.method_cfg,
        "queries": cell.main_queries,
        "num_teachers": cfg.pate_teachers or info.pate_teachers,
        "delta": info.pate_delta or info.delta_reproducing,
    }
    rows = []
    for kind in ("gnn", "mlp"):
        spec = get_method(PAPER, f"pate_{kind[0]}", "node")
        counts = P.votes_for(graphs, pate_cfg, seed=cell.seed, kind=kind, device=device)
        for lam in cfg.lambdas:
            res = spec.run(graphs, {**pate_cfg, "lam": lam}, seed=cell.seed, device=device, votes=counts)
            rows.append(
                _acc_row(
                    "table5",
                    cell.dataset,
                    spec.method,
                    f"lam={lam:g}",
                    res.test,
                    cell.run,
                    cell.seed,
                    res.ledger,
                    lam=lam,
                    queries=cell.main_queries,
                    pate_teachers=pate_cfg["num_teachers"],
                    **cell.common,
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


@_seeded
def run_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Every accuracy row of one (dataset, run) cell (see :func:`_accuracy_cell`); dropout masks
    come from the cell's own seed, so rerunning a cell gives the same rows."""
    return _accuracy_cell(cfg, common._data(cell["dataset"]), cell["dataset"], cell["run"], device)


def run_accuracy(
    cfg: Settings, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """All accuracy rows, one resumable cell per (dataset, run); unavailable datasets are recorded as not_run.

    ``train=False`` trains nothing and returns the stored rows (e.g. after ``dpgnn run``)."""
    check_train(force, train)
    if not train:
        return store.load("accuracy")
    stored = set() if force else store.done("accuracy")
    cells_of = functools.partial(accuracy_cells, cfg)
    names = datasets_to_run(store, list(cfg.datasets), common._data, artifact="*", cells=cells_of, stored=stored)
    cells = accuracy_cells(cfg, names)
    if not cells:
        return store.load("accuracy")
    import torch  # only when training: reading the stored rows stays light

    torch.set_num_threads(max(1, torch.get_num_threads()))
    return run_grid(
        store,
        "accuracy",
        cells,
        functools.partial(run_cell, cfg, device=device),
        desc="PrivGNN accuracy",
        force=force,
        device=str(resolve_device(device)),
    )


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
