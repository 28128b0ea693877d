"""DP-SGD training of DRW, DRW-D, DRW-R and FDP: :class:`DPTrainConfig`, :func:`train_dp` and :func:`run_dp` (one
:func:`dpgnn.train.fit` epoch per noisy step, ε checkpoints, the privacy ledger)."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from dpgnn.data.random_walks import (
    SAMPLERS,
    Subgraphs,
    disjoint_random_walks,
    sampler_bound,
)
from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods.drw.accounting import Schedule, epsilon_schedule, fdp_schedule
from dpgnn.methods.drw.data import DRWData
from dpgnn.methods.drw.evaluation import _make, _scores, prediction_spread, split_features
from dpgnn.methods.drw.gradients import (
    add_noise,
    clip_and_noise,
    clip_thresholds,
    clipped_grad_sum,
    dense_subgraph_inputs,
    per_subgraph_grads,
)
from dpgnn.methods.drw.paper import DELTA, DP_METHODS, TARGET_EPSILON, _method_key, batch_size
from dpgnn.methods.fdp import FDP_VARIANTS, bound_degree, neighbourhoods
from dpgnn.methods.hooks import DPStepHook, DPStepInfo
from dpgnn.privacy.drw import guarantee_fields, run_accounting
from dpgnn.privacy.fdp import max_affected
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _positive
from dpgnn.train import NoisyStep, fit
from dpgnn.utils import resolve_device, seed_everything, stable_seed, versions


def _sample_subgraphs(
    d: DRWData, method: str, num_layers: int, rng: np.random.Generator, fdp_degree: int, fdp_variant: str, seed: int
) -> Subgraphs:
    if method == "fdp":
        bounded = bound_degree(d.train_edge_index, d.num_nodes, fdp_degree, seed=seed)
        return neighbourhoods(bounded, d.num_nodes, d.train, num_layers, fdp_degree, fdp_variant)
    return disjoint_random_walks(
        d.train_edge_index, d.num_nodes, d.train, num_layers, SAMPLERS[method][0], seed=rng, sampler=method
    )


DPMethod = Literal["fdp", "drw", "drw-d", "drw-r"]
PerSample = Literal["ghost", "vmap"]
Select = Literal["best_val", "last"]
FdpVariant = Literal["paper", "authors"]
PER_SAMPLE: tuple[PerSample, ...] = ("ghost", "vmap")
SELECTS: tuple[Select, ...] = ("best_val", "last")


@dataclass(frozen=True)
class DPTrainConfig:
    """One DP training run of DRW, DRW-D, DRW-R or FDP (:func:`run_dp`); every mode is checked here, once.

    Attributes:
        method: ``drw`` (one walk per root), ``drw-d`` (walks re-drawn every ``resample_every`` steps), ``drw-r``
            (two walks per root) or ``fdp`` (degree-bounded K-hop neighbourhoods); case-insensitive.
        num_layers: GCN layers (= the walks' length / the neighbourhoods' depth); Table 1: 1 or 2.
        hidden: GCN width; Table 1: 256 or 512.
        lr: Adam learning rate (paper Sec. 5.1: 0.1).
        clip_fraction: the paper's clip norm percentage: ``C = clip_fraction·‖g0‖`` from a first batch's
            gradients (data-dependent, not private); ``None`` with ``clip_norm``.
        clip_norm: a fixed total clipping norm ``C`` split evenly over the tensors (data-independent).
        noise_multiplier: ``z``, noise std / sensitivity (> 0).
        batch: subgraphs per step; ``None``: the paper's batch for the dataset (:func:`batch_size`).
        delta: δ; ``None``: the paper's δ of the dataset (:data:`DELTA`, 1e-5 elsewhere).
        target_epsilon: training stops before ε would exceed it (Table 1: 8).
        resample_every: DRW-D's steps between two draws of the walks.
        eval_every: steps between two evaluations (the last step and the checkpoints are always evaluated).
        max_steps: a cap on the steps (``None``: the schedule's steps).
        accountant: DRW's accountant (:func:`epsilon_schedule`; the paper's ``autodp``).
        fdp_degree: FDP's degree bound ``D``.
        fdp_variant: FDP's neighbourhoods: ``paper`` or the ``authors`` code's.
        per_sample: ``ghost`` (:func:`clipped_grad_sum`, norms from Gram matrices) or ``vmap``
            (:func:`per_subgraph_grads` + :func:`clip_and_noise`): the same sums up to rounding, the same noise.
        select: ``best_val`` (the paper: the best-validation trained model) or ``last`` (the final model).
        fidelity: ``paper`` or ``authors_code`` (the official code's accountant at sampling rate 1 and its
            early stopping after ``patience`` evaluations without a better validation F1).
        patience: evaluations without improvement before ``authors_code`` stops.
    """

    method: DPMethod = "drw"
    num_layers: int = 1
    hidden: int = 256
    lr: float = 0.1
    clip_fraction: float | None = 0.1
    clip_norm: float | None = None
    noise_multiplier: float = 4.0
    batch: int | None = None
    delta: float | None = None
    target_epsilon: float = TARGET_EPSILON
    resample_every: int = 10
    eval_every: int = 1
    max_steps: int | None = None
    accountant: str = "autodp"
    fdp_degree: int = 4
    fdp_variant: FdpVariant = "paper"
    per_sample: PerSample = "ghost"
    select: Select = "best_val"
    fidelity: Fidelity = Fidelity.PAPER
    patience: int = 30

    def __post_init__(self) -> None:
        if self.select not in SELECTS:
            raise ValueError(f"select must be 'best_val' or 'last', got {self.select!r}")
        method = _method_key(self.method)
        if method not in DP_METHODS:
            raise ValueError(f"train_dp runs the DP methods {list(DP_METHODS)}; use train_nondp for {method!r}")
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "num_layers", _int(self.num_layers, "num_layers", 1))
        object.__setattr__(self, "noise_multiplier", _positive(self.noise_multiplier, "noise_multiplier"))
        object.__setattr__(self, "lr", _positive(self.lr, "lr"))
        _positive(self.target_epsilon, "target_epsilon")
        _int(self.resample_every, "resample_every", 1)
        _int(self.eval_every, "eval_every", 1)
        if self.fdp_variant not in FDP_VARIANTS:
            raise ValueError(f"fdp_variant must be one of {FDP_VARIANTS}, got {self.fdp_variant!r}")
        if self.per_sample not in PER_SAMPLE:
            raise ValueError(f"per_sample must be 'ghost' or 'vmap', got {self.per_sample!r}")
        object.__setattr__(self, "fidelity", parse(self.fidelity))
        _int(self.patience, "patience", 1)


#: the keywords of :func:`train_dp` besides ``seed`` and ``device`` (a series cell's options)
DP_OPTIONS = tuple(f.name for f in fields(DPTrainConfig) if f.name != "method") + ("on_model", "canary")


def train_dp(
    d: DRWData,
    method: str,
    *,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
    canary: DPStepHook | None = None,
    **options: Any,
) -> dict[str, Any]:
    """DP training (DRW, DRW-D, DRW-R or FDP): :func:`run_dp` with ``DPTrainConfig(method=method, **options)``
    (the options and their defaults: :class:`DPTrainConfig`)."""
    cfg = DPTrainConfig(method=method, **options)
    return run_dp(d, cfg, seed=seed, device=device, on_model=on_model, canary=canary)


@dataclass(frozen=True)
class _Sampling:
    """How a DP run samples and what it is accounted for: sampling rate ``q``, max subgraphs one node is in ``K``,
    sensitivity factor (``2K``: replace-one, clipped sums), the ε schedule."""

    num_train: int
    batch: int
    q: float
    affected: int
    sens_factor: float
    sched: Schedule


def _sampling(d: DRWData, cfg: DPTrainConfig, delta: float) -> _Sampling:
    L, z, N = cfg.num_layers, cfg.noise_multiplier, d.num_train
    B = _int(cfg.batch if cfg.batch is not None else batch_size(d.name, cfg.method, L), "batch", 1)
    if cfg.method == "fdp":
        K = max_affected(cfg.fdp_degree, L)
        if B > N:
            raise ValueError(f"batch must be in [1, num_train={N}], got {B}")
        sched = fdp_schedule(z, N, B, K, delta, float(cfg.target_epsilon), cfg.fdp_variant)
        return _Sampling(N, B, B / N, K, 2.0 * K, sched)
    q = sampler_bound(cfg.method, B, N, L)
    sched = epsilon_schedule(z, q, delta, float(cfg.target_epsilon), cfg.accountant, cfg.fidelity)
    return _Sampling(N, B, q, 1, 2.0, sched)


class _Selection:
    """DRW's evaluations: the selected model's scores (the best validation F1 among trained steps, or the last
    step with ``select="last"``), the checkpoint rows at every integer ε and ``authors_code``'s early stop."""

    def __init__(self, model: nn.Module, d: DRWData, x_eval, adj: Tensor, cfg: DPTrainConfig, sched, steps: int):
        self.model, self.d, self.x_eval, self.adj, self.cfg, self.sched = model, d, x_eval, adj, cfg, sched
        dev = adj.device
        self.splits = {"train": torch.as_tensor(d.train).to(dev), "val": d.val.to(dev), "test": d.test.to(dev)}
        self.best: dict[str, Any] = {"val": -1.0, "test": float("nan"), "train": float("nan"), "step": 0}
        self.cps = {t: k for k, t, _ in sched.checkpoints}
        self.rows: list[dict[str, Any]] = []
        self.history: list[dict[str, float]] = []
        self.stale = 0  # evaluations since the last improvement (authors_code early stopping)
        self.steps = steps
        self.stopped: int | None = None

    def due(self, step: int) -> bool:
        return step % self.cfg.eval_every == 0 or step == self.steps or step in self.cps

    def record(self, step: int, out: Tensor | None = None) -> None:
        """Evaluate the model after ``step`` (``out``: its full-graph output, computed elsewhere) and update the
        selection and the checkpoint rows."""
        pred: list[Tensor] = []
        scores = _scores(self.model, self.d, self.x_eval, self.adj, self.splits, pred, out=out)
        v, te, best, T = scores["val"], scores["test"], self.best, self.steps
        self.history.append({"step": step, **scores})
        if step > 0 and (v > best["val"] or self.cfg.select == "last"):  # the untrained model is never selected
            best.update(val=v, test=te, train=scores["train"], step=step, pred=pred[0] if pred else None)
            self.stale = 0
        elif step > 0:
            self.stale += 1
        if step in self.cps or step == T:
            for k, t, e in self.sched.checkpoints:
                if t == step or (step == T and t > T):
                    val = best["val"] if best["val"] >= 0 else math.nan
                    self._row(k, step, e if t == step else math.nan, val, te)

    def _row(self, k: float, step: int, epsilon: float, val: float, current: float) -> None:
        self.rows.append(
            {
                "checkpoint": k,
                "steps": step,
                "epsilon": epsilon,
                "test_f1": self.best["test"],
                "val_f1": val,
                "test_f1_current": current,
            }
        )

    def stop(self, step: int) -> bool:
        """``authors_code``: stop after ``patience`` evaluations without improvement; the checkpoints beyond the
        stop keep the model selected so far."""
        if not (self.cfg.fidelity is Fidelity.AUTHORS_CODE and self.stale >= self.cfg.patience and step < self.steps):
            return False
        self.stopped = step
        for k, t, _ in self.sched.checkpoints:
            if t > step:
                self._row(k, step, math.nan, self.best["val"], math.nan)
        self.steps = step
        return True


