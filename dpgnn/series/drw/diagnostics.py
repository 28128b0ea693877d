"""Why the DP cells of Table 1 land where they do (notebook 01): the selected runs trained again with their
diagnostics (``table1_diagnostics``) and the selected configurations with extra seeds (``table1_seeds``)."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pandas as pd

from dpgnn.fidelity import Fidelity
from dpgnn.methods import drw
from dpgnn.results import ResultStore
from dpgnn.series.drw.profiles import DRWProfile
from dpgnn.series.drw.table1 import (
    _HP,
    _KEYS,
    _data,
    _method,
    _rows,
    _table1_vs_paper,
    run_cell,
    table1_cells,
    table1_side_by_side,
)
from dpgnn.sweep import run_grid
from dpgnn.utils import resolve_device

DIAGNOSTICS = ("best_step", "steps", "top_class_share", "class_entropy", "noise_to_signal")


def diagnostic_cells(
    cfg: DRWProfile, store: ResultStore, which: list[tuple[str, str, str]] | None = None
) -> list[dict[str, Any]]:
    """The grid cells of the DP runs Table 1 selected (every seed of the chosen configuration), optionally only
    those of the ``(dataset, method, setting)`` triples in ``which``."""
    t1 = store.load("table1")
    if t1.empty:
        return []
    t1 = t1[t1["method"].isin(drw.DP_METHODS)]
    keys = ["dataset", "method", "setting", *_HP, "seed"]
    chosen = {tuple(r) for r in t1[keys].itertuples(index=False)}
    wanted = None if which is None else {tuple(w) for w in which}
    return [
        c
        for c in table1_cells(cfg, sorted(t1["dataset"].unique()))
        if c["method"] in drw.DP_METHODS
        and tuple(c[k] for k in keys) in chosen
        and (wanted is None or (c["dataset"], c["method"], c["setting"]) in wanted)
    ]


def run_diagnostic_cell(cfg: DRWProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One selected run trained again: its grid rows (test/val F1 and ε checkpoints: a check against the stored
    run) and :data:`DIAGNOSTICS` --
    the selected step, the steps taken, how concentrated the selected model's test predictions are
    (:func:`dpgnn.methods.drw.prediction_spread`) and the noise-to-signal ratio of every step."""
    config = {
        k: cell[k]
        for k in (
            "num_layers",
            "hidden",
            "lr",
            "clip_fraction",
            "noise_multiplier",
            "target_epsilon",
            "eval_every",
            "resample_every",
            "fdp_degree",
            "fdp_variant",
        )
    }
    res = _method(cell["method"]).run(_data(cell["dataset"]), config, seed=cell["seed"], device=device)
    rows = _rows(cell, res)
    return rows + [{**rows[0], "metric": m, "value": float(res.extra[m])} for m in DIAGNOSTICS]


def run_diagnostics(
    cfg: DRWProfile,
    store: ResultStore,
    which: list[tuple[str, str, str]] | None = None,
    *,
    device: str = "auto",
    force: bool = False,
) -> pd.DataFrame:
    """Train the selected DP runs of Table 1 again (resumable, artifact ``table1_diagnostics``) and return the
    per-cell summary of :func:`diagnostics_summary`."""
    cells = diagnostic_cells(cfg, store, which)
    if cells:
        run_grid(
            store,
            "table1_diagnostics",
            cells,
            functools.partial(run_diagnostic_cell, cfg, device=device),
            desc="DRW Table 1 diagnostics",
            force=force,
            device=str(resolve_device(device)),
        )
    return diagnostics_summary(store)


def diagnostics_summary(store: ResultStore) -> pd.DataFrame:
    """Per reported DP cell: the paper's value, ours, the status, the selected steps per seed, the mean top-class
    share and class entropy of the selected models' test predictions, the noise-to-signal ratio, and how far the
    cell's test F1 spreads over the whole grid (every run; every configuration's mean over seeds)."""
    df = store.load("table1_diagnostics")
    if df.empty:
        return df
    keys = ["dataset", "method", "setting"]
    per = lambda m, f: df[df["metric"] == m].groupby(keys)["value"].agg(f)  # noqa: E731
    seeds = lambda v: "/".join(f"{x:g}" for x in v)  # noqa: E731
    out = pd.concat(
        {
            "test F1 per seed": per("test_f1", lambda v: "/".join(f"{x:.1f}" for x in v)),
            "best step per seed": per("best_step", seeds),
            "steps": per("steps", "max"),
            "top-class share": per("top_class_share", "mean"),
            "class entropy": per("class_entropy", "mean"),
            "noise / signal": per("noise_to_signal", "mean"),
        },
        axis=1,
    ).reset_index()
    grid = store.load("grid")
    test = grid[(grid["metric"] == "test_f1") & grid["method"].isin(drw.DP_METHODS)]
    test = test[(test["fidelity"].fillna(Fidelity.PAPER.value) == Fidelity.PAPER.value)] if "fidelity" in test else test
    conf = test.groupby(keys + _HP)["value"].mean().groupby(keys)
    runs = test.groupby(keys)["value"]
    spread = pd.DataFrame(
        {
            "grid runs": runs.size(),
            "run test F1 min": runs.min(),
            "run test F1 max": runs.max(),
            "config mean min": conf.min(),
            "config mean max": conf.max(),
        }
    ).reset_index()
    rep = table1_side_by_side(store)[keys + ["paper", "ours", "status"]]
    return rep.merge(out, on=keys).merge(spread, on=keys, how="left").round(3)


