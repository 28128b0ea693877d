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
  :func:`run_node_classification`, :func:`run_link_prediction`, :func:`summarize_runs`.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.nn import VGAE
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from dpgnn.data import load_dataset, minmax_normalize, seed_from_name, split_edges
from dpgnn.nn import GCN, VGAEEncoder
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, non_private, statement
from dpgnn.train import train_link_predictor, train_node_classifier
from dpgnn.utils import check_features, config_hash, make_generator, seed_everything, stable_seed, versions

__all__ = [
    "PAPER", "DATASETS", "METHODS", "MECHANISMS", "HPARAMS", "HIDDEN_CODE", "HIDDEN_PAPER", "VGAE_HIDDEN", "VGAE_OUT",
    "EPSILONS_MAE", "EPSILONS_TABLE2", "NUM_RUNS", "GLOBAL_SEED", "TABLE3_MEAN_FEATURE", "TABLE1_NUM_FEATURES",
    "prepare", "perturb_features", "privacy_ledger", "gcn_propagation_matrix", "gc_mae", "mae_vs_epsilon",
    "mae_vs_degree", "variance_table", "mean_feature", "split_for_link_prediction", "run_node_classification",
    "run_link_prediction", "summarize_runs",
]

PAPER = "lpgcn"
DATASETS = ("citeseer", "cora", "elliptic", "flickr", "twitch")
#: method name used in the paper -> mechanism name in :mod:`dpgnn.privacy` (RAW: no mechanism).
MECHANISMS: dict[str, str | None] = {"lm": "laplace", "pm": "piecewise", "pgc": "pgc", "raw": None}
METHODS = ("lm", "pm", "pgc", "raw")
EPSILONS_MAE = (1.0, 3.0, 5.0, 7.0, 9.0)  # Fig. 2
EPSILONS_TABLE2 = (1.0, 5.0, 9.0)  # Table 2
NUM_RUNS = 10  # Table 2: mean ± std (ddof 0) over 10 runs
GLOBAL_SEED = 12345  # the authors' global seed (docs/papers/cross-paper.md#conventions-shared-by-the-sajadmanesh-repositories)

