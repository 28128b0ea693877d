"""One benchmark cell: a method of a unit on a dataset at one ε and one seed, tuned one way, as one result row.

Every method of a unit sees the same graph, the same split (:func:`shared_split`: drawn from the dataset and the
seed only), the same ε and the same tuning budget (the grid of its :mod:`dpgnn.bench.spaces`; ``private`` draws
``K`` trials with ``E[K]`` = the grid's size). Tunings:

- ``as_published``: every grid point trained at the cell's ε, the best validation score kept; the ledger is the
  selected run's, ``as_published``, with the search listed in ``not_covered`` (the papers' practice).
- ``private``: :func:`dpgnn.privacy.selection.private_search` with ``K ~`` geometric (truncated negative binomial,
  ``η = 1``); each trial's score is what its unit allows (:mod:`dpgnn.bench.units`); the row's ε is the whole
  search's (:func:`dpgnn.bench.accounting.split_budget`, split stated in the ledger), ``sound`` when the method's
  own run is.
  A search no trial budget fits (DRW/FDP fit a budget by their steps at a fixed noise, and one step per trial
  can already cost more) runs no trial: its row is 0-DP, without accuracy, and says why.

torch and PyG are imported where a graph is built (:func:`base_graph`): reading the benchmark's stored rows and
planning its cells stay light.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpgnn.bench.accounting import PURE_METHODS, InfeasibleSearch, check_trial, split_budget, trial_event, trial_floor
from dpgnn.bench.spaces import SearchSpace, space_of
from dpgnn.bench.units import Unit, get_unit
from dpgnn.privacy.guarantee import (
    AS_PUBLISHED,
    MODEL_SELECTION,
    NOT_COVERED,
    PREPROCESSING,
    non_private,
    statement,
)
from dpgnn.privacy.selection import TruncatedNegativeBinomial, private_search, score_rank
from dpgnn.utils import stable_seed

if TYPE_CHECKING:
    from torch_geometric.data import Data

__all__ = ["TUNINGS", "DATASETS", "base_graph", "shared_split", "run_cell", "score_sensitivity"]

TUNINGS = ("as_published", "private")
#: dataset name -> (registry name, variant, options); ``toy`` is a seeded CSBM graph (tests and smoke)
DATASETS: dict[str, tuple[str, str | None, dict[str, Any]]] = {
    "toy": ("csbm", None, {"num_nodes": 240, "num_classes": 3, "num_features": 16, "seed": 0}),
    "cora": ("cora", None, {}),
    "citeseer": ("citeseer", None, {}),
    "facebook-pagepage": ("facebook-pagepage", None, {}),
    "amazon-computers": ("amazon-computers", None, {}),
    "credit": ("credit", None, {}),
    "fb100-amherst41": ("fb100-amherst41", "progap", {"min_class_size": 100}),  # the Facebook100 stand-in
}
SPLIT = (0.75, 0.10, 0.15)  # the front door's fractions (ProGAP §5.3)
#: the note of :func:`base_graph` when it min-max scaled the features over all nodes
SCALED = "feature range: min-max scaling over all nodes (a data statistic, not in ε)"


@functools.lru_cache(maxsize=4)
def base_graph(name: str) -> tuple[Data, tuple[str, ...]]:
    """The dataset's graph as every method sees it: undirected, no self-loops, nodes with a label, features
    min-max scaled to [0, 1] (the LDP mechanisms need that range; ``notes`` says when the scaling read the data)."""
    import torch
    from torch_geometric.data import Data
    from torch_geometric.utils import remove_self_loops, subgraph, to_undirected

    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(DATASETS)}")
    reg, variant, opts = DATASETS[name]
    if reg == "csbm":
        from dpgnn.data.synthetic import csbm

        data = csbm(**opts)
    else:
        from dpgnn.data import load_dataset

        data = load_dataset(reg, variant, **opts) if variant else load_dataset(reg)
    x, y = data.x.float(), data.y.view(-1).long()
    keep = y >= 0
    ei = remove_self_loops(to_undirected(data.edge_index, num_nodes=y.numel()))[0]
    ei = subgraph(keep, ei, relabel_nodes=True, num_nodes=y.numel())[0]
    x, y = x[keep], torch.unique(y[keep], return_inverse=True)[1]
    notes = []
    lo, hi = x.min(0).values, x.max(0).values
    if float(lo.min()) < 0 or float(hi.max()) > 1:
        x = (x - lo) / torch.where(hi > lo, hi - lo, torch.ones_like(hi))
        notes.append(SCALED)
    return Data(x=x, y=y, edge_index=ei, num_nodes=y.numel()), tuple(notes)


def shared_split(name: str, seed: int) -> Data:
    """The graph with the split of ``(dataset, seed)``: the same for every unit, method and tuning."""
    from dpgnn.data.transforms import random_node_split

    data, _ = base_graph(name)
    return random_node_split(data, *SPLIT, seed=stable_seed("bench-split", name, seed))


def without_selection(ledger: dict[str, Any], overridden: list[str]) -> dict[str, Any]:
    """The run's ledger when its training loops kept their last epoch: model selection on private validation data
    leaves ``not_covered``, and the guarantee is ``sound`` when nothing else is left out (no other uncovered step,
    no ``issues``). ``overridden`` (the monitors :func:`dpgnn.train.last_epoch` turned off) is recorded as
    ``epoch_selection``; a run that selected nothing keeps its ledger's statement as it was."""
    from dpgnn.privacy.guarantee import AS_PUBLISHED, MODEL_SELECTION, SOUND

    led = dict(ledger)
    led["epoch_selection"] = f"last epoch of each training loop ({len(overridden)} kept last, no selection)"
    if led.get("guarantee") not in (SOUND, AS_PUBLISHED):
        return led
    nc = [s for s in led.get("not_covered") or [] if s != MODEL_SELECTION]
    led["not_covered"] = nc
    led["guarantee"] = SOUND if not nc and not led.get("issues") else AS_PUBLISHED
    return led


