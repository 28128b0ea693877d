"""LPGNN series ("Locally Private Graph Neural Networks", CCS 2021): figures A, D, E and tables B, C, F of
docs/papers/lpgnn.md#figures-and-tables.

Every training cell (dataset, feature method, ε_x, ε_y, K_x, K_y, backbone, label method, repeats, epochs, seed)
runs once into the shared artifact ``runs`` (resumable: :func:`dpgnn.sweep.run_grid`), whatever notebook asks for
it; each artifact (``fig_a``, ``table_b``, ...) is then a labelled view of those rows (method, setting), so a cell
shared by two artifacts (e.g. SAGE at ε_x = 1, ε_y = 1 in Fig. A, Table B, Fig. D/E and Table F) trains once.
KProp steps and lr / weight decay / dropout are the authors' published selections (``steps="published"``,
:data:`dpgnn.methods.lpgnn.BEST_STEPS`); :func:`dpgnn.methods.lpgnn.tune` redoes the selection on noisy
validation data.

The series API (:mod:`dpgnn.series.common`): :func:`run`, :func:`side_by_side`, :func:`plot`. Each cell resolves
its method through :func:`dpgnn.methods.get` (``("lpgnn", feature method, level)``, the level from ε_x / ε_y).
No grid is searched here (the published selections are used), so there is no ``select_best``.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from dpgnn import methods, plotting
from dpgnn.methods import lpgnn
from dpgnn.nn.lpgnn import BACKBONES
from dpgnn.profiles import Profile
from dpgnn.reference import load_reference
from dpgnn.report import paper_vs_ours, spread
from dpgnn.results import ResultStore
from dpgnn.series import Series, load_or_skip, register
from dpgnn.series.common import fmt
from dpgnn.sweep import CellSpec, check_train, grid, run_grid
from dpgnn.utils import config_hash, resolve_device

PAPER = "lpgnn"
INF = math.inf
_ALL = ["cora", "facebook", "pubmed", "lastfm"]


@dataclass(frozen=True)
class LPGNNProfile(Profile):
    """The settings of the LPGNN notebooks and grids (``dpgnn.profiles.settings("lpgnn", profile)``)."""

    datasets: list[str]
    """datasets of every artifact (the paper: cora, facebook, pubmed, lastfm)"""
    repeats: int
    """training repeats per cell, batched in one run (the paper: 10)"""
    epochs: int
    """training epochs of every run"""
    seed: int
    """base seed of every cell"""
    backbones: list[str]
    """GNN backbones of Fig. A (gcn, gat, sage)"""
    fig_a_eps_x: list[float]
    """feature budgets ε_x of Fig. A (inf: non-private features)"""
    fig_a_eps_y: list[float]
    """label budgets ε_y of Fig. A (inf: non-private labels)"""
    table_b_eps_x: list[float]
    """feature budgets ε_x of LPGNN's rows in Table B (the fully private baselines)"""
    replacements: list[str]
    """Table B's baselines: what replaces the private features (rnd, one, ohd)"""
    table_c_eps_x: list[float]
    """feature budgets ε_x of Table C (feature mechanisms)"""
    table_c_methods: list[str]
    """feature mechanisms compared in Table C (1bm, lpm, agm, mbm)"""
    fig_d_eps_x: list[float]
    """feature budgets ε_x of Fig. D (KProp steps K_x)"""
    fig_e_eps_y: list[float]
    """label budgets ε_y of Fig. E (label denoising steps K_y)"""
    k_values: list[int]
    """KProp steps K_x (Fig. D) and K_y (Fig. E)"""
    table_f_eps_y: list[float]
    """label budgets ε_y of Table F (label denoising methods)"""
    seed_points: list[str]
    """reported points retrained with the extra seeds, as artifact/dataset/method/setting"""
    extra_seeds: list[int]
    """seeds besides the profile's seed for the seed_points (distinct, without the profile's seed)"""


