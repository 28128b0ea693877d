"""Notebook 04 (``fidelity="authors_code"``): students on the official code's teachers, the official code end
to end, and the baselines and PrivGNN's students on the official code's split."""

from __future__ import annotations

from typing import Any

import pandas as pd

from dpgnn import plotting
from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import get as get_method
from dpgnn.methods import privgnn as P
from dpgnn.profiles import Settings
from dpgnn.reference import load_reference
from dpgnn.results import ResultStore
from dpgnn.series.privgnn import common
from dpgnn.series.privgnn.common import (
    BASELINE_ARTIFACTS,
    PAPER,
    _acc_row,
    _privgnn_students,
    _run_seed,
    _seeded,
    _teachers,
    mirrored_cell,
)


def authors_code_cells(cfg: Settings) -> list[dict[str, Any]]:
    """The authors'-code teacher cells (``fidelity="authors_code"``): one per (dataset, K, run). ``fidelity_pair``:
    also train the paper's teachers in the cell (same seeds), so the cell holds its own paired comparison (the
    paper profile leaves it off: its paper-mode rows are the accuracy grid's)."""
    student = parse(cfg.fidelity.student, "teacher")
    official = {}  # only when set, so the cells stored before these options keep their config hashes
    if student is not Fidelity.PAPER:
        official["student"] = student
    if cfg.fidelity.epochs is not None:
        official["authors_epochs"] = int(cfg.fidelity.epochs)
    return [
        {
            "dataset": n,
            "run": r,
            "seed": cfg.seed,
            "k": k,
            "gamma": cfg.gamma,
            "lambdas": list(cfg.figures.lambdas),
            "queries": sorted(cfg.fidelity.queries),
            "main_queries": cfg.main_queries,
            "teacher_epochs": cfg.teacher_epochs,
            "student_epochs": cfg.student_epochs,
            "teacher": "authors_code",
            "noise": list(cfg.fidelity.noise),
            "pair": bool(cfg.fidelity.pair),
            **official,
        }
        for n in cfg.fidelity.datasets
        for k in cfg.fidelity.k
        for r in range(cfg.fidelity.runs)
    ]


@_seeded
def run_authors_code_cell(cfg: Settings, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """Students on the authors'-code teachers' labels (methods ``privgnn_authors_teacher`` /
    ``privgnn_authors_code``; with ``pair`` also the paper's teachers: ``privgnn`` / ``privgnn_code``), artifact
    ``fidelity`` (never compared directly: the paper has no such cell) with setting ``K=..,Q=..,lam=..`` and
    ``mirrors`` naming the paper cell (:func:`mirrored_cell`). Noise draws and student seeds are those of
    :func:`~dpgnn.series.privgnn.accuracy._accuracy_cell`, so the teacher is the only difference."""
    dataset, run = cell["dataset"], cell["run"]
    graphs = common._data(dataset)
    info = P.DATASETS[dataset]
    seed = _run_seed(cfg, dataset, run)
    k = cell["k"] or info.k
    gamma = cell["gamma"] or info.gamma
    rows = []
    for teacher in [Fidelity.AUTHORS_CODE, Fidelity.PAPER] if cell["pair"] else [Fidelity.AUTHORS_CODE]:
        authors = teacher is Fidelity.AUTHORS_CODE
        epochs = cell.get("authors_epochs") if authors else None
        student = parse(cell.get("student", "paper"), "student") if authors else Fidelity.PAPER
        post = _teachers(
            graphs,
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
        se = (epochs or cell["student_epochs"]) if student is Fidelity.AUTHORS_CODE else cell["student_epochs"]
        for r in _privgnn_students(
            graphs,
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
            "lambdas": list(cfg.figures.lambdas),
            "queries": cfg.main_queries,
            "student_epochs": cfg.student_epochs,
            "pate_teachers": cfg.pate_teachers or P.DATASETS[n].pate_teachers,
        }
        for n in cfg.official_split.datasets
        for r in range(cfg.official_split.runs)
    ]
    for n in cfg.official_split.datasets:
        info = P.DATASETS[n]
        for k in cfg.official_split.k:  # a K's runs before the next K: a cut run keeps whole K's first
            qs = sorted(cfg.official_split.queries) if k is None else [cfg.main_queries]
            cells += [
                {
                    "dataset": n,
                    "run": r,
                    "seed": cfg.seed,
                    "part": "split_students",
                    "k": k or cfg.k or info.k,
                    "queries": qs,
                    "main_queries": cfg.main_queries,
                    "noise": list(cfg.official_split.noise),
                    "lambdas": list(cfg.figures.lambdas),
                    "gamma": cfg.gamma or info.gamma,
                    "teacher_epochs": cfg.teacher_epochs,
                    "student_epochs": cfg.student_epochs,
                }
                for r in range(cfg.official_split.runs)
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
        split_graphs, overlap = _authors_split(dataset, seed)
        for b in ("b1", "b2", "b3"):
            res = get_method(PAPER, b, "none").run(split_graphs, {"epochs": se}, seed=seed, device=device)
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
    graphs = common._data(dataset)
    counts = P.votes_for(graphs, pate_cfg, seed=seed, kind="gnn", device=device)
    spec = get_method(PAPER, "pate_g", "node")
    for lam in cell["lambdas"]:
        res = spec.run(graphs, {**pate_cfg, "lam": lam}, seed=seed, device=device, votes=counts)
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
    split_graphs, overlap = _authors_split(dataset, seed)
    post = _teachers(
        split_graphs,
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
        split_graphs,
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