def given_range(ledger: dict[str, Any], unit: Unit, dataset: str) -> dict[str, Any]:
    """An LDP run's ledger when the features reached the mechanism in their own [0, 1] range: the front doors
    scale nothing (they check the range), so the papers' min-max statistic (``preprocessing statistics``) is not
    a step of this run where the bench did not scale either (:func:`base_graph`'s notes empty) or the unit's
    features are public. Otherwise the ledger is returned as it is (the row stays ``as_published``)."""
    from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, SOUND

    nc = list(ledger.get("not_covered") or [])
    scaled = bool(base_graph(dataset)[1])
    if PREPROCESSING not in nc or (scaled and not unit.features_public):
        return ledger
    led = dict(ledger)
    led["not_covered"] = [s for s in nc if s != PREPROCESSING]
    led["feature_range"] = (
        "the node features are public in this unit" if unit.features_public else "[0, 1] as given: nothing scaled"
    )
    if led.get("guarantee") == AS_PUBLISHED and not led["not_covered"] and not led.get("issues"):
        led["guarantee"] = SOUND
    return led


def score_sensitivity(unit: Unit, method: str, cfg: Any, graph: Data) -> int:
    """How many validation predictions one neighbouring change can flip (the noisy count's sensitivity)."""
    if method == "dp-gnn":
        return int(cfg.max_degree) + 1
    if unit.name == "node-data":
        # a node's features and label reach the predictions of the nodes within L hops of the public graph: the
        # number of walks of length <= L from v to validation nodes, (I + A)^L 1_val, bounds how many (sound)
        from torch_geometric.utils import to_torch_csr_tensor

        n = graph.num_nodes
        adj = to_torch_csr_tensor(graph.edge_index, size=(n, n))
        reach = graph.val_mask.double().view(-1, 1)
        for _ in range(int(cfg.num_layers)):
            reach = reach + adj.double() @ reach
        return int(reach.max())
    return 1


def _fit_args(unit: Unit, method: str, epsilon: float, graph: Data) -> dict[str, Any]:
    """The level and budget arguments of :func:`dpgnn.fit` for ``method`` in ``unit`` at per-node ``epsilon``."""
    if method in unit.references or method in unit.trivial:
        return {"level": "none", "epsilon": None}
    if unit.level == "feature+label":
        return {"level": unit.level, "epsilon": epsilon / 2, "label_epsilon": epsilon / 2}
    if method in ("lm", "pm", "pgc"):  # LPGCN's ε is per feature: ε per node over the d features
        return {"level": unit.level, "epsilon": epsilon / graph.num_features}
    return {"level": unit.level, "epsilon": epsilon}


def _config(method: str, point: dict[str, Any], fixed: dict[str, Any]) -> Any:
    from dpgnn.api.configs import make_config
    from dpgnn.api.methods import front_door

    return make_config(front_door(method).config, {**fixed, **point})


