"""The privacy units of the benchmark: what one neighbouring change is, which methods protect it, and what a
trial's selection score may read without spending budget.

Each :class:`Unit` names the :func:`dpgnn.fit` level it runs at, its private methods (every front door registered
at that level for that threat model; ``excluded`` lists any registered one that is not run, with the reason), the
non-private reference and the trivially private MLP where it applies, its ε grid, and its selection score:

- ``edge``: one undirected edge. Features and labels are public, so a trial's validation accuracy -- of a model
  whose only use of the graph is through the trial's released, accounted outputs (noisy aggregates, a randomized
  graph) -- is post-processing: the score is free. The MLP never reads an edge: 0-edge-DP.
- ``node``: one node with its edges, features and label. Validation labels are private: the score is the number
  of correct validation predictions plus Gaussian noise, sensitivity 1 (ProGAP, GAP, DP-MLP: a prediction reads
  the released aggregates and the node's own row) or ``D + 1`` (DP-GNN: a prediction reads the raw features of up
  to ``D`` sampled neighbours), with its own share of the trial's budget.
- ``node-data``: one node's features and label; the edges are public (DRW's setting). The score is the noisy
  count of correct validation predictions with sensitivity ``max_v |N_L[v] ∩ val|`` (``L`` = layers), a
  function of the public graph and split.
- ``ldp-features``, ``ldp-labels``, ``ldp-both``: local DP of each node's feature vector, label or both. Every
  node perturbs once; every trial of a search reads the same perturbed data (the perturbation is seeded by the
  repeat's seed only, never by a configuration), and validation uses public labels (features unit) or the
  perturbed ones (units with labels): the whole search is post-processing of one release. ε is per node (LPGCN's
  per-feature mechanisms get ``ε / d``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Unit", "UNITS", "get_unit", "CENTRAL_EPSILONS"]

#: the central units' ε grid
CENTRAL_EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)


@dataclass(frozen=True)
class Unit:
    """One privacy unit of the benchmark.

    Attributes:
        name: the unit's name in rows and on the command line.
        level: the :func:`dpgnn.fit` level its private methods run at.
        protects: the neighbouring relation in words.
        methods: front-door names of its private methods.
        excluded: ``(method, reason)`` for a method registered at ``level`` that is not run here.
        references: non-private reference methods (level ``none``; ε = ∞).
        trivial: methods that are 0-DP for this unit (read nothing it protects).
        epsilons: the bench profile's ε grid (per node at the LDP units).
        score: ``public`` (validation accuracy is post-processing), ``noisy-count`` (a Gaussian count of correct
            validation predictions, accounted in the trial) or ``one-release`` (LDP: every trial post-processes
            the same perturbed data).
        features_public: the node features are public in this unit (a statistic of them costs nothing).
    """

    name: str
    level: str
    protects: str
    methods: tuple[str, ...]
    excluded: tuple[tuple[str, str], ...] = ()
    references: tuple[str, ...] = ("graphsage", "mlp")
    trivial: tuple[str, ...] = ()
    epsilons: tuple[float, ...] = CENTRAL_EPSILONS
    score: str = "public"
    features_public: bool = False

    @property
    def local(self) -> bool:
        """Whether the unit is local (LDP): every trial post-processes one perturbed release of the data."""
        return self.score == "one-release"


UNITS: dict[str, Unit] = {
    u.name: u
    for u in (
        Unit(
            "edge",
            "edge",
            "add/remove one undirected edge",
            ("progap", "gap", "edgerand"),
            references=("graphsage",),
            trivial=("mlp",),
            features_public=True,
        ),
        Unit(
            "node",
            "node",
            "add/remove one node with its edges, features and label",
            ("progap", "gap", "dp-gnn", "dp-mlp"),
            excluded=(
                ("privgnn", "needs a public part of the graph with public features (another threat model)"),
                ("pate", "needs a public part of the graph with public features (another threat model)"),
            ),
            score="noisy-count",
        ),
        Unit(
            "node-data",
            "feature",
            "replace one node's features and label (edges public)",
            ("drw", "fdp"),
            score="noisy-count",
        ),
        Unit(
            "ldp-features",
            "feature",
            "local DP of each node's feature vector (labels public)",
            ("mbm", "lm", "pm", "pgc"),
            epsilons=(0.01, 0.1, 1.0, 2.0, 3.0),
            score="one-release",
        ),
        Unit(
            "ldp-labels",
            "label",
            "local DP of each node's label (features public)",
            ("rr",),
            epsilons=(0.5, 1.0, 2.0, 3.0),
            score="one-release",
            features_public=True,
        ),
        Unit(
            "ldp-both",
            "feature+label",
            "local DP of each node's feature vector and label (ε split evenly)",
            ("mbm",),
            epsilons=(1.0, 2.0, 4.0, 6.0),
            score="one-release",
        ),
    )
}


def get_unit(name: str) -> Unit:
    """The unit ``name``; an unknown name lists the valid ones."""
    key = str(name).strip().lower()
    if key not in UNITS:
        raise ValueError(f"unknown unit {name!r}; valid: {', '.join(UNITS)}")
    return UNITS[key]
