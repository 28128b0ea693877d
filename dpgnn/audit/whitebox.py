"""White-box audits of central DP training: Dirac gradient canaries inserted into the methods' own DP-SGD steps.

Threat model (Nasr et al. 2023, "Tight auditing of differentially private machine learning", white-box gradient
canaries; Steinke, Nasr & Jagielski 2023, Dirac canaries): the adversary chooses the gradient of one example (the
canary) and sees every privatized gradient sum the accountant charges for. The method runs unchanged; its DP-SGD
step calls a :class:`dpgnn.methods.hooks.DPStepHook` on its real noise path (ProGAP/GAP/DP-MLP
:func:`~dpgnn.methods.progap.train_stage`, DP-GNN :func:`~dpgnn.methods.dp_gnn.train_dp_gnn`, DRW/FDP
:func:`~dpgnn.methods.drw.train_dp`). :class:`DiracCanaries` is that hook:

- **Canary gradient.** Canary ``j`` owns coordinate ``j`` of a parameter tensor (flat clipping: the largest tensor,
  amplitude ``C``; per-tensor clipping, DRW/FDP: coordinate ``j`` of every tensor ``t`` with amplitude ``C_t``, so
  ``‖g‖ = C``): a gradient of exactly the clipping norm, the worst case of one clipped example.
- **Neighbouring relation** (:class:`CanaryRelation`): the canary's units (examples the changed record enters) and
  what each contributes with the record in / out, in multiples of ``C`` along the canary direction. Add/remove one
  node (ProGAP, GAP, DP-MLP): one unit, ``+1`` / ``0``. Replace one node's features (DRW): one subgraph, ``+1`` /
  ``−1``. DP-GNN (add/remove a node with its edges, degree ≤ D): the node's own root ``+1`` / ``0`` and D neighbour
  roots whose clipped gradients flip, ``+1`` / ``−1`` (a change of ``(2D+1)C`` within the accountant's
  ``2(D+1)C``). FDP (replace features, in at most K subgraphs): K units ``+1`` / ``−1``.
- **Sampling.** Each step the canary's units are drawn by the step's own law (:class:`~dpgnn.methods.hooks.
  DPStepInfo`: Poisson at the method's rate, or ``B`` of the population uniformly without replacement: a
  hypergeometric count of the canary's units), hidden from the adversary.
- **Observation.** ``o_t = ⟨noisy_t − clean_t, u_j⟩`` (``u_j`` the unit canary direction, ``clean_t`` the sum
  before the canary): ``N(C·c_t, σ²)`` with ``c_t`` the canary's contribution. Subtracting ``clean_t`` is what a
  white-box auditor can do only when it knows the batch: the hook refuses a secret batch (sampling rate < 1) unless
  no real gradient touches its coordinates (``clean_t = 0``). Full-batch runs on graphs whose batches are
  deterministic (every training node / root / subgraph in every step) are what the series audits.
- **Statistic.** The log-likelihood ratio of the observed ``o_1..o_T`` under "in" vs "out", each step a mixture over
  the sampling law (:func:`llr_scores`; for a full batch it is the sum of projections).

The canaries own disjoint coordinates and the noise is independent per coordinate, so the ``m`` canaries of one run
(each "in" with probability 1/2) are ``m`` independent trials of the same test. Many trials over a few runs give
the ε lower bound of :func:`dpgnn.audit.bounds.threshold_audit` (Clopper–Pearson, confidence ``1 − alpha``, the
claimed δ), to be compared with the accounted ε. A correct method stays at or below it; the same method with its
noise multiplier halved under the same claim must be flagged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from scipy import stats
from scipy.special import logsumexp
from torch import Tensor

from dpgnn.audit.bounds import threshold_audit
from dpgnn.methods.hooks import DPStepInfo

__all__ = ["CanaryRelation", "ADD_REMOVE", "REPLACE", "DiracCanaries", "unit_law", "llr_scores", "threshold_from_runs"]


@dataclass(frozen=True)
class CanaryRelation:
    """What one changed record contributes to a step's clipped sum along its canary direction, in units of ``C``.

    ``own_in``/``own_out``: the record's own unit with the record in / out; ``others`` more units (e.g. DP-GNN's D
    neighbour roots, FDP's other subgraphs) contributing ``other_in``/``other_out``.
    """

    own_in: float = 1.0
    own_out: float = 0.0
    others: int = 0
    other_in: float = 1.0
    other_out: float = -1.0

    @property
    def units(self) -> int:
        """The units one record touches in a step: its own and the ``others``."""
        return 1 + int(self.others)

    def sensitivity(self) -> float:
        """L2 change of the clipped sum (in units of ``C``) when every unit is sampled."""
        return abs(self.own_in - self.own_out) + self.others * abs(self.other_in - self.other_out)


#: add/remove one example (ProGAP/GAP/DP-MLP node level): sensitivity C
ADD_REMOVE = CanaryRelation()
#: replace one example (DRW feature level: one subgraph): sensitivity 2C
REPLACE = CanaryRelation(own_in=1.0, own_out=-1.0)


def unit_law(relation: CanaryRelation, info: DPStepInfo) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint law of (own unit sampled, number of other units sampled) in one step: ``(own, others, prob)`` arrays
    over the support. Poisson: independent Bernoulli(rate) units; uniform without replacement: a hypergeometric
    number ``k`` of the canary's units in the batch, the own unit among them with probability ``k/U``."""
    u, d = relation.units, relation.others
    own, nb = np.meshgrid([0, 1], np.arange(d + 1), indexing="ij")
    own, nb = own.ravel(), nb.ravel()
    if info.poisson:
        q = info.rate
        p = np.where(own == 1, q, 1 - q) * stats.binom.pmf(nb, d, q)
    else:
        if info.batch > info.population:
            raise ValueError(f"batch ({info.batch}) exceeds the population ({info.population})")
        k = own + nb
        pk = stats.hypergeom.pmf(k, info.population, min(u, info.population), info.batch)
        # P(own in | k) = k/U; the k − own others are any of the D others (uniform subset)
        p = pk * np.where(own == 1, k / u, (u - k) / u)
    keep = p > 0
    return own[keep], nb[keep], p[keep] / p[keep].sum()