def run_dp(
    d: DRWData,
    cfg: DPTrainConfig,
    *,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
    canary: DPStepHook | None = None,
) -> dict[str, Any]:
    """DP training (DRW, DRW-D, DRW-R or FDP) until ε would exceed ``cfg.target_epsilon`` (or ``cfg.max_steps``).

    Each step (one :func:`dpgnn.train.fit` epoch): ``B`` subgraphs uniformly without replacement, their clipped
    gradient sum (``cfg.per_sample``), Gaussian noise ``σ = z·2K·C`` and Adam, on :class:`dpgnn.train.NoisyStep`.
    The best-validation model is chosen among the *trained* models (steps ≥ 1, as in the authors' code): the
    untrained step-0 model is never selected. Both fidelities stay at or below the target ε, and both compute exact
    per-subgraph gradients (the official per-row gradients are not reproduced).

    Returns test/val F1 of the selected model, the privacy ledger and ``checkpoints``: for every integer
    ``k ≤ target`` the step where ε last stays ≤ k and the test F1 of the selected model up to then.
    ``on_model(model)`` is called with the final model (the released one when ``select="last"``; audits).
    ``canary`` (audits, :mod:`dpgnn.methods.hooks`): called around every step's noise with the clipped sums (``B``
    of the run's subgraphs uniformly without replacement, per-tensor norms ``C_j``).
    """
    dev = resolve_device(device)
    delta = DELTA.get(d.name, 1e-5) if cfg.delta is None else float(cfg.delta)
    t0 = time.perf_counter()
    s = _sampling(d, cfg, delta)
    x = d.x.to(dev)
    run = _start(d, cfg, s, seed, dev, x, split_features(x), canary)
    if run.T >= 1:
        fit(run.model, run.step, epochs=run.T, monitor=None, restore_best=False, stop=run.sel.stop)
    if on_model is not None:
        on_model(run.model)
    return run.result(delta, time.perf_counter() - t0)