PROFILES: dict[str, LPGNNProfile] = {
    "smoke": LPGNNProfile(
        datasets=["cora"],
        repeats=2,
        epochs=100,
        seed=12345,
        backbones=["sage"],
        fig_a_eps_x=[1.0, INF],
        fig_a_eps_y=[1.0],
        table_b_eps_x=[1.0],
        replacements=["one", "ohd"],
        table_c_eps_x=[1.0],
        table_c_methods=["1bm", "mbm"],
        fig_d_eps_x=[1.0],
        fig_e_eps_y=[1.0],
        k_values=[0, 16],
        table_f_eps_y=[1.0],
        seed_points=["fig_a/cora/sage/eps_x=1,eps_y=1"],
        extra_seeds=[1],
    ),
    "test": LPGNNProfile(
        datasets=["cora"],
        repeats=1,
        epochs=5,
        seed=0,
        backbones=["sage"],
        fig_a_eps_x=[1.0],
        fig_a_eps_y=[1.0],
        table_b_eps_x=[1.0],
        replacements=["one"],
        table_c_eps_x=[1.0],
        table_c_methods=["mbm"],
        fig_d_eps_x=[1.0],
        fig_e_eps_y=[1.0],
        k_values=[0, 2],
        table_f_eps_y=[1.0],
        seed_points=["fig_a/cora/sage/eps_x=1,eps_y=1"],
        extra_seeds=[1],
    ),
    "paper": LPGNNProfile(
        datasets=_ALL,
        repeats=10,
        epochs=500,
        seed=12345,
        backbones=["gcn", "gat", "sage"],
        fig_a_eps_x=[0.01, 0.1, 1.0, 2.0, 3.0, INF],
        fig_a_eps_y=[1.0, 2.0, 3.0, INF],
        table_b_eps_x=[0.01, 0.1, 1.0, INF],
        replacements=["rnd", "one", "ohd"],
        table_c_eps_x=[0.01, 0.1, 1.0, 2.0],
        table_c_methods=["1bm", "lpm", "agm", "mbm"],
        fig_d_eps_x=[0.01, 0.1, 1.0],
        fig_e_eps_y=[0.5, 1.0, 2.0],
        k_values=[0, 2, 4, 8, 16],
        table_f_eps_y=[0.5, 1.0, 2.0],
        # the 13 reported points beyond the report's band when the grid was first compared (before Fig. A's printed
        # points carried their tables' ±), each retrained with 9 more seeds (:func:`seed_spread`):
        # "artifact/dataset/method/setting"
        seed_points=[
            "fig_a/cora/sage/eps_x=0.01,eps_y=inf",
            "table_c/cora/1bm/eps_x=0.1,eps_y=inf",
            "fig_d/cora/sage/eps_x=0.01,eps_y=1,k_x=0",
            "fig_d/cora/sage/eps_x=0.1,eps_y=1,k_x=4",
            "fig_d/cora/sage/eps_x=0.1,eps_y=1,k_x=16",
            "fig_d/cora/sage/eps_x=1,eps_y=1,k_x=8",
            "fig_e/cora/sage/eps_x=1,eps_y=0.5,k_y=2",
            "fig_e/cora/sage/eps_x=1,eps_y=0.5,k_y=4",
            "fig_e/cora/sage/eps_x=1,eps_y=0.5,k_y=8",
            "fig_e/cora/sage/eps_x=1,eps_y=1,k_y=0",
            "fig_e/cora/sage/eps_x=1,eps_y=1,k_y=16",
            "table_f/cora/drop/eps_x=1,eps_y=0.5",
            "table_f/facebook/ce/eps_x=1,eps_y=1",
        ],
        extra_seeds=list(range(1, 10)),
    ),
}
ARTIFACTS = ("fig_a", "table_b", "table_c", "fig_d", "fig_e", "table_f")


def _fmt(e: float) -> str:
    return "inf" if math.isinf(e) else f"{e:g}"


def setting(eps_x: float, eps_y: float, *, k_x: int | None = None, k_y: int | None = None) -> str:
    """The ``setting`` key shared by result rows and reference rows, e.g. ``eps_x=1,eps_y=inf,k_x=4``."""
    s = f"eps_x={_fmt(eps_x)},eps_y={_fmt(eps_y)}"
    if k_x is not None:
        s += f",k_x={k_x}"
    if k_y is not None:
        s += f",k_y={k_y}"
    return s