#: Best hyper-parameters, paper Table 4 (Appendix E; grid-searched on RAW, reused for every mechanism), docs/papers/lpgcn.md#models-and-training.
HPARAMS: dict[str, dict[str, dict[str, float]]] = {
    "citeseer": {"gcn": {"lr": 0.01, "weight_decay": 0.1, "dropout": 0.5},
                 "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0}},
    "cora": {"gcn": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.5},
             "vgae": {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0}},
    "elliptic": {"gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
                 "vgae": {"lr": 0.01, "weight_decay": 1e-4, "dropout": 0.0}},
    "flickr": {"gcn": {"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
               "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0}},
    "twitch": {"gcn": {"lr": 0.001, "weight_decay": 1e-4, "dropout": 0.0},
               "vgae": {"lr": 0.01, "weight_decay": 1e-3, "dropout": 0.0}},
}
#: Node-classification hidden width. [CODE≠PAPER] (docs/papers/lpgcn.md#models-and-training): the authors' code and experiment script use 16
#: (output = number of classes); the paper text says hidden 32 / output 16. Default: the code's 16.
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
_LOAD = {"cora": ("cora", "lpgcn"), "citeseer": ("citeseer", "lpgcn"), "twitch": ("twitch", "lpgcn"),
         "elliptic": ("elliptic", "lpgcn"), "flickr": ("flickr", None)}



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
        raise ValueError(f"no Table-4 hyper-parameters for dataset {key!r} (known: {list(DATASETS)}); pass "
                         f"hparams with {sorted(missing)}")
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
            raise ValueError(f"method 'raw' adds no noise, so a finite epsilon={epsilon} would be a false privacy "
                             "claim; pass epsilon=None (or math.inf) for RAW")
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


def perturb_features(x: Tensor, method: str, epsilon: float | None, generator: torch.Generator | int | None
                     ) -> Tensor:
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
        return {"level": "none", "mechanism": "none", "epsilon": math.inf,
                "epsilon_node_total": math.inf, "delta": 0.0, "sensitivity": None, "accountant": "none",
                **non_private()}
    return {
        "level": "feature-ldp",
        # the input range [α, β] = [0, 1] comes from per-column min-max over all nodes' raw features, computed by
        # whoever prepares the data, not by each user: a preprocessing statistic outside the LDP guarantee
        **statement(AS_PUBLISHED, "one node's feature vector (LDP: any two vectors, per-feature budget)",
                    accounted=f"each of the {int(num_features)} features perturbed once by {MECHANISMS[key]} with "
                              "epsilon (basic composition for the node total)",
                    not_covered=[PREPROCESSING]),
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
    return torch.sparse_coo_tensor(torch.stack([ei[1], ei[0]]), w, (num_nodes, num_nodes),
                                   check_invariants=True).coalesce()


def gc_mae(data: Data, method: str, epsilon: float | None, seed: int | torch.Generator) -> Tensor:
    """Per-node MAE of the perturbed first-layer graph convolution (paper eq. 8; docs/papers/lpgcn.md#experiments-and-reported-numbers).

    MAE(v) = (1/m) Σ_i |GC(v)_i − ĜC(v)_i| / Δ_i with GC = Â X and ĜC = Â Y* (identity weight), Δ_i the range of
    column i of ``data.x`` (columns with Δ_i = 0 contribute 0). One perturbation drawn from ``seed``.
    """
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
    return {"paper": PAPER, "artifact": artifact, "dataset": dataset, "method": method,
            **privacy_ledger(method, None if method == "raw" else eps, num_features), "seed": seed,
            "config_hash": config_hash({"artifact": artifact, "dataset": dataset, "method": method, "epsilon": eps,
                                        "seed": seed}),
            "versions": versions()}


def mae_vs_epsilon(data: Data, dataset_name: str, epsilons: Iterable[float] = EPSILONS_MAE,
                   methods: Sequence[str] = ("lm", "pm", "pgc"), seed: int = GLOBAL_SEED) -> pd.DataFrame:
    """Fig. 2: node-averaged MAE per (method, ε); ``spread`` = std over nodes (ddof 0). One draw per cell."""
    key = _label(dataset_name)
    rows = []
    for method in map(_method_key, methods):
        # RAW has no ε: one row with epsilon = inf (its MAE is 0 by construction)
        for eps in ([None] if method == "raw" else epsilons):
            e = _epsilon(method, eps)
            mae = gc_mae(data, method, eps if eps is None else e, _mae_seed(seed, key, method, e))
            row = _base_row(key, method, e, data.num_features, seed, "fig2")
            row.update(metric="mae", value=float(mae.mean()), spread=float(mae.std(unbiased=False)),
                       num_nodes=int(mae.numel()))
            rows.append(row)
    return pd.DataFrame(rows)


def mae_vs_degree(data: Data, dataset_name: str, epsilon: float = 1.0,
                  methods: Sequence[str] = ("lm", "pm", "pgc"), seed: int = GLOBAL_SEED,
                  quantile: float = 0.99) -> pd.DataFrame:
    """Fig. 3: MAE averaged over the nodes of each degree d ∈ [1, d_max], d_max = ``quantile`` of the degrees.

    Degree = out-degree in ``edge_index`` without self-loops. The perturbation of (method, ε) is the same draw as
    in :func:`mae_vs_epsilon` with the same seed. Columns: dataset, method, epsilon, degree, value, spread, count.
    """
    key = _label(dataset_name)
    if not 0 < quantile <= 1:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
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
            rows.append({**base, "degree": int(degree), "value": float(g["value"]), "spread": float(g["spread"]),
                         "count": int(g["count"])})
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


def variance_table(epsilons: Iterable[float], x: str | float | Sequence[float] | Mapping[str, float] = "range",
                   methods: Sequence[str] = ("lm", "pm", "pgc"), grid: int = 1001) -> pd.DataFrame:
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


def _result(task: str, key: str, method: str, eps: float, run: int, seed: int, run_seed: int, num_features: int,
            config: dict[str, Any], metric: str, value: float, extra: dict[str, Any]) -> dict[str, Any]:
    row = {"paper": PAPER, "artifact": "table2", "task": task, "dataset": key, "method": method,
           **privacy_ledger(method, None if method == "raw" else eps, num_features),
           "run": int(run), "seed": int(seed), "run_seed": run_seed, "metric": metric, "value": float(value)}
    row.update(extra)
    row.update(config)
    row["config_hash"] = config_hash({"task": task, "dataset": key, "method": method, "epsilon": eps, **config})
    row["versions"] = versions()
    return row


def run_node_classification(data: Data, dataset_name: str, method: str, epsilon: float | None, *, run: int,
                            seed: int = GLOBAL_SEED, device: str = "auto", max_epochs: int = 500,
                            min_epochs: int = 10, patience: int = 20, hidden: int = HIDDEN_CODE,
                            hparams: Mapping[str, float] | None = None, restore_best: bool = False,
                            progress: bool = False) -> dict[str, Any]:
    """One Table-2 node-classification run: fresh perturbation of all nodes' features + fresh 2-layer GCN.

    ``data`` comes from :func:`prepare`. The run's seeds derive from (seed, dataset, method, ε, run), so a cell
    reproduces exactly and runs differ. Hyper-parameters default to :data:`HPARAMS` (Table 4); ``hidden`` to the
    authors' code (16; the paper text says 32 = :data:`HIDDEN_PAPER`). Test micro-F1 at stopping time unless
    ``restore_best``. Returns a flat dict (metric ``micro_f1`` in [0, 1], ledger, timings, config).
    """
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)
    hp = _hparams(key, "gcn", hparams)
    run_seed = _run_seed(seed, key, m, eps, run, "node")
    t0 = time.perf_counter()
    x_hat = perturb_features(data.x, m, None if m == "raw" else eps,
                             make_generator(stable_seed(run_seed, "perturb")))
    t_perturb = time.perf_counter() - t0
    seed_everything(stable_seed(run_seed, "model"))
    num_classes = int(data.y[data.y >= 0].max()) + 1
    model = GCN(data.num_features, hidden, num_classes, dropout=hp["dropout"], cached=True)
    res = train_node_classifier(model, _with_features(data, x_hat), lr=hp["lr"], weight_decay=hp["weight_decay"],
                                max_epochs=max_epochs, min_epochs=min_epochs, patience=patience, device=device,
                                restore_best=restore_best, progress=progress)
    config = {"model": "gcn", "hidden": hidden, "lr": hp["lr"], "weight_decay": hp["weight_decay"],
              "dropout": hp["dropout"], "max_epochs": max_epochs, "min_epochs": min_epochs, "patience": patience,
              "restore_best": restore_best}
    extra = {"val_micro_f1": res["val_f1"], "train_micro_f1": res["train_f1"], "epochs": res["epochs"],
             "stop_epoch": res["stop_epoch"], "best_epoch": res["best_epoch"], "perturb_time_s": t_perturb,
             "train_time_s": res["train_time_s"], "duration_s": time.perf_counter() - t0, "device": res["device"]}
    return _result("node_classification", key, m, eps, run, seed, run_seed, data.num_features, config,
                   "micro_f1", res["test_f1"], extra)


def split_for_link_prediction(data: Data, dataset_name: str) -> Data:
    """The fixed 85/5/10 edge split of docs/papers/lpgcn.md#data-and-splits (torch.Generator seed = Σord(dataset name)), same for all runs."""
    return split_edges(data, val=0.05, test=0.10, seed=seed_from_name(_label(dataset_name)))


def run_link_prediction(data: Data, dataset_name: str, method: str, epsilon: float | None, *, run: int,
                        seed: int = GLOBAL_SEED, device: str = "auto", max_epochs: int = 500,
                        min_epochs: int = 100, check_every: int = 10, patience: int = 10,
                        hidden: int = VGAE_HIDDEN, out: int = VGAE_OUT, hparams: Mapping[str, float] | None = None,
                        split: Data | None = None, progress: bool = False) -> dict[str, Any]:
    """One Table-2 link-prediction run: fresh perturbation of all nodes' features + fresh VGAE; metric test AUC.

    ``split`` is :func:`split_for_link_prediction` of ``data`` (computed when omitted; pass it to reuse it across
    runs -- it is fixed across runs, only the perturbation and the model are redrawn).
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
    x_hat = perturb_features(data.x, m, None if m == "raw" else eps,
                             make_generator(stable_seed(run_seed, "perturb")))
    t_perturb = time.perf_counter() - t0
    seed_everything(stable_seed(run_seed, "model"))
    model = VGAE(VGAEEncoder(data.num_features, hidden, out, dropout=hp["dropout"], cached=True))
    res = train_link_predictor(model, _with_features(split, x_hat), lr=hp["lr"], weight_decay=hp["weight_decay"],
                               max_epochs=max_epochs, min_epochs=min_epochs, check_every=check_every,
                               patience=patience, device=device, seed=stable_seed(run_seed, "negatives"),
                               progress=progress)
    config = {"model": "vgae", "hidden": hidden, "out": out, "lr": hp["lr"], "weight_decay": hp["weight_decay"],
              "dropout": hp["dropout"], "max_epochs": max_epochs, "min_epochs": min_epochs,
              "check_every": check_every, "patience": patience, "split_seed": seed_from_name(key)}
    extra = {"test_ap": res["test_ap"], "val_auc": res["val_auc"], "epochs": res["epochs"],
             "stop_epoch": res["stop_epoch"], "best_epoch": res["best_epoch"], "perturb_time_s": t_perturb,
             "train_time_s": res["train_time_s"], "duration_s": time.perf_counter() - t0, "device": res["device"]}
    return _result("link_prediction", key, m, eps, run, seed, run_seed, data.num_features, config, "auc",
                   res["test_auc"], extra)


def summarize_runs(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Table-2 style summary: mean and population std (ddof 0, as the paper) over runs, in %, per cell."""
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    keys = [k for k in ("task", "dataset", "method", "epsilon", "metric") if k in df.columns]
    g = df.groupby(keys, dropna=False)["value"]
    out = g.agg(mean=lambda s: 100 * s.mean(), std=lambda s: 100 * s.std(ddof=0), runs="size").reset_index()
    return out
