"""Table 1 and Fig. 2 (notebooks 01 and 02): the resumable grid (every method × architecture × DP
hyper-parameters × seed, artifact ``grid``), the selection by mean validation F1, the ``table1``/``fig2``
artifacts of each fidelity, their side-by-side tables and figures."""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from dpgnn import methods, plotting
from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import RunResult, drw
from dpgnn.reference import load_reference
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series import common, datasets_to_run
from dpgnn.series.drw.profiles import PAPER, DRWProfile
from dpgnn.sweep import SiblingRunner, check_train, run_grid
from dpgnn.utils import config_hash, resolve_device


def table1_cells(cfg: DRWProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """One cell per (dataset, method, architecture, [lr, clip, z,] seed); DP cells carry ``fidelity`` (and the
    early-stopping ``patience``) when it is ``authors_code`` (see :func:`dpgnn.methods.drw.train_dp`)."""
    datasets = cfg.datasets if datasets is None else datasets
    fidelity = cfg.fidelity
    cells = []
    for name in datasets:
        for method in cfg.methods:
            for arch in cfg.archs:
                layers, hidden = drw.ARCHS[arch]
                base = {"dataset": name, "method": method, "setting": arch, "num_layers": layers, "hidden": hidden}
                if method in drw.DP_METHODS:
                    for lr in cfg.grid.lrs:
                        for clip in cfg.grid.clip_fractions:
                            for z in cfg.grid.noise_multipliers:
                                for seed in cfg.seeds:
                                    cell = {
                                        **base,
                                        "lr": lr,
                                        "clip_fraction": clip,
                                        "noise_multiplier": z,
                                        "seed": seed,
                                        "target_epsilon": cfg.target_epsilon,
                                        "eval_every": cfg.eval_every,
                                        "resample_every": cfg.resample_every,
                                        "fdp_degree": cfg.fdp_degree,
                                        "fdp_variant": cfg.fdp_variant,
                                    }
                                    if fidelity is not Fidelity.PAPER:  # paper cells keep their stored config hashes
                                        cell.update(fidelity=fidelity, patience=cfg.patience)
                                    cells.append(cell)
                else:
                    for seed in cfg.seeds:
                        cells.append(
                            {
                                **base,
                                "lr": 0.01,
                                "seed": seed,
                                "max_steps": cfg.nondp_max_steps,
                                "patience": cfg.patience,
                            }
                        )
                        if method == "mlp":  # raw logits since the fix (a new config hash: old runs normalised)
                            cells[-1]["logits"] = "raw"
    return cells


def _rows(cell: dict[str, Any], res: RunResult) -> list[dict[str, Any]]:
    """The stored rows of one run: test and validation F1 of the selected model and the ε-checkpoint rows (%)."""
    x = res.extra
    common = {
        "level": x["level"],
        "epsilon": x["epsilon"],
        "delta": x["delta"],
        "ledger": res.ledger,
        "steps": x["steps"],
        "seconds": round(res.seconds, 3),
    }
    out = [
        {**common, "metric": "test_f1", "value": 100 * res.metrics["test"]},
        {**common, "metric": "val_f1", "value": 100 * res.metrics["val"]},
    ]
    for c in x["checkpoints"]:
        out.append(
            {
                **common,
                "metric": "test_f1_at_eps",
                "value": 100 * c["test_f1"],
                "checkpoint": c["checkpoint"],
                "epsilon": c["epsilon"],
                "steps": c["steps"],
            }
        )
    return out


def _method(name: str):
    """The registered DRW method ``name`` (:func:`dpgnn.methods.get` at its level)."""
    return methods.get(PAPER, name, drw.LEVELS[name])


@functools.lru_cache(maxsize=8)
def _data(name: str):
    """The prepared dataset, loaded once per process (a notebook's kernel or a Dask worker) and reused by every
    cell that runs there (every DRW method shares :func:`dpgnn.methods.drw.prepare`)."""
    return _method("drw").prepare(name)


def _config(cell: dict[str, Any]) -> dict[str, Any]:
    """The method's configuration of a cell (its hyper-parameters, without dataset, method and seed)."""
    config = {k: cell[k] for k in ("num_layers", "hidden", "lr")}
    if cell["method"] in drw.DP_METHODS:
        config.update(
            {
                k: cell[k]
                for k in (
                    "clip_fraction",
                    "noise_multiplier",
                    "target_epsilon",
                    "eval_every",
                    "resample_every",
                    "fdp_degree",
                    "fdp_variant",
                )
            }
        )
        if cell.get("fidelity", Fidelity.PAPER) != Fidelity.PAPER:
            config.update(fidelity=cell["fidelity"], patience=cell["patience"])
    else:
        config.update(max_steps=cell["max_steps"], patience=cell["patience"])
    return config


def run_cell(cfg: DRWProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One grid cell: test/val F1 and the ε-checkpoint rows of one training run."""
    res = _method(cell["method"]).run(_data(cell["dataset"]), _config(cell), seed=cell["seed"], device=device)
    return _rows(cell, res)


def seed_key(cell: dict[str, Any]) -> str:
    """The cells of one configuration that differ only in their seed share this key (the engine's ``batch_key``)."""
    return config_hash({k: v for k, v in cell.items() if k != "seed"})


def batch_run(cfg: DRWProfile, cells: list[dict[str, Any]], device: str = "auto") -> list[list[dict[str, Any]]]:
    """The rows of each of ``cells``, the seeds of one configuration (one :func:`seed_key`): a DP method's seeds
    trained together (its registered ``run.repeats``, :func:`dpgnn.methods.drw.repeats.run_dp_repeats`), each
    cell's rows equal to its :func:`run_cell`'s; the non-private baselines one :func:`run_cell` each. What the
    engine computes as one task."""
    first = cells[0]
    repeats = getattr(_method(first["method"]).run, "repeats", None)
    if repeats is None or len(cells) == 1:
        return [run_cell(cfg, c, device) for c in cells]
    if len({seed_key(c) for c in cells}) != 1:
        raise ValueError("batch_run trains the seeds of one configuration; the cells differ in more than the seed")
    results = repeats(_data(first["dataset"]), _config(first), seeds=[c["seed"] for c in cells], device=device)
    return [_rows(c, res) for c, res in zip(cells, results)]


def seeds_runner(cfg: DRWProfile, todo: list[dict[str, Any]], device: str = "auto") -> SiblingRunner:
    """The cell function :func:`run_table1` gives :func:`dpgnn.sweep.run_grid`: :func:`run_cell`, except that a DP
    cell trains, in one :func:`batch_run`, with every other seed of its configuration among ``todo`` that has not
    run yet (:class:`dpgnn.sweep.SiblingRunner`; each cell's rows equal to its :func:`run_cell`'s)."""
    return SiblingRunner(lambda cells: batch_run(cfg, cells, device), seed_key, todo)


def run_table1(
    cfg: DRWProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Run the missing grid cells, then derive ``table1`` and ``fig2``; returns the ``table1`` rows.

    ``train=False`` trains nothing: ``table1`` and ``fig2`` are selected from the grid cells already stored."""
    check_train(force, train)
    if not train:
        return select(store, list(cfg.datasets))
    stored = set() if force else store.done("grid")
    cells_of = functools.partial(table1_cells, cfg)
    names = datasets_to_run(store, list(cfg.datasets), _data, artifact="table1", cells=cells_of, stored=stored)
    cells = table1_cells(cfg, names)
    if cells:
        run_grid(
            store,
            "grid",
            cells,
            seeds_runner(cfg, [c for c in cells if config_hash(c) not in stored], device),
            desc="DRW Table 1 grid",
            force=force,
            device=str(resolve_device(device)),
        )
    return select(store, names, cfg.fidelity)


def artifacts(fidelity: str | Fidelity = Fidelity.PAPER) -> tuple[str, str]:
    """Names of the (Table 1, Fig. 2) artifacts of one fidelity: ``table1``/``fig2`` for the paper's version,
    ``table1_authors_code``/``fig2_authors_code`` for the authors' code (kept apart, never mixed)."""
    fidelity = parse(fidelity)
    return ("table1", "fig2") if fidelity is Fidelity.PAPER else (f"table1_{fidelity}", f"fig2_{fidelity}")


_HP = ["lr", "clip_fraction", "noise_multiplier"]
_KEYS = ["dataset", "method", "setting"]


def select_best(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 1's selection (paper Sec. 5): per (dataset, method, setting), the configuration (lr, clip fraction,
    noise multiplier) with the best mean validation F1 over its seeds; returns every row of the chosen runs (all
    metrics). Built on :func:`dpgnn.series.common.select_best`: non-DP rows have no DP hyper-parameters (filled with
    -1, kept in the returned rows); ties go to the first configuration in (lr, clip fraction, noise) order."""
    runs = runs.copy()
    for c in _HP:
        if c not in runs:
            runs[c] = float("nan")
    return common.select_best(runs, _KEYS, _HP, val_metric="val_f1", fill=-1.0)


def _fig2_rows(chosen: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2 from the chosen runs: per dataset and DP method the best-validation architecture's ε-checkpoint rows,
    and ``drw-best`` = the best of the DRW samplers (by the same mean validation F1)."""
    cp = chosen[chosen["metric"] == "test_f1_at_eps"]
    if cp.empty:
        return cp
    dp = chosen[chosen["method"].isin(drw.DP_METHODS)]
    top = common.select_best(dp, ["dataset", "method"], ["setting"], val_metric="val_f1", test_metric="val_f1")
    top = top.groupby(_KEYS, as_index=False)["value"].mean()
    rows = [cp.merge(top[_KEYS], on=_KEYS)]
    drws = top[top["method"].str.startswith("drw")]
    if len(drws):
        b = common.select_best(drws.assign(metric="val_f1"), ["dataset"], ["method", "setting"], val_metric="val_f1")
        rows.append(cp.merge(b[_KEYS], on=_KEYS).assign(sampler=lambda d: d["method"], method="drw-best"))
    fig2 = pd.concat(rows, ignore_index=True)
    fig2["epsilon"] = fig2["checkpoint"].astype(float)
    return fig2


def _stale_mlp(grid: pd.DataFrame) -> pd.Series:
    """Non-private MLP runs stored before the MLP returned raw logits (no ``logits`` key): a store that still holds
    them next to the new runs must not average the two."""
    old = grid["logits"].isna() if "logits" in grid else pd.Series(True, index=grid.index)
    return (grid["method"] == "mlp") & old


def select(store: ResultStore, datasets: list[str], fidelity: str | Fidelity = Fidelity.PAPER) -> pd.DataFrame:
    """:func:`select_best` on the stored ``grid`` rows of ``fidelity`` (non-DP rows belong to both) of
    ``datasets``; writes the :func:`artifacts` of that fidelity (Table 1 and Fig. 2) and returns Table 1."""
    fidelity = parse(fidelity)
    a_t1, a_fig2 = artifacts(fidelity)
    grid = store.load("grid")
    if grid.empty:
        store.replace(a_t1, [])
        store.replace(a_fig2, [])
        return store.load(a_t1)
    grid = grid[grid["dataset"].isin(datasets)].copy()
    grid = grid[~_stale_mlp(grid)]
    paper = Fidelity.PAPER.value
    fid = grid["fidelity"].fillna(paper) if "fidelity" in grid else pd.Series(paper, index=grid.index)
    chosen = select_best(grid[(fid == fidelity.value) | ~grid["method"].isin(drw.DP_METHODS)])
    t1 = chosen[chosen["metric"] == "test_f1"].assign(metric="f1_micro")
    drop = ["paper", "artifact", "profile", "timestamp", "config_hash"]
    store.replace(a_t1, t1.drop(columns=[c for c in drop if c in t1]).to_dict("records"))
    fig2 = _fig2_rows(chosen)
    store.replace(a_fig2, fig2.drop(columns=[c for c in drop if c in fig2]).to_dict("records") if len(fig2) else [])
    return store.load(a_t1)


def _table1_vs_paper(store: ResultStore, fidelity: str | Fidelity = Fidelity.PAPER) -> pd.DataFrame:
    """The report's comparison of the stored Table 1 rows of ``fidelity`` with the paper's Table 1."""
    ours = store.load(artifacts(fidelity)[0]).assign(artifact="table1")
    return compare(load_reference(PAPER, "table1"), ours, profile=store.profile, skipped=store.skipped())


def table1_side_by_side(store: ResultStore, fidelity: str | Fidelity = Fidelity.PAPER) -> pd.DataFrame:
    """Table 1 as in the paper: ours (mean ± std over seeds, of the given ``fidelity``) beside the paper,
    difference and status."""
    rep = _table1_vs_paper(store, fidelity)
    rep["ours"] = [common.fmt(v, s) for v, s in zip(rep["ours_value"], rep["ours_spread"])]
    rep["paper"] = rep["paper_value"].map(lambda v: f"{v:.1f}")
    rep["diff"] = rep["diff"].round(1)
    order = {m: i for i, m in enumerate(drw.METHODS)}
    rep = rep.assign(_m=rep["method"].map(order)).sort_values(["dataset", "_m", "setting"])
    return rep[["dataset", "method", "setting", "paper", "ours", "diff", "n_runs", "status", "note"]]


def plot_table1(store: ResultStore, fidelity: str | Fidelity = Fidelity.PAPER):
    """Table 1 as a figure: mean test F1 per method and architecture, paper values as ◇."""
    df = store.load(artifacts(fidelity)[0])
    if df.empty:
        raise ValueError("no Table 1 results stored yet")
    order = list(drw.ARCHS)
    agg = df.groupby(["dataset", "method", "setting"])["value"].agg(value="mean", spread="std").reset_index()
    agg["arch"] = agg["setting"].map(order.index)
    ref = load_reference(PAPER, "table1")
    ref = ref[ref["dataset"].isin(agg["dataset"].unique()) & ref["setting"].isin(agg["setting"].unique())]
    ref = ref.assign(arch=ref["setting"].map(order.index))
    fig = plotting.lines(
        agg,
        x="arch",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        order=list(drw.METHODS),
        xlabel="architecture",
        xticks=dict(enumerate(order)),
        ylabel="test F1-micro %",
        reference=ref,
        title="Table 1: ours (mean ± std over seeds) vs paper (◇); DP rows at ε = 8",
    )
    return fig


def plot_fig2(store: ResultStore, fidelity: str | Fidelity = Fidelity.PAPER):
    """Fig. 2: test F1 at integer ε checkpoints, best DRW sampler vs FDP (all DP methods drawn thin), from the
    ``fidelity``'s artifact (:func:`artifacts`)."""
    df = store.load(artifacts(fidelity)[1])
    if df.empty:
        raise ValueError("no Fig. 2 results stored yet")
    agg = df.groupby(["dataset", "method", "epsilon"])["value"].agg(value="mean", spread="std").reset_index()
    return plotting.lines(
        agg,
        x="epsilon",
        y="value",
        err="spread",
        hue="method",
        col="dataset",
        order=["drw-best", "fdp", "drw", "drw-d", "drw-r"],
        xlabel="ε",
        ylabel="test F1-micro %",
        title="Fig. 2: test F1 at ε checkpoints (best-validation model so far)",
    )


def fig2_side_by_side(store: ResultStore, fidelity: str | Fidelity = Fidelity.PAPER) -> pd.DataFrame:
    """Our Fig. 2 values per ε (of ``fidelity``) beside the paper's only printed point, Table 1 at ε = 8 (Fig. 2 is
    not printed)."""
    df = store.load(artifacts(fidelity)[1])
    if df.empty:
        return df
    wide = df.groupby(["dataset", "method", "setting", "checkpoint"])["value"].mean().unstack("checkpoint")
    wide.columns = [f"ours ε≤{int(c)}" for c in wide.columns]
    rep = _table1_vs_paper(store, fidelity)[["dataset", "method", "setting", "paper_value"]]
    return wide.reset_index().merge(
        rep.rename(columns={"paper_value": "paper Table 1 (ε=8)"}), on=["dataset", "method", "setting"], how="left"
    )