def _cell(
    cfg: LPGNNProfile,
    dataset: str,
    method: str,
    ex: float,
    ey: float,
    *,
    k_x: int | None = None,
    k_y: int | None = None,
    backbone: str = "sage",
    label_method: str = "drop",
) -> dict[str, Any]:
    """A fully determined training cell; unspecified steps are the published ones (K_y = 0 without Drop)."""
    pub = lpgnn.steps_for(dataset, INF if method in lpgnn.REPLACEMENTS else ex, ey)
    kx = pub[0] if k_x is None else k_x
    ky = (pub[1] if k_y is None else k_y) if label_method == "drop" else 0
    if method in lpgnn.FEATURE_METHODS and math.isinf(ex):
        method = "raw"
    if label_method == "drop" and ky == 0:
        label_method = "fc"  # Drop with K_y = 0 is forward correction alone: one cell, trained once
    return {
        "dataset": dataset,
        "method": method,
        "eps_x": float(ex),
        "eps_y": float(ey),
        "k_x": int(kx),
        "k_y": int(ky),
        "backbone": backbone,
        "label_method": label_method,
        "repeats": int(cfg.repeats),
        "epochs": int(cfg.epochs),
        "seed": int(cfg.seed),
    }


_LEDGER = (
    "level",
    "guarantee",
    "not_covered",
    "accounted",
    "neighbouring",
    "mechanism",
    "eps_x",
    "eps_y",
    "epsilon",
    "delta",
    "m",
    "feature_epsilon",
    "accountant",
)
_KEEP = (
    "run",
    "value",
    "metric",
    "level",
    "epsilon",
    "delta",
    "val_acc_noisy",
    "train_acc_noisy",
    "val_loss_noisy",
    "best_epoch",
    "max_acc",
    "lr",
    "weight_decay",
    "dropout",
    "train_time_s",
    "perturb_time_s",
    "m",
)


def _entries(cfg: LPGNNProfile, artifact: str, dataset: str) -> list[tuple[dict[str, Any], str, str]]:
    """(cell, method label, setting) of every reported point of ``artifact`` for one dataset."""
    if artifact == "fig_a":
        return [
            (_cell(cfg, dataset, "mbm", c["ex"], c["ey"], backbone=c["bb"]), c["bb"], setting(c["ex"], c["ey"]))
            for c in grid(bb=cfg.backbones, ex=cfg.fig_a_eps_x, ey=cfg.fig_a_eps_y)
        ]
    if artifact == "table_b":
        return [(_cell(cfg, dataset, "mbm", ex, 1.0), "lpgnn", setting(ex, 1.0)) for ex in cfg.table_b_eps_x] + [
            (_cell(cfg, dataset, rep, INF, 1.0), rep, setting(INF, 1.0)) for rep in cfg.replacements
        ]
    if artifact == "table_c":
        return [
            (_cell(cfg, dataset, c["meth"], c["ex"], INF), c["meth"], setting(c["ex"], INF))
            for c in grid(meth=cfg.table_c_methods, ex=cfg.table_c_eps_x)
        ]
    if artifact == "fig_d":
        return [
            (_cell(cfg, dataset, "mbm", c["ex"], 1.0, k_x=c["k"]), "sage", setting(c["ex"], 1.0, k_x=c["k"]))
            for c in grid(ex=cfg.fig_d_eps_x, k=cfg.k_values)
        ]
    if artifact == "fig_e":
        return [
            (_cell(cfg, dataset, "mbm", 1.0, c["ey"], k_y=c["k"]), "sage", setting(1.0, c["ey"], k_y=c["k"]))
            for c in grid(ey=cfg.fig_e_eps_y, k=cfg.k_values)
        ]
    if artifact == "table_f":
        return [
            (_cell(cfg, dataset, "mbm", 1.0, c["ey"], label_method=c["lm"]), c["lm"], setting(1.0, c["ey"]))
            for c in grid(ey=cfg.table_f_eps_y, lm=lpgnn.LABEL_METHODS)
        ]
    raise ValueError(f"unknown LPGNN artifact {artifact!r}; valid: {list(ARTIFACTS)}")


