"""Each method's hyper-parameter search space: a small grid over fields of its typed config
(:mod:`dpgnn.api.configs`), with where the values come from.

Both tunings use the same finite grid: ``as_published`` tries every point; ``private`` draws points uniformly at
random (so the private search's worst-case trial is the worst point of this grid, which the accountant takes).
Fields not searched keep the config's documented defaults (or a profile's fixed overrides, e.g. fewer epochs).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

__all__ = ["SearchSpace", "SPACES", "space_of"]


@dataclass(frozen=True)
class SearchSpace:
    """A grid over config fields of one method.

    Attributes:
        method: the front-door name.
        axes: ``(field, values)`` pairs; the grid is their Cartesian product.
        source: where the values come from (the paper's grid, or ours where the paper gives none).
    """

    method: str
    axes: tuple[tuple[str, tuple[Any, ...]], ...]
    source: str

    def configs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Every grid point (the first ``limit`` of them, in product order, when given)."""
        names = [a for a, _ in self.axes]
        points = [dict(zip(names, vals)) for vals in itertools.product(*(v for _, v in self.axes))]
        return points[:limit] if limit else points

    def sample(self, rng: np.random.Generator, limit: int | None = None) -> dict[str, Any]:
        """One grid point drawn uniformly at random."""
        points = self.configs(limit)
        return dict(points[int(rng.integers(len(points)))])

    def check(self, config_cls: type) -> None:
        """Every axis is a field of ``config_cls`` (one line naming the bad one)."""
        valid = {f.name for f in fields(config_cls)}
        for name, values in self.axes:
            if name not in valid or not values:
                raise ValueError(f"{self.method}: search axis {name!r} is not a field of {config_cls.__name__}")


_LR = "lr ∈ {0.01, 0.05}: ours, around the config's default"
SPACES: dict[str, SearchSpace] = {
    s.method: s
    for s in (
        SearchSpace(
            "progap",
            (("depth", (1, 2, 3)), ("lr", (0.01, 0.05))),
            "depth: ProGAP §5.3's K grid {1..5}, cut at 3; " + _LR,
        ),
        SearchSpace(
            "gap",
            (("hops", (1, 2, 3)), ("lr", (0.01, 0.05))),
            "hops: GAP's H grid as run in ProGAP §5.2, cut at 3; " + _LR,
        ),
        SearchSpace(
            "dp-gnn",
            (("max_degree", (5, 10)), ("lr", (0.01, 0.05))),
            "max_degree: ours around the config's default 10; " + _LR,
        ),
        SearchSpace(
            "dp-mlp", (("base_layers", (1, 2)), ("lr", (0.01, 0.05))), "base_layers: ProGAP §5.3 MLP depth; " + _LR
        ),
        SearchSpace(
            "edgerand",
            (("depth", (1, 2)), ("lr", (0.01, 0.05))),
            "depth: GraphSAGE layers as run in ProGAP §5.2; " + _LR,
        ),
        SearchSpace(
            "mlp", (("base_layers", (1, 2)), ("lr", (0.01, 0.05))), "base_layers: ProGAP §5.3 MLP depth; " + _LR
        ),
        SearchSpace(
            "graphsage",
            (("depth", (1, 2)), ("lr", (0.01, 0.05))),
            "depth: GraphSAGE layers as run in ProGAP §5.2; " + _LR,
        ),
        SearchSpace(
            "drw",
            (("num_layers", (1, 2)), ("lr", (0.05, 0.1))),
            "num_layers: DRW §5's 1- and 2-layer GCNs; lr: DRW Table 4's 0.1 and half of it",
        ),
        SearchSpace(
            "fdp",
            (("num_layers", (1, 2)), ("lr", (0.05, 0.1))),
            "num_layers: DRW §5's 1- and 2-layer GCNs; lr: DRW Table 4's 0.1 and half of it",
        ),
        SearchSpace("mbm", (("k_x", (2, 8, 16)),), "k_x: LPGNN §4.2's KProp grid {0, 2, 4, 8, 16}, a subset"),
        SearchSpace("rr", (("k_y", (2, 4, 8)),), "k_y: LPGNN §5.1's label-propagation grid {0, 2, 4, 8, 16}, a subset"),
        SearchSpace(
            "lm",
            (("dropout", (0.0, 0.5)), ("weight_decay", (0.001, 0.01))),
            "dropout, weight_decay: LPGCN Table 4's per-dataset values",
        ),
        SearchSpace(
            "pm",
            (("dropout", (0.0, 0.5)), ("weight_decay", (0.001, 0.01))),
            "dropout, weight_decay: LPGCN Table 4's per-dataset values",
        ),
        SearchSpace(
            "pgc",
            (("dropout", (0.0, 0.5)), ("weight_decay", (0.001, 0.01))),
            "dropout, weight_decay: LPGCN Table 4's per-dataset values",
        ),
    )
}


def space_of(method: str) -> SearchSpace:
    """The search space of ``method``; an unknown name lists the valid ones."""
    if method not in SPACES:
        raise ValueError(f"no search space for method {method!r}; valid: {', '.join(SPACES)}")
    return SPACES[method]