def _trials(grid_size: int) -> TruncatedNegativeBinomial:
    return TruncatedNegativeBinomial.with_mean(max(2.0, float(grid_size)), eta=1.0)


@dataclass(frozen=True)
class _Cell:
    """A cell resolved: its unit, method, graph with the shared split, grid, fit arguments and δ."""

    unit: Unit
    method: str
    dataset: str
    epsilon: float
    seed: int
    graph: Data
    space: SearchSpace
    grid: tuple[dict[str, Any], ...]
    grid_limit: int | None
    fixed: dict[str, Any]
    args: dict[str, Any]
    delta: float | None

    @property
    def reference(self) -> bool:
        return self.args["level"] == "none"

    @property
    def pure(self) -> bool:
        return self.method in PURE_METHODS

    @property
    def preprocessing(self) -> list[str]:
        """A min-max scaling that read private features (outside ε)."""
        return [] if self.reference or self.unit.features_public else list(base_graph(self.dataset)[1])

    def config(self, point: dict[str, Any]) -> Any:
        label = {"label_epsilon": self.args["label_epsilon"]} if "label_epsilon" in self.args else {}
        return _config(self.method, point, {**self.fixed, **label})

    @property
    def last_epoch(self) -> bool:
        """Private tuning keeps each trial's last epoch where the validation labels are private (no selection on
        them inside a run; the trial's noisy score is the only use of them)."""
        return self.unit.score == "noisy-count" and not self.reference

    def train(self, point: dict[str, Any], run_seed: int, epsilon: float | None, last: bool = False):
        """``(config, model)`` of one run of ``point``; ``last``: every training loop keeps its last epoch
        (:func:`dpgnn.train.last_epoch`), and the model's ledger says so (:func:`without_selection`)."""
        import dpgnn
        from dpgnn.train import last_epoch

        cfg = self.config(point)
        kw = {} if self.delta is None else {"delta": self.delta}
        level = self.args["level"]
        with last_epoch() if last else contextlib.nullcontext() as overridden:
            model = dpgnn.fit(
                self.graph, self.method, level=level, epsilon=epsilon, seed=run_seed, device="cpu", **asdict(cfg), **kw
            )
        if last:
            model.ledger = without_selection(model.ledger, overridden)
        return cfg, model

    def cost(self, cfg: Any, epsilon: float):
        level = "feature" if self.unit.name == "node-data" else self.unit.level
        n_train = int(self.graph.train_mask.sum())
        return trial_event(
            self.method, level, cfg, n_train=n_train, num_nodes=self.graph.num_nodes, epsilon=epsilon, delta=self.delta
        )

    def floor(self) -> list | None:
        """The grid points' least training events whatever the budget (:func:`dpgnn.bench.accounting.trial_floor`),
        None where the budget sets the noise."""
        n_train = int(self.graph.train_mask.sum())
        events = [
            trial_floor(self.method, self.config(p), n_train=n_train, num_nodes=self.graph.num_nodes) for p in self.grid
        ]
        return None if any(e is None for e in events) else events

    def base(self) -> dict[str, Any]:
        return {"grid_size": len(self.grid), "space": self.space.source}


def _resolve(cell: dict[str, Any], fixed: dict[str, Any] | None, grid_limit: int | None) -> _Cell:
    from dpgnn.api.inputs import delta_rule

    unit, method, name = get_unit(cell["unit"]), cell["method"], cell["dataset"]
    if cell["tuning"] not in TUNINGS:
        raise ValueError(f"tuning must be one of {TUNINGS}, got {cell['tuning']!r}")
    eps, seed = float(cell["epsilon"]), int(cell["seed"])
    graph, space = shared_split(name, seed), space_of(method)
    args = _fit_args(unit, method, eps, graph)
    local_or_pure = unit.local or method in PURE_METHODS
    delta = None if args["level"] == "none" or local_or_pure else delta_rule(unit.level, graph.num_nodes)[0]
    grid = tuple(space.configs(grid_limit))
    return _Cell(unit, method, name, eps, seed, graph, space, grid, grid_limit, dict(fixed or {}), args, delta)


def run_cell(cell: dict[str, Any], *, fixed: dict[str, Any] | None = None, grid_limit: int | None = None) -> dict:
    """One cell's row: ``cell`` holds ``unit, method, dataset, epsilon, seed, tuning``.

    Args:
        cell: the cell's keys.
        fixed: config overrides of every trial (a profile's, e.g. fewer epochs).
        grid_limit: use only the first ``grid_limit`` grid points (test/smoke profiles).

    Returns:
        the row (test accuracy as ``value``; the selected config, the numbers of trials, the ledger).
    """
    c = _resolve(cell, fixed, grid_limit)
    return _as_published(c) if cell["tuning"] == "as_published" else _private(c)


