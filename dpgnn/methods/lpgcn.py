"""LPGCN / PGC -- Sajadmanesh & Gatica-Perez, "When Differential Privacy Meets Graph Neural Networks"
(arXiv 2006.05535 v1, 2020); docs/papers/lpgcn.md.

Setting (paper Sec. 3-4): the server knows the graph; every node holds a private feature vector in [0, 1]^d (after
per-column min-max normalisation, so α = 0 and Δ = 1) and sends an ε-LDP perturbation of *each* feature. The server
forms unbiased estimates y* and runs a GCN whose first layer is the graph convolution of y* (Algorithm 1).
Mechanisms: LM (Laplace), PM (piecewise, Wang et al. 2019), PGC (Duchi-style one-bit, the paper's method), and RAW
(no perturbation, the non-private upper bound). ε is a per-feature budget; by basic composition a node's whole
feature vector is protected with d·ε.

Experiments reproduced here (notebooks call only this module):

* Fig. 1 / 4 / 5 -- analytic variances: :func:`variance_table`, :func:`mean_feature` (Table 3).
* Fig. 2 / 3 -- MAE of the first-layer graph-convolution estimate: :func:`gc_mae`, :func:`mae_vs_epsilon`,
  :func:`mae_vs_degree`.
* Table 2 -- node classification (GCN, micro-F1) and link prediction (VGAE, AUC), 10 runs per cell:
  :func:`run_node_classification`, :func:`run_link_prediction`, :func:`summarize_runs`; their full-batch loops
  :func:`train_node_classifier`, :func:`train_link_predictor` run on :func:`dpgnn.train.fit`.

Methods registered (:mod:`dpgnn.methods`): ``("lpgcn", "<lm|pm|pgc>-<gcn|vgae>", "feature")`` and
``("lpgcn", "raw-<gcn|vgae>", "none")`` -- each mechanism for node classification (GCN) and link prediction (VGAE);
:func:`method_key` names the key of a Table-2 cell.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.nn import VGAE
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from dpgnn.data import load_dataset, minmax_normalize, seed_from_name, split_edges
from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods import RunResult, register
from dpgnn.metrics import accuracy_tensor
from dpgnn.nn import GCN, VGAEEncoder
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, non_private, statement
from dpgnn.train import GradientStep, fit
from dpgnn.utils import (
    check_features,
    config_hash,
    make_generator,
    resolve_device,
    seed_everything,
    stable_seed,
    versions,
)

__all__ = [
    "PAPER",
    "DATASETS",
    "METHODS",
    "MECHANISMS",
    "HPARAMS",
    "HIDDEN_CODE",
    "HIDDEN_PAPER",
    "VGAE_HIDDEN",
    "VGAE_OUT",
    "EPSILONS_MAE",
    "EPSILONS_TABLE2",
    "NUM_RUNS",
    "GLOBAL_SEED",
    "TABLE3_MEAN_FEATURE",
    "TABLE1_NUM_FEATURES",
    "prepare",
    "perturb_features",
    "privacy_ledger",
    "gcn_propagation_matrix",
    "gc_mae",
    "mae_vs_epsilon",
    "mae_vs_degree",
    "variance_table",
    "mean_feature",
    "split_for_link_prediction",
    "run_node_classification",
    "run_link_prediction",
    "summarize_runs",
    "train_node_classifier",
    "train_link_predictor",
    "NegativeSampler",
    "TASK_MODELS",
    "method_key",
    "prepare_link_prediction",
]

PAPER = "lpgcn"
DATASETS = ("citeseer", "cora", "elliptic", "flickr", "twitch")
#: method name used in the paper -> mechanism name in :mod:`dpgnn.privacy` (RAW: no mechanism).
MECHANISMS: dict[str, str | None] = {"lm": "laplace", "pm": "piecewise", "pgc": "pgc", "raw": None}
METHODS = ("lm", "pm", "pgc", "raw")
EPSILONS_MAE = (1.0, 3.0, 5.0, 7.0, 9.0)  # Fig. 2
EPSILONS_TABLE2 = (1.0, 5.0, 9.0)  # Table 2
NUM_RUNS = 10  # Table 2: mean ± std (ddof 0) over 10 runs
# the authors' global seed (docs/papers/cross-paper.md#conventions-shared-by-the-sajadmanesh-repositories)
GLOBAL_SEED = 12345

#: Best hyper-parameters, paper Table 4 (Appendix E; grid-searched on RAW, reused for every mechanism),
#: docs/papers/lpgcn.md#models-and-training.
HPARAMS: dict[str, dict[str, dict[str, float]]] = {
    "citeseer": {
        "gcn": {"lr": 0.01, "weight_decay": 0.1, "dropout": 0.5},
        "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0},
    },
    "cora": {
        "gcn": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.5},
        "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0},
    },
    "elliptic": {
        "gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0},
    },
    "flickr": {
        "gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0},
    },
    "twitch": {
        "gcn": {"lr": 0.001, "weight_decay": 1e-4, "dropout": 0.0},
        "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0},
    },
}
#: Node-classification hidden width. [CODE≠PAPER] (docs/papers/lpgcn.md#models-and-training): the authors' code and
#: experiment script use 16 (output = number of classes); the paper text says hidden 32 / output 16.
#: Default: the code's 16.
HIDDEN_CODE = 16
HIDDEN_PAPER = 32
#: VGAE encoder widths (paper Sec. 5 and code agree).
VGAE_HIDDEN = 32
VGAE_OUT = 16

#: Paper Table 3: average normalised feature value x̄ (eq. 28).
TABLE3_MEAN_FEATURE = {"citeseer": 0.009, "cora": 0.013, "elliptic": 0.219, "flickr": 0.037, "twitch": 0.008}
#: Paper Table 1: number of node features.
TABLE1_NUM_FEATURES = {"citeseer": 3703, "cora": 1433, "elliptic": 166, "flickr": 500, "twitch": 2545}

#: How each dataset is loaded for this paper (name, variant) -- docs/papers/lpgcn.md#data-and-splits.
_LOAD = {
    "cora": ("cora", "lpgcn"),
    "citeseer": ("citeseer", "lpgcn"),
    "twitch": ("twitch", "lpgcn"),
    "elliptic": ("elliptic", "lpgcn"),
    "flickr": ("flickr", None),
}


# ---------------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------------
def _dataset_key(name: str) -> str:
    key = str(name).strip().lower()
    if key not in HPARAMS:
        raise ValueError(f"unknown LPGCN dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _label(name: str) -> str:
    """Lower-case dataset label (any name is allowed where it is only a label, e.g. a synthetic graph)."""
    key = str(name).strip().lower()
    if not key:
        raise ValueError("dataset_name must be a non-empty string")
    return key


def _hparams(key: str, model: str, override: Mapping[str, float] | None) -> dict[str, float]:
    hp = {**HPARAMS.get(key, {}).get(model, {}), **(override or {})}
    missing = {"lr", "weight_decay", "dropout"} - hp.keys()
    if missing:
        raise ValueError(
            f"no Table-4 hyper-parameters for dataset {key!r} (known: {list(DATASETS)}); pass "
            f"hparams with {sorted(missing)}"
        )
    return hp


def _method_key(method: str) -> str:
    key = str(method).strip().lower()
    if key not in MECHANISMS:
        raise ValueError(f"unknown LPGCN method {method!r}; valid methods: {list(METHODS)}")
    return key


def _epsilon(method: str, epsilon: float | None) -> float:
    """Validated per-feature ε as a float (``inf`` for RAW)."""
    if method == "raw":
        if epsilon is not None and math.isfinite(float(epsilon)):
            raise ValueError(
                f"method 'raw' adds no noise, so a finite epsilon={epsilon} would be a false privacy "
                "claim; pass epsilon=None (or math.inf) for RAW"
            )
        return math.inf
    if epsilon is None:
        raise ValueError(f"method {method!r} needs a finite epsilon > 0")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon must be finite and > 0 for method {method!r}, got {epsilon}")
    return eps


# ---------------------------------------------------------------------------------------------------------------
# Data and perturbation
# ---------------------------------------------------------------------------------------------------------------
def prepare(dataset_name: str, *, drop_empty_columns: bool = False, root=None) -> Data:
    """Load a dataset as the paper uses it and min-max normalise its features to [0, 1] (α = 0, Δ = 1).

    Zero-range columns are kept and set to 0 (the paper's m counts them; Cora has one). ``drop_empty_columns``
    first removes feature columns that are zero for every node. (Twitch needs no such step: the loader pivots the
    Karate Club file like the authors' code, giving Table 1's 2,545 columns and Table 3's x̄ = 0.008.)
    Raises :class:`dpgnn.data.DatasetUnavailable` when the files are missing.
    """
    key = _dataset_key(dataset_name)
    name, variant = _LOAD[key]
    kwargs = {} if root is None else {"root": root}
    data = load_dataset(name, variant=variant, **kwargs)
    if drop_empty_columns:
        data = copy.copy(data)
        data.x = data.x[:, (data.x != 0).any(dim=0)]
    return minmax_normalize(data)


def perturb_features(x: Tensor, method: str, epsilon: float | None, generator: torch.Generator | int | None) -> Tensor:
    """Server-side unbiased estimate y* of every node's features under ``method`` (paper eq. 5, 9, 26).

    Each entry of ``x`` (which must lie in [0, 1]: use :func:`prepare`; the mechanism rejects anything else) is
    perturbed independently with per-feature budget ``epsilon``.
    RAW returns ``x`` unchanged and requires ``epsilon`` None/inf.
    """
    key = _method_key(method)
    eps = _epsilon(key, epsilon)
    check_features(x, "x (node features)")
    if key == "raw":
        return x
    mech = get_mechanism(MECHANISMS[key], epsilon=eps, low=0.0, high=1.0)
    return mech(x, generator=generator)


def privacy_ledger(method: str, epsilon: float | None, num_features: int) -> dict[str, Any]:
    """The privacy statement of one LPGCN run, flat so it can sit in a tidy result row."""
    key = _method_key(method)
    eps = _epsilon(key, epsilon)
    if key == "raw":
        return {
            "level": "none",
            "mechanism": "none",
            "epsilon": math.inf,
            "epsilon_node_total": math.inf,
            "delta": 0.0,
            "sensitivity": None,
            "accountant": "none",
            **non_private(),
        }
    return {
        "level": "feature-ldp",
        # the input range [α, β] = [0, 1] comes from per-column min-max over all nodes' raw features, computed by
        # whoever prepares the data, not by each user: a preprocessing statistic outside the LDP guarantee
        **statement(
            AS_PUBLISHED,
            "one node's feature vector (LDP: any two vectors, per-feature budget)",
            accounted=f"each of the {int(num_features)} features perturbed once by {MECHANISMS[key]} with "
            "epsilon (basic composition for the node total)",
            not_covered=[PREPROCESSING],
        ),
        "mechanism": MECHANISMS[key],
        "epsilon": eps,
        "epsilon_node_total": eps * int(num_features),
        "delta": 0.0,
        "sensitivity": 1.0,  # Δ = β − α = 1 after min-max normalisation
        "accountant": "basic composition over the d features (each perturbed once, post-processing after)",
    }


# ---------------------------------------------------------------------------------------------------------------
# Estimation error of the first graph convolution (Fig. 2, Fig. 3)
# ---------------------------------------------------------------------------------------------------------------
def gcn_propagation_matrix(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Sparse (COO) Â = D^{-1/2}(A + I)D^{-1/2} exactly as PyG's GCNConv builds it; ``Â @ X`` = GC of eq. (1)."""
    ei, w = gcn_norm(edge_index, None, num_nodes, add_self_loops=True)
    # GCNConv aggregates messages from source ei[0] into target ei[1]: row = target, column = source
    return torch.sparse_coo_tensor(
        torch.stack([ei[1], ei[0]]), w, (num_nodes, num_nodes), check_invariants=True
    ).coalesce()


def gc_mae(data: Data, method: str, epsilon: float | None, seed: int | torch.Generator) -> Tensor:
    """Per-node MAE of the perturbed first-layer graph convolution (paper eq. 8;
    docs/papers/lpgcn.md#experiments-and-reported-numbers).

    MAE(v) = (1/m) Σ_i |GC(v)_i − ĜC(v)_i| / Δ_i with GC = Â X and ĜC = Â Y* (identity weight), Δ_i the range of
    column i of ``data.x`` (columns with Δ_i = 0 contribute 0). One perturbation drawn from ``seed``. The graph is
    the simple graph of ``data.edge_index`` (repeated pairs merged, :func:`dpgnn.data.transforms.clean_edges`).
    """
    data, _ = with_clean_edges(data, owner="LPGCN")
    x = data.x.to(torch.float32)
    y = perturb_features(x, method, epsilon, make_generator(seed))
    a = gcn_propagation_matrix(data.edge_index, x.size(0))
    diff = torch.sparse.mm(a, y - x)  # GC is linear: ĜC − GC = Â (Y* − X)
    rng = x.max(dim=0).values - x.min(dim=0).values
    inv = torch.where(rng > 0, 1.0 / torch.where(rng > 0, rng, torch.ones_like(rng)), torch.zeros_like(rng))
    return (diff.abs() * inv).mean(dim=1)


def _mae_seed(seed: int, dataset: str, method: str, eps: float) -> int:
    return stable_seed(PAPER, "mae", seed, dataset, method, eps)


def _base_row(dataset: str, method: str, eps: float, num_features: int, seed: int, artifact: str) -> dict[str, Any]:
    return {
        "paper": PAPER,
        "artifact": artifact,
        "dataset": dataset,
        "method": method,
        **privacy_ledger(method, None if method == "raw" else eps, num_features),
        "seed": seed,
        "config_hash": config_hash(
            {"artifact": artifact, "dataset": dataset, "method": method, "epsilon": eps, "seed": seed}
        ),
        "versions": versions(),
    }


def mae_vs_epsilon(
    data: Data,
    dataset_name: str,
    epsilons: Iterable[float] = EPSILONS_MAE,
    methods: Sequence[str] = ("lm", "pm", "pgc"),
    seed: int = GLOBAL_SEED,
) -> pd.DataFrame:
    """Fig. 2: node-averaged MAE per (method, ε); ``spread`` = std over nodes (ddof 0). One draw per cell."""
    key = _label(dataset_name)
    rows = []
    for method in map(_method_key, methods):
        # RAW has no ε: one row with epsilon = inf (its MAE is 0 by construction)
        for eps in [None] if method == "raw" else epsilons:
            e = _epsilon(method, eps)
            mae = gc_mae(data, method, eps if eps is None else e, _mae_seed(seed, key, method, e))
            row = _base_row(key, method, e, data.num_features, seed, "fig2")
            row.update(
                metric="mae", value=float(mae.mean()), spread=float(mae.std(unbiased=False)), num_nodes=int(mae.numel())
            )
            rows.append(row)
    return pd.DataFrame(rows)


def mae_vs_degree(
    data: Data,
    dataset_name: str,
    epsilon: float = 1.0,
    methods: Sequence[str] = ("lm", "pm", "pgc"),
    seed: int = GLOBAL_SEED,
    quantile: float = 0.99,
) -> pd.DataFrame:
    """Fig. 3: MAE averaged over the nodes of each degree d ∈ [1, d_max], d_max = ``quantile`` of the degrees.

    Degree = out-degree in ``edge_index`` without self-loops. The perturbation of (method, ε) is the same draw as
    in :func:`mae_vs_epsilon` with the same seed. Columns: dataset, method, epsilon, degree, value, spread, count.
    """
    key = _label(dataset_name)
    if not 0 < quantile <= 1:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    data, _ = with_clean_edges(data, owner="LPGCN")  # a repeated pair counts once in the degree, as in gc_mae
    row_idx, col_idx = data.edge_index
    deg = torch.bincount(row_idx[row_idx != col_idx], minlength=data.num_nodes)
    d_max = float(np.quantile(deg.numpy(), quantile))
    keep = (deg >= 1) & (deg.double() <= d_max)
    rows = []
    for method in map(_method_key, methods):
        e = _epsilon(method, None if method == "raw" else epsilon)
        mae = gc_mae(data, method, None if method == "raw" else e, _mae_seed(seed, key, method, e))
        frame = pd.DataFrame({"degree": deg[keep].numpy(), "mae": mae[keep].double().numpy()})
        grouped = frame.groupby("degree")["mae"].agg(["mean", lambda s: s.std(ddof=0), "size"])
        grouped.columns = ["value", "spread", "count"]
        base = _base_row(key, method, e, data.num_features, seed, "fig3")
        base.update(metric="mae", d_max=d_max)
        for degree, g in grouped.iterrows():
            rows.append(
                {
                    **base,
                    "degree": int(degree),
                    "value": float(g["value"]),
                    "spread": float(g["spread"]),
                    "count": int(g["count"]),
                }
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------------
# Analytic variances (Fig. 1, 4, 5; Table 3)
# ---------------------------------------------------------------------------------------------------------------
def mean_feature(data: Data) -> float:
    """x̄ of paper eq. (28): the mean of all normalised features over all nodes (Table 3)."""
    return float(data.x.to(torch.float64).mean())


def _variance(method: str, eps: float, x: Tensor) -> Tensor:
    mech = get_mechanism(MECHANISMS[method], epsilon=eps, low=0.0, high=1.0)
    return torch.as_tensor(mech.variance(x), dtype=torch.float64).expand_as(x)


def variance_table(
    epsilons: Iterable[float],
    x: str | float | Sequence[float] | Mapping[str, float] = "range",
    methods: Sequence[str] = ("lm", "pm", "pgc"),
    grid: int = 1001,
) -> pd.DataFrame:
    """Analytic per-feature variance of y* for LM, PM, PGC (α = 0, β = 1), from the mechanisms' formulas.

    * ``x="range"`` (Fig. 1): min and max over x ∈ [0, 1] (evaluated on a ``grid`` that contains 0, ½ and 1);
      rows carry ``stat`` ∈ {min, max} and the ``x`` attaining it. LM is constant (min = max).
    * ``x=0.0`` (Fig. 4, x = α) or any float / list of floats: the variance at those x (``stat="at_x"``).
    * ``x={"cora": 0.013, ...}`` (Fig. 5, x = x̄ of each dataset): as above with a ``label`` column.
    """
    eps_list = [float(e) for e in epsilons]
    for e in eps_list:
        _epsilon("pgc", e)
    meths = [_method_key(m) for m in methods]
    if "raw" in meths:
        raise ValueError("RAW has no variance (no perturbation); use methods among 'lm', 'pm', 'pgc'")
    rows = []
    if isinstance(x, str):
        if x != "range":
            raise ValueError(f"x must be 'range', a number, a list of numbers or a {{label: x}} dict, got {x!r}")
        xs = torch.linspace(0.0, 1.0, grid, dtype=torch.float64)
        for m in meths:
            for e in eps_list:
                v = _variance(m, e, xs)
                for stat, i in (("min", int(v.argmin())), ("max", int(v.argmax()))):
                    rows.append({"method": m, "epsilon": e, "stat": stat, "x": float(xs[i]), "value": float(v[i])})
        return pd.DataFrame(rows)
    if isinstance(x, Mapping):
        labels, values = list(x.keys()), [float(v) for v in x.values()]
    else:
        values = [float(v) for v in (x if isinstance(x, (list, tuple, np.ndarray)) else [x])]
        labels = [None] * len(values)
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"x values must lie in [0, 1], got {values}")
    xs = torch.tensor(values, dtype=torch.float64)
    for m in meths:
        for e in eps_list:
            v = _variance(m, e, xs)
            for lab, xv, vv in zip(labels, values, v.tolist()):
                rows.append({"method": m, "epsilon": e, "stat": "at_x", "label": lab, "x": xv, "value": vv})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------------
# Training loops (full batch, on the plain engine :func:`dpgnn.train.fit`)
# ---------------------------------------------------------------------------------------------------------------
def _mask_index(data: Any, name: str, device: torch.device) -> Tensor:
    mask = getattr(data, name, None)
    if mask is None:
        raise ValueError(f"data has no {name!r}; node classification needs train_mask, val_mask and test_mask")
    mask = torch.as_tensor(mask)
    idx = mask.nonzero(as_tuple=False).view(-1) if mask.dtype == torch.bool else mask.long().view(-1)
    return idx.to(device)


def _check_common(lr: float, weight_decay: float, max_epochs: int, min_epochs: int) -> None:
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay}")
    if max_epochs < 1 or min_epochs < 0 or min_epochs > max_epochs:
        raise ValueError(f"need 0 <= min_epochs <= max_epochs and max_epochs >= 1, got {min_epochs=}, {max_epochs=}")


def train_node_classifier(
    model: nn.Module,
    data: Any,
    *,
    lr: float,
    weight_decay: float,
    max_epochs: int = 500,
    min_epochs: int = 10,
    patience: int = 20,
    min_delta: float = 0.0,
    device: str | torch.device = "auto",
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Train ``model(x, edge_index) -> log-probabilities`` full batch and evaluate micro-F1 (Table 2, GCN).

    Each epoch (one :func:`dpgnn.train.fit` epoch): one Adam step on the NLL of the training nodes (model in train
    mode), then the validation NLL in eval mode. Early stopping as PyTorch-Lightning's
    ``EarlyStopping(monitor="val_loss", patience, min_delta)`` with ``Trainer(min_epochs, max_epochs)`` (the
    authors' trainer, docs/papers/lpgcn.md#models-and-training): training ends after the first epoch ``e >= min_epochs``
    at which the validation loss has not improved for ``patience`` consecutive epochs, or after ``max_epochs``. (An
    improvement is ``val < best - min_delta``, :func:`dpgnn.train.fit`'s rule.)

    The test is run on the weights at stopping time (the LPGCN authors' behaviour,
    docs/papers/lpgcn.md#models-and-training);
    ``restore_best=True`` reloads the weights of the epoch with the lowest validation loss instead.

    A model whose train-mode forward equals its eval-mode forward (no active dropout, no batch statistics)
    declares ``train_mode_is_eval = True``: the evaluation of the weights after epoch ``e`` then runs their forward
    in train mode with gradients and hands it to epoch ``e + 1``'s step, which back-propagates through it -- one
    full forward per epoch saved, the same numbers (tests compare both paths).

    Returns a dict with ``test_f1``, ``val_f1``, ``train_f1`` (floats in [0, 1]), ``epochs`` (epochs run),
    ``stop_epoch`` (epoch at which early stopping fired, ``None`` if ``max_epochs`` was reached),
    ``best_epoch``/``best_val_loss``, ``restored_best``, ``history`` (per-epoch ``train_loss``/``val_loss``) and
    ``train_time_s``.
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    dev = resolve_device(device)
    x = data.x.to(dev, torch.float32)
    edge_index = data.edge_index.to(dev)
    y = data.y.to(dev).long().view(-1)
    train_idx, val_idx, test_idx = (_mask_index(data, f"{s}_mask", dev) for s in ("train", "val", "test"))
    if train_idx.numel() == 0 or val_idx.numel() == 0:
        raise ValueError("train and validation masks must select at least one node")
    y_train, y_val = y[train_idx], y[val_idx]

    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    shared = bool(getattr(model, "train_mode_is_eval", False))
    train_losses: list[Tensor] = []  # kept on the device: the one host sync per epoch is the validation loss
    val_losses: list[float] = []
    carried: list[Tensor] = []  # shared path: the forward of the current weights, made by their evaluation

    def loss(epoch: int) -> Tensor:
        out = carried.pop() if carried else model(x, edge_index)
        return F.nll_loss(out[train_idx], y_train)

    update = GradientStep(optimizer, loss)

    def step(epoch: int) -> None:
        train_losses.append(update(epoch))

    def evaluate(epoch: int) -> dict[str, float]:
        if shared:  # still in train mode (== eval mode for this model); the next step reuses this forward
            with torch.enable_grad() if epoch < max_epochs else torch.no_grad():
                out = model(x, edge_index)
            if epoch < max_epochs:
                carried.append(out)
            out = out.detach()
        else:
            model.eval()
            out = model(x, edge_index)
        val_losses.append(F.nll_loss(out[val_idx], y_val).item())  # the one sync per epoch
        return {"val_loss": val_losses[-1]}

    t0 = time.perf_counter()
    res = fit(
        model,
        step,
        evaluate,
        epochs=max_epochs,
        monitor="val_loss",
        mode="min",
        patience=patience,
        min_epochs=min_epochs,
        min_delta=min_delta,
        restore_best=restore_best,
        progress=progress,
    )
    carried.clear()
    train_time = time.perf_counter() - t0

    model.eval()
    with torch.no_grad():
        out = model(x, edge_index)
        f1s = torch.stack([accuracy_tensor(out[i], y[i]) for i in (train_idx, val_idx, test_idx)]).tolist()
    return {
        "train_f1": f1s[0],
        "val_f1": f1s[1],
        "test_f1": f1s[2],
        "epochs": res.epochs,
        "stop_epoch": res.epochs if res.stopped_early else None,
        "best_epoch": res.best_epoch or None,
        "best_val_loss": res.best.get("val_loss", math.inf),
        "restored_best": bool(restore_best and res.best_epoch),
        "history": {"train_loss": torch.stack(train_losses).tolist(), "val_loss": val_losses},
        "train_time_s": train_time,
        "device": str(dev),
    }


class NegativeSampler:
    """Uniform negative edges for a fixed positive edge set, drawn from an explicit ``torch.Generator``.

    Samples ordered pairs ``(i, j)``, ``i != j``, uniformly among those not in ``pos_edge_index`` -- the
    distribution of PyG's ``negative_sampling(pos_edge_index, num_nodes)`` used inside ``VGAE.recon_loss`` -- but
    vectorised on the device and with its own generator (PyG's uses Python's global ``random`` and costs ~60 ms
    per call on a Twitch-sized graph). Draws are with replacement; like PyG, after a few rounds of rejection it
    returns what it has (only relevant for nearly complete graphs).
    """

    def __init__(self, pos_edge_index: Tensor, num_nodes: int, generator: torch.Generator) -> None:
        if num_nodes < 2:
            raise ValueError("negative sampling needs at least 2 nodes")
        self.n = int(num_nodes)
        self.device = pos_edge_index.device
        self.generator = generator
        self.population = self.n * (self.n - 1)
        self.pos_keys = torch.unique(self._keys(pos_edge_index))
        self.p_valid = max(1.0 - self.pos_keys.numel() / self.population, 1e-12)

    def _keys(self, edge_index: Tensor) -> Tensor:
        row, col = edge_index
        keep = row != col
        row, col = row[keep], col[keep]
        return row * (self.n - 1) + col - (col > row).long()

    def _edges(self, keys: Tensor) -> Tensor:
        row = torch.div(keys, self.n - 1, rounding_mode="floor")
        col = keys - row * (self.n - 1)
        col = col + (col >= row).long()
        return torch.stack([row, col])

    def _is_positive(self, keys: Tensor) -> Tensor:
        # binary search in the sorted positive keys (cheaper and less thread-hungry than torch.isin's sort)
        if self.pos_keys.numel() == 0:
            return torch.zeros_like(keys, dtype=torch.bool)
        idx = torch.searchsorted(self.pos_keys, keys).clamp_(max=self.pos_keys.numel() - 1)
        return self.pos_keys[idx] == keys

    def __call__(self, num_samples: int) -> Tensor:
        if self.pos_keys.numel() >= self.population:
            return torch.empty(2, 0, dtype=torch.long, device=self.device)
        out: list[Tensor] = []
        have = 0
        for _ in range(3):
            k = int(1.1 * (num_samples - have) / self.p_valid) + 8
            draw = torch.randint(self.population, (k,), generator=self.generator, device=self.device)
            draw = draw[~self._is_positive(draw)]
            out.append(draw)
            have += draw.numel()
            if have >= num_samples:
                break
        return self._edges(torch.cat(out)[:num_samples])


def _vgae_loss(model: nn.Module, x: Tensor, enc_edges: Tensor, pos: Tensor, neg: Tensor, n: int) -> Tensor:
    z = model.encode(x, enc_edges)
    return model.recon_loss(z, pos, neg) + (1.0 / n) * model.kl_loss()


def train_link_predictor(
    model: nn.Module,
    data: Any,
    *,
    lr: float,
    weight_decay: float,
    max_epochs: int = 500,
    min_epochs: int = 100,
    check_every: int = 10,
    patience: int = 10,
    min_delta: float = 0.0,
    device: str | torch.device = "auto",
    seed: int | None = None,
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Train a :class:`torch_geometric.nn.VGAE` for link prediction and report test AUC/AP (Table 2, VGAE).

    ``data`` needs ``x``, ``train_pos_edge_index``, ``val_pos_edge_index``, ``test_pos_edge_index`` and
    ``test_neg_edge_index`` (``val_neg_edge_index`` is used for the reported validation AUC if present). The
    encoder always sees ``train_pos_edge_index``. Loss = ``recon_loss(z, train_pos, sampled negatives) + KL/N``;
    every ``check_every`` epochs the same loss is computed in eval mode on the validation positives (with fresh
    negatives sampled against them, as PyG's ``recon_loss`` does). Early stopping counts *checks*: training ends at
    the first check at epoch ``>= min_epochs`` after ``patience`` checks without improvement, or at
    ``max_epochs``. Test on the weights at stopping time unless ``restore_best``.

    On the engine, one :func:`dpgnn.train.fit` epoch is a block of ``check_every`` training epochs followed by one
    check; the epochs after the last full block (``max_epochs % check_every``) train without a check, as before.

    ``seed`` seeds the negative-edge generator; ``None`` draws it from torch's global RNG (so
    :func:`dpgnn.utils.seed_everything` makes the whole run reproducible).
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    if check_every < 1:
        raise ValueError(f"check_every must be >= 1, got {check_every}")
    for name in ("train_pos_edge_index", "val_pos_edge_index", "test_pos_edge_index", "test_neg_edge_index"):
        if getattr(data, name, None) is None:
            raise ValueError(f"data has no {name!r}; split the edges first (dpgnn.data.split_edges)")
    dev = resolve_device(device)
    x = data.x.to(dev, torch.float32)
    n = x.size(0)
    train_pos = data.train_pos_edge_index.to(dev)
    val_pos = data.val_pos_edge_index.to(dev)
    if seed is None:
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
    gen = make_generator(seed, dev)
    train_neg = NegativeSampler(train_pos, n, gen)
    val_neg = NegativeSampler(val_pos, n, gen)

    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    train_losses: list[Tensor] = []
    val_losses: list[float] = []

    update = GradientStep(
        optimizer, lambda: _vgae_loss(model, x, train_pos, train_pos, train_neg(train_pos.size(1)), n)
    )

    def train_epochs(k: int) -> None:
        for _ in range(k):
            model.train()
            train_losses.append(update())

    def evaluate(block: int) -> dict[str, float]:
        model.eval()
        val_losses.append(_vgae_loss(model, x, train_pos, val_pos, val_neg(val_pos.size(1)), n).item())
        return {"val_loss": val_losses[-1]}

    t0 = time.perf_counter()
    blocks, rest = divmod(int(max_epochs), int(check_every))
    res = None
    if blocks:
        res = fit(
            model,
            lambda block: train_epochs(check_every),
            evaluate,
            epochs=blocks,
            monitor="val_loss",
            mode="min",
            patience=patience,
            min_epochs=-(-int(min_epochs) // int(check_every)),
            min_delta=min_delta,
            restore_best=restore_best,
            progress=progress,
        )
    restored = bool(restore_best and res is not None and res.best_epoch)
    if rest and not (res is not None and res.stopped_early):
        kept = copy.deepcopy(model.state_dict()) if restored else None
        train_epochs(rest)  # trailing epochs without a check; a restored best stays the tested model
        if kept is not None:
            model.load_state_dict(kept)
    train_time = time.perf_counter() - t0
    epochs = res.epochs * check_every if res is not None and res.stopped_early else int(max_epochs)

    model.eval()
    with torch.no_grad():
        z = model.encode(x, train_pos)
        test_auc, test_ap = model.test(z, data.test_pos_edge_index.to(dev), data.test_neg_edge_index.to(dev))
        val_auc = val_ap = float("nan")
        if getattr(data, "val_neg_edge_index", None) is not None:
            val_auc, val_ap = model.test(z, val_pos, data.val_neg_edge_index.to(dev))
    return {
        "test_auc": float(test_auc),
        "test_ap": float(test_ap),
        "val_auc": float(val_auc),
        "val_ap": float(val_ap),
        "epochs": epochs,
        "stop_epoch": epochs if res is not None and res.stopped_early else None,
        "best_epoch": res.best_epoch * check_every if res is not None and res.best_epoch else None,
        "best_val_loss": res.best.get("val_loss", math.inf) if res is not None else math.inf,
        "restored_best": restored,
        "history": {"train_loss": torch.stack(train_losses).tolist(), "val_loss": val_losses},
        "train_time_s": train_time,
        "device": str(dev),
    }


# ---------------------------------------------------------------------------------------------------------------
# Table 2: node classification and link prediction runs
# ---------------------------------------------------------------------------------------------------------------
def _run_seed(seed: int, dataset: str, method: str, eps: float, run: int, task: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int (0 is a seed), got {seed!r}")
    if isinstance(run, bool) or not isinstance(run, (int, np.integer)) or run < 0:
        raise ValueError(f"run must be a non-negative int, got {run!r}")
    return stable_seed(PAPER, task, int(seed), dataset, method, eps, int(run))


def _with_features(data: Data, x: Tensor) -> Data:
    out = copy.copy(data)
    out.x = x
    return out


def _result(
    task: str,
    key: str,
    method: str,
    eps: float,
    run: int,
    seed: int,
    run_seed: int,
    num_features: int,
    config: dict[str, Any],
    metric: str,
    value: float,
    extra: dict[str, Any],
) -> dict[str, Any]:
    row = {
        "paper": PAPER,
        "artifact": "table2",
        "task": task,
        "dataset": key,
        "method": method,
        **privacy_ledger(method, None if method == "raw" else eps, num_features),
        "run": int(run),
        "seed": int(seed),
        "run_seed": run_seed,
        "metric": metric,
        "value": float(value),
    }
    row.update(extra)
    row.update(config)
    row["config_hash"] = config_hash({"task": task, "dataset": key, "method": method, "epsilon": eps, **config})
    row["versions"] = versions()
    return row


def run_node_classification(
    data: Data,
    dataset_name: str,
    method: str,
    epsilon: float | None,
    *,
    run: int,
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    max_epochs: int = 500,
    min_epochs: int = 10,
    patience: int = 20,
    hidden: int = HIDDEN_CODE,
    hparams: Mapping[str, float] | None = None,
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """One Table-2 node-classification run: fresh perturbation of all nodes' features + fresh 2-layer GCN.

    ``data`` comes from :func:`prepare`. The run's seeds derive from (seed, dataset, method, ε, run), so a cell
    reproduces exactly and runs differ. Hyper-parameters default to :data:`HPARAMS` (Table 4); ``hidden`` to the
    authors' code (16; the paper text says 32 = :data:`HIDDEN_PAPER`). Test micro-F1 at stopping time unless
    ``restore_best``. Returns a flat dict (metric ``micro_f1`` in [0, 1], ledger, timings, config, and the per-epoch
    ``history`` of losses, which stored rows leave out). The GCN runs on the simple graph of ``data.edge_index``
    (repeated pairs merged, :func:`dpgnn.data.transforms.clean_edges`; ``edge_input`` in the row says so).
    """
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)  # a bad (method, ε) is refused before the data are touched
    data, cleaning = with_clean_edges(data, owner="LPGCN")
    hp = _hparams(key, "gcn", hparams)
    run_seed = _run_seed(seed, key, m, eps, run, "node")
    t0 = time.perf_counter()
    x_hat = perturb_features(data.x, m, None if m == "raw" else eps, make_generator(stable_seed(run_seed, "perturb")))
    t_perturb = time.perf_counter() - t0
    seed_everything(stable_seed(run_seed, "model"))
    num_classes = int(data.y[data.y >= 0].max()) + 1
    model = GCN(data.num_features, hidden, num_classes, dropout=hp["dropout"], cached=True)
    res = train_node_classifier(
        model,
        _with_features(data, x_hat),
        lr=hp["lr"],
        weight_decay=hp["weight_decay"],
        max_epochs=max_epochs,
        min_epochs=min_epochs,
        patience=patience,
        device=device,
        restore_best=restore_best,
        progress=progress,
    )
    config = {
        "model": "gcn",
        "hidden": hidden,
        "lr": hp["lr"],
        "weight_decay": hp["weight_decay"],
        "dropout": hp["dropout"],
        "max_epochs": max_epochs,
        "min_epochs": min_epochs,
        "patience": patience,
        "restore_best": restore_best,
    }
    extra = {
        "val_micro_f1": res["val_f1"],
        "train_micro_f1": res["train_f1"],
        "epochs": res["epochs"],
        "stop_epoch": res["stop_epoch"],
        "best_epoch": res["best_epoch"],
        "perturb_time_s": t_perturb,
        "train_time_s": res["train_time_s"],
        "duration_s": time.perf_counter() - t0,
        "device": res["device"],
        "history": res["history"],
        **({"edge_input": cleaning.describe()} if cleaning.changed else {}),
    }
    return _result(
        "node_classification",
        key,
        m,
        eps,
        run,
        seed,
        run_seed,
        data.num_features,
        config,
        "micro_f1",
        res["test_f1"],
        extra,
    )


def split_for_link_prediction(data: Data, dataset_name: str) -> Data:
    """The fixed 85/5/10 edge split of docs/papers/lpgcn.md#data-and-splits (torch.Generator seed = Σord(dataset name)),
    same for all runs."""
    return split_edges(data, val=0.05, test=0.10, seed=seed_from_name(_label(dataset_name)))


def run_link_prediction(
    data: Data,
    dataset_name: str,
    method: str,
    epsilon: float | None,
    *,
    run: int,
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    max_epochs: int = 500,
    min_epochs: int = 100,
    check_every: int = 10,
    patience: int = 10,
    hidden: int = VGAE_HIDDEN,
    out: int = VGAE_OUT,
    hparams: Mapping[str, float] | None = None,
    split: Data | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """One Table-2 link-prediction run: fresh perturbation of all nodes' features + fresh VGAE; metric test AUC.

    ``split`` is :func:`split_for_link_prediction` of ``data`` (computed when omitted; pass it to reuse it across
    runs -- it is fixed across runs, only the perturbation and the model are redrawn). Returns a flat dict like
    :func:`run_node_classification`'s (metric ``auc``).
    """
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)
    hp = _hparams(key, "vgae", hparams)
    run_seed = _run_seed(seed, key, m, eps, run, "link")
    t0 = time.perf_counter()
    if split is None:
        split = split_for_link_prediction(data, key)
    elif split.num_nodes != data.num_nodes or getattr(split, "train_pos_edge_index", None) is None:
        raise ValueError("split must be split_for_link_prediction(data, dataset_name) of the same graph")
    x_hat = perturb_features(data.x, m, None if m == "raw" else eps, make_generator(stable_seed(run_seed, "perturb")))
    t_perturb = time.perf_counter() - t0
    seed_everything(stable_seed(run_seed, "model"))
    model = VGAE(VGAEEncoder(data.num_features, hidden, out, dropout=hp["dropout"], cached=True))
    res = train_link_predictor(
        model,
        _with_features(split, x_hat),
        lr=hp["lr"],
        weight_decay=hp["weight_decay"],
        max_epochs=max_epochs,
        min_epochs=min_epochs,
        check_every=check_every,
        patience=patience,
        device=device,
        seed=stable_seed(run_seed, "negatives"),
        progress=progress,
    )
    config = {
        "model": "vgae",
        "hidden": hidden,
        "out": out,
        "lr": hp["lr"],
        "weight_decay": hp["weight_decay"],
        "dropout": hp["dropout"],
        "max_epochs": max_epochs,
        "min_epochs": min_epochs,
        "check_every": check_every,
        "patience": patience,
        "split_seed": seed_from_name(key),
    }
    extra = {
        "test_ap": res["test_ap"],
        "val_auc": res["val_auc"],
        "epochs": res["epochs"],
        "stop_epoch": res["stop_epoch"],
        "best_epoch": res["best_epoch"],
        "perturb_time_s": t_perturb,
        "train_time_s": res["train_time_s"],
        "duration_s": time.perf_counter() - t0,
        "device": res["device"],
        "history": res["history"],
    }
    return _result(
        "link_prediction", key, m, eps, run, seed, run_seed, data.num_features, config, "auc", res["test_auc"], extra
    )


def summarize_runs(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Table-2 style summary: mean and population std (ddof 0, as the paper) over runs, in %, per cell."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    keys = [k for k in ("task", "dataset", "method", "epsilon", "metric") if k in df.columns]
    g = df.groupby(keys, dropna=False)["value"]
    out = g.agg(mean=lambda s: 100 * s.mean(), std=lambda s: 100 * s.std(ddof=0), runs="size").reset_index()
    return out


# ---------------------------------------------------------------------------------------------------------------
# The method contract (:mod:`dpgnn.methods`): every mechanism × {node classification (GCN), link prediction (VGAE)}
# ---------------------------------------------------------------------------------------------------------------
#: the model that names each Table-2 task in a method key: ``("lpgcn", "pgc-gcn", "feature")`` is node
#: classification (GCN, micro-F1) on PGC-perturbed features, ``("lpgcn", "pgc-vgae", "feature")`` link prediction
TASK_MODELS = {"node_classification": "gcn", "link_prediction": "vgae"}


def prepare_link_prediction(dataset_name: str, **options: Any) -> Data:
    """The link-prediction view of a dataset: :func:`prepare` then the fixed edge split
    (:func:`split_for_link_prediction`); ``options`` go to :func:`prepare`."""
    return split_for_link_prediction(prepare(dataset_name, **options), dataset_name)


def method_key(method: str, task: str) -> tuple[str, str, str]:
    """The registry key of one Table-2 cell: ``(PAPER, "<mechanism>-<gcn|vgae>", "feature" | "none" for RAW)``."""
    m = _method_key(method)
    if task not in TASK_MODELS:
        raise ValueError(f"unknown LPGCN task {task!r}; valid: {list(TASK_MODELS)}")
    return PAPER, f"{m}-{TASK_MODELS[task]}", "none" if m == "raw" else "feature"


def _contract_run(mechanism: str, task: str):
    """``run(data, config, *, seed, device) -> RunResult`` of one mechanism and task. ``config``: ``dataset`` (the
    name; it seeds the run and picks Table 4's hyper-parameters), ``epsilon`` (per-feature ε; omit or ∞ for RAW),
    ``run`` (the repeat index, default 0), and any keyword of :func:`run_node_classification` /
    :func:`run_link_prediction` (``max_epochs``, ``patience``, ``hparams``, ...). ``data`` is the registered
    ``prepare``'s view (for link prediction the split itself)."""

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        cfg = dict(config)
        if "dataset" not in cfg:
            raise ValueError("an LPGCN config needs 'dataset' (the dataset's name)")
        name, run_index = cfg.pop("dataset"), cfg.pop("run", 0)
        eps = cfg.pop("epsilon", None)
        if mechanism == "raw" and eps is not None and math.isinf(float(eps)):
            eps = None
        if task == "node_classification":
            row = run_node_classification(data, name, mechanism, eps, run=run_index, seed=seed, device=device, **cfg)
            metrics = {"train": row["train_micro_f1"], "val": row["val_micro_f1"], "test": row["value"]}
        else:
            row = run_link_prediction(
                data, name, mechanism, eps, run=run_index, seed=seed, device=device, split=data, **cfg
            )
            metrics = {"val": row["val_auc"], "test": row["value"]}
        history = row.pop("history")
        hist = [{"epoch": i + 1, "loss": v} for i, v in enumerate(history["train_loss"])]
        return RunResult(
            metrics=metrics,
            ledger=privacy_ledger(mechanism, eps, data.num_features),
            history=hist,
            seconds=row["duration_s"],
            extra={"row": row, "val_loss": history["val_loss"]},
        )

    run.__qualname__ = f"run_{mechanism}_{TASK_MODELS[task]}"
    run.__name__ = run.__qualname__
    return run


for _mech in METHODS:
    for _task, _model in TASK_MODELS.items():
        register(
            *method_key(_mech, _task),
            prepare=prepare if _task == "node_classification" else prepare_link_prediction,
            description=f"{_mech.upper()} features, {_model.upper()} {_task.replace('_', ' ')} (Table 2)",
        )(_contract_run(_mech, _task))
del _mech, _task, _model
