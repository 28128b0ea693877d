"""Table 1's DP methods in the sound mode (notebook 01, artifact ``table1_sound``): raw features, a fixed clipping
norm, one configuration fixed in advance and the final model, beside the published pipeline."""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from dpgnn.methods import drw
from dpgnn.results import ResultStore
from dpgnn.series import load_or_skip
from dpgnn.series.drw.profiles import DRWProfile
from dpgnn.series.drw.table1 import (
    _method,
    _rows,
)
from dpgnn.sweep import check_train, run_grid
from dpgnn.utils import resolve_device


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
