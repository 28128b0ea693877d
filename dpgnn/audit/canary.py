"""Canary audits of central DP: node-level DP-SGD (one training run) and edge-level aggregate perturbation.

**Node level, DP-SGD** (:func:`audit_dpsgd_one_run`). ``m`` canary nodes — isolated nodes with out-of-distribution
features and random labels, the hardest examples for a model to fit without memorising them — are appended to a small
graph and each is put into the training set independently with probability 1/2 (:func:`insert_canaries`). One
DP-MLP (the node-level DP-Adam stage that ProGAP, GAP and the DP-MLP baseline share:
:func:`dpgnn.methods.progap.train_stage` with Poisson sampling, per-sample clipping and opacus' noise, the noise
multiplier calibrated by :func:`dpgnn.privacy.progap.calibrate_noise` for exactly this run) is trained; the
canaries' negative losses are membership scores and the one-run audit of Steinke, Nasr & Jagielski (2023) turns
the auditor's right guesses into an ε lower bound (:func:`dpgnn.audit.bounds.one_run_guess_audit`). The same
run without noise (ε = ∞) is the positive control that shows the audit has power.

**Edge level, aggregate perturbation** (:func:`audit_edge_aggregation`). GAP/ProGAP release ``K`` noisy
aggregates ``Σ_{j→i} h_j/‖h_j‖ + N(0, σ²I)`` (:class:`dpgnn.methods.progap.NAP`); one edge changes each by one unit
row. The audit inserts (or not) one canary edge ``u → v`` in a small random graph, runs the ``K`` NAP queries with
the σ that the edge-level accountant calibrates for the claimed ε, and scores ``Σ_k ⟨agg_k[v] − base_k[v], ĥ_u⟩``
(the white-box auditor knows everything but the noise). Many trials per side give a Clopper–Pearson bound through
the threshold test of :func:`dpgnn.audit.bounds.threshold_audit`, with the accounted δ.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from dpgnn.audit.bounds import one_run_guess_audit, threshold_audit
from dpgnn.methods.progap import NAP, DPSettings, train_stage
from dpgnn.nn.progap import MLP, StageModel
from dpgnn.privacy.progap import calibrate_noise, default_delta, guarantee_statement, privacy_ledger
from dpgnn.utils import make_generator, stable_seed

__all__ = ["insert_canaries", "audit_dpsgd_one_run", "audit_edge_aggregation", "node_statement", "edge_statement"]


def node_statement(private: bool) -> dict[str, Any]:
    """Guarantee fields of the audited DP-MLP: ProGAP's node-level statement of one DP-SGD run and no aggregation
    (the DP-MLP baseline's, :func:`dpgnn.privacy.progap.guarantee_statement`; the best validation epoch is restored,
    model selection on private labels), or the non-private statement of the no-noise control (ε = ∞)."""
    return guarantee_statement("node", aggregations=0, dpsgd_runs=1) if private else guarantee_statement("none")


def edge_statement(hops: int) -> dict[str, Any]:
    """Guarantee fields of ``hops`` NAP queries calibrated with sensitivity 1: ProGAP/GAP's edge-level statement for
    the authors' directed relation (:func:`dpgnn.privacy.progap.guarantee_statement`), the claim under audit."""
    return guarantee_statement("edge", edge_relation="directed", aggregations=hops)


