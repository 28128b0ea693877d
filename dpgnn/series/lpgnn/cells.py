"""The LPGNN series' training cells: every reported point of an artifact as a cell of the shared ``runs``
artifact, trained through the method registry, and each artifact's labelled view of those rows (:func:`run`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import pandas as pd

from dpgnn import methods
from dpgnn.methods import lpgnn
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.series.lpgnn.profiles import ARTIFACTS, INF, PAPER, LPGNNProfile
from dpgnn.sweep import check_train, grid, run_grid
from dpgnn.utils import config_hash, resolve_device


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