@dataclass
class DiracCanaries:
    """The :class:`~dpgnn.methods.hooks.DPStepHook` of the white-box audit (module docstring).

    Args:
        included: one bit per canary (in / out), the auditor's secret coin flips.
        relation: the neighbouring relation's worst case (:class:`CanaryRelation`).
        seed: draws the canary units' sampling (the step's law), independent of the method's generators.

    After the run, ``observations`` holds one ``[m]`` array per step and ``laws`` the step's sampling law and noise
    std; ``inserted`` the contribution (units of ``C``) each canary received per step (tests).
    """

    included: np.ndarray
    relation: CanaryRelation = ADD_REMOVE
    seed: int = 0
    observations: list[np.ndarray] = field(default_factory=list)
    laws: list[tuple[np.ndarray, np.ndarray, np.ndarray, float, float]] = field(default_factory=list)
    inserted: list[np.ndarray] = field(default_factory=list)
    norms: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.included = np.asarray(self.included, dtype=bool)
        if self.included.ndim != 1 or self.included.size < 2:
            raise ValueError("included must be a vector of at least 2 canary bits")
        self._rng = np.random.default_rng(self.seed)
        self._clean: np.ndarray | None = None

    @property
    def num_canaries(self) -> int:
        """The number of canaries ``m`` (one coordinate each)."""
        return int(self.included.size)

    def _amplitudes(self, sums: Mapping[str, Tensor], clip: float | Mapping[str, float]) -> dict[str, float]:
        m = self.num_canaries
        if isinstance(clip, Mapping):  # per-tensor clipping: every tensor, its own norm
            amps = {k: float(c) for k, c in clip.items()}
        else:  # flat clipping: the largest tensor, the whole norm
            amps = {max(sums, key=lambda k: sums[k].numel()): float(clip)}
        small = [k for k in amps if sums[k].numel() < m]
        if small:
            raise ValueError(f"{m} canaries need {m} coordinates in every canary tensor; {small} are smaller")
        return amps

    def _project(self, sums: Mapping[str, Tensor], amps: Mapping[str, float]) -> np.ndarray:
        m = self.num_canaries
        norm = math.sqrt(sum(a * a for a in amps.values()))
        return sum(a * sums[k].detach().view(-1)[:m].double().cpu().numpy() for k, a in amps.items()) / norm

    def _draw(self, info: DPStepInfo) -> tuple[np.ndarray, np.ndarray]:
        """(own sampled [m], others sampled [m]) of every canary by the step's law."""
        m, rel = self.num_canaries, self.relation
        if info.poisson:
            own = self._rng.random(m) < info.rate
            nb = self._rng.binomial(rel.others, info.rate, size=m) if rel.others else np.zeros(m, dtype=int)
            return own.astype(int), nb
        k = self._rng.hypergeometric(
            min(rel.units, info.population), max(info.population - rel.units, 0), info.batch, size=m
        )
        own = (self._rng.random(m) < k / rel.units).astype(int)
        return own, k - own

    def before_noise(self, sums: dict[str, Tensor], info: DPStepInfo) -> None:
        """Add each canary's contribution to the clipped sums and record the step's clean projection and law."""
        amps = self._amplitudes(sums, info.clip)
        clean = self._project(sums, amps)
        if info.rate < 1.0 and np.any(clean != 0.0):
            raise ValueError(
                "the batch is secret (sampling rate < 1) but real gradients use the canary coordinates:"
                " audit a full batch or use coordinates no real example touches"
            )
        own, nb = self._draw(info)
        rel = self.relation
        contrib = np.where(self.included, rel.own_in * own + rel.other_in * nb, rel.own_out * own + rel.other_out * nb)
        for k, a in amps.items():
            flat = sums[k].view(-1)
            flat[: self.num_canaries] += torch.as_tensor(a * contrib, dtype=flat.dtype, device=flat.device)
        self._clean = clean
        self.inserted.append(contrib.astype(float))
        norm = math.sqrt(sum(a * a for a in amps.values()))
        self.norms.append(norm)
        o, n, p = unit_law(rel, info)
        self.laws.append((o, n, p, float(info.std), norm))

    def after_noise(self, noisy: dict[str, Tensor], info: DPStepInfo) -> None:
        """Record the noisy sums' projection on the canary coordinates, less the clean one (one observation)."""
        if self._clean is None:
            raise RuntimeError("after_noise without before_noise")
        amps = self._amplitudes(noisy, info.clip)
        self.observations.append(self._project(noisy, amps) - self._clean)
        self._clean = None

    def scores(self) -> np.ndarray:
        """The log-likelihood-ratio statistic of every canary (:func:`llr_scores`)."""
        return llr_scores(self.observations, self.laws, self.relation)