def insert_canaries(
    data: Data, num_canaries: int, *, seed: int, num_classes: int | None = None, feature_scale: float = 4.0
) -> tuple[Data, torch.Tensor, torch.Tensor]:
    """``data`` with ``num_canaries`` canary nodes appended; returns ``(new_data, canary_index, included)``.

    Canaries are isolated nodes (no edges) with dense out-of-distribution features ``feature_scale · N(0, I)``
    (input-space canaries in the sense of Jagielski et al. 2020 and Nasr et al. 2021: points a model can only fit by
    memorising them) and labels drawn uniformly from the classes. Each is in the training mask independently with
    probability 1/2 (``included``); canaries are never in the validation or test masks. The input is not modified.
    """
    if isinstance(num_canaries, bool) or not isinstance(num_canaries, int) or num_canaries < 2:
        raise ValueError(f"num_canaries must be an integer >= 2, got {num_canaries!r}")
    for m in ("train_mask", "val_mask", "test_mask"):
        if getattr(data, m, None) is None:
            raise ValueError(f"data needs a {m} to insert canaries into")
    gen = make_generator(stable_seed("canaries", seed))
    n, d = data.x.shape
    c = int(num_classes if num_classes is not None else int(data.y.max()) + 1)
    if not (isinstance(feature_scale, (int, float)) and math.isfinite(feature_scale) and feature_scale > 0):
        raise ValueError(f"feature_scale must be a finite number > 0, got {feature_scale!r}")
    xc = float(feature_scale) * torch.randn(num_canaries, d, generator=gen)
    yc = torch.randint(0, c, (num_canaries,), generator=gen)
    included = torch.rand(num_canaries, generator=gen) < 0.5
    false = torch.zeros(num_canaries, dtype=torch.bool)
    out = Data(
        x=torch.cat([data.x.float(), xc]),
        y=torch.cat([data.y, yc.to(data.y.dtype)]),
        edge_index=data.edge_index.clone(),
        num_nodes=n + num_canaries,
        train_mask=torch.cat([data.train_mask, included]),
        val_mask=torch.cat([data.val_mask, false]),
        test_mask=torch.cat([data.test_mask, false]),
    )
    return out, torch.arange(n, n + num_canaries), included


