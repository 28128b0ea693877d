"""LPGCN's data and perturbation: the prepared features, their ε-LDP estimates and ledger, the first-layer
estimation error (Fig. 2, 3) and the analytic variances (Fig. 1, 4, 5; Table 3).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from dpgnn.data import load_dataset, minmax_normalize
from dpgnn.data.transforms import with_clean_edges
from dpgnn.methods.lpgcn.common import (
    _LOAD,
    EPSILONS_MAE,
    GLOBAL_SEED,
    MECHANISMS,
    PAPER,
    _dataset_key,
    _epsilon,
    _label,
    _method_key,
)
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, non_private, statement
from dpgnn.utils import (
    check_features,
    config_hash,
    make_generator,
    stable_seed,
    versions,
)


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