@functools.lru_cache(maxsize=8)
def _data(name: str):
    """The prepared dataset, loaded once per process (a notebook's kernel or a Dask worker) and reused by every
    cell that runs there."""
    return lpgnn.prepare(name)


_CONFIG = ("eps_x", "eps_y", "k_x", "k_y", "backbone", "label_method", "repeats", "epochs")


def run_cell(cfg: LPGNNProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One training cell through the method registry (its ``repeats`` batched inside): one row per repeat."""
    spec = methods.get(PAPER, cell["method"], lpgnn.level_of(cell["method"], cell["eps_x"], cell["eps_y"]))
    config = {"dataset": cell["dataset"], **{k: cell[k] for k in _CONFIG}}
    result = spec.run(_data(cell["dataset"]), config, seed=cell["seed"], device=device)
    out = []
    for r in result.extra["rows"]:
        row = {k: r[k] for k in _KEEP if k in r}
        row["ledger"] = {k: r.get(k) for k in _LEDGER}
        out.append(row)
    return out


def artifact_cells(cfg: LPGNNProfile, artifact: str, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """The distinct training cells behind ``artifact`` (every dataset of the profile unless ``datasets``)."""
    cells, seen = [], set()
    for name in cfg.datasets if datasets is None else datasets:
        for cell, _, _ in _entries(cfg, artifact, name):
            h = config_hash(cell)
            if h not in seen:
                seen.add(h)
                cells.append(cell)
    return cells


def run(
    cfg: LPGNNProfile,
    store: ResultStore,
    artifact: str | list[str],
    *,
    device: str = "auto",
    force: bool = False,
    train: bool = True,
) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Train every missing cell of ``artifact`` (a name of :data:`ARTIFACTS` or a list of them; the cells go to
    ``runs``) and rebuild the artifacts' labelled rows; returns them (a dict by artifact for a list).

    ``force`` retrains this artifact's cells (the other notebooks' runs stay); ``train=False`` trains nothing: the
    artifacts are rebuilt from the cells already stored, and missing cells are left out (their reference rows then
    show as ``not_run``) -- e.g. to look at a partly finished paper profile.
    """
    artifacts = [artifact] if isinstance(artifact, str) else list(artifact)
    for a in artifacts:
        if a not in ARTIFACTS:
            raise ValueError(f"unknown LPGNN artifact {a!r}; valid: {list(ARTIFACTS)}")
    check_train(force, train)
    entries: dict[str, list] = {a: [] for a in artifacts}
    for name in cfg.datasets:
        ok = True
        if train:
            for a in artifacts:
                if load_or_skip(store, name, _data, artifact=a) is None:
                    ok = False
        if ok:
            for a in artifacts:
                entries[a] += _entries(cfg, a, name)
    cells, seen = [], set()
    for a in artifacts:
        for cell, _, _ in entries[a]:
            h = config_hash(cell)
            if h not in seen:
                seen.add(h)
                cells.append(cell)
    if train and cells:  # force: recompute only this notebook's cells, keep the other notebooks' runs
        runs = run_grid(
            store,
            "runs",
            cells,
            functools.partial(run_cell, cfg, device=device),
            desc="LPGNN cells",
            force=force,
            device=str(resolve_device(device)),
        )
    else:
        runs = store.load("runs")
    by_hash = {h: g for h, g in runs.groupby(runs["config_hash"].astype(str))} if len(runs) else {}
    out = {}
    for a in artifacts:
        rows = []
        for cell, method, sett in entries[a]:
            g = by_hash.get(config_hash(cell))
            if g is None:
                continue
            for r in g.to_dict("records"):
                rows.append(
                    {
                        **r,
                        "artifact": a,
                        "method": method,
                        "setting": sett,
                        "feature_method": cell["method"],
                        "paper": PAPER,
                    }
                )
        store.replace(a, rows)
        out[a] = store.load(a)
    return out[artifact] if isinstance(artifact, str) else out


# ---------------------------------------------------------------------------------------------------------------
# How far a 10-run mean moves with the seed: reported points retrained with more seeds
# ---------------------------------------------------------------------------------------------------------------
def parse_point(point: str) -> tuple[str, str, str, str]:
    """``"artifact/dataset/method/setting"`` (a reported point, as in the report) as a tuple; ``ValueError`` names
    what is wrong."""
    parts = str(point).split("/")
    if len(parts) != 4 or not all(parts):
        raise ValueError(
            f"a seed point is 'artifact/dataset/method/setting', e.g. 'fig_a/cora/sage/eps_x=1,eps_y=1'; got {point!r}"
        )
    if parts[0] not in ARTIFACTS:
        raise ValueError(f"seed point {point!r}: unknown artifact {parts[0]!r}; valid: {list(ARTIFACTS)}")
    return parts[0], parts[1], parts[2], parts[3]


def point_cell(cfg: LPGNNProfile, point: str) -> dict[str, Any]:
    """The training cell behind one reported point (with the profile's seed)."""
    artifact, dataset, method, sett = parse_point(point)
    for cell, m, s in _entries(cfg, artifact, dataset):
        if m == method and s == sett:
            return cell
    valid = sorted({f"{m} {s}" for _, m, s in _entries(cfg, artifact, dataset)})
    raise ValueError(f"seed point {point!r} is not a point of {artifact} in this profile; its points: {valid}")


def seed_cells(cfg: LPGNNProfile) -> list[dict[str, Any]]:
    """The cells of ``cfg.seed_points`` with each seed of ``cfg.extra_seeds`` in place of the profile's seed (a
    point shared by two artifacts, e.g. Fig. E's K_y = 8 and Table F's Drop, is one cell)."""
    seeds = [int(s) for s in cfg.extra_seeds]
    if int(cfg.seed) in seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"extra_seeds must be distinct and exclude the profile's seed {cfg.seed}; got {seeds}")
    out, seen = [], set()
    for point in cfg.seed_points:
        base = point_cell(cfg, point)
        for s in seeds:
            cell = {**base, "seed": s}
            h = config_hash(cell)
            if h not in seen:
                seen.add(h)
                out.append(cell)
    return out


