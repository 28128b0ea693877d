"""Notebook 02's B4 readings (Table 9, App. D.5): the readings of the paper's words that its soft labels leave
open, as B4 is not in the authors' code."""

from __future__ import annotations

from typing import Any

import pandas as pd

from dpgnn.methods import get as get_method
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference
from dpgnn.results import ResultStore
from dpgnn.series.privgnn import common
from dpgnn.series.privgnn.common import (
    PAPER,
    _acc_row,
    _run_seed,
    _seeded,
)


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
            "reading_queries": list(cfg.b4.queries),
            "reading_lambdas": list(cfg.b4.lambdas),
            "student_epochs": cfg.student_epochs,
        }
        for n in cfg.b4.datasets
        for r in range(cfg.b4.runs)
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
    graphs = common._data(dataset)
    seed = _run_seed(cfg, dataset, run)
    spec = get_method(PAPER, "b4", "none")
    points = [("hard", cell["queries"], lam) for lam in cell["lambdas"]] + [
        ("soft", q, lam) for lam in cell["reading_lambdas"] for q in cell["reading_queries"]
    ]
    rows = []
    for labels, q, lam in points:
        res = spec.run(
            graphs,
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
