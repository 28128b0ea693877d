"""LPGNN's data pipeline and the private inputs the server receives: features (multi-bit and the other
mechanisms or replacements) and randomised-response labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data import load_dataset
from dpgnn.methods.lpgnn.common import _LOAD, _check_features, _dataset, _eps
from dpgnn.privacy import get_mechanism
from dpgnn.privacy.lpgnn import AGM_DELTA
from dpgnn.utils import check_features, make_generator


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
