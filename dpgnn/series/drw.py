"""DRW series ("Training DP GNNs with Random Walk Sampling"): Table 1, Fig. 2 and the sampling-bound figure.

``run_table1`` runs the resumable grid (every method × architecture × DP hyper-parameters × seed) into the
``grid`` artifact and derives ``table1`` (best mean validation F1 over seeds per dataset/method/architecture, the
selected configuration's per-seed test F1 in %) and ``fig2`` (test F1 of the best-validation model at every integer
ε of the selected DP runs). ``run_bound`` is pure accounting from the paper's Tables 3-4 (no data needed).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpgnn import methods, plotting
from dpgnn.data.random_walks import sampler_bound
from dpgnn.methods import RunResult, drw
from dpgnn.privacy.fdp import fdp_epsilon, max_affected
from dpgnn.privacy.guarantee import SOUND, statement
from dpgnn.profiles import Profile
from dpgnn.reference import load_reference
from dpgnn.report import compare
from dpgnn.results import ResultStore
from dpgnn.series import Series, common, load_or_skip, register
from dpgnn.sweep import CellSpec, check_train, run_grid
from dpgnn.utils import resolve_device

PAPER = "drw"
#: the sampling-bound rows are pure accounting of one step (no data is trained on): the bound is the statement
_BOUND_STATEMENT = statement(
    SOUND,
    "replace one node's features (feature-level, graph public)",
    accounted="one subsampled Gaussian step at the sampler's inclusion bound q",
)


@dataclass(frozen=True)
class DPGrid:
    """The DP-SGD hyper-parameter grid searched by validation for Table 1 (docs/papers/drw.md#grids-and-seeds)."""

    lrs: list[float]
    """learning rates"""
    clip_fractions: list[float]
    """clipping norms, as the quantile of per-sample gradient norms the norm is set to"""
    noise_multipliers: list[float]
    """noise multipliers z (noise std / clipping norm)"""


@dataclass(frozen=True)
class SoundMode:
    """The sound mode's one configuration, fixed in advance (no selection on private data): raw features, absolute
    clipping norm, the final model."""

    methods: list[str]
    """the DP methods it runs (drw, fdp)"""
    lr: float
    """learning rate"""
    clip_norm: float
    """absolute clipping norm"""
    noise_multiplier: float
    """noise multiplier z"""


@dataclass(frozen=True)
class DRWProfile(Profile):
    """The settings of the DRW notebooks and grids (``dpgnn.profiles.settings("drw", profile)``)."""

    datasets: list[str]
    """datasets of Table 1 and Fig. 2 (those whose files are missing are recorded not run)"""
    methods: list[str]
    """Table 1's methods (gcn, mlp, drw, fdp, ...)"""
    archs: list[str]
    """architectures (1-layer, 2-layer)"""
    seeds: list[int]
    """training seeds (the paper: 3)"""
    grid: DPGrid
    """the DP-SGD grid searched by validation"""
    target_epsilon: float
    """ε every DP run is calibrated to (the paper: 8)"""
    nondp_max_steps: int
    """training steps of the non-private baselines"""
    patience: int
    """validation checks without improvement before stopping (fidelity variants other than the paper's)"""
    eval_every: int
    """steps between validation checks"""
    resample_every: int
    """steps between resampling the random-walk subgraphs"""
    fdp_degree: int
    """FDP's degree bound"""
    fdp_variant: str
    """which FDP accounting: ``paper`` or the authors' code"""
    fidelity: str
    """which version of the grid: ``paper`` (the paper's), or a variant of :data:`dpgnn.methods.drw.FIDELITIES`"""
    bound_datasets: list[str]
    """datasets of the sampling-bound notebook (03)"""
    bound_noises: list[float]
    """noise multipliers of the sampling-bound notebook (03)"""
    sound: SoundMode
    """the sound mode's one configuration (Table 1 sound)"""


_DP_GRID = DPGrid(lrs=[0.01, 0.1, 0.2], clip_fractions=[0.001, 0.01, 0.1], noise_multipliers=[1.0, 2.0, 4.0, 8.0])
_SOUND = SoundMode(methods=["drw", "fdp"], lr=0.1, clip_norm=1.0, noise_multiplier=4.0)

PROFILES: dict[str, DRWProfile] = {
    # smoke: both offline datasets, every Table-1 method, the 1-layer architecture, one DP configuration
    "smoke": DRWProfile(
        datasets=["cora", "citeseer"],
        methods=list(drw.METHODS),
        archs=["1-layer"],
        seeds=[1234],
        grid=DPGrid(lrs=[0.1], clip_fractions=[0.1], noise_multipliers=[4.0]),
        target_epsilon=8.0,
        nondp_max_steps=100,
        patience=30,
        eval_every=2,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity="paper",
        bound_datasets=list(drw.DATASETS),
        bound_noises=[1.0, 4.0],
        sound=_SOUND,
    ),
    # test: the smallest end-to-end execution (tests/test_notebooks.py)
    "test": DRWProfile(
        datasets=["cora"],
        methods=["gcn", "mlp", "drw", "fdp"],
        archs=["1-layer"],
        seeds=[1234],
        grid=DPGrid(lrs=[0.1], clip_fractions=[0.1], noise_multipliers=[1.0]),
        target_epsilon=8.0,
        nondp_max_steps=10,
        patience=5,
        eval_every=1,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity="paper",
        bound_datasets=["cora", "reddit"],
        bound_noises=[4.0],
        sound=dataclasses.replace(_SOUND, methods=["drw"]),
    ),
    # paper: docs/papers/drw.md#grids-and-seeds grid, 3 seeds, target eps = 8, every dataset whose files exist
    "paper": DRWProfile(
        datasets=list(drw.DATASETS),
        methods=list(drw.METHODS),
        archs=list(drw.ARCHS),
        seeds=list(drw.SEEDS),
        grid=_DP_GRID,
        target_epsilon=8.0,
        nondp_max_steps=1000,
        patience=30,
        eval_every=1,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity="paper",
        bound_datasets=list(drw.DATASETS),
        bound_noises=[1.0, 2.0, 4.0, 8.0],
        sound=_SOUND,
    ),
}


# ---------------------------------------------------------------------------------------------------------------
# Table 1 and Fig. 2
# ---------------------------------------------------------------------------------------------------------------
def table1_cells(cfg: DRWProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """One cell per (dataset, method, architecture, [lr, clip, z,] seed); DP cells carry ``fidelity`` (and the
    early-stopping ``patience``) when it is ``authors_code`` (see :func:`dpgnn.methods.drw.train_dp`)."""
    datasets = cfg.datasets if datasets is None else datasets
    fidelity = cfg.fidelity
    drw._fidelity(fidelity)
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
                                    if fidelity != "paper":  # paper cells keep their stored config hashes
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


def run_cell(cfg: DRWProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One grid cell: test/val F1 and the ε-checkpoint rows of one training run."""
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
        if cell.get("fidelity", "paper") != "paper":
            config.update(fidelity=cell["fidelity"], patience=cell["patience"])
    else:
        config.update(max_steps=cell["max_steps"], patience=cell["patience"])
    res = _method(cell["method"]).run(_data(cell["dataset"]), config, seed=cell["seed"], device=device)
    return _rows(cell, res)


def run_table1(
    cfg: DRWProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Run the missing grid cells, then derive ``table1`` and ``fig2``; returns the ``table1`` rows.

    ``train=False`` trains nothing: ``table1`` and ``fig2`` are selected from the grid cells already stored."""
    check_train(force, train)
    if not train:
        return select(store, list(cfg.datasets))
    names = [n for n in cfg.datasets if load_or_skip(store, n, _data, artifact="table1") is not None]
    cells = table1_cells(cfg, names)
    if cells:
        run_grid(
            store,
            "grid",
            cells,
            functools.partial(run_cell, cfg, device=device),
            desc="DRW Table 1 grid",
            force=force,
            device=str(resolve_device(device)),
        )
    return select(store, names, cfg.fidelity)


def artifacts(fidelity: str = "paper") -> tuple[str, str]:
    """Names of the (Table 1, Fig. 2) artifacts of one fidelity: ``table1``/``fig2`` for the paper's version,
    ``table1_authors_code``/``fig2_authors_code`` for the authors' code (kept apart, never mixed)."""
    drw._fidelity(fidelity)
    return ("table1", "fig2") if fidelity == "paper" else (f"table1_{fidelity}", f"fig2_{fidelity}")


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


def select(store: ResultStore, datasets: list[str], fidelity: str = "paper") -> pd.DataFrame:
    """:func:`select_best` on the stored ``grid`` rows of ``fidelity`` (non-DP rows belong to both) of
    ``datasets``; writes the :func:`artifacts` of that fidelity (Table 1 and Fig. 2) and returns Table 1."""
    a_t1, a_fig2 = artifacts(fidelity)
    grid = store.load("grid")
    if grid.empty:
        store.replace(a_t1, [])
        store.replace(a_fig2, [])
        return store.load(a_t1)
    grid = grid[grid["dataset"].isin(datasets)].copy()
    grid = grid[~_stale_mlp(grid)]
    fid = grid["fidelity"].fillna("paper") if "fidelity" in grid else pd.Series("paper", index=grid.index)
    chosen = select_best(grid[(fid == fidelity) | ~grid["method"].isin(drw.DP_METHODS)])
    t1 = chosen[chosen["metric"] == "test_f1"].assign(metric="f1_micro")
    drop = ["paper", "artifact", "profile", "timestamp", "config_hash"]
    store.replace(a_t1, t1.drop(columns=[c for c in drop if c in t1]).to_dict("records"))
    fig2 = _fig2_rows(chosen)
    store.replace(a_fig2, fig2.drop(columns=[c for c in drop if c in fig2]).to_dict("records") if len(fig2) else [])
    return store.load(a_t1)


def table1_sound_cells(cfg: DRWProfile, datasets: list[str] | None = None) -> list[dict[str, Any]]:
    """Table 1's DP methods in the sound mode: every dataset, DP method, architecture and seed of the profile, with
    one configuration fixed in advance (``sound.lr``, ``sound.clip_norm``, ``sound.noise_multiplier``)."""
    names = list(cfg.datasets) if datasets is None else datasets
    return [
        {
            "dataset": n,
            "method": m,
            "setting": arch,
            "num_layers": drw.ARCHS[arch][0],
            "hidden": drw.ARCHS[arch][1],
            "lr": cfg.sound.lr,
            "clip_norm": cfg.sound.clip_norm,
            "noise_multiplier": cfg.sound.noise_multiplier,
            "seed": seed,
            "target_epsilon": cfg.target_epsilon,
            "eval_every": cfg.eval_every,
            "resample_every": cfg.resample_every,
            "fdp_degree": cfg.fdp_degree,
            "fdp_variant": cfg.fdp_variant,
            "scaling": "none",
            "select": "last",
        }
        for n in names
        for m in cfg.sound.methods
        for arch in cfg.archs
        for seed in cfg.seeds
    ]


@functools.lru_cache(maxsize=8)
def _raw_data(name: str):
    """The dataset prepared without feature statistics (``scaling="none"``), once per process."""
    return _method("drw").prepare(name, scaling="none")


def run_sound_cell(cfg: DRWProfile, cell: dict[str, Any], device: str = "auto") -> list[dict[str, Any]]:
    """One sound-mode cell: raw features, the fixed clipping norm and the final model (no private selection)."""
    config = {
        k: cell[k]
        for k in (
            "num_layers",
            "hidden",
            "lr",
            "clip_norm",
            "noise_multiplier",
            "target_epsilon",
            "eval_every",
            "resample_every",
            "fdp_degree",
            "fdp_variant",
            "select",
        )
    }
    res = _method(cell["method"]).run(
        _raw_data(cell["dataset"]), {**config, "clip_fraction": None}, seed=cell["seed"], device=device
    )
    return [{**r, "metric": "f1_micro"} for r in _rows(cell, res) if r["metric"] == "test_f1"]


def run_table1_sound(
    cfg: DRWProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Table 1's DP methods in the sound mode (``guarantee = sound``): raw features (``scaling="none"``), a fixed
    clipping norm, one configuration fixed in advance and the final model (no selection on private data); every
    architecture and seed of the profile. Stored as ``table1_sound`` (metric ``f1_micro``, %). ``train=False``
    trains nothing and returns the stored rows."""
    check_train(force, train)
    if not train:
        return store.load("table1_sound")
    names = [n for n in cfg.datasets if load_or_skip(store, n, _raw_data, artifact="table1_sound") is not None]
    cells = table1_sound_cells(cfg, names)
    if cells:
        run_grid(
            store,
            "table1_sound",
            cells,
            functools.partial(run_sound_cell, cfg, device=device),
            desc="DRW Table 1 (sound mode)",
            force=force,
            device=str(resolve_device(device)),
        )
    return store.load("table1_sound")


# ---------------------------------------------------------------------------------------------------------------
# Why the DP cells land where they do: diagnostics of the selected runs (the measured causes of the gaps)
# ---------------------------------------------------------------------------------------------------------------
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
    test = test[(test["fidelity"].fillna("paper") == "paper")] if "fidelity" in test else test
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


#: the grid of this series, cell by cell (:mod:`dpgnn.engine`); the sampling bound is pure computation
CELLS = {
    "table1": CellSpec(PAPER, "table1", "grid", table1_cells, run_cell),
    "table1_sound": CellSpec(PAPER, "table1_sound", "table1_sound", table1_sound_cells, run_sound_cell),
}


def table1_both_ways(store: ResultStore) -> pd.DataFrame:
    """Per dataset, DP method and architecture: test F1 (mean over seeds, %) as published (z-scored features,
    clipping calibrated on gradients, configuration and epoch chosen on validation) beside the sound mode."""
    pub, snd = store.load("table1"), store.load("table1_sound")
    keys = ["dataset", "method", "setting"]
    if pub.empty or snd.empty:
        return pd.DataFrame(columns=keys + ["as_published", "sound", "sound - as_published"])
    pub = pub[pub["method"].isin(drw.DP_METHODS)]
    a = pub.groupby(keys)["value"].mean().rename("as_published")
    b = snd.groupby(keys)["value"].mean().rename("sound")
    out = pd.concat([a, b], axis=1).dropna().reset_index()
    out["sound - as_published"] = out["sound"] - out["as_published"]
    return out.round(2)


def _table1_vs_paper(store: ResultStore, fidelity: str = "paper") -> pd.DataFrame:
    """The report's comparison of the stored Table 1 rows of ``fidelity`` with the paper's Table 1."""
    ours = store.load(artifacts(fidelity)[0]).assign(artifact="table1")
    return compare(load_reference(PAPER, "table1"), ours, profile=store.profile, skipped=store.skipped())


def table1_side_by_side(store: ResultStore, fidelity: str = "paper") -> pd.DataFrame:
    """Table 1 as in the paper: ours (mean ± std over seeds, of the given ``fidelity``) beside the paper,
    difference and status."""
    rep = _table1_vs_paper(store, fidelity)
    rep["ours"] = [common.fmt(v, s) for v, s in zip(rep["ours_value"], rep["ours_spread"])]
    rep["paper"] = rep["paper_value"].map(lambda v: f"{v:.1f}")
    rep["diff"] = rep["diff"].round(1)
    order = {m: i for i, m in enumerate(drw.METHODS)}
    rep = rep.assign(_m=rep["method"].map(order)).sort_values(["dataset", "_m", "setting"])
    return rep[["dataset", "method", "setting", "paper", "ours", "diff", "n_runs", "status", "note"]]


def plot_table1(store: ResultStore, fidelity: str = "paper"):
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


def plot_fig2(store: ResultStore, fidelity: str = "paper"):
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


def fig2_side_by_side(store: ResultStore, fidelity: str = "paper") -> pd.DataFrame:
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


# ---------------------------------------------------------------------------------------------------------------
# Sampling-probability bound and ε per step (a figure none of the papers has)
# ---------------------------------------------------------------------------------------------------------------
def run_bound(cfg: DRWProfile, store: ResultStore) -> pd.DataFrame:
    """q and the ε of ONE step per sampler, dataset, depth and noise, from the paper's Tables 3-4 (pure math)."""
    rows = []
    for name in cfg.bound_datasets:
        n, delta = drw.NUM_TRAIN[name], drw.DELTA[name]
        for layers in (1, 2):
            for sampler in ("drw", "drw-r", "fdp"):
                b = drw.batch_size(name, sampler, layers)
                if sampler == "fdp":
                    k = max_affected(cfg.fdp_degree, layers)
                    q = b / n
                else:
                    k, q = 1, sampler_bound(sampler, b, n, layers)
                for z in cfg.bound_noises:
                    if sampler == "fdp":
                        eps1 = fdp_epsilon(1, z, n, b, k, delta)[0]
                    else:
                        eps1 = drw.drw_epsilon(z, q, 1, delta)
                    base = {
                        "dataset": name,
                        "method": sampler,
                        "setting": f"L={layers}",
                        "num_layers": layers,
                        "num_train": n,
                        "batch": b,
                        "max_affected": k,
                        "noise_multiplier": z,
                        "delta": delta,
                        "level": "feature",
                        "ledger": {
                            "level": "feature",
                            "sampling_rate": q,
                            "noise_multiplier": z,
                            "delta": delta,
                            "steps": 1,
                            "accountant": "autodp" if k == 1 else "fdp-hypergeometric",
                            **_BOUND_STATEMENT,
                        },
                    }
                    rows.append({**base, "metric": "q", "value": q, "epsilon": eps1})
                    rows.append({**base, "metric": "eps_one_step", "value": eps1, "epsilon": eps1})
    store.replace("bound", rows)
    return store.load("bound")


def plot_bound(store: ResultStore):
    df = store.load("bound")
    if df.empty:
        raise ValueError("no bound rows stored yet")
    q = df[df["metric"] == "q"].drop_duplicates(["dataset", "method", "setting"])
    q = q.assign(panel="q bound, " + q["setting"])
    e = df[df["metric"] == "eps_one_step"]
    e = e.assign(panel="ε of one step, " + e["setting"] + ", z=" + e["noise_multiplier"].map(lambda v: f"{v:g}"))
    both = pd.concat([q, e], ignore_index=True)
    return plotting.lines(
        both,
        x="num_train",
        y="value",
        hue="method",
        col="panel",
        logx=True,
        order=["drw", "drw-r", "fdp"],
        xlabel="training nodes N (log)",
        ylabel="value",
        ncols=4,
        title="Sampling-probability bound q = B/⌈N/(1+R·L)⌉ (FDP: B/N) and ε per step (paper's B, δ)",
    )


def bound_side_by_side(store: ResultStore) -> pd.DataFrame:
    """Per dataset: q of DRW (1 layer) and ε of one step beside the paper's Table 1 gain of DRW over FDP."""
    df = store.load("bound")
    sub = df[(df["metric"] == "q") & (df["num_layers"] == 1)].drop_duplicates(["dataset", "method"])
    q = sub.pivot(index="dataset", columns="method", values="value").add_prefix("q ")
    e = df[(df["metric"] == "eps_one_step") & (df["num_layers"] == 1)]
    zmax = e["noise_multiplier"].max()
    e = e[e["noise_multiplier"] == zmax].pivot(index="dataset", columns="method", values="value")
    e = e.add_prefix(f"ε/step z={zmax:g} ")
    ref = load_reference(PAPER, "table1")
    ref = ref[ref["setting"] == "1-layer"].pivot(index="dataset", columns="method", values="value")
    gain = (ref["drw"] - ref["fdp"]).rename("paper: DRW − FDP (1 layer, F1 pts)")
    out = q.join(e).join(gain, how="left").reset_index()
    out["num_train"] = out["dataset"].map(drw.NUM_TRAIN)
    ours = _table1_vs_paper(store)
    ours = ours[ours["setting"] == "1-layer"].pivot(index="dataset", columns="method", values="ours_value")
    if {"drw", "fdp"} <= set(ours.columns):
        out = out.merge((ours["drw"] - ours["fdp"]).rename("ours: DRW − FDP").reset_index(), on="dataset", how="left")
    return out.sort_values("num_train")


# ---------------------------------------------------------------------------------------------------------------
# The series API (dpgnn.series.common)
# ---------------------------------------------------------------------------------------------------------------
#: every artifact of this series: Table 1 and Fig. 2 of each fidelity, the sound-mode Table 1, the sampling bound
ARTIFACTS = tuple(a for f in drw.FIDELITIES for a in artifacts(f)) + ("table1_sound", "bound")


def _artifact(artifact: str) -> tuple[str, str]:
    """``(kind, fidelity)`` of an artifact name: kind ``table1``/``fig2``/``table1_sound``/``bound``."""
    for fidelity in drw.FIDELITIES:
        t1, f2 = artifacts(fidelity)
        if artifact in (t1, f2):
            return ("table1" if artifact == t1 else "fig2"), fidelity
    if artifact in ("table1_sound", "bound"):
        return artifact, "paper"
    raise ValueError(f"unknown DRW artifact {artifact!r}; valid: {list(ARTIFACTS)}")


def run(
    cfg: DRWProfile, store: ResultStore, artifact: str, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Compute ``artifact``'s missing cells and return its rows. Table 1 and Fig. 2 come from the same grid
    (:func:`run_table1`); their ``_authors_code`` versions need ``cfg`` built with ``fidelity="authors_code"``.
    ``train=False`` trains nothing and selects from the stored runs; ``bound`` is pure accounting."""
    kind, fidelity = _artifact(artifact)
    if kind in ("table1", "fig2"):
        if cfg.fidelity != fidelity:
            raise ValueError(
                f"{artifact!r} is the {fidelity} fidelity's artifact but the settings have fidelity="
                f"{cfg.fidelity!r}; use settings('drw', profile, fidelity={fidelity!r})"
            )
        run_table1(cfg, store, device=device, force=force, train=train)
        return store.load(artifact)
    if kind == "table1_sound":
        return run_table1_sound(cfg, store, device=device, force=force, train=train)
    check_train(force, train)
    return run_bound(cfg, store)


def side_by_side(store: ResultStore, artifact: str) -> pd.DataFrame:
    """Ours beside the paper: Table 1 (mean ± std over seeds, difference, status), Fig. 2 (ours at every integer
    ε beside the paper's one printed point, Table 1 at ε = 8), the sound-mode Table 1 beside the published
    pipeline, the sampling bound beside the paper's DRW − FDP gain."""
    kind, fidelity = _artifact(artifact)
    if kind == "table1":
        return table1_side_by_side(store, fidelity)
    if kind == "fig2":
        return fig2_side_by_side(store, fidelity)
    if kind == "table1_sound":
        return table1_both_ways(store)
    return bound_side_by_side(store)


def plot(store: ResultStore, artifact: str):
    """The artifact's figure, drawn from stored rows only."""
    kind, fidelity = _artifact(artifact)
    if kind == "table1":
        return plot_table1(store, fidelity)
    if kind == "fig2":
        return plot_fig2(store, fidelity)
    if kind == "bound":
        return plot_bound(store)
    raise ValueError("table1_sound has no figure of its own; side_by_side(store, 'table1_sound') is its table")


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title='DRW: "Training Differentially Private Graph Neural Networks with Random Walk Sampling"',
        kind="paper",
        order=4,
        citation="Ayle et al., arXiv 2301.00738",
        docs="docs/papers/drw.md",
        reference="drw.csv",
        profiles=PROFILES,
        cells=CELLS,
        artifacts=ARTIFACTS,
        run=run,
        side_by_side=side_by_side,
        plot=plot,
    )
)