def run_seeds(
    cfg: LPGNNProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Train the missing cells of :func:`seed_cells` (resumable, artifact ``seeds``; ``train=False``: none) and
    return :func:`seed_spread`. A point is shown once its own artifact's rows are stored."""
    check_train(force, train)
    cells = seed_cells(cfg)
    if train and cells:
        run_grid(
            store,
            "seeds",
            cells,
            functools.partial(run_cell, cfg, device=device),
            desc="LPGNN seed spread",
            force=force,
            device=str(resolve_device(device)),
        )
    return seed_spread(cfg, store)


def _share_within(mean: float, se: float, paper: float, tol: float) -> float:
    """P(|M − paper| <= tol) for M ~ N(mean, se²)."""
    if not se > 0:
        return float(abs(mean - paper) <= tol)
    return float(stats.norm.cdf((paper + tol - mean) / se) - stats.norm.cdf((paper - tol - mean) / se))


def seed_spread(cfg: LPGNNProfile, store: ResultStore) -> pd.DataFrame:
    """Per point of ``cfg.seed_points``: the paper's value, the report's tolerance and status, ours (the profile's
    seed), and the ``repeats``-run means of every seed trained (:func:`seed_cells`, artifact ``seeds``; count,
    min, max, share within the tolerance of the paper's value); ``pooled``: the mean over all their runs, ``se``:
    the standard error of one ``repeats``-run mean (std of the runs / √repeats), ``z`` = (paper − pooled) / se, and
    ``p within``: the share of ``repeats``-run means within the tolerance of the paper's value, P(|M − paper| <=
    tolerance) for M ~ N(pooled, se²) (the seeds' own share, ``within tolerance``, is coarse with few seeds). The
    criterion of DRW's seed spread (docs/papers/drw.md#reported-results) applies: ``p within`` >= 5 % means
    that another seed would read ``within`` at least that often, so the gap is the seed draw."""
    extra = store.load("seeds")
    by_hash = {h: g for h, g in extra.groupby(extra["config_hash"].astype(str))} if len(extra) else {}
    loaded: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}  # per artifact: (report rows, stored rows), read once
    out = []
    for point in cfg.seed_points:
        artifact, dataset, method, sett = parse_point(point)
        if artifact not in loaded:
            loaded[artifact] = (
                paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent),
                store.load(artifact),
            )
        rep, own = loaded[artifact]
        ref = rep[(rep["dataset"] == dataset) & (rep["method"] == method) & (rep["setting"] == sett)]
        own = own[(own["dataset"] == dataset) & (own["method"] == method) & (own["setting"] == sett)]
        if ref.empty or own.empty:
            continue
        base = point_cell(cfg, point)
        runs = [own["value"].to_numpy(float)]
        for s in cfg.extra_seeds:
            g = by_hash.get(config_hash({**base, "seed": int(s)}))
            if g is not None and len(g) == int(base["repeats"]):
                runs.append(g["value"].to_numpy(float))
        paper, tol = float(ref["paper_value"].iloc[0]), float(ref["tolerance"].iloc[0])
        means = np.array([r.mean() for r in runs])
        pooled = np.concatenate(runs)
        se = float(pooled.std(ddof=1) / math.sqrt(int(base["repeats"])))
        out.append(
            {
                "point": point,
                "paper": paper,
                "tolerance": tol,
                "status": ref["status"].iloc[0],
                "ours": float(means[0]),
                "seeds": len(runs),
                "means": [round(float(m), 2) for m in means],
                "mean min": means.min(),
                "mean max": means.max(),
                "within tolerance": float(np.mean(np.abs(means - paper) <= tol)),
                "pooled": float(pooled.mean()),
                "se": se,
                "z": (paper - float(pooled.mean())) / se if se > 0 else math.nan,
                "p within": _share_within(float(pooled.mean()), se, paper, tol),
            }
        )
    return pd.DataFrame(out).round(3)