def llr_scores(observations: list[np.ndarray], laws: list, relation: CanaryRelation) -> np.ndarray:
    """Σ_t log p_in(o_t) − log p_out(o_t) per canary, each step's density a Gaussian mixture over the sampling
    law ``(own, others, prob)`` with means ``C·(own·own_in + others·other_in)`` (in) and the ``_out`` analogue,
    standard deviation the step's noise std. A step without noise (std 0) is skipped (no randomness to score)."""
    if not observations:
        raise ValueError("no observed steps: did the method call the hook?")
    total = np.zeros_like(observations[0])
    r = relation
    for o_t, (own, nb, p, std, c) in zip(observations, laws):
        if not std > 0:
            continue
        mu_in = c * (own * r.own_in + nb * r.other_in)
        mu_out = c * (own * r.own_out + nb * r.other_out)
        lp = np.log(p)[None, :]
        z_in = -((o_t[:, None] - mu_in[None, :]) ** 2) / (2 * std**2)
        z_out = -((o_t[:, None] - mu_out[None, :]) ** 2) / (2 * std**2)
        total += logsumexp(lp + z_in, axis=1) - logsumexp(lp + z_out, axis=1)
    return total


def threshold_from_runs(
    scores: list[np.ndarray], included: list[np.ndarray], *, delta: float, alpha: float
) -> dict[str, Any]:
    """The ε lower bound of the threshold test on the canaries of several runs (i.i.d. trials, module docstring):
    :func:`dpgnn.audit.bounds.threshold_audit` on the "in" and "out" scores, runs in order."""
    s, b = np.concatenate(scores), np.concatenate(included).astype(bool)
    thr, bound = threshold_audit(s[b], s[~b], delta=delta, alpha=alpha)
    return {
        "epsilon_lb": bound.epsilon_lb,
        "epsilon_point": bound.epsilon_point,
        "threshold": thr,
        "tpr": bound.tpr,
        "fpr": bound.fpr,
        "trials_in": int(b.sum()),
        "trials_out": int((~b).sum()),
    }


