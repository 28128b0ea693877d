"""The privacy cost of one trial of a private search, computed before training, and the budget split that makes
the whole search fit a target ε.

A trial of ``private`` tuning (``Q`` of :mod:`dpgnn.privacy.selection`) is: draw a grid point, train the method
with :func:`dpgnn.fit` at the trial's training budget, and score it. :func:`trial_event` is the training's privacy
event, computed with the method's own calibration functions without training (ProGAP/GAP/DP-MLP:
:func:`dpgnn.privacy.progap.privacy_ledger`; DP-GNN: :func:`dpgnn.methods.dp_gnn.dp_gnn_ledger`; DRW/FDP: the
step schedules of :mod:`dpgnn.methods.drw`); the protocol checks after every trial that the trained run's ledger
has the same noise and steps (:func:`check_trial`), so the accounted curve is the run's. The score of the
``noisy-count`` units adds Gaussian noise to a count of correct validation predictions.

:func:`split_budget` finds the trial budget ``ε_t`` (training ``(1 − s)·ε_t``, score ``s·ε_t``, each calibrated
at δ, composed in RDP) whose search -- the best of ``K ~`` truncated negative binomial trials, with the worst grid
point's RDP curve (Papernot & Steinke Thm. 2, :func:`dpgnn.privacy.selection.selection_epsilon`) -- is at most the
target ε at δ. Pure-DP trials (EdgeRand) use the closed form ``(2 + η)·ε_t`` (Thm. 2 with ``λ → ∞``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpgnn.privacy.accountant import event_rdp
from dpgnn.privacy.events import Event, SelfComposedEvent
from dpgnn.privacy.rdp import DEFAULT_ORDERS
from dpgnn.privacy.selection import TruncatedNegativeBinomial, selection_epsilon

__all__ = [
    "event_from_dict",
    "TrialCost",
    "trial_event",
    "check_trial",
    "score_noise",
    "split_budget",
    "Split",
    "PURE_METHODS",
    "InfeasibleSearch",
    "trial_floor",
]

#: methods whose trial is pure ε-DP (δ = 0)
PURE_METHODS = ("edgerand",)
#: the methods :func:`trial_event` accounts (central units)
ACCOUNTED = ("progap", "gap", "dp-mlp", "dp-gnn", "drw", "fdp")


def event_from_dict(d: dict[str, Any]) -> Event:
    """The event a ledger stored with ``to_dict`` (to recompute a stored search's ε from its row)."""
    from dpgnn.privacy import events as ev
    from dpgnn.privacy.fdp import FdpSampledGaussianEvent

    kind = d["event"]
    if kind == "gaussian":
        return ev.GaussianEvent(d["noise_multiplier"])
    if kind == "laplace":
        return ev.LaplaceEvent(d["scale"])
    if kind == "poisson_sampled":
        return ev.PoissonSampledEvent(d["sample_rate"], event_from_dict(d["inner"]))
    if kind == "sampled_without_replacement":
        return ev.SampledWithoutReplacementEvent(d["sample_rate"], event_from_dict(d["inner"]))
    if kind == "self_composed":
        return ev.SelfComposedEvent(event_from_dict(d["inner"]), d["count"])
    if kind == "composed":
        return ev.ComposedEvent([event_from_dict(e) for e in d["events"]])
    if kind == "fdp_hypergeometric_gaussian":
        return FdpSampledGaussianEvent(d["noise_multiplier"], d["num_train"], d["batch_size"], d["max_affected"])
    raise ValueError(f"unknown event kind {kind!r}")


@dataclass(frozen=True)
class TrialCost:
    """One grid point's training event and the ledger values its run must show (:func:`check_trial`)."""

    event: Event
    expect: tuple[tuple[str, float], ...]


def _progap_family(method: str, level: str, cfg: Any, n_train: int, epsilon: float, delta: float) -> TrialCost:
    from dpgnn.privacy.progap import privacy_event, privacy_ledger

    depth = {"progap": getattr(cfg, "depth", 0), "gap": getattr(cfg, "hops", 0), "dp-mlp": 0}[method]
    runs = {"progap": depth + 1, "gap": 2, "dp-mlp": 1}[method] if level == "node" else 0
    kw = dict(train_nodes=n_train, batch_size=cfg.batch_size, epochs=cfg.epochs)
    led = privacy_ledger(
        level,
        depth=depth,
        aggregations=depth,
        dpsgd_runs=runs if level == "node" else None,
        delta=delta,
        target_epsilon=epsilon,
        max_degree=getattr(cfg, "max_degree", None) if level == "node" and depth else None,
        clip=cfg.clip,
        method=method,
        edge_relation="undirected",
        **kw,
    )
    z = float(led["noise_multiplier"])
    event = privacy_event(level, z, aggregations=depth, dpsgd_runs=runs, **kw)
    return TrialCost(event, (("noise_multiplier", z),))


def _dp_gnn(cfg: Any, n_train: int, epsilon: float, delta: float) -> TrialCost:
    from dpgnn.methods.dp_gnn import dp_gnn_ledger
    from dpgnn.privacy.fdp import FdpSampledGaussianEvent

    led = dp_gnn_ledger(
        train_nodes=n_train,
        batch_size=cfg.batch_size,
        epochs=cfg.epochs,
        max_degree=cfg.max_degree,
        delta=delta,
        target_epsilon=epsilon,
        clip=cfg.clip,
    )
    e = led["event"]
    step = FdpSampledGaussianEvent(e["noise_multiplier"], e["num_train"], e["batch_size"], e["max_affected"])
    steps = int(led["steps"])
    event = SelfComposedEvent(step, steps) if steps > 1 else step
    return TrialCost(event, (("noise_multiplier", float(led["noise_multiplier"])), ("steps", steps)))


def _drw_parts(method: str, cfg: Any, n_train: int, num_nodes: int) -> tuple[float, int, float]:
    """A DRW/FDP trial's fixed noise multiplier, batch (the front door's public rule where the config gives none)
    and FDP's bound on the subgraphs one node affects, or DRW's sampling rate."""
    from dpgnn.data.random_walks import sampler_bound
    from dpgnn.privacy.fdp import max_affected

    z, layers = float(cfg.noise_multiplier), int(cfg.num_layers)
    batch = cfg.batch or max(8, num_nodes // 40)
    if method == "fdp":
        return z, batch, max_affected(cfg.fdp_degree, layers)
    return z, batch, sampler_bound("drw", batch, n_train, layers)


def _drw_event(method: str, parts: tuple[float, int, float], n_train: int, steps: int) -> Event:
    from dpgnn.privacy.drw import drw_event, fdp_event

    z, batch, k_or_q = parts
    if method == "fdp":
        return fdp_event(z, n_train, batch, int(k_or_q), max(steps, 1))
    return drw_event(z, k_or_q, max(steps, 1))


def _drw(method: str, cfg: Any, n_train: int, num_nodes: int, epsilon: float, delta: float) -> TrialCost:
    from dpgnn.methods.drw import epsilon_schedule, fdp_schedule
    from dpgnn.privacy.drw import drw_epsilon, fdp_run_epsilon

    parts = _drw_parts(method, cfg, n_train, num_nodes)
    z, batch, k_or_q = parts
    cap, target = cfg.max_steps or None, float(epsilon)
    # the run trains min(most steps within the target, max_steps) steps; when max_steps is within the target (ε is
    # monotone in the steps) that is max_steps, without the schedule's search
    if method == "fdp":
        k = int(k_or_q)
        if cap and fdp_run_epsilon(cap, z, n_train, batch, k, delta)[0] <= target:
            steps = cap
        else:
            steps = int(min(fdp_schedule(z, n_train, batch, k, delta, target, "paper").steps, cap or math.inf))
        return TrialCost(_drw_event(method, parts, n_train, steps), (("steps", steps),))
    if cap and drw_epsilon(z, k_or_q, cap, delta, "autodp", "paper") <= target:
        steps = cap
    else:
        steps = int(min(epsilon_schedule(z, k_or_q, delta, target, "autodp", "paper").steps, cap or math.inf))
    return TrialCost(_drw_event(method, parts, n_train, steps), (("steps", steps), ("sampling_rate", k_or_q)))


def trial_floor(method: str, cfg: Any, *, n_train: int, num_nodes: int) -> Event | None:
    """The least training event a trial of ``method`` is accounted whatever its budget: one step at the config's
    fixed noise for DRW and FDP, which fit a budget by their number of steps (at least one is accounted, see
    :func:`trial_event`); None for the methods that fit it by their noise (any budget fits)."""
    if method not in ("drw", "fdp"):
        return None
    return _drw_event(method, _drw_parts(method, cfg, n_train, num_nodes), n_train, 1)


def trial_event(
    method: str, level: str, cfg: Any, *, n_train: int, num_nodes: int, epsilon: float, delta: float
) -> TrialCost:
    """The training event of ``method`` with config ``cfg`` at ``(epsilon, delta)``, without training.

    Args:
        method: a front-door name of :data:`ACCOUNTED`.
        level: ``edge``, ``node`` or ``feature`` (DRW/FDP).
        cfg: the method's typed config (every field resolved).
        n_train: training nodes of the split; ``num_nodes``: nodes of the graph.
        epsilon, delta: the training budget the run is calibrated to.

    Returns:
        the event (in units of the run's sensitivity) and the ledger values the run must report.
    """
    if method in ("progap", "gap", "dp-mlp"):
        return _progap_family(method, level, cfg, n_train, epsilon, delta)
    if method == "dp-gnn":
        return _dp_gnn(cfg, n_train, epsilon, delta)
    if method in ("drw", "fdp"):
        return _drw(method, cfg, n_train, num_nodes, epsilon, delta)
    raise ValueError(f"no trial accounting for method {method!r}; accounted: {', '.join(ACCOUNTED)}")


def check_trial(cost: TrialCost, ledger: dict[str, Any]) -> None:
    """The trained run's ledger shows the noise and steps :func:`trial_event` accounted (else ``RuntimeError``)."""
    for key, want in cost.expect:
        got = ledger.get(key)
        if got is None or not math.isclose(float(got), float(want), rel_tol=1e-9, abs_tol=1e-12):
            raise RuntimeError(f"trial ledger {key} = {got!r} but the search accounted {want!r}")


def score_noise(epsilon: float, delta: float) -> float:
    """Noise multiplier of the Gaussian score (std over the count's sensitivity) that is (ε, δ)-DP alone."""
    from dpgnn.privacy.analytic import analytic_gaussian_sigma

    return analytic_gaussian_sigma(epsilon, delta, 1.0)


@dataclass(frozen=True)
class Split:
    """The budget split of a private search: per-trial training and score budgets, and the search's (ε, δ).

    ``events`` are the grid points' training events (as dicts); ``curve`` the worst trial's RDP curve (score
    included) at :data:`dpgnn.privacy.rdp.DEFAULT_ORDERS`."""

    epsilon_trial: float
    epsilon_train: float
    epsilon_score: float
    score_noise: float
    epsilon: float
    delta: float
    order: float
    trials: TruncatedNegativeBinomial
    events: tuple[dict[str, Any], ...]
    curve: tuple[float, ...] = ()

    def ledger(self) -> dict[str, Any]:
        """The split as the ``search`` part of a result row's ledger: the search's (ε, δ) and order, the budgets,
        the score's noise multiplier, the trial-count distribution and the trials' training events."""
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "order": self.order,
            "epsilon_trial": self.epsilon_trial,
            "epsilon_train": self.epsilon_train,
            "epsilon_score": self.epsilon_score,
            "score_noise_multiplier": self.score_noise,
            "selection": self.trials.describe(),
            "eta": self.trials.eta,
            "gamma": self.trials.gamma,
            "expected_runs": self.trials.mean(),
            "trial_events": list(self.events),
        }


@functools.lru_cache(maxsize=256)
def _step_curve(event: Event) -> np.ndarray:
    return event_rdp(event, np.asarray(DEFAULT_ORDERS, dtype=float))


def _curve(event: Event) -> np.ndarray:
    """RDP curve of ``event`` at the default orders; a self-composition is its count times its step's curve (the
    step's curve cached: a search's calibration changes the steps and the noise, rarely the step)."""
    if isinstance(event, SelfComposedEvent):
        return event.count * _curve(event.event)
    return _step_curve(event)


def search_epsilon(
    costs: list[TrialCost], score_z: float | None, trials: TruncatedNegativeBinomial, delta: float
) -> tuple[float, float, np.ndarray]:
    """(ε, order, worst curve) of the best of ``K ~ trials`` runs whose trial is the worst grid point's event plus
    the Gaussian score (``score_z`` ``None``: no score noise, the score is free)."""
    orders = np.asarray(DEFAULT_ORDERS, dtype=float)
    curve = np.max([_curve(c.event) for c in costs], axis=0)
    if score_z is not None:
        curve = curve + orders / (2 * score_z**2)
    eps, order = selection_epsilon(curve, trials, delta, orders)
    return eps, order, curve


class InfeasibleSearch(ValueError):
    """No trial budget fits the search in its target ε: the trials' least events (:func:`trial_floor`) already
    make the search cost more."""


def split_budget(
    costs_at: Any,
    target: float,
    delta: float,
    trials: TruncatedNegativeBinomial,
    *,
    score_share: float,
    pure: bool = False,
    floor: list[Event] | None = None,
    iterations: int = 6,
) -> Split:
    """The largest trial budget found whose search is at most ``target`` ε at ``delta``.

    Args:
        costs_at: ``costs_at(epsilon_train) -> list[TrialCost]``, one per grid point.
        target: the search's ε; ``delta`` its δ (0 for pure trials).
        trials: the distribution of the number of trials.
        score_share: the score's share ``s`` of the trial budget (0: the score is free).
        pure: pure ε-DP trials (closed form ``(2 + η)·ε_t``; ``costs_at`` is not called).
        floor: the grid points' least events whatever the budget (:func:`trial_floor`; None: the budget sets the
            noise, any target fits). A search of these alone (the score free) above the target raises
            :class:`InfeasibleSearch` at once; below it, shrinking ``ε_t`` ends within it.
        iterations: secant steps from the pure-DP guess ``target / (2 + η)``.
    """
    if pure:
        eps_t = target / (2 + trials.eta)
        return Split(eps_t, eps_t, 0.0, 0.0, (2 + trials.eta) * eps_t, 0.0, math.inf, trials, ())

    def total(eps_t: float) -> tuple[float, float, np.ndarray, list[TrialCost], float | None]:
        costs = costs_at((1 - score_share) * eps_t)
        z = score_noise(score_share * eps_t, delta) if score_share > 0 else None
        eps, order, curve = search_epsilon(costs, z, trials, delta)
        return eps, order, curve, costs, z

    if floor:
        least = search_epsilon([TrialCost(e, ()) for e in floor], None, trials, delta)[0]
        if least > target:
            raise InfeasibleSearch(
                f"no trial budget fits the search in ε = {target:g}: one step per trial at the configs' fixed "
                f"noise already makes it ε = {least:.3g}"
            )
    eps_t, best = target / (2 + trials.eta), None
    for _ in range(iterations):
        eps, order, curve, costs, z = total(eps_t)
        if eps <= target and (best is None or eps_t > best[0]):
            best = (eps_t, eps, order, curve, costs, z)
        if eps <= target and eps > 0.98 * target:
            break
        eps_t *= 0.999 * target / eps if eps > 0 else 2.0
    while best is None:  # shrink until the search fits
        eps_t *= 0.8
        if eps_t < 1e-12 * target:
            raise InfeasibleSearch(f"no trial budget fits the search in ε = {target:g}")
        eps, order, curve, costs, z = total(eps_t)
        if eps <= target:
            best = (eps_t, eps, order, curve, costs, z)
    eps_t, eps, order, curve, costs, z = best
    return Split(
        epsilon_trial=eps_t,
        epsilon_train=(1 - score_share) * eps_t,
        epsilon_score=score_share * eps_t,
        score_noise=z or 0.0,
        epsilon=eps,
        delta=delta,
        order=order,
        trials=trials,
        events=tuple(c.event.to_dict() for c in costs),
        curve=tuple(float(v) for v in curve),
    )