def sampling_check(store: ResultStore) -> pd.DataFrame:
    """Per dataset: the reported points run, how many are beyond the report's band (``outside`` or ``explained``),
    and how many would be expected beyond it if the paper's numbers were our computation with other seeds. A
    point whose runs have standard error ``se`` (std / √runs) and whose band is ``b``: two independent means of
    this kind differ by more than ``b`` with probability erfc(b / (2·se)) (their difference has standard
    deviation √2·se); the expectation is the sum over points (values read off a plot would only add error)."""
    out: dict[str, dict[str, float]] = {}
    for artifact in ARTIFACTS:
        rep = paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent)
        rep = rep[rep["status"] != "not_run"]
        if rep.empty:
            continue
        g = store.load(artifact).groupby(["dataset", "method", "setting"])["value"]
        se = (g.std(ddof=1) / np.sqrt(g.size())).rename("se")
        rep = rep.join(se, on=["dataset", "method", "setting"])
        for r in rep.itertuples(index=False):
            d = out.setdefault(r.dataset, {"points": 0, "beyond the band": 0, "expected by sampling": 0.0})
            d["points"] += 1
            d["beyond the band"] += int(r.status in ("outside", "explained"))
            d["expected by sampling"] += math.erfc(r.tolerance / (2 * r.se)) if r.se > 0 else 0.0
    table = pd.DataFrame.from_dict(out, orient="index").rename_axis("dataset").reset_index()
    return table.round({"expected by sampling": 1})


