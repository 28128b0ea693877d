"""One LPGNN grid cell (:func:`run_cell`: repeats drawn, trained batched, one tidy row each) and the selection
on noisy validation data (:func:`tune`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.lpgnn.common import (
    EPS_X,
    EPS_Y,
    GLOBAL_SEED,
    INF,
    LABEL_METHODS,
    PAPER,
    TUNING_GRID,
    _check_features,
    _choice,
    _dataset,
    _eps,
    _steps,
    hparams_for,
    steps_for,
)
from dpgnn.methods.lpgnn.features import dense_features, draw_features, perturb_labels
from dpgnn.methods.lpgnn.training import train_batched
from dpgnn.nn.lpgnn import BACKBONES, BatchedFeatures, normalized_adjacency, propagate_once
from dpgnn.privacy.lpgnn import REPLACEMENTS, privacy_ledger  # the privacy statement
from dpgnn.utils import config_hash, resolve_device, stable_seed, versions


# ---------------------------------------------------------------------------------------------------------------
# one grid cell
# ---------------------------------------------------------------------------------------------------------------
def _feature_seed(seed: int, dataset: str, method: str, eps_x: float, m: int | None, run: int) -> int:
    return stable_seed(PAPER, "features", int(seed), dataset, method, eps_x, m, int(run))


def _label_seed(seed: int, dataset: str, eps_y: float, run: int) -> int:
    return stable_seed(PAPER, "labels", int(seed), dataset, eps_y, int(run))


def _chunk_size(
    draws: list[dict[str, Any]], n: int, d: int, backbone: str, e: int, dense: bool, budget: float = 1.5e8
) -> int:
    per = 0.0
    if dense or any(dr["kind"] == "dense" for dr in draws):
        per += n * d
    if backbone == "gat":
        per += 2 * e * 4 * 16
    return max(1, int(budget // per)) if per else len(draws)


def run_cell(
    data: Data,
    dataset: str,
    *,
    method: str = "mbm",
    eps_x: float = 1.0,
    eps_y: float = 1.0,
    k_x: int | None = None,
    k_y: int | None = None,
    backbone: str = "sage",
    label_method: str = "drop",
    repeats: int = 10,
    seed: int = GLOBAL_SEED,
    epochs: int = 500,
    m: int | None = None,
    hparams: Mapping[str, float] | None = None,
    device: str = "auto",
    threads: int | None = 1,
) -> list[dict[str, Any]]:
    """Run one grid cell: ``repeats`` fresh perturbations of features and labels, batched training, one row each.

    ``k_x``/``k_y`` default to the published steps (:func:`steps_for`; ``k_y`` is forced to 0 for ``ce``/``fc``);
    ``hparams`` to the published lr / weight decay / dropout (:func:`hparams_for`). Metric: clean test accuracy
    in % at the epoch chosen by the noisy-validation rule. Each row carries the privacy ledger. ``threads``: see
    :func:`train_batched`.
    """
    config = _cell_config(dataset, method, eps_x, eps_y, k_x, k_y, backbone, label_method, repeats, epochs, m, hparams)
    # the server's (public) graph as a simple graph: a repeated pair would weigh twice in KProp and the backbone;
    # directions as given (dpgnn.data.transforms.clean_edges; the rows' edge_input says what was merged)
    data, cleaning = with_clean_edges(data, owner="LPGNN")
    n, d = data.x.shape
    ledger = privacy_ledger(config["method"], config["eps_x"], config["eps_y"], d, m)
    adj = normalized_adjacency(data.edge_index, n)
    t0 = time.perf_counter()
    draws, noisy, seeds = _draw_repeats(data, config, seed, repeats)
    t_perturb = time.perf_counter() - t0
    once = propagate_once(n, d, adj, config["k_x"])
    chunk = _chunk_size(draws, n, d, config["backbone"], data.edge_index.size(1) + n, once)
    results: dict[str, list] = {}
    dev = resolve_device(device)
    for start in range(0, len(draws), chunk):
        part = draws[start : start + chunk]
        res = train_batched(
            data,
            batched_features(part, config["method"], n, d, adj, config["k_x"], dev),
            torch.stack(noisy[start : start + chunk], dim=1),
            backbone=config["backbone"],
            seeds=seeds[start : start + chunk],
            lr=config["lr"],
            weight_decay=config["weight_decay"],
            dropout=config["dropout"],
            k_y=config["k_y"],
            label_method=config["label_method"],
            eps_y=config["eps_y"],
            epochs=epochs,
            device=device,
            kprop_adj=adj,
            threads=threads,
        )
        for k, v in res.items():
            results.setdefault(k, []).extend(v if isinstance(v, list) else [v] * len(part))
    return _cell_rows(config, ledger, results, seed, repeats, t_perturb, chunk, cleaning)


def _cell_config(
    dataset: str,
    method: str,
    eps_x: float,
    eps_y: float,
    k_x: int | None,
    k_y: int | None,
    backbone: str,
    label_method: str,
    repeats: int,
    epochs: int,
    m: int | None,
    hparams: Mapping[str, float] | None,
) -> dict[str, Any]:
    """:func:`run_cell`'s arguments checked and resolved (published steps and hyper-parameters filled in): the
    configuration its rows carry and hash."""
    key = _dataset(dataset)
    meth, ex = _check_features(method, eps_x)
    ey = _eps(eps_y, "eps_y")
    bb = _choice(backbone, BACKBONES, "backbone")
    lm = _choice(label_method, LABEL_METHODS, "label_method")
    if isinstance(repeats, bool) or int(repeats) != repeats or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    if isinstance(epochs, bool) or int(epochs) != epochs or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    published = (
        steps_for(key, ex if meth not in REPLACEMENTS else INF, ey)
        if (k_x is None or k_y is None) and ((ex if meth not in REPLACEMENTS else INF) in EPS_X and ey in EPS_Y)
        else (0, 0)
    )
    kx = _steps(published[0] if k_x is None else k_x, "K_x")
    ky = _steps(published[1] if k_y is None else k_y, "K_y") if lm == "drop" else 0
    hp = {**hparams_for(key, meth, ex, ey), **(hparams or {})}
    return {
        "dataset": key,
        "method": meth,
        "eps_x": ex,
        "eps_y": ey,
        "k_x": kx,
        "k_y": ky,
        "backbone": bb,
        "label_method": lm,
        "m": m,
        "epochs": int(epochs),
        **hp,
    }


def _draw_repeats(
    data: Data, config: Mapping[str, Any], seed: int, repeats: int
) -> tuple[list[dict[str, Any]], list[Tensor], list[int]]:
    """Every repeat's features (:func:`draw_features`), noisy labels (:func:`perturb_labels`) and model seed, drawn
    repeat by repeat."""
    key, meth, ex, ey, m = (config[k] for k in ("dataset", "method", "eps_x", "eps_y", "m"))
    kx, ky, bb, lm = (config[k] for k in ("k_x", "k_y", "backbone", "label_method"))
    labelled = data.train_mask | data.val_mask
    draws, noisy, seeds = [], [], []
    for run in range(int(repeats)):
        draws.append(draw_features(data, meth, ex, m=m, generator=_feature_seed(seed, key, meth, ex, m, run)))
        noisy.append(perturb_labels(data.y, ey, data.num_classes, labelled, _label_seed(seed, key, ey, run)))
        seeds.append(stable_seed(PAPER, "model", int(seed), key, meth, ex, ey, kx, ky, bb, lm, m, int(run)))
    return draws, noisy, seeds


def batched_features(
    part: list[dict[str, Any]], meth: str, n: int, d: int, adj: Tensor, kx: int, dev: torch.device
) -> BatchedFeatures:
    """The :class:`BatchedFeatures` of a chunk of repeats' draws on ``dev``: dense where a draw is or where
    propagating once is cheaper (:func:`~dpgnn.nn.lpgnn.propagate_once`), else one shared draw or sparse parts."""
    once = propagate_once(n, d, adj, kx)
    if not once and meth in ("raw", "one", "ohd") and part[0]["kind"] == "sparse":  # identical in every repeat
        dr = part[0]
        return BatchedFeatures.shared(
            dr["rows"].to(dev),
            dr["cols"].to(dev),
            dr["vals"].to(dev),
            dr["offset"],
            repeats=len(part),
            num_nodes=n,
            num_features=d,
            adj=adj.to(dev),
            steps=kx,
        )
    if once or any(dr["kind"] == "dense" for dr in part):
        return BatchedFeatures(
            num_nodes=n,
            num_features=d,
            repeats=len(part),
            adj=adj.to(dev),
            steps=kx,
            dense=torch.stack([dense_features(dr, n, d) for dr in part]).to(dev),
        )
    return BatchedFeatures.from_sparse_parts(
        [dr["rows"].to(dev) for dr in part],
        [dr["cols"].to(dev) for dr in part],
        [dr["vals"].to(dev) for dr in part],
        [dr["offset"] for dr in part],
        num_nodes=n,
        num_features=d,
        adj=adj.to(dev),
        steps=kx,
    )


def _cell_rows(
    config: dict[str, Any],
    ledger: dict[str, Any],
    results: dict[str, list],
    seed: int,
    repeats: int,
    t_perturb: float,
    chunk: int,
    cleaning: Any,
) -> list[dict[str, Any]]:
    """:func:`run_cell`'s tidy rows, one per repeat: the clean test accuracy in % with the ledger and config."""
    rows = []
    for run in range(int(repeats)):
        rows.append(
            {
                "paper": PAPER,
                "dataset": config["dataset"],
                "method": config["method"],
                **ledger,
                **config,
                "run": run,
                "seed": int(seed),
                "metric": "accuracy",
                "value": 100.0 * results["test_acc"][run],
                "val_acc_noisy": 100.0 * results["val_acc"][run],
                "train_acc_noisy": 100.0 * results["train_acc"][run],
                "val_loss_noisy": results["val_loss"][run],
                "best_epoch": int(results["epoch"][run]),
                "max_acc": 100.0 * results["max_acc"][run],
                "perturb_time_s": t_perturb / repeats,
                "train_time_s": results["train_time_s"][run] / min(chunk, repeats),
                "config_hash": config_hash({**config, "seed": int(seed), "repeats": int(repeats)}),
                "versions": versions(),
                **({"edge_input": cleaning.describe()} if cleaning.changed else {}),
            }
        )
    return rows