# ---------------------------------------------------------------------------------------------------------------
# The audited methods: claim (the ledger calibrated for the claimed ε) and one run with the hook, through each
# method's public entry point. ``noise_factor`` < 1 trains with the claim's noise multiplier × factor (the broken
# variant); the claim stays the one calibrated for the full noise.
# ---------------------------------------------------------------------------------------------------------------
def _n_train(data) -> int:
    return int(data.train_mask.sum())


def _progap_family(method: str):
    def claim(data, epsilon: float, kw: dict[str, Any]) -> dict[str, Any]:
        from dpgnn.privacy.progap import default_delta, privacy_ledger

        n = _n_train(data)
        common = dict(
            delta=default_delta(n),
            target_epsilon=epsilon,
            train_nodes=n,
            batch_size=kw["batch_size"],
            epochs=kw["epochs"],
            clip=1.0,
        )
        if method == "dp-mlp":
            return privacy_ledger("node", depth=0, aggregations=0, dpsgd_runs=1, method="dp-mlp", **common)
        if method == "gap-node":
            return privacy_ledger(
                "node", depth=kw["hops"], dpsgd_runs=2, max_degree=kw["max_degree"], method="gap", **common
            )
        return privacy_ledger("node", depth=kw["depth"], max_degree=kw["max_degree"], **common)

    def run(data, noise: float, seed: int, canary: DiracCanaries, kw: dict[str, Any]) -> dict[str, Any]:
        if method == "dp-mlp":
            from dpgnn.methods.progap_baselines import train_mlp

            res = train_mlp(
                data,
                level="node",
                noise=noise,
                layers=kw.get("layers", 2),
                hidden=kw["hidden"],
                lr=kw["lr"],
                epochs=kw["epochs"],
                batch_size=kw["batch_size"],
                seed=seed,
                device="cpu",
                canary=canary,
            )
        elif method == "gap-node":
            from dpgnn.methods.gap import GAPConfig, train_gap

            cfg = GAPConfig(
                level="node",
                noise=noise,
                **{k: kw[k] for k in ("hops", "hidden", "lr", "epochs", "batch_size", "max_degree")},
            )
            res = train_gap(data, cfg, seed=seed, device="cpu", canary=canary)
        else:
            from dpgnn.methods.progap import ProGAPConfig, train_progap

            cfg = ProGAPConfig(
                level="node",
                noise=noise,
                **{k: kw[k] for k in ("depth", "hidden", "lr", "epochs", "batch_size", "max_degree")},
            )
            res = train_progap(data, cfg, seed=seed, device="cpu", canary=canary)
        return res.ledger

    return claim, run, lambda kw: ADD_REMOVE


def _dp_gnn():
    def claim(data, epsilon: float, kw: dict[str, Any]) -> dict[str, Any]:
        from dpgnn.methods.dp_gnn import dp_gnn_ledger
        from dpgnn.privacy.progap import default_delta

        n = _n_train(data)
        return dp_gnn_ledger(
            train_nodes=n,
            batch_size=kw["batch_size"],
            epochs=kw["epochs"],
            max_degree=kw["max_degree"],
            delta=default_delta(n),
            target_epsilon=epsilon,
        )

    def run(data, noise: float, seed: int, canary: DiracCanaries, kw: dict[str, Any]) -> dict[str, Any]:
        from dpgnn.methods.dp_gnn import DPGNNConfig, train_dp_gnn

        cfg = DPGNNConfig(noise=noise, **{k: kw[k] for k in ("hidden", "lr", "epochs", "batch_size", "max_degree")})
        return train_dp_gnn(data, cfg, seed=seed, device="cpu", canary=canary).ledger

    # the node's own root (+C / absent) and its D neighbour roots (clipped gradient +C / −C)
    return claim, run, lambda kw: CanaryRelation(own_in=1.0, own_out=0.0, others=int(kw["max_degree"]))