def plot_seed_spread(table: pd.DataFrame):
    """:func:`seed_spread` drawn: a row per point with every seed's mean (dots), the pooled mean (tick) ± 2 se of
    one run-mean (bar) and the paper's value (◇) inside the report's tolerance (grey band)."""
    fig, ax = plt.subplots(figsize=(8.5, 0.42 * max(len(table), 2) + 1.4))
    for i, r in enumerate(table.itertuples(index=False)):
        ax.fill_betweenx([i - 0.32, i + 0.32], r.paper - r.tolerance, r.paper + r.tolerance, color="0.87", lw=0)
        ax.errorbar(r.pooled, i, xerr=2 * r.se, fmt="|", color="C0", ms=14, mew=2.5, capsize=4, lw=1.5)
        ax.plot(r.means, [i] * len(r.means), "o", color="C0", ms=3.5, alpha=0.6)
        ax.plot(r.paper, i, "D", color="k", ms=6)
    ax.set_yticks(range(len(table)), list(table["point"]), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("test accuracy %")
    ax.set_title(
        "Seed spread: ● a seed's mean over its repeats, ├┼┤ pooled mean ± 2 se;\n◇ paper in its tolerance band",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


#: the grids of this series, cell by cell (:mod:`dpgnn.engine`): every artifact's cells go to ``runs``, where a
#: cell shared by several artifacts is stored once; ``seeds`` (the seed spread) to its own artifact
CELLS = {a: CellSpec(PAPER, a, "runs", functools.partial(artifact_cells, artifact=a), run_cell) for a in ARTIFACTS}
CELLS["seeds"] = CellSpec(PAPER, "seeds", "seeds", seed_cells, run_cell)


# ---------------------------------------------------------------------------------------------------------------
# tables and figures (from stored rows only)
# ---------------------------------------------------------------------------------------------------------------
def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """``ours ± CI`` beside ``paper ± CI`` with the difference and status per reported cell of ``artifact``."""
    if artifact not in ARTIFACTS:
        raise ValueError(f"unknown LPGNN artifact {artifact!r}; valid: {list(ARTIFACTS)}")
    rep = paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent)
    rep["ours"] = [fmt(v, s) for v, s in zip(rep["ours_value"], rep["ours_spread"])]
    rep["paper"] = [fmt(v, s) for v, s in zip(rep["paper_value"], rep["paper_spread"])]
    rep["diff"] = rep["diff"].round(1)
    return rep[["dataset", "method", "setting", "paper", "ours", "diff", "n_runs", "approx", "status"]]


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["dataset", "method", "setting"])["value"]
    out = g.agg(value="mean").reset_index()
    out["spread"] = [spread(v, "ci95_bootstrap") for _, v in g]
    parts = out["setting"].str.split(",")
    for i, key in enumerate(("eps_x", "eps_y")):
        out[key] = [float(p[i].split("=")[1]) for p in parts]
    for key in ("k_x", "k_y"):
        out[key] = [next((int(x.split("=")[1]) for x in p if x.startswith(key + "=")), None) for p in parts]
    return out


def _ref(artifact: str) -> pd.DataFrame:
    ref = load_reference(PAPER, artifact)
    return _summary(ref.assign(value=ref["value"])).drop(columns="spread") if len(ref) else ref


def _position(values: list[float]) -> dict[float, int]:
    return {v: i for i, v in enumerate(sorted(set(values)))}


def plot_fig_a(store: ResultStore):
    """Fig. A: accuracy vs ε_x (positions 0.01, 0.1, 1, 2, 3, ∞), one line per ε_y, a panel per backbone ×
    dataset."""
    df = _summary(store.load("fig_a"))
    ref = _ref("fig_a")
    pos = _position(list(df["eps_x"]) + list(ref["eps_x"]))
    for d in (df, ref):
        d["x"] = d["eps_x"].map(pos)
        d["hue"] = "ε_y=" + d["eps_y"].map(_fmt)
        d["panel"] = d["dataset"] + " — " + d["method"]
    ref = ref[ref["panel"].isin(df["panel"].unique())]
    panels = df.drop_duplicates("panel")  # a row per dataset (the paper's order), a column per backbone
    rank = {v: i for i, v in enumerate(_ALL + list(BACKBONES))}
    rows = sorted(
        panels[["dataset", "method", "panel"]].itertuples(index=False),
        key=lambda r: (rank.get(r.dataset, len(rank)), rank.get(r.method, len(rank))),
    )
    order = [r.panel for r in rows]
    return plotting.lines(
        df,
        x="x",
        y="value",
        err="spread",
        hue="hue",
        col="panel",
        reference=ref,
        col_order=order,
        ncols=panels["method"].nunique(),
        xticks={i: _fmt(v).replace("inf", "∞") for v, i in pos.items()},
        xlabel="ε_x",
        ylabel="test accuracy %",
        title="Fig. A: accuracy vs ε_x (lines: ours ± 95% CI; ◇ paper, SAGE)",
    )