def audit_dpsgd_one_run(
    data: Data,
    *,
    epsilon: float,
    num_canaries: int,
    seed: int,
    delta: float | None = None,
    epochs: int = 20,
    batch_size: int = 64,
    lr: float = 0.01,
    hidden: int = 64,
    layers: int = 2,
    clip: float = 1.0,
    guesses: tuple[int, ...] | None = None,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """Train one DP-MLP (node-level DP-Adam, ProGAP's stage trainer) on ``data`` + canaries and audit it.

    ``epsilon = inf`` trains the same model without DP (the positive control). ``delta`` defaults to ProGAP's
    ``1/N_train`` rule (:func:`dpgnn.privacy.progap.default_delta`) on the realised training set. Returns a flat row
    with the accounted ε/δ, the noise multiplier, the audited lower bound and the guess counts.
    """
    aug, canaries, included = insert_canaries(data, num_canaries, seed=seed)
    n_train = int(aug.train_mask.sum())
    private = math.isfinite(epsilon)
    d = float(delta) if delta is not None else default_delta(n_train)
    z, eps_acc, dp = _dpsgd_noise(epsilon, d, train_nodes=n_train, batch_size=batch_size, epochs=epochs, clip=clip)
    torch.manual_seed(stable_seed("audit-mlp-init", seed))
    gen = make_generator(stable_seed("audit-mlp-noise", seed))
    x, y = aug.x, aug.y
    c = int(y.max()) + 1
    norm = "group" if private else "batch"
    model = StageModel(
        [MLP(x.size(1), hidden, layers - 1, norm=norm)],
        MLP(hidden, hidden, 1, out_dim=c, plain_last=True, norm=norm),
        normalize_jk=False,
    )
    masks = {"train": aug.train_mask, "val": aug.val_mask, "test": aug.test_mask}
    model, _ = train_stage(model, [x], y, masks, epochs=epochs, lr=lr, dp=dp, generator=gen)
    model.eval()
    with torch.no_grad():
        logits = model(x)
    score = -F.cross_entropy(logits[canaries], y[canaries], reduction="none").numpy()
    m = num_canaries
    ks = guesses or tuple(sorted({max(1, m // 20), max(1, m // 10), max(1, m // 4)}))
    res = one_run_guess_audit(score, included.numpy(), guesses=ks, delta=0.0 if not private else d, alpha=alpha)
    test_acc = float((logits[aug.test_mask].argmax(1) == y[aug.test_mask]).float().mean())
    return {
        "epsilon_accounted": eps_acc,
        "delta": d if private else 0.0,
        "noise_multiplier": z,
        "epsilon_lb": res["epsilon_lb"],
        "canaries": m,
        "canaries_in": int(included.sum()),
        "guesses": res["r"],
        "correct": res["v"],
        "k": res["k"],
        "train_nodes": n_train,
        "test_acc": test_acc,
        "alpha": alpha,
        "ledger": {
            "level": "node",
            **node_statement(private),
            "mechanism": "DP-Adam (Poisson sampling, clip, Gaussian)" if private else "none",
            "noise_multiplier": z,
            "clip": clip,
            "sample_rate": min(1.0, batch_size / n_train),
            "epochs": epochs,
            "epsilon": eps_acc,
            "delta": d if private else 0.0,
            "accountant": "autodp" if private else "none",
        },
    }


def _dpsgd_noise(
    epsilon: float, delta: float, *, train_nodes: int, batch_size: int, epochs: int, clip: float
) -> tuple[float, float, DPSettings | None]:
    """``(noise multiplier, accounted ε, DP settings)`` of the audited DP-SGD run: calibrated for a finite
    ``epsilon``, none for ``epsilon = inf`` (the non-private control)."""
    if not math.isfinite(epsilon):
        return 0.0, math.inf, None
    cal = calibrate_noise(
        "node",
        epsilon,
        delta,
        aggregations=0,
        dpsgd_runs=1,
        train_nodes=train_nodes,
        batch_size=batch_size,
        epochs=epochs,
    )
    z, eps_acc = float(cal.value), float(cal.epsilon)
    if not z > 0:
        raise ValueError("a finite ε needs noise: calibration returned zero")
    return z, eps_acc, DPSettings(z, batch_size, clip)


def audit_edge_aggregation(
    epsilon: float,
    *,
    hops: int,
    trials: int,
    seed: int,
    num_nodes: int = 40,
    num_features: int = 8,
    num_edges: int = 120,
    delta: float | None = None,
    alpha: float = 0.05,
    noise_factor: float = 1.0,
    copies: int = 1,
) -> dict[str, Any]:
    """Canary-edge audit of ``hops`` NAP queries (GAP/ProGAP edge level) at the σ calibrated for ``epsilon``.

    ``delta`` defaults to ProGAP's ``1/|E|`` rule for the small audit graph. Each trial draws fresh noise for all
    ``hops`` queries with and without the canary edge; the statistic is the noise-free-difference projection
    described in the module docstring. ``noise_factor < 1`` runs NAP with σ × factor under the unchanged claim
    (the broken variant an audit must flag); ``epsilon_claimed`` is the claim, ``epsilon_accounted`` the ε of the
    σ actually used. ``copies > 1`` runs each NAP query on that many disjoint copies of the graph at once
    (independent trials of the same mechanism in far fewer calls; for ``hops = 1`` the very trials of
    ``copies = 1``: the same noise draws in the same order)."""
    _check_edge_audit(hops, noise_factor, copies)
    n = num_nodes
    u, v = 0, 1
    ei, h = _edge_audit_graph(seed, n, num_features, num_edges, canary=(u, v))
    d = float(delta) if delta is not None else default_delta(ei.size(1) + 1)
    cal = calibrate_noise("edge", epsilon, d, aggregations=hops)
    sigma = float(cal.value) * float(noise_factor)
    if not sigma > 0:
        raise ValueError("a finite ε needs noise: calibration returned zero")
    eps_run = (
        float(cal.epsilon)
        if noise_factor == 1.0
        else float(privacy_ledger("edge", depth=hops, delta=d, noise=sigma)["epsilon"])
    )
    direction = F.normalize(h[u], dim=0)
    with_edge = torch.cat([ei, torch.tensor([[u], [v]])], dim=1)
    noise_gen = make_generator(stable_seed("edge-audit-noise", seed, float(epsilon), hops))
    base = NAP(ei, n, 0.0, generator=noise_gen)(h)[v]
    stats = [
        _edge_statistics(
            graph, h, v, base, direction, sigma=sigma, hops=hops, trials=trials, copies=copies, gen=noise_gen
        )
        for graph in (with_edge, ei)
    ]
    thr, b = threshold_audit(stats[0], stats[1], delta=d, alpha=alpha)
    ledger = _edge_ledger(hops, sigma=sigma, epsilon=eps_run, delta=d, noise_factor=noise_factor, claimed=cal.epsilon)
    return {
        "epsilon_accounted": eps_run,
        "epsilon_claimed": float(cal.epsilon),
        "delta": d,
        "sigma": sigma,
        "hops": hops,
        "epsilon_lb": b.epsilon_lb,
        "epsilon_point": b.epsilon_point,
        "threshold": thr,
        "tpr": b.tpr,
        "fpr": b.fpr,
        "trials": trials,
        "alpha": alpha,
        "ledger": ledger,
    }


def _edge_ledger(
    hops: int, *, sigma: float, epsilon: float, delta: float, noise_factor: float, claimed: float
) -> dict[str, Any]:
    """The ledger of the audited NAP queries; a broken variant (``noise_factor`` < 1) names its issue."""
    ledger = {
        "level": "edge",
        **edge_statement(hops),
        "mechanism": "NAP Gaussian",
        "sigma": sigma,
        "aggregations": hops,
        "epsilon": epsilon,
        "delta": delta,
        "accountant": "exact_gaussian",
    }
    if noise_factor != 1.0:
        ledger["guarantee"] = "as_published"
        ledger["issues"] = [
            f"deliberately broken variant: sigma x {noise_factor:g} of the one calibrated for the "
            f"claimed epsilon {float(claimed):.4g}"
        ]
    return ledger


def _check_edge_audit(hops: int, noise_factor: float, copies: int) -> None:
    """A one-line ``ValueError`` for a bad ``hops``, ``noise_factor`` or ``copies`` of the edge audit."""
    if isinstance(hops, bool) or not isinstance(hops, int) or hops < 1:
        raise ValueError(f"hops must be an integer >= 1, got {hops!r}")
    if isinstance(noise_factor, bool) or not (isinstance(noise_factor, (int, float)) and 0 < noise_factor <= 1):
        raise ValueError(f"noise_factor must be in (0, 1], got {noise_factor!r}")
    if isinstance(copies, bool) or not isinstance(copies, int) or copies < 1:
        raise ValueError(f"copies must be an integer >= 1, got {copies!r}")


def _edge_audit_graph(
    seed: int, n: int, num_features: int, num_edges: int, *, canary: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(edge_index, features)`` of the random audit graph without self loops and without the ``canary`` edge."""
    gen = make_generator(stable_seed("edge-audit-graph", seed))
    ei = torch.randint(0, n, (2, num_edges), generator=gen)
    ei = ei[:, ei[0] != ei[1]]
    u, v = canary
    ei = ei[:, ~((ei[0] == u) & (ei[1] == v))]
    return ei, torch.randn(n, num_features, generator=gen)


def _edge_statistics(
    graph: torch.Tensor,
    h: torch.Tensor,
    v: int,
    base: torch.Tensor,
    direction: torch.Tensor,
    *,
    sigma: float,
    hops: int,
    trials: int,
    copies: int,
    gen: torch.Generator,
) -> np.ndarray:
    """The audit statistic of ``trials`` runs of ``hops`` NAP queries on ``graph``: ``Σ_k ⟨agg_k[v] − base, ĥ_u⟩``
    (``copies`` disjoint copies of the graph answer that many trials per NAP call)."""
    n = h.size(0)
    if copies == 1:
        nap = NAP(graph, n, sigma, generator=gen)
        s = np.empty(trials)
        for t in range(trials):
            s[t] = sum(float((nap(h)[v] - base) @ direction) for _ in range(hops))
        return s
    shift = n * torch.arange(copies).repeat_interleave(graph.size(1))
    nap = NAP(graph.repeat(1, copies) + shift, n * copies, sigma, generator=gen)
    hh, rows = h.repeat(copies, 1), v + n * torch.arange(copies)
    return np.concatenate(
        [sum(((nap(hh)[rows] - base) @ direction).numpy() for _ in range(hops)) for _ in range(-(-trials // copies))]
    )[:trials]