def tune(
    data: Data,
    dataset: str,
    *,
    method: str = "mbm",
    eps_x: float = 1.0,
    eps_y: float = 1.0,
    backbone: str = "sage",
    grid: Mapping[str, Iterable[Any]] | None = None,
    repeats: int = 3,
    epochs: int = 500,
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    **fixed: Any,
) -> tuple[dict, list[dict]]:
    """Redo the selection of hyper-parameters and/or KProp steps **on noisy validation data only**.

    ``grid`` maps any of ``lr``, ``weight_decay``, ``dropout``, ``k_x``, ``k_y`` to candidate values (default:
    the paper's lr/wd/dropout grid, :data:`TUNING_GRID`). Every combination is run with ``repeats`` repeats; the
    winner has the highest mean *noisy* validation accuracy at the selected epoch (ties: lower noisy validation
    loss). Clean labels are never read. Returns ``(best combination, one summary dict per combination)``.
    """
    grid = dict(TUNING_GRID if grid is None else grid)
    unknown = set(grid) - {"lr", "weight_decay", "dropout", "k_x", "k_y"}
    if unknown:
        raise ValueError(f"grid keys must be among lr, weight_decay, dropout, k_x, k_y; got {sorted(unknown)}")
    names = list(grid)
    summary = []
    for values in itertools.product(*(list(grid[k]) for k in names)):
        combo = dict(zip(names, values))
        hp = {k: combo[k] for k in ("lr", "weight_decay", "dropout") if k in combo}
        rows = run_cell(
            data,
            dataset,
            method=method,
            eps_x=eps_x,
            eps_y=eps_y,
            backbone=backbone,
            k_x=combo.get("k_x", fixed.get("k_x")),
            k_y=combo.get("k_y", fixed.get("k_y")),
            hparams=hp or None,
            repeats=repeats,
            epochs=epochs,
            seed=seed,
            device=device,
            label_method=fixed.get("label_method", "drop"),
        )
        summary.append(
            {
                **combo,
                "val_acc_noisy": float(np.mean([r["val_acc_noisy"] for r in rows])),
                "val_loss_noisy": float(np.mean([r["val_loss_noisy"] for r in rows])),
            }
        )
    best = max(summary, key=lambda s: (s["val_acc_noisy"], -s["val_loss_noisy"]))
    return {k: best[k] for k in names}, summary