def _as_published(c: _Cell) -> dict[str, Any]:
    """Every grid point at the cell's ε; the best validation score kept; the search outside ε."""
    best = None
    for point in c.grid:
        cfg, model = c.train(point, c.seed, c.args["epsilon"])
        if best is None or score_rank(model.metrics["val"]) > score_rank(best[1].metrics["val"]):
            best = (cfg, model)
    cfg, model = best
    search = {"tuning": "grid search on validation accuracy", "runs": len(c.grid)}
    not_covered = [f"hyper-parameter search on validation data ({len(c.grid)} configurations, not in ε)"]
    return _row(c, model, cfg, search, not_covered + c.preprocessing, None, len(c.grid), model.metrics["val"])


def _private(c: _Cell) -> dict[str, Any]:
    """Random search with ``K ~`` geometric trials (:func:`dpgnn.privacy.selection.private_search`), ε inside."""
    unit, trials, free = c.unit, _trials(len(c.grid)), c.reference or c.unit.local
    split = None
    if not free:
        share = 0.1 if unit.score == "noisy-count" else 0.0

        def costs_at(e: float) -> list:
            return [c.cost(c.config(p), e) for p in c.grid]

        try:
            split = split_budget(
                costs_at, c.epsilon, c.delta or 0.0, trials, score_share=share, pure=c.pure, floor=c.floor()
            )
        except InfeasibleSearch as e:
            return _no_trial_row(c, str(e), trials)
    n_val, costs = int(c.graph.val_mask.sum()), {}

    def run(point: dict[str, Any], run_seed: int):
        if free:  # one release (LDP: the repeat's seed), or nothing private
            cfg, model = c.train(point, c.seed, c.args["epsilon"])
            if unit.local and not c.reference:
                model.ledger = given_range(model.ledger, unit, c.dataset)
            return model.metrics["val"], (cfg, model)
        cfg, model = c.train(point, run_seed, split.epsilon_train, last=c.last_epoch)
        if not c.pure:
            key = json.dumps(point, sort_keys=True)
            if key not in costs:
                costs[key] = c.cost(cfg, split.epsilon_train)
            check_trial(costs[key], model.ledger)
        score = model.metrics["val"]
        if math.isnan(score):  # no trained model to score (no DP step fits this trial's ε): a fact of the
            return score, (cfg, model)  # configuration and ε alone, so nothing about the data is scored or noised
        if unit.score == "noisy-count":
            sens = score_sensitivity(unit, c.method, cfg, c.graph)
            rng = np.random.default_rng(stable_seed("bench-score", run_seed))
            score = (round(score * n_val) + rng.normal(0.0, split.score_noise * sens)) / n_val
        return score, (cfg, model)

    # the searches whose ε is not the selection accountant's (free or pure trials) pass a zero curve; their ledger
    # is the unit's (below), never private_search's
    accounted = split is not None and bool(split.curve)
    res = private_search(
        run,
        lambda rng: c.space.sample(rng, c.grid_limit),
        trials,
        base_rdp=split.curve if accounted else [0.0],
        delta=c.delta or 1e-9,
        seed=stable_seed("bench-search", unit.name, c.method, c.dataset, c.epsilon, c.seed),
        orders=None if accounted else [2.0],
    )
    if res.best is None:
        raise RuntimeError("the private search drew no trial")  # K >= 1 for the truncated negative binomial
    search = {"tuning": "random search, K ~ geometric", "runs": res.runs, "selection": trials.describe()}
    if c.last_epoch:
        search["epoch"] = "last epoch of every trial (no selection on private validation labels inside a run)"
    if split is not None:
        search.update(split.ledger(), score=unit.score)
        if accounted:
            assert math.isclose(res.ledger["epsilon"], split.epsilon, rel_tol=1e-9)
    cfg, model = res.best
    return _row(c, model, cfg, search, c.preprocessing, split, res.runs, res.best_score)