def _drw_family(method: str):
    def setup(data, kw):
        from dpgnn.methods import drw

        d = drw.prepare("white-box-canary-graph", data=data, scaling="none")
        return d, int(kw["batch"]), float(kw["delta"])

    def accounted(data, z: float, steps: int, kw) -> float:
        from dpgnn.data.random_walks import sampler_bound
        from dpgnn.privacy.drw import run_accounting
        from dpgnn.privacy.fdp import max_affected

        n, b = _n_train(data), int(kw["batch"])
        q = 1.0 if method == "fdp" else sampler_bound(method, b, n, kw["num_layers"])
        return float(
            run_accounting(
                method,
                noise_multiplier=z,
                steps=steps,
                delta=float(kw["delta"]),
                sample_rate=q,
                num_train=n,
                batch=b,
                max_affected=max_affected(kw["fdp_degree"], kw["num_layers"]),
            )["epsilon"]
        )

    def claim(data, epsilon: float, kw: dict[str, Any]) -> dict[str, Any]:
        steps = int(kw["steps"])
        z = _bisect_noise(lambda z: accounted(data, z, steps, kw), epsilon)
        return {
            "epsilon": accounted(data, z, steps, kw),
            "delta": float(kw["delta"]),
            "noise_multiplier": z,
            "steps": steps,
            "target_epsilon": epsilon,
        }

    def run(data, noise: float, seed: int, canary: DiracCanaries, kw: dict[str, Any]) -> dict[str, Any]:
        from dpgnn.methods import drw

        d, b, delta = setup(data, kw)
        steps = int(kw["steps"])
        target = accounted(data, noise, steps, kw) * (1 + 1e-9)  # exactly ``steps`` steps at this noise
        res = drw.train_dp(
            d,
            method,
            num_layers=kw["num_layers"],
            hidden=kw.get("hidden", 16),
            lr=kw["lr"],
            clip_fraction=None,
            clip_norm=1.0,
            noise_multiplier=noise,
            batch=b,
            delta=delta,
            target_epsilon=target,
            max_steps=steps,
            seed=seed,
            eval_every=10**9,
            select="last",
            fdp_degree=kw["fdp_degree"],
            device="cpu",
            canary=canary,
        )
        return res["ledger"]

    def relation(kw) -> CanaryRelation:
        from dpgnn.privacy.fdp import max_affected

        if method == "fdp":  # one node's features in K subgraphs, each clipped gradient flips
            return CanaryRelation(own_in=1.0, own_out=-1.0, others=max_affected(kw["fdp_degree"], kw["num_layers"]) - 1)
        return REPLACE

    return claim, run, relation


def _bisect_noise(eps_of, target: float, lo: float = 1e-2, hi: float = 1e3, iters: int = 60) -> float:
    """The smallest noise multiplier (geometric bisection) whose accounted ε is ≤ ``target`` (conservative)."""
    if eps_of(hi) > target:
        raise ValueError(f"no noise multiplier up to {hi} reaches epsilon <= {target}")
    for _ in range(iters):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps_of(mid) <= target else (mid, hi)
    return hi


METHODS: dict[str, tuple] = {
    "progap-node": _progap_family("progap-node"),
    "gap-node": _progap_family("gap-node"),
    "dp-mlp": _progap_family("dp-mlp"),
    "dp-gnn": _dp_gnn(),
    "drw": _drw_family("drw"),
    "fdp": _drw_family("fdp"),
}
#: audited method -> privacy unit of its claim
UNIT_OF = {
    "progap-node": "node",
    "gap-node": "node",
    "dp-mlp": "node",
    "dp-gnn": "node",
    "drw": "feature",
    "fdp": "feature",
}