# ---------------------------------------------------------------------------------------------------------------
# The seed lottery of the noise-dominated cells: the selected configurations with more seeds
# ---------------------------------------------------------------------------------------------------------------
#: seeds beyond the paper's three (:data:`dpgnn.methods.drw.SEEDS`) for :func:`seed_cells`
EXTRA_SEEDS = tuple(range(1, 18))


def seed_cells(
    cfg: DRWProfile,
    store: ResultStore,
    which: list[tuple[str, str, str]] | None = None,
    seeds: tuple[int, ...] = EXTRA_SEEDS,
) -> list[dict[str, Any]]:
    """The grid cells of the configurations Table 1 selected (the DP ones of :func:`diagnostic_cells` and the
    non-private cells, each with its one configuration; optionally only the ``(dataset, method, setting)`` triples
    in ``which``), with ``seeds`` in place of the paper's three."""
    if set(seeds) & set(cfg.seeds):
        raise ValueError(f"seeds {sorted(set(seeds) & set(cfg.seeds))} are the profile's own; extra seeds only")
    t1 = store.load("table1")
    if t1.empty:
        return []
    nondp = t1[~t1["method"].isin(drw.DP_METHODS)]
    chosen = {tuple(r) for r in nondp[_KEYS].itertuples(index=False)}
    wanted = None if which is None else {tuple(w) for w in which}
    plain = [
        c
        for c in table1_cells(cfg, sorted(t1["dataset"].unique()))
        if c["method"] not in drw.DP_METHODS
        and tuple(c[k] for k in _KEYS) in chosen
        and (wanted is None or tuple(c[k] for k in _KEYS) in wanted)
    ]
    out, seen = [], set()
    for c in diagnostic_cells(cfg, store, which) + plain:
        key = tuple(c.get(k) for k in (*_KEYS, *_HP))
        if key not in seen:
            seen.add(key)
            out += [{**c, "seed": s} for s in seeds]
    return out


def run_seeds(
    cfg: DRWProfile,
    store: ResultStore,
    which: list[tuple[str, str, str]] | None = None,
    *,
    seeds: tuple[int, ...] = EXTRA_SEEDS,
    device: str = "auto",
    force: bool = False,
) -> pd.DataFrame:
    """Train the configurations Table 1 selected with ``seeds`` (resumable, artifact ``table1_seeds``; Table 1's
    selection and rows are not touched) and return :func:`seed_spread`."""
    cells = seed_cells(cfg, store, which, seeds)
    if cells:
        run_grid(
            store,
            "table1_seeds",
            cells,
            functools.partial(run_cell, cfg, device=device),
            desc="DRW Table 1 seed spread",
            force=force,
            device=str(resolve_device(device)),
        )
    return seed_spread(store)


def seed_spread(store: ResultStore, n: int = 3) -> pd.DataFrame:
    """Per reported cell with extra seeds (:func:`run_seeds`): the paper's value, ours (the paper's seeds), the
    report's tolerance, the test F1 over every seed of the selected configuration (the paper's and the extra
    ones: count, min, median, max) and, over every subset of ``n`` of those seeds, the share of ``n``-seed means
    within the tolerance of the paper's value and the share at or above it: how often a Table 1 cell computed
    like the paper's (a mean over ``n`` seeds) would land where the paper's did."""
    extra = store.load("table1_seeds")
    if extra.empty:
        return extra
    t1 = store.load("table1")  # one f1_micro row per seed of the selected configuration: its test F1
    test = pd.concat([t1[t1["metric"] == "f1_micro"], extra[extra["metric"] == "test_f1"]], ignore_index=True)
    rep = _table1_vs_paper(store).set_index(_KEYS)
    out = []
    for key, g in test.groupby(_KEYS):
        if key not in rep.index or not set(g["seed"]) - set(t1["seed"]):
            continue
        paper, tol = float(rep.loc[key, "paper_value"]), float(rep.loc[key, "tolerance"])
        v = g.drop_duplicates("seed")["value"].to_numpy(float)
        means = [sum(c) / n for c in itertools.combinations(v, n)]
        out.append(
            {
                **dict(zip(_KEYS, key)),
                "paper": paper,
                "ours": float(rep.loc[key, "ours_value"]),
                "status": rep.loc[key, "status"],
                "tolerance": tol,
                "seeds": len(v),
                "seed F1 min": v.min(),
                "seed F1 median": float(pd.Series(v).median()),
                "seed F1 max": v.max(),
                f"{n}-seed means within tolerance": sum(abs(m - paper) <= tol for m in means) / len(means),
                f"{n}-seed means >= paper": sum(m >= paper for m in means) / len(means),
            }
        )
    return pd.DataFrame(out).round(3)