@dataclass
class _Run:
    """One seed's DP run once set up (:func:`_start`): its generators, subgraphs, model, optimizer, clipping
    thresholds, noise and evaluations; ``step(t)`` makes noisy step ``t`` (clipped sums, noise, Adam, evaluation)."""

    d: DRWData
    cfg: DPTrainConfig
    s: _Sampling
    rng: np.random.Generator
    subs: list[Subgraphs]
    model: nn.Module
    batches: _SubgraphBatches
    thr: dict[str, float]
    C: float
    sigma: float
    sel: _Selection
    private: NoisyStep
    split: Any
    T: int
    seed: int
    canary: DPStepHook | None = None

    def pick(self, t: int) -> tuple[Subgraphs, Tensor]:
        """Step ``t``'s subgraphs (DRW-D first re-draws its walks when due) and the batch's indices into them."""
        cfg = self.cfg
        if cfg.method == "drw-d" and t > 1 and (t - 1) % cfg.resample_every == 0:
            self.subs[0] = _sample_subgraphs(
                self.d, cfg.method, cfg.num_layers, self.rng, cfg.fdp_degree, cfg.fdp_variant, self.seed
            )
        return self.subs[0], self.batches.pick(self.subs[0])

    def draw(self, t: int):
        """Step ``t``'s batch (:meth:`pick`): dense inputs, root labels, node ids (the features None where the ghost
        path reads the first layer from :class:`~dpgnn.nn.drw.SplitFeatures`)."""
        features = self.split is None or self.cfg.per_sample != "ghost"
        return self.batches.inputs(*self.pick(t), features=features)

    def update(self, sums: dict[str, Tensor]) -> None:
        """Noise and Adam from the step's clipped sums (the audit hook, if any, around the noise)."""
        info = None
        if self.canary is not None:
            info = DPStepInfo(
                population=self.subs[0].num_subgraphs, batch=self.s.batch, poisson=False, std=self.sigma, clip=self.thr
            )
        self.private(sums, info)

    def step(self, t: int) -> None:
        """Noisy step ``t`` with its evaluation when due."""
        xb, ab, yb, nodes = self.draw(t)
        if self.cfg.per_sample == "ghost":
            sums = clipped_grad_sum(self.model, xb, ab, yb, self.thr, self.d.multilabel, split=self.split, nodes=nodes)
        else:
            sums = clip_and_noise(per_subgraph_grads(self.model, xb, ab, yb, self.d.multilabel), self.thr, 0.0)
        self.update(sums)
        if self.sel.due(t):
            self.sel.record(t)

    def result(
        self, delta: float, seconds: float, accounted: dict[int, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """:func:`run_dp`'s result dict of the finished run; ``accounted`` (runs of one configuration): the
        accounting of each number of steps, filled and reused (it depends on nothing else)."""
        accounted = {} if accounted is None else accounted
        steps = self.sel.steps
        if steps not in accounted:
            accounted[steps] = _accounting(self.cfg, self.s, delta, steps)
        ledger = _dp_ledger(
            self.d, self.cfg, self.s, delta, self.sigma, self.C, self.sel, copy.deepcopy(accounted[steps])
        )
        n = self.subs[0].num_subgraphs
        return _dp_result(self.d, self.cfg, self.s, ledger, self.sel, self.model, self.sigma, self.C, n, seconds)


def _start(d: DRWData, cfg: DPTrainConfig, s: _Sampling, seed: int, dev, x: Tensor, split, canary=None) -> _Run:
    """Set up one seed's run as :func:`run_dp` does: seeds, first subgraphs, model, Adam, clipping thresholds, noise
    generator, the step-0 evaluation when a checkpoint needs it. ``x`` (on ``dev``) and ``split``
    (:func:`split_features` of it) are read only, so runs of one dataset may share them."""
    L = cfg.num_layers
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(stable_seed("drw-noise", seed))
    T = s.sched.steps if cfg.max_steps is None else min(s.sched.steps, _int(cfg.max_steps, "max_steps", 0))
    subs = [_sample_subgraphs(d, cfg.method, L, rng, cfg.fdp_degree, cfg.fdp_variant, seed)]
    if subs[0].num_subgraphs < s.batch:
        raise RuntimeError(f"only {subs[0].num_subgraphs} subgraphs for a batch of {s.batch}")  # excluded by q
    model = _make(d, "gcn", L, cfg.hidden, dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    adj = d.adj_full.to(dev)
    batches = _SubgraphBatches(d, x, s.batch, rng, dev)
    thr = _thresholds(model, d, cfg, batches, subs[0])
    C = math.sqrt(sum(c * c for c in thr.values()))
    sigma = cfg.noise_multiplier * s.sens_factor * C
    sel = _Selection(model, d, x if split is None else split, adj, cfg, s.sched, T)
    if 0 in sel.cps:
        sel.record(0)  # a checkpoint no trained step fits under: reported with no selected model (test F1 NaN)
    private = NoisyStep(
        opt, dict(model.named_parameters()), lambda sums: add_noise(sums, sigma, gen), s.batch, canary=canary
    )
    return _Run(d, cfg, s, rng, subs, model, batches, thr, C, sigma, sel, private, split, T, seed, canary)


class _SubgraphBatches:
    """``batches(subs)``: ``B`` of the subgraphs uniformly without replacement (from ``rng``), as dense inputs,
    root labels and node ids (:func:`dense_subgraph_inputs`)."""

    def __init__(self, d: DRWData, x: Tensor, batch: int, rng: np.random.Generator, dev: torch.device):
        self.x, self.y, self.batch, self.rng, self.dev = x, d.y.to(dev), batch, rng, dev

    def __call__(self, s: Subgraphs):
        return self.inputs(s, self.pick(s))

    def pick(self, s: Subgraphs) -> Tensor:
        """``B`` indices into ``s``, uniformly without replacement."""
        return torch.as_tensor(self.rng.choice(s.num_subgraphs, size=self.batch, replace=False))

    def inputs(self, s: Subgraphs, idx: Tensor, *, features: bool = True):
        """The subgraphs ``idx`` of ``s`` as dense inputs (no features without ``features``), root labels and node
        ids."""
        dev = self.dev
        subs = Subgraphs(s.nodes.to(dev), s.adj.to(dev))
        xb, ab = dense_subgraph_inputs(self.x, subs, idx.to(dev), features=features)
        return xb, ab, self.y[s.nodes[idx, 0].to(dev)], s.nodes[idx].to(dev)


def _thresholds(model: nn.Module, d: DRWData, cfg: DPTrainConfig, batches: _SubgraphBatches, subs: Subgraphs):
    """The per-tensor clipping thresholds: fixed (``clip_norm``), or calibrated on up to 10 roots of a first batch
    (``clip_fraction``; data-dependent, not private)."""
    if cfg.clip_norm is not None:
        return clip_thresholds(None, clip_norm=cfg.clip_norm, names=[k for k, _ in model.named_parameters()])
    xb, ab, yb, _ = batches(subs)
    g = per_subgraph_grads(model, xb[:10], ab[:10], yb[:10], d.multilabel)
    return clip_thresholds(g, clip_fraction=cfg.clip_fraction)


def _accounting(cfg: DPTrainConfig, s: _Sampling, delta: float, steps: int) -> dict[str, Any]:
    """:func:`dpgnn.privacy.drw.run_accounting` of ``steps`` noisy steps of ``cfg``."""
    return run_accounting(
        cfg.method,
        noise_multiplier=cfg.noise_multiplier,
        steps=steps,
        delta=delta,
        sample_rate=s.q,
        num_train=s.num_train,
        batch=s.batch,
        max_affected=s.affected,
        accountant=cfg.accountant,
        fidelity=cfg.fidelity,
        fdp_variant=cfg.fdp_variant,
    )


def _dp_ledger(
    d: DRWData, cfg: DPTrainConfig, s: _Sampling, delta: float, sigma: float, C: float, sel: _Selection, acct
) -> dict[str, Any]:
    """The privacy ledger of a finished DP run (the ε of the steps taken, accounted by :func:`_accounting`)."""
    guarantee = guarantee_fields(scaling=d.scaling, clip_norm=cfg.clip_norm, select=cfg.select, method=cfg.method)
    # epsilon_sound: the tight bound of the accounted steps where they are all the run reads, else nothing holds
    sound = acct["epsilon_sound"] if guarantee["guarantee"] == "sound" else math.inf
    return {
        "level": "feature",
        "neighbouring": "replace one node's features",
        "mechanism": "gaussian",
        "noise_multiplier": cfg.noise_multiplier,
        "sigma": sigma,
        "clip_total": C,
        "sensitivity": s.sens_factor * C,
        "sampling_rate": s.q,
        "sampling": "uniform without replacement",
        "batch": s.batch,
        "steps": sel.steps,
        "epsilon": acct["epsilon"],
        "delta": delta,
        "accountant": acct["accountant"],
        "event": acct["event"],
        "epsilon_sound": sound,
        "max_affected": s.affected,
        "clip_calibration": "data-dependent (not private)" if cfg.clip_norm is None else "fixed",
        "scaling": d.scaling,
        "select": cfg.select,
        "fidelity": cfg.fidelity,
        "early_stopped_at": sel.stopped,
        "selection": "among trained steps (>= 1)",
        **guarantee,
    }


def _dp_result(d, cfg, s: _Sampling, ledger, sel: _Selection, model, sigma, C, num_subgraphs, seconds):
    """:func:`run_dp`'s result dict."""
    best = sel.best
    return {
        "dataset": d.name,
        "method": cfg.method,
        "num_layers": cfg.num_layers,
        "hidden": cfg.hidden,
        "test_f1": best["test"],
        "val_f1": best["val"] if best["val"] >= 0 else math.nan,
        "train_f1": best["train"],
        "best_step": best["step"],
        "steps": sel.steps,
        "epsilon": ledger["epsilon"],
        "delta": ledger["delta"],
        # diagnostics of the selected model: how concentrated its test predictions are, and the expected norm
        # of the noise over the largest possible clipped sum (B * C): > 1 means the noise dominates every step
        **prediction_spread(best.get("pred"), d.num_classes),
        "noise_to_signal": sigma * math.sqrt(sum(p.numel() for p in model.parameters())) / (s.batch * C),
        "sampling_rate": s.q,
        "level": "feature",
        "ledger": ledger,
        "checkpoints": sel.rows,
        "history": sel.history,
        "num_subgraphs": num_subgraphs,
        "seconds": seconds,
        "versions": versions(),
    }