def audit_white_box(
    method: str,
    data,
    *,
    epsilon: float,
    runs: int,
    canaries: int,
    seed: int,
    noise_factor: float = 1.0,
    alpha: float = 0.05,
    **method_kw: Any,
) -> dict[str, Any]:
    """White-box Dirac-canary audit of ``method`` (one of :data:`METHODS`) at the claimed ``epsilon``.

    The claim's ledger is calibrated once (the method's own accountant); ``runs`` runs of the method on ``data``,
    each with ``canaries`` Dirac canaries (in/out by fair coins), train with the claim's noise multiplier ×
    ``noise_factor`` (``< 1``: the broken variant, its claim unchanged). ``method_kw``: the method's settings
    (``epochs``, ``batch_size``, ``hidden``, ``lr``, ``max_degree``, ``depth``/``hops``; DRW/FDP: ``steps``,
    ``batch``, ``delta``, ``num_layers``, ``fdp_degree``). Returns a flat row: the claimed ε and δ, the ε accounted
    for the run actually trained (``epsilon_run``), the audited lower bound ``epsilon_lb`` (confidence
    ``1 − alpha``, the claimed δ), the trial counts and the run's ledger.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; valid: {sorted(METHODS)}")
    if isinstance(epsilon, bool) or not (isinstance(epsilon, (int, float)) and 0 < epsilon < math.inf):
        raise ValueError(f"epsilon (the claim) must be a finite number > 0, got {epsilon!r}")
    if isinstance(noise_factor, bool) or not (isinstance(noise_factor, (int, float)) and 0 < noise_factor <= 1):
        raise ValueError(f"noise_factor must be in (0, 1], got {noise_factor!r}")
    for name, v, low in (("runs", runs, 1), ("canaries", canaries, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    from dpgnn.utils import stable_seed

    claim_of, run_of, relation_of = METHODS[method]
    claim = claim_of(data, float(epsilon), method_kw)
    noise = float(claim["noise_multiplier"]) * float(noise_factor)
    relation = relation_of(method_kw)
    scores, bits, steps, ledger = [], [], 0, {}
    for r in range(runs):
        inc = np.random.default_rng(stable_seed("white-box-bits", method, seed, r)).random(canaries) < 0.5
        hook = DiracCanaries(inc, relation, seed=stable_seed("white-box-units", method, seed, r))
        ledger = run_of(data, noise, stable_seed("white-box-run", method, seed, r), hook, method_kw)
        scores.append(hook.scores())
        bits.append(inc)
        steps = len(hook.observations)
    res = threshold_from_runs(scores, bits, delta=float(claim["delta"]), alpha=alpha)
    ledger = {k: v for k, v in ledger.items() if k not in ("event", "config")}
    if noise_factor != 1.0:
        ledger["guarantee"] = "as_published"
        ledger["issues"] = list(ledger.get("issues", [])) + [
            f"deliberately broken variant: noise multiplier x {noise_factor:g} of the one calibrated for the claimed "
            f"epsilon {float(claim['epsilon']):.4g}"
        ]
    ledger["audit"] = (
        "white-box Dirac gradient canaries in every DP-SGD step, likelihood-ratio threshold test, Clopper-Pearson"
    )
    return {
        "method": method,
        "unit": UNIT_OF[method],
        "epsilon_claimed": float(claim["epsilon"]),
        "epsilon_run": float(ledger["epsilon"]),
        "delta": float(claim["delta"]),
        "noise_factor": float(noise_factor),
        "noise_multiplier": noise,
        "runs": runs,
        "canaries": canaries,
        "steps_observed": steps,
        "canary_sensitivity": relation.sensitivity(),
        "alpha": alpha,
        **res,
        "ledger": ledger,
    }


def matching_graph(num_nodes: int, *, num_features: int, num_classes: int, seed: int):
    """The DRW/FDP audit graph: ``num_nodes`` (even) nodes joined in fixed pairs ``(2i, 2i+1)`` (a perfect matching,
    both directions), every node a training, validation and test node, features uniform in [0, 1), labels uniform
    over ``num_classes``. Its DRW walks of length 1 are exactly the pairs and its FDP neighbourhoods (degree ≤ 1)
    exactly the pairs seen from each root, so a batch of all ``N/2`` subgraphs (DRW, accounted rate
    ``B/m_min = 1``) or all ``N`` roots (FDP) is deterministic: the white-box auditor knows every step's batch."""
    from torch_geometric.data import Data

    from dpgnn.utils import make_generator

    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 2 or num_nodes % 2:
        raise ValueError(f"num_nodes must be an even integer >= 2, got {num_nodes!r}")
    gen = make_generator(seed)
    a = torch.arange(0, num_nodes, 2)
    ei = torch.cat([torch.stack([a, a + 1]), torch.stack([a + 1, a])], dim=1)
    every = torch.ones(num_nodes, dtype=torch.bool)
    return Data(
        x=torch.rand(num_nodes, num_features, generator=gen),
        y=torch.randint(0, num_classes, (num_nodes,), generator=gen),
        edge_index=ei,
        num_nodes=num_nodes,
        train_mask=every,
        val_mask=every.clone(),
        test_mask=every.clone(),
    )