def _no_trial_row(c: _Cell, why: str, trials: TruncatedNegativeBinomial) -> dict[str, Any]:
    """The row of a private search that no trial budget fits (``why``): no trial runs, nothing is released (0-DP),
    no accuracy."""
    search = {"tuning": "random search, K ~ geometric", "runs": 0, "selection": trials.describe(), "infeasible": why}
    run = {"guarantee": "sound", "epsilon": 0.0, "neighbouring": c.unit.protects, "accounted": "no trial ran"}
    return {
        "level": c.unit.level,
        "metric": "test_accuracy",
        "value": math.nan,
        "val_score": math.nan,
        "runs": 0,
        "selected": json.dumps(None),
        "epsilon_accounted": 0.0,
        "epsilon_sound": 0.0,
        "delta": 0.0,
        "guarantee": "sound",
        "not_covered": "[]",
        "ledger": {**cell_statement("sound", [], run, search), "run": run, "search": search},
        **c.base(),
    }


def run_sound(run: dict[str, Any]) -> bool:
    """Whether a trial's ledger ``run`` gives a valid bound on its ε: stated sound, or a sound ε beside the
    paper's with nothing uncovered (EdgeRand, whose fit budget is its sound ε)."""
    return run.get("guarantee") == "sound" or (
        not run.get("not_covered") and math.isfinite(float(run.get("epsilon_sound", math.nan)))
    )


def cell_statement(guarantee: str, not_covered: list[str], run: dict[str, Any], search: dict[str, Any]) -> dict:
    """The guarantee fields of a tuned cell's ledger (:func:`dpgnn.privacy.guarantee.statement`), from its row's
    ``guarantee`` and ``not_covered`` columns, the selected trial's ledger ``run`` and the ``search``'s: a search
    outside ε is model selection on private validation data, the bench's feature scaling (:data:`SCALED`) is
    preprocessing statistics, and an ``as_published`` row whose selected run's ε is not a valid bound
    (:func:`run_sound`) carries that run's issues."""
    if guarantee == "non-private":
        return non_private()
    covered = [s for s in not_covered if s in NOT_COVERED]
    covered += [PREPROCESSING if s == SCALED else MODEL_SELECTION for s in not_covered if s not in NOT_COVERED]
    issues = []
    if guarantee == AS_PUBLISHED and not run_sound(run):  # what the selected trial's own ε does not cover
        issues = [str(s) for s in run.get("issues") or []]
    if guarantee == AS_PUBLISHED and not (covered or issues):
        issues.append("the selected trial's run is not claimed sound")
    tuning = search.get("tuning", "")
    accounted = f"the selected trial's run ({run.get('accounted', 'its ε')}); the search: {tuning}"
    neighbouring = run.get("neighbouring") or "none (non-private)"
    return statement(guarantee, neighbouring, accounted=accounted, not_covered=covered, issues=issues)


def _row(c: _Cell, model, cfg, search, not_covered, split, runs, score) -> dict[str, Any]:
    """The stored row of a tuned cell."""
    unit, method, led = c.unit, c.method, model.ledger
    trivial, reference = method in unit.trivial, method in unit.references
    method_ok = run_sound(led) and not not_covered  # and nothing outside the run (search, preprocessing) uncovered
    not_covered = list(not_covered) + list(led.get("not_covered") or [])
    if trivial:  # reads nothing the unit protects: every trial and the search are 0-DP
        not_covered = []
    if trivial or reference:
        accounted = 0.0 if trivial else math.inf
        guarantee = "sound" if trivial else "non-private"
        sound, delta = accounted, 0.0
    elif split is not None:
        accounted, delta = split.epsilon, split.delta
        guarantee = "sound" if method_ok else "as_published"
        sound = split.epsilon if method_ok else math.nan
    else:  # as published, or an LDP search (one release: the search is post-processing)
        accounted, delta = float(led.get("epsilon", math.nan)), float(led.get("delta", 0.0) or 0.0)
        local_private = unit.local and search["tuning"].startswith("random")
        guarantee = ("sound" if method_ok else "as_published") if local_private else "as_published"
        sound = accounted if local_private and method_ok else math.nan
    return {
        "level": unit.level if not (trivial or reference) else "none",
        "metric": "test_accuracy",
        "value": float(model.metrics["test"]),
        "val_score": float(score),
        "runs": int(runs),
        "selected": json.dumps(asdict(cfg), sort_keys=True, default=str),
        "epsilon_accounted": accounted,
        "epsilon_sound": sound,
        "delta": delta,
        "guarantee": guarantee,
        "not_covered": json.dumps(not_covered),
        "ledger": {**cell_statement(guarantee, not_covered, led, search), "run": led, "search": search},
        **c.base(),
    }
