"""LPGNN -- Sajadmanesh & Gatica-Perez, "Locally Private Graph Neural Networks" (CCS 2021); docs/papers/lpgnn.md.

Setting (docs/papers/lpgnn.md#setting): the server knows the graph; every node's feature vector is private (ε_x-LDP for
the whole vector, multi-bit mechanism) and so is the label of every training/validation node (ε_y-LDP, generalised
randomised response). Test labels are only used to report accuracy. The server propagates the rectified features with
KProp (``Â^{K_x}``), trains a GCN / GraphSAGE / GAT backbone, denoises the labels with Drop (forward correction +
``Â^{K_y}`` label propagation) and selects the epoch without clean labels (noisy validation, the RR ceiling).

Public API (notebooks go through :mod:`dpgnn.series.lpgnn`):

* :func:`prepare` -- the paper's data pipeline (50/25/25 random split, min-max, constant columns dropped).
* :func:`draw_features` -- one repeat's features for a method (``mbm``, ``1bm``, ``lpm``, ``agm``, ``raw``, and the
  replacements ``rnd``, ``one``, ``ohd``); :func:`perturb_labels`, :func:`transition_matrix`.
* :func:`drop_targets`, :func:`label_probabilities`, :func:`selection_step` -- Drop and the model-selection rule.
* :func:`run_cell` -- one grid cell (``repeats`` runs, batched) → tidy rows with the privacy ledger.
* :func:`train_reference` -- the straightforward per-run loop (PyG layers, one run at a time), kept as the
  baseline of the speed benchmark and as an independent check of the batched trainer.
* :data:`HPARAMS`, :data:`BEST_STEPS` -- the published tuned values (cited), :func:`hparams_for`,
  :func:`steps_for`; :func:`tune` -- redo the selection on noisy validation data only.

Methods registered (:mod:`dpgnn.methods`): ``("lpgnn", <mbm|1bm|lpm|agm>, "feature" | "feature+label")`` and
``("lpgnn", <raw|rnd|one|ohd>, "none" | "label")``; the level follows from ε_x/ε_y (:func:`level_of`). KProp
(``k_x``) and the label handling (``label_method`` ce / fc / drop with ``k_y``) are the config's; each run trains
its repeats at once (:func:`train_batched`, the fast path).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data import load_dataset
from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods import RunResult, register
from dpgnn.metrics import accuracy_tensor
from dpgnn.nn.lpgnn import BACKBONES, Backbone, BatchedBackbone, BatchedFeatures, KProp, kprop, normalized_adjacency
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.lpgnn import AGM_DELTA, REPLACEMENTS, feature_method, privacy_ledger  # the privacy statement
from dpgnn.train import GradientStep, fit
from dpgnn.utils import check_features, config_hash, make_generator, resolve_device, stable_seed, versions

__all__ = [
    "PAPER",
    "DATASETS",
    "FEATURE_METHODS",
    "REPLACEMENTS",
    "LABEL_METHODS",
    "EPS_X",
    "EPS_Y",
    "STEPS",
    "HPARAMS",
    "BEST_STEPS",
    "TUNING_GRID",
    "GLOBAL_SEED",
    "prepare",
    "draw_features",
    "perturb_labels",
    "transition_matrix",
    "drop_targets",
    "label_probabilities",
    "selection_step",
    "privacy_ledger",
    "hparams_for",
    "steps_for",
    "train_batched",
    "train_reference",
    "run_cell",
    "tune",
    "MECHANISMS",
    "level_of",
]

PAPER = "lpgnn"
GLOBAL_SEED = 12345
DATASETS = ("cora", "pubmed", "facebook", "lastfm")
_LOAD = {"cora": "cora", "pubmed": "pubmed", "facebook": "facebook-pagepage", "lastfm": "lastfm"}
#: feature mechanisms (docs/papers/lpgnn.md#multi-bit-mechanism); the replacements (docs/papers/lpgnn.md#baselines) are
#: dpgnn.privacy.lpgnn.REPLACEMENTS
FEATURE_METHODS = ("mbm", "1bm", "lpm", "agm", "raw")
#: label-noise handling (docs/papers/lpgnn.md#baselines): plain cross-entropy, forward correction only, Drop (correction
#: + K_y)
LABEL_METHODS = ("ce", "fc", "drop")
INF = math.inf
EPS_X = (0.01, 0.1, 1.0, 2.0, 3.0, INF)
EPS_Y = (0.5, 1.0, 2.0, 3.0, INF)
STEPS = (0, 2, 4, 8, 16)
TUNING_GRID = {
    "lr": (0.01, 0.001, 0.0001),
    "weight_decay": (0.01, 0.001, 0.0001, 0.0),
    "dropout": (0.0, 0.25, 0.5, 0.75),
}

# ---------------------------------------------------------------------------------------------------------------
# Published tuned values (authors' hparams/lwd.csv and hparams/steps.csv,
# docs/papers/lpgnn.md#hyper-parameters-and-grids) -- cited reference data.
# ---------------------------------------------------------------------------------------------------------------
_ORDER = ("cora", "pubmed", "facebook", "lastfm")


def _lwd(*cells: str) -> dict[str, dict[str, float]]:
    out = {}
    for name, cell in zip(_ORDER, cells):
        lr, wd, do = (float(v) for v in cell.split("/"))
        out[name] = {"lr": lr, "weight_decay": wd, "dropout": do}
    return out


#: (feature group, ε_x finite?, ε_y finite?) -> dataset -> lr / weight decay / dropout
#: (docs/papers/lpgnn.md#hyper-parameters-and-grids, lwd.csv).
#: Feature group "raw" = the real features (perturbed or not); replacements have no ε_x (stored as inf).
HPARAMS: dict[tuple[str, bool, bool], dict[str, dict[str, float]]] = {
    ("raw", True, True): _lwd(".01/.001/.5", ".01/1e-4/.25", ".001/.01/.5", ".001/1e-4/.75"),
    ("raw", True, False): _lwd(".01/.01/.75", ".01/.01/.75", ".01/.01/.75", ".01/.01/.75"),
    ("raw", False, True): _lwd(".01/1e-4/.75", ".01/1e-4/0", ".01/1e-4/.25", ".01/1e-4/.75"),
    ("raw", False, False): _lwd(".01/.01/.5", ".01/.001/.25", ".001/1e-4/.75", ".001/.01/.25"),
    ("rnd", False, True): _lwd("1e-4/.01/.25", ".001/.001/.5", "1e-4/.001/0", "1e-4/1e-4/.5"),
    ("rnd", False, False): _lwd(".001/.001/.75", ".001/1e-4/.75", "1e-4/1e-4/0", "1e-4/1e-4/0"),
    ("one", False, True): _lwd("1e-4/.01/.75", "1e-4/1e-4/0", "1e-4/.01/.75", "1e-4/.01/.75"),
    ("one", False, False): _lwd("1e-4/.001/.75", "1e-4/.001/.75", "1e-4/.01/.75", "1e-4/.001/.5"),
    ("ohd", False, True): _lwd(".01/0/0", ".01/0/0", ".01/0/0", ".01/0/.5"),
    ("ohd", False, False): _lwd(".01/1e-4/.75", ".01/1e-4/0", ".01/1e-4/0", ".01/1e-4/.5"),
}


def _steps_rows(text: str) -> dict[tuple[float, float], tuple[int, int]]:
    """Parse ``"0.01: 4,4 | 8,8 | ...; 0.1: ..."`` (rows ε_x, columns ε_y = 0.5 | 1 | 2 | 3 | ∞)."""
    out = {}
    for row in text.split(";"):
        ex, cells = row.split(":")
        for ey, cell in zip(EPS_Y, cells.split("|")):
            kx, ky = (int(v) for v in cell.split(","))
            out[(float(ex), ey)] = (kx, ky)
    return out


#: dataset -> (ε_x, ε_y) -> (K_x, K_y) selected by the authors (docs/papers/lpgnn.md#hyper-parameters-and-grids,
#: steps.csv)
BEST_STEPS: dict[str, dict[tuple[float, float], tuple[int, int]]] = {
    "cora": _steps_rows(
        "0.01: 4,4|8,8|8,8|8,8|8,0; 0.1: 0,8|2,4|16,4|8,4|16,0; 1: 2,8|2,8|8,4|16,4|16,0;"
        "2: 8,8|4,8|8,4|16,2|16,0; 3: 2,8|16,8|8,4|16,2|16,0; inf: 4,8|0,4|0,4|0,2|0,0"
    ),
    "pubmed": _steps_rows(
        "0.01: 16,2|16,2|16,2|16,2|16,0; 0.1: 4,4|8,2|8,2|16,0|16,0;"
        "1: 0,4|4,2|16,0|16,0|16,0; 2: 0,4|4,2|16,0|16,0|16,0; 3: 0,4|4,2|16,0|16,0|16,0;"
        "inf: 0,2|0,2|0,0|0,0|0,0"
    ),
    "facebook": _steps_rows(
        "0.01: 2,4|4,2|4,2|4,2|8,0; 0.1: 8,4|2,4|4,2|4,2|8,0; 1: 8,4|2,4|4,2|16,0|8,0;"
        "2: 8,4|2,4|4,2|8,0|8,0; 3: 8,4|2,4|4,2|4,2|8,0; inf: 2,2|0,2|0,2|2,0|0,0"
    ),
    "lastfm": _steps_rows(
        "0.01: 4,4|4,4|2,4|4,2|4,0; 0.1: 8,4|2,4|8,2|8,4|2,0; 1: 8,8|4,4|4,4|4,2|8,0;"
        "2: 4,8|2,4|4,4|16,0|16,0; 3: 16,8|2,4|2,4|16,0|16,0; inf: 0,4|0,2|0,2|4,0|0,0"
    ),
}


# ---------------------------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------------------------
def _dataset(name: str) -> str:
    key = str(name).strip().lower()
    if key not in DATASETS:
        raise ValueError(f"unknown LPGNN dataset {name!r}; valid names: {list(DATASETS)}")
    return key


def _eps(value: Any, arg: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{arg} must be a number > 0 or inf, got {value!r}") from None
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{arg} must be > 0 (inf = no perturbation), got {value!r}")
    return v


def _steps(value: Any, arg: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{arg} must be an integer >= 0, got {value!r}")
    return int(value)


def _choice(value: str, valid: Sequence[str], arg: str) -> str:
    key = str(value).strip().lower()
    if key not in valid:
        raise ValueError(f"{arg} must be one of {list(valid)}, got {value!r}")
    return key


def _check_features(method: str, eps_x: float) -> tuple[str, float]:
    return feature_method(method, eps_x)  # the privacy rule (ε_x = inf is raw; no false claims) lives there


# ---------------------------------------------------------------------------------------------------------------
# data, features, labels
# ---------------------------------------------------------------------------------------------------------------
def prepare(dataset_name: str, *, root=None) -> Data:
    """The paper's pipeline (docs/papers/lpgnn.md#data-pipeline): [LastFM: 10 largest classes] → random 50/25/25 split
    over all nodes (seed 12345, identical for every configuration and repeat) → per-feature min-max to [0, 1] with
    constant columns dropped. Raises :class:`dpgnn.data.DatasetUnavailable` when the files are missing."""
    key = _dataset(dataset_name)
    kwargs = {} if root is None else {"root": root}
    data = load_dataset(_LOAD[key], variant="lpgnn", **kwargs)
    data.num_classes = int(data.y.max()) + 1
    return data


def _dense_or_sparse(x: Tensor) -> dict[str, Any]:
    nz = x.nonzero(as_tuple=True)
    if nz[0].numel() <= 0.25 * x.numel():
        return {"kind": "sparse", "rows": nz[0], "cols": nz[1], "vals": x[nz], "offset": 0.0}
    return {"kind": "dense", "x": x}


def draw_features(
    data: Data, method: str, eps_x: float, *, m: int | None = None, generator: torch.Generator | int | None = None
) -> dict[str, Any]:
    """One repeat's server-side features ``x'`` for ``method`` (docs/papers/lpgnn.md#multi-bit-mechanism,
    docs/papers/lpgnn.md#baselines), as sparse parts or a dense matrix.

    Sparse: ``{"kind": "sparse", rows, cols, vals, offset}`` meaning ``x' = offset + S``; dense: ``{"kind":
    "dense", "x"}``. Features must already be in [0, 1] (:func:`prepare`).

    * ``mbm`` -- multi-bit, ``m`` = the paper's rule (``None``) or explicit; ``1bm`` -- multi-bit with ``m = d``;
    * ``lpm`` -- Laplace per coordinate with scale ``d/ε_x`` (L1 sensitivity ``d``);
    * ``agm`` -- analytic Gaussian, L2 sensitivity ``√d``, ``δ = 1e-10``;
    * ``raw`` -- the features themselves (``ε_x = ∞``);
    * ``rnd`` / ``one`` / ``ohd`` -- U[0,1) noise / all ones / one-hot degree clamped at ``d − 1``.
    """
    meth, eps = _check_features(method, eps_x)
    x = check_features(data.x, "data.x (node features)")
    n, d = x.shape
    gen = make_generator(generator)
    if m is not None and meth != "mbm":
        raise ValueError("m applies to the multi-bit mechanism 'mbm' only ('1bm' is m = d)")
    if meth == "raw":
        return _dense_or_sparse(x)
    if meth in ("mbm", "1bm"):
        mech = get_mechanism("multibit", epsilon=eps, m=d if meth == "1bm" else m, num_features=d)
        rows, cols, signs = mech.encode_sparse(x, gen)
        vals = signs * mech.scale(d)
        if mech.m_for(d) * 4 > d:
            dense = torch.full((n, d), 0.5, dtype=torch.float32)
            dense[rows, cols] += vals
            return {"kind": "dense", "x": dense}
        return {"kind": "sparse", "rows": rows, "cols": cols, "vals": vals, "offset": 0.5}
    if meth == "lpm":
        return {"kind": "dense", "x": get_mechanism("laplace", epsilon=eps / d)(x, gen)}
    if meth == "agm":
        mech = get_mechanism("analytic_gaussian", epsilon=eps, delta=AGM_DELTA, sensitivity=math.sqrt(d))
        return {"kind": "dense", "x": mech(x, gen)}
    if meth == "rnd":
        return {"kind": "dense", "x": torch.rand(n, d, generator=gen)}
    if meth == "one":
        empty = torch.zeros(0, dtype=torch.long)
        return {"kind": "sparse", "rows": empty, "cols": empty, "vals": torch.zeros(0), "offset": 1.0}
    deg = torch.bincount(data.edge_index[1], minlength=n).clamp(max=d - 1)  # "ohd"
    return {"kind": "sparse", "rows": torch.arange(n), "cols": deg, "vals": torch.ones(n), "offset": 0.0}


def dense_features(draw: Mapping[str, Any], num_nodes: int, num_features: int) -> Tensor:
    """The ``N × d`` matrix of a :func:`draw_features` result (what the straightforward loop feeds PyG)."""
    if draw["kind"] == "dense":
        return draw["x"].to(torch.float32)
    x = torch.full((num_nodes, num_features), float(draw["offset"]), dtype=torch.float32)
    x[draw["rows"], draw["cols"]] += draw["vals"].to(torch.float32)
    return x


def transition_matrix(eps_y: float, num_classes: int) -> Tensor:
    """RR label transition matrix ``T[i, j] = P(noisy = j | true = i)`` (identity for ε_y = ∞), float32."""
    e = _eps(eps_y, "eps_y")
    if isinstance(num_classes, bool) or int(num_classes) != num_classes or num_classes < 2:
        raise ValueError(f"num_classes must be an integer >= 2, got {num_classes!r}")
    if math.isinf(e):
        return torch.eye(int(num_classes))
    return get_mechanism("rr", epsilon=e, num_classes=int(num_classes)).transition_matrix().float()


def perturb_labels(
    y: Tensor, eps_y: float, num_classes: int, labelled: Tensor, generator: torch.Generator | int | None = None
) -> Tensor:
    """Noisy labels: RR (ε_y) on the ``labelled`` nodes (train ∪ val), ``-1`` elsewhere (test labels never used).

    Labels outside ``[0, num_classes)`` raise ``ValueError``.
    """
    e = _eps(eps_y, "eps_y")
    y = torch.as_tensor(y)
    if y.is_floating_point():
        raise TypeError(f"y must hold integer labels, got dtype {y.dtype}")
    if y.numel() and bool(((y < 0) | (y >= num_classes)).any()):
        raise ValueError(
            f"labels must lie in [0, num_classes) = [0, {num_classes}), got min={int(y.min())}, max={int(y.max())}"
        )
    mask = torch.as_tensor(labelled, dtype=torch.bool)
    out = torch.full_like(y, -1)
    if math.isinf(e):
        out[mask] = y[mask]
    else:
        out[mask] = get_mechanism("rr", epsilon=e, num_classes=num_classes).perturb(y[mask], make_generator(generator))
    return out


def drop_targets(noisy: Tensor, train_idx: Tensor, adj: Tensor | None, steps: int, num_classes: int) -> Tensor:
    """Drop's hard training targets (docs/papers/lpgnn.md#drop-training-and-model-selection):
    ``argmax softmax(Â^{K_y} Y')`` on the training nodes.

    ``noisy`` is ``(N,)`` or ``(N, R)`` with ``-1`` for unlabelled nodes (their rows of ``Y'`` are zero). ``K_y = 0``
    returns the noisy labels. As in the authors' code, a training node without a labelled non-self neighbour
    within ``K_y`` hops gets a uniform row and hence class 0. Returns ``(n_train,)`` or ``(n_train, R)``.
    """
    k = _steps(steps, "K_y")
    if k == 0:
        return noisy[train_idx]
    y1 = F.one_hot(noisy.clamp(min=0), num_classes).float() * (noisy >= 0).unsqueeze(-1)
    prop = torch.softmax(kprop(y1, adj, k), dim=-1)
    return prop[train_idx].argmax(dim=-1)


def label_probabilities(logits: Tensor, T: Tensor | None, adj: Tensor | None, steps: int) -> tuple[Tensor, Tensor]:
    """``(P(y|x), P(ỹ|x))``: softmax, forward correction ``·T`` (if ``T``), then ``softmax(Â^{K_y} ·)`` if K_y > 0."""
    p = torch.softmax(logits, dim=-1)
    q = p @ T if T is not None else p
    if steps:
        q = torch.softmax(kprop(q, adj, steps), dim=-1)
    return p, q


def selection_step(
    best: dict[str, Tensor] | None,
    val_loss: Tensor,
    val_acc: Tensor,
    train_acc: Tensor,
    test_acc: Tensor,
    max_acc: float,
    epoch: int,
) -> dict[str, Tensor]:
    """One epoch of the model-selection rule without clean labels
    (docs/papers/lpgnn.md#drop-training-and-model-selection), vectorised over repeats.

    The first epoch initialises the best state; a later epoch becomes best iff ``val_loss < best_val_loss`` and
    ``best_val_acc < val_acc <= max_acc`` and ``best_train_acc < train_acc <= 1.05·max_acc`` (``max_acc`` = the
    RR keep probability, the best accuracy attainable against noisy labels). Returns the updated state.
    """
    cur = {
        "val_loss": val_loss,
        "val_acc": val_acc,
        "train_acc": train_acc,
        "test_acc": test_acc,
        "epoch": torch.full_like(val_loss, float(epoch)),
    }
    if best is None:
        return cur
    ok = (
        (val_loss < best["val_loss"])
        & (best["val_acc"] < val_acc)
        & (val_acc <= max_acc + 1e-12)
        & (best["train_acc"] < train_acc)
        & (train_acc <= 1.05 * max_acc + 1e-12)
    )
    return {k: torch.where(ok, cur[k], best[k]) for k in cur}


def hparams_for(dataset: str, method: str, eps_x: float, eps_y: float) -> dict[str, float]:
    """The published lr / weight decay / dropout (docs/papers/lpgnn.md#hyper-parameters-and-grids): any finite ε uses
    the ε = 1 row."""
    key = _dataset(dataset)
    meth, ex = _check_features(method, eps_x)
    ey = _eps(eps_y, "eps_y")
    group = meth if meth in REPLACEMENTS else "raw"
    return dict(HPARAMS[(group, math.isfinite(ex) and group == "raw", math.isfinite(ey))][key])


def steps_for(dataset: str, eps_x: float, eps_y: float) -> tuple[int, int]:
    """The published (K_x, K_y) for (ε_x, ε_y) (docs/papers/lpgnn.md#hyper-parameters-and-grids, steps.csv)."""
    key = _dataset(dataset)
    cell = (_eps(eps_x, "eps_x"), _eps(eps_y, "eps_y"))
    if cell not in BEST_STEPS[key]:
        raise ValueError(
            f"no published steps for (eps_x, eps_y) = {cell}; eps_x in {list(EPS_X)}, eps_y in {list(EPS_Y)}"
        )
    return BEST_STEPS[key][cell]


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------
def _masks(data: Data, dev: torch.device) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(getattr(data, f"{s}_mask").nonzero(as_tuple=True)[0].to(dev) for s in ("train", "val", "test"))


def _nll(q: Tensor, target: Tensor) -> Tensor:
    """Mean over nodes of −log(q[target] + 1e-20); ``q`` (n, R, c), ``target`` (n, R) → (R,)."""
    return -torch.log(q.gather(-1, target.unsqueeze(-1)).squeeze(-1) + 1e-20).mean(0)


def train_batched(
    data: Data,
    features: BatchedFeatures,
    noisy: Tensor,
    *,
    backbone: str,
    seeds: Sequence[int],
    lr: float,
    weight_decay: float,
    dropout: float,
    k_y: int,
    label_method: str,
    eps_y: float,
    epochs: int = 500,
    device: str = "auto",
    kprop_adj: Tensor | None = None,
    threads: int | None = 1,
) -> dict[str, Any]:
    """Train ``R = len(seeds)`` runs at once (batched weights, one Adam) with Drop and noisy model selection.

    ``noisy`` is ``(N, R)`` (``-1`` = unlabelled). Each epoch: one full-batch Adam step on the Drop loss of the
    training nodes (summed over repeats, so each repeat gets its own gradient); the weights after each step are
    evaluated without dropout (noisy validation loss/accuracy, noisy training accuracy, clean test accuracy) and
    fed to the selection rule of :func:`selection_step` -- all on the device, no host synchronisation inside the
    loop. The first layer (KProp + aggregation + SELU) comes before any dropout, so the evaluation of the weights
    after epoch ``e`` reuses the first layer of epoch ``e + 1``'s training forward (same numbers, one KProp less).

    ``threads``: torch intra-op threads on the CPU during training (restored afterwards; ``None`` = leave as is).
    The sparse products here are small and latency-bound: with several threads on a shared 2-core machine they
    ran 10-20× slower than with one (measured), so the default is 1.
    """
    dev = resolve_device(device)
    if threads is not None and dev.type == "cpu":
        before = torch.get_num_threads()
        torch.set_num_threads(int(threads))
        try:
            return train_batched(
                data,
                features,
                noisy,
                backbone=backbone,
                seeds=seeds,
                lr=lr,
                weight_decay=weight_decay,
                dropout=dropout,
                k_y=k_y,
                label_method=label_method,
                eps_y=eps_y,
                epochs=epochs,
                device=dev,
                kprop_adj=kprop_adj,
                threads=None,
            )
        finally:
            torch.set_num_threads(before)
    lm = _choice(label_method, LABEL_METHODS, "label_method")
    data, _ = with_clean_edges(data, owner="LPGNN")  # repeated pairs merged, as in run_cell
    n = data.num_nodes
    c = int(data.num_classes)
    train_idx, val_idx, test_idx = _masks(data, dev)
    T = transition_matrix(eps_y, c).to(dev)
    max_acc = float(T[0, 0])
    fc = None if lm == "ce" else T
    ky = _steps(k_y, "K_y") if lm == "drop" else 0
    adj = kprop_adj if kprop_adj is not None else normalized_adjacency(data.edge_index, n)
    adj = adj.to(dev)
    noisy = noisy.to(dev)
    targets = drop_targets(noisy, train_idx, adj, ky, c)
    y_train, y_val = noisy[train_idx], noisy[val_idx]
    y_test = data.y.to(dev)[test_idx].unsqueeze(1)
    model = BatchedBackbone.initialised(backbone, data.num_features, c, seeds, dropout=dropout).to(dev)
    ops = {k: v.to(dev) for k, v in BatchedBackbone.graph_ops(backbone, data.edge_index, n).items()}
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    best = None

    def evaluate(x1: Tensor, epoch: int) -> None:
        nonlocal best
        p, pc = label_probabilities(model.head(x1, ops, training=False), fc, None, 0)
        pred = p.argmax(-1)
        best = selection_step(
            best,
            _nll(pc[val_idx], y_val),
            (pred[val_idx] == y_val).float().mean(0),
            (pred[train_idx] == y_train).float().mean(0),
            (pred[test_idx] == y_test).float().mean(0),
            max_acc,
            epoch,
        )

    def loss(epoch: int) -> Tensor:
        x1 = model.hidden(features, ops)  # the weights after epoch - 1: shared by their evaluation and this step
        if epoch > 1:
            with torch.no_grad():
                evaluate(x1.detach(), epoch - 1)
        _, q = label_probabilities(model.head(x1, ops, training=True), fc, adj, ky)
        return _nll(q[train_idx], targets).sum()

    t0 = time.perf_counter()
    update = GradientStep(opt, loss)

    def step(epoch: int) -> None:  # the loss stays on the device: no host sync per epoch
        update(epoch)

    fit(model, step, epochs=epochs, monitor=None, restore_best=False)
    model.eval()
    with torch.no_grad():
        evaluate(model.hidden(features, ops), epochs)
    out = {k: v.cpu().tolist() for k, v in best.items()}
    out["train_time_s"] = time.perf_counter() - t0
    out["max_acc"] = max_acc
    return out


def train_reference(
    data: Data,
    x: Tensor,
    noisy: Tensor,
    *,
    backbone: str,
    seed: int,
    lr: float,
    weight_decay: float,
    dropout: float,
    k_x: int,
    k_y: int,
    label_method: str,
    eps_y: float,
    epochs: int = 500,
    device: str = "auto",
) -> dict[str, Any]:
    """The straightforward per-run loop: KProp module (cached) + PyG backbone, one run, Python-side selection, on the
    plain engine :func:`dpgnn.train.fit` (each epoch: one Adam step, then the noisy evaluation and the selection rule).

    Same model, loss and selection rule as :func:`train_batched` for a single repeat (``x`` dense ``N × d``,
    ``noisy`` ``(N,)``); used as the speed baseline, as an independent check of the batched trainer and by
    :func:`dpgnn.fit`. Returns the selected epoch's metrics, ``max_acc`` and ``model``: the backbone with the
    selected epoch's weights (in eval mode; its input is ``KProp(k_x)`` of the features).
    """
    dev = resolve_device(device)
    lm = _choice(label_method, LABEL_METHODS, "label_method")
    data, _ = with_clean_edges(data, owner="LPGNN")  # repeated pairs merged, as in run_cell
    c = int(data.num_classes)
    train_idx, val_idx, test_idx = _masks(data, dev)
    T = transition_matrix(eps_y, c).to(dev)
    max_acc = float(T[0, 0])
    fc = None if lm == "ce" else T
    ky = k_y if lm == "drop" else 0
    ei = data.edge_index.to(dev)
    adj = normalized_adjacency(data.edge_index, data.num_nodes).to(dev)
    noisy = noisy.to(dev)
    targets = drop_targets(noisy, train_idx, adj, ky, c)
    torch.manual_seed(int(seed))
    model = Backbone(backbone, data.num_features, c, dropout=dropout).to(dev)
    prop = KProp(k_x, cached=True)
    xt = prop(x.to(dev, torch.float32), ei)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    y_test = data.y.to(dev)[test_idx]
    best: dict[str, float] | None = None

    def loss(epoch: int) -> Tensor:
        _, q = label_probabilities(model(xt, ei), fc, adj, ky)
        return -torch.log(q[train_idx].gather(1, targets.unsqueeze(1)) + 1e-20).mean()

    step = GradientStep(opt, loss)

    def evaluate(epoch: int) -> dict[str, float]:
        nonlocal best
        model.eval()
        p, pc = label_probabilities(model(xt, ei), fc, None, 0)
        cur = {
            "val_loss": (-torch.log(pc[val_idx].gather(1, noisy[val_idx].unsqueeze(1)) + 1e-20)).mean().item(),
            "val_acc": accuracy_tensor(p[val_idx], noisy[val_idx]).item(),
            "train_acc": accuracy_tensor(p[train_idx], noisy[train_idx]).item(),
            "test_acc": accuracy_tensor(p[test_idx], y_test).item(),
            "epoch": float(epoch),
        }
        # the selection rule of :func:`selection_step` (not a single monitored value, so fit does not select)
        if best is None or (
            cur["val_loss"] < best["val_loss"]
            and best["val_acc"] < cur["val_acc"] <= max_acc + 1e-12
            and best["train_acc"] < cur["train_acc"] <= 1.05 * max_acc + 1e-12
        ):
            best = cur
            selected.clear()
            selected.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return cur

    selected: list[dict[str, Tensor]] = []  # the weights of the selected epoch (the model returned)
    fit(model, step, evaluate, epochs=epochs, monitor=None, restore_best=False)
    model.load_state_dict(selected[0])
    model.eval()
    return {**best, "max_acc": max_acc, "model": model}


# ---------------------------------------------------------------------------------------------------------------
# one grid cell
# ---------------------------------------------------------------------------------------------------------------
def _feature_seed(seed: int, dataset: str, method: str, eps_x: float, m: int | None, run: int) -> int:
    return stable_seed(PAPER, "features", int(seed), dataset, method, eps_x, m, int(run))


def _label_seed(seed: int, dataset: str, eps_y: float, run: int) -> int:
    return stable_seed(PAPER, "labels", int(seed), dataset, eps_y, int(run))


def _chunk_size(draws: list[dict[str, Any]], n: int, d: int, backbone: str, e: int, budget: float = 1.5e8) -> int:
    per = 0.0
    if any(dr["kind"] == "dense" for dr in draws):
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
    # the server's (public) graph as a simple graph: a repeated pair would weigh twice in KProp and the backbone;
    # directions as given (dpgnn.data.transforms.clean_edges; the rows' edge_input says what was merged)
    data, cleaning = with_clean_edges(data, owner="LPGNN")
    n, d = data.x.shape
    ledger = privacy_ledger(meth, ex, ey, d, m)
    adj = normalized_adjacency(data.edge_index, n)
    labelled = data.train_mask | data.val_mask
    draws, noisy, seeds = [], [], []
    t0 = time.perf_counter()
    for run in range(int(repeats)):
        draws.append(draw_features(data, meth, ex, m=m, generator=_feature_seed(seed, key, meth, ex, m, run)))
        noisy.append(perturb_labels(data.y, ey, data.num_classes, labelled, _label_seed(seed, key, ey, run)))
        seeds.append(stable_seed(PAPER, "model", int(seed), key, meth, ex, ey, kx, ky, bb, lm, m, int(run)))
    t_perturb = time.perf_counter() - t0
    chunk = _chunk_size(draws, n, d, bb, data.edge_index.size(1) + n)
    results: dict[str, list] = {}
    dev = resolve_device(device)
    for start in range(0, len(draws), chunk):
        part = draws[start : start + chunk]
        if meth in ("raw", "one", "ohd") and part[0]["kind"] == "sparse":  # identical in every repeat
            dr = part[0]
            feats = BatchedFeatures.shared(
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
        elif any(dr["kind"] == "dense" for dr in part):
            feats = BatchedFeatures(
                num_nodes=n,
                num_features=d,
                repeats=len(part),
                adj=adj.to(dev),
                steps=kx,
                dense=torch.stack([dense_features(dr, n, d) for dr in part]).to(dev),
            )
        else:
            feats = BatchedFeatures.from_sparse_parts(
                [dr["rows"].to(dev) for dr in part],
                [dr["cols"].to(dev) for dr in part],
                [dr["vals"].to(dev) for dr in part],
                [dr["offset"] for dr in part],
                num_nodes=n,
                num_features=d,
                adj=adj.to(dev),
                steps=kx,
            )
        res = train_batched(
            data,
            feats,
            torch.stack(noisy[start : start + chunk], dim=1),
            backbone=bb,
            seeds=seeds[start : start + chunk],
            lr=hp["lr"],
            weight_decay=hp["weight_decay"],
            dropout=hp["dropout"],
            k_y=ky,
            label_method=lm,
            eps_y=ey,
            epochs=epochs,
            device=device,
            kprop_adj=adj,
            threads=threads,
        )
        for k, v in res.items():
            results.setdefault(k, []).extend(v if isinstance(v, list) else [v] * len(part))
    config = {
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
    rows = []
    for run in range(int(repeats)):
        rows.append(
            {
                "paper": PAPER,
                "dataset": key,
                "method": meth,
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


# ---------------------------------------------------------------------------------------------------------------
# The method contract (:mod:`dpgnn.methods`)
# ---------------------------------------------------------------------------------------------------------------
#: feature mechanisms that perturb the private features (a finite ε_x)
MECHANISMS = ("mbm", "1bm", "lpm", "agm")


def level_of(method: str, eps_x: float, eps_y: float) -> str:
    """The privacy level of a run (:data:`dpgnn.methods.LEVELS`): ``feature`` when the features are perturbed
    (finite ε_x), ``label`` when the labels are (finite ε_y), ``feature+label`` for both, ``none`` for neither
    (RAW features or a feature replacement, with clean labels)."""
    meth, ex = _check_features(method, eps_x)
    ey = _eps(eps_y, "eps_y")
    feature = meth in MECHANISMS and math.isfinite(ex)
    label = math.isfinite(ey)
    return {(True, True): "feature+label", (True, False): "feature", (False, True): "label", (False, False): "none"}[
        (feature, label)
    ]


def _contract_run(method: str, level: str):
    """``run(data, config, *, seed, device) -> RunResult`` of one feature method at one level.

    ``config``: ``dataset`` (the name: it seeds the draws and picks the published steps and hyper-parameters),
    ``eps_x`` (required for a mechanism; ∞ otherwise), ``eps_y`` (required at the ``label`` levels; ∞ otherwise),
    and any keyword of :func:`run_cell`: ``k_x``/``k_y`` (KProp steps; default the published ones), ``label_method``
    (``ce``, ``fc`` or ``drop`` = forward correction + K_y label propagation, the default), ``backbone``,
    ``repeats`` (runs trained at once by :func:`train_batched`), ``epochs``, ``m``, ``hparams``, ``threads``.
    A config whose ε's give another level than the registered one is refused (the key states what is private).
    ``metrics``: means over the repeats in [0, 1] (``test``: clean test accuracy at the selected epoch; ``val`` /
    ``train``: noisy accuracies); ``extra["rows"]``: :func:`run_cell`'s rows, one per repeat.
    """
    label = level in ("label", "feature+label")

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        cfg = dict(config)
        if "dataset" not in cfg:
            raise ValueError("an LPGNN config needs 'dataset' (the dataset's name)")
        for key, needed in (("eps_x", method in MECHANISMS), ("eps_y", label)):
            if key not in cfg:
                if needed:
                    raise ValueError(f"LPGNN method {method!r} at level {level!r} needs {key!r} in its config")
                cfg[key] = INF
        got = level_of(method, cfg["eps_x"], cfg["eps_y"])
        if got != level:
            meth = _check_features(method, cfg["eps_x"])[0]
            raise ValueError(
                f"eps_x={cfg['eps_x']}, eps_y={cfg['eps_y']} make an LPGNN {method!r} run {got!r}, not "
                f"{level!r}: use the method registered as ({meth!r}, {got!r})"
            )
        t0 = time.perf_counter()
        rows = run_cell(data, cfg.pop("dataset"), method=method, seed=seed, device=device, **cfg)
        metrics = {
            "train": float(np.mean([r["train_acc_noisy"] for r in rows])) / 100.0,
            "val": float(np.mean([r["val_acc_noisy"] for r in rows])) / 100.0,
            "test": float(np.mean([r["value"] for r in rows])) / 100.0,
        }
        ledger = privacy_ledger(method, cfg["eps_x"], cfg["eps_y"], data.num_features, cfg.get("m"))
        if "edge_input" in rows[0]:
            ledger["edge_input"] = rows[0]["edge_input"]
        return RunResult(metrics=metrics, ledger=ledger, seconds=time.perf_counter() - t0, extra={"rows": rows})

    run.__qualname__ = run.__name__ = f"run_{method}_{level.replace('+', '_')}"
    return run


for _method in FEATURE_METHODS + REPLACEMENTS:
    for _level in ("feature", "feature+label") if _method in MECHANISMS else ("none", "label"):
        register(
            PAPER,
            _method,
            _level,
            prepare=prepare,
            description=f"features: {_method}{' (replacement)' if _method in REPLACEMENTS else ''}; "
            f"labels: {'RR + Drop/FC/CE' if 'label' in _level else 'clean'}; KProp on the features "
            "(Sec. 4)",
        )(_contract_run(_method, _level))
del _method, _level