def plot_k(store: ResultStore, artifact: str):
    """Fig. D (accuracy vs K_x, one line per ε_x) or Fig. E (accuracy vs K_y, one line per ε_y)."""
    key, hue = ("k_x", "eps_x") if artifact == "fig_d" else ("k_y", "eps_y")
    df = _summary(store.load(artifact))
    ref = _ref(artifact)
    for d in (df, ref):
        d["hue"] = f"{hue}=" + d[hue].map(_fmt)
    ref = ref[ref["dataset"].isin(df["dataset"].unique())]
    name = "Fig. D: effect of K_x (ε_y = 1)" if artifact == "fig_d" else "Fig. E: effect of K_y (ε_x = 1)"
    return plotting.lines(
        df,
        x=key,
        y="value",
        err="spread",
        hue="hue",
        col="dataset",
        reference=ref,
        xlabel=key,
        ylabel="test accuracy %",
        title=f"{name}; ◇ paper",
    )


def plot_table(store: ResultStore, artifact: str):
    """Tables B, C, F as figures: accuracy per method vs ε (ours ± CI, paper ◇)."""
    df = _summary(store.load(artifact))
    ref = _ref(artifact)
    x = "eps_y" if artifact == "table_f" else "eps_x"
    pos = _position(list(df[x]) + list(ref[x]))
    for d in (df, ref):
        d["x"] = d[x].map(pos)
    ref = ref[ref["dataset"].isin(df["dataset"].unique())]
    return plotting.lines(
        df,
        x="x",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        reference=ref,
        xticks={i: _fmt(v).replace("inf", "∞") for v, i in pos.items()},
        xlabel=x.replace("eps", "ε"),
        ylabel="test accuracy %",
        title=f"{artifact}: ours (± 95% CI) vs paper (◇)",
    )


def plot(store: ResultStore, artifact: str):
    """The paper's figure ``artifact`` from stored rows: Fig. A (:func:`plot_fig_a`), Fig. D/E (:func:`plot_k`),
    Tables B, C, F drawn as figures (:func:`plot_table`)."""
    if artifact == "fig_a":
        return plot_fig_a(store)
    if artifact in ("fig_d", "fig_e"):
        return plot_k(store, artifact)
    if artifact in ("table_b", "table_c", "table_f"):
        return plot_table(store, artifact)
    raise ValueError(f"unknown LPGNN artifact {artifact!r}; valid: {list(ARTIFACTS)}")


def ledger_summary(store: ResultStore, artifact: str) -> pd.DataFrame:
    """The distinct privacy statements behind an artifact's rows (ε_x, ε_y, per-node ε, δ, mechanisms)."""
    df = store.load(artifact)
    if df.empty:
        return df
    led = pd.DataFrame([json.loads(s) for s in df["ledger"]])
    cols = [c for c in ("mechanism", "eps_x", "eps_y", "epsilon", "delta", "m", "level") if c in led]
    return led[cols].drop_duplicates().reset_index(drop=True)


__all__ = [
    "PAPER",
    "PROFILES",
    "ARTIFACTS",
    "setting",
    "run",
    "side_by_side",
    "plot",
    "plot_fig_a",
    "plot_k",
    "plot_table",
    "ledger_summary",
    "CELLS",
    "run_cell",
    "artifact_cells",
    "parse_point",
    "point_cell",
    "seed_cells",
    "run_seeds",
    "seed_spread",
    "plot_seed_spread",
    "sampling_check",
]


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='LPGNN: "Locally Private Graph Neural Networks"',
        kind="paper",
        order=2,
        citation="Sajadmanesh & Gatica-Perez, ACM CCS 2021",
        docs="docs/papers/lpgnn.md",
        reference="lpgnn.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
    )
)
