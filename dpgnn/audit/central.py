"""Canary audits of central DP *training* through each method's public entry point (one training run per audit).

Audited methods and the neighbouring relation each one claims:

- **ProGAP, node level** (:func:`dpgnn.methods.progap.train_progap`, ``level="node"``): add/remove one node with
  its edges (degrees bounded to ``D``). A canary's features reach the model through its own DP-SGD example *and*
  through the noisy aggregates (NAP) of its neighbours, so the canary passes through the aggregation perturbation.
- **DP-GNN** (:func:`dpgnn.methods.dp_gnn.train_dp_gnn`, Daigavane et al.): the same node-level relation; the
  canary is a root of its own 1-hop subgraph and a neighbour in the subgraphs of the nodes it links to.
- **DRW and FDP** (:func:`dpgnn.methods.drw.train_dp`, Ayle et al.): *feature level*, replace one node's features
  (graph and labels public). Audited in the sound mode (raw features, fixed clip norm, final model), the only one
  whose ε covers everything the run reads (:func:`dpgnn.methods.drw.guarantee_fields`).

**Canaries at the data level** (:func:`canary_graph`). ``m`` canary nodes with dense out-of-distribution features
``feature_scale · N(0, I)`` and uniformly random labels (points a model fits only by memorising them; Jagielski et
al. 2020, Nasr et al. 2021) are linked to ``degree`` random graph nodes (both directions). Each canary is included
independently with probability 1/2 (Steinke, Nasr & Jagielski 2023). What "included" means follows the claimed
relation:

- node level (:meth:`CanaryGraph.node_level`): an included canary is a node of the graph, with its edges, and a
  training node; an excluded canary is absent (node, edges and label). Neighbouring graphs differ by one node with
  its edges, exactly the relation ProGAP's and DP-GNN's accountants cover.
- feature level (:meth:`CanaryGraph.feature_level`): every canary is a training node with its edges and label; an
  included canary carries its canary features, an excluded one the all-zero row. Neighbouring graphs differ in one
  node's feature row, DRW's relation.

**Scoring.** After training, the auditor sees the released model and everything public (the graph with *all*
canaries, their features and labels, never the inclusion bits) and scores each canary by its negative cross-entropy
in a noise-free full-graph forward pass on that graph (:meth:`CanaryGraph.scoring`). The one-run audit
(:func:`dpgnn.audit.bounds.one_run_guess_audit`: guess the ``k`` highest scores "in", the ``k`` lowest "out")
turns the right guesses into an ε lower bound at confidence ``1 − alpha`` with the claimed δ.

**Negative control** (``noise_factor < 1``): the same run with its noise multiplier multiplied by ``noise_factor``
while the claim stays the ε calibrated for the full noise — a broken implementation, which the audit must flag
(audited lower bound above the claim). Zero noise with a finite ε is refused by every method, so the control uses
a small positive factor.

Why these audits are loose (lower bounds far below the accounted ε): one training run with a few hundred canaries
can certify at most about ``ln(v/(r − v))`` for ``v`` of ``r`` right guesses (a few units even for a perfect
attack), DP-SGD's worst case is a gradient that is clipped to exactly ``C`` at every step and never diluted, while
real canaries' gradients shrink as they are fitted and share each step with a batch of others, and the auditor sees
only the final model, not the intermediate noisy gradients the accountant charges for (Nasr et al. 2021/2023).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.audit.bounds import one_run_guess_audit
from dpgnn.audit.catalog import CENTRAL_METHODS, UNIT_OF
from dpgnn.utils import make_generator, stable_seed

__all__ = ["CanaryGraph", "canary_graph", "CENTRAL_METHODS", "UNIT_OF", "audit_central"]


@dataclass(frozen=True)
class CanaryGraph:
    """A graph (``base``, with train/val/test masks) and ``m`` canaries: features ``x`` [m, F], labels ``y`` [m],
    ``edges`` [2, E] (row 0: canary index in ``0..m-1``, row 1: base node; each pair linked both ways) and the
    inclusion bits ``included`` [m]."""

    base: Data
    x: Tensor
    y: Tensor
    edges: Tensor
    included: Tensor

    @property
    def num_canaries(self) -> int:
        """The number of canaries ``m``."""
        return int(self.x.size(0))

    def _assemble(self, keep: Tensor, features: Tensor, train: Tensor) -> tuple[Data, Tensor]:
        """Base graph + the canaries in ``keep`` (their features ``features[keep]``, in the train mask where
        ``train``); returns the graph and the node id of every kept canary."""
        n = int(self.base.num_nodes)
        kept = keep.nonzero().view(-1)
        ids = torch.full((self.num_canaries,), -1, dtype=torch.long)
        ids[kept] = n + torch.arange(kept.numel())
        sel = keep[self.edges[0]]
        c, b = ids[self.edges[0, sel]], self.edges[1, sel]
        ei = torch.cat([self.base.edge_index, torch.stack([c, b]), torch.stack([b, c])], dim=1)
        false = torch.zeros(kept.numel(), dtype=torch.bool)
        data = Data(
            x=torch.cat([self.base.x.float(), features[kept].float()]),
            y=torch.cat([self.base.y, self.y[kept].to(self.base.y.dtype)]),
            edge_index=ei,
            num_nodes=n + kept.numel(),
            train_mask=torch.cat([self.base.train_mask, train[kept]]),
            val_mask=torch.cat([self.base.val_mask, false]),
            test_mask=torch.cat([self.base.test_mask, false]),
        )
        return data, ids

    def node_level(self) -> Data:
        """The training graph of the node-level relation: base + the included canaries (nodes, edges, labels),
        each a training node; excluded canaries are absent."""
        return self._assemble(self.included, self.x, torch.ones_like(self.included))[0]

    def feature_level(self) -> Data:
        """The training graph of the feature-level relation: base + every canary (edges, labels, training node);
        included canaries carry their features, excluded ones the all-zero row."""
        feats = torch.where(self.included.unsqueeze(1), self.x, torch.zeros_like(self.x))
        everyone = torch.ones_like(self.included)
        return self._assemble(everyone, feats, everyone)[0]

    def scoring(self) -> tuple[Data, Tensor]:
        """What the auditor scores on (public, independent of the inclusion bits): base + every canary with its
        features, edges and label; returns ``(graph, canary node ids)``."""
        everyone = torch.ones_like(self.included)
        return self._assemble(everyone, self.x, everyone)


def canary_graph(
    data: Data,
    num_canaries: int,
    *,
    seed: int,
    degree: int = 2,
    feature_scale: float = 4.0,
    num_classes: int | None = None,
) -> CanaryGraph:
    """Draw ``num_canaries`` canaries for ``data`` (module docstring): features ``feature_scale · N(0, I)``,
    uniform labels, ``degree`` distinct random base neighbours each, inclusion bits Bernoulli(1/2). The input is
    not modified; everything is drawn from ``seed`` (a seed of 0 is a seed)."""
    if isinstance(num_canaries, bool) or not isinstance(num_canaries, int) or num_canaries < 2:
        raise ValueError(f"num_canaries must be an integer >= 2, got {num_canaries!r}")
    if isinstance(degree, bool) or not isinstance(degree, int) or degree < 0:
        raise ValueError(f"degree must be an integer >= 0, got {degree!r}")
    if not (isinstance(feature_scale, (int, float)) and math.isfinite(feature_scale) and feature_scale > 0):
        raise ValueError(f"feature_scale must be a finite number > 0, got {feature_scale!r}")
    for m in ("train_mask", "val_mask", "test_mask"):
        if getattr(data, m, None) is None:
            raise ValueError(f"data needs a {m} to insert canaries into")
    n, d = int(data.num_nodes), int(data.x.size(1))
    if degree > n:
        raise ValueError(f"degree ({degree}) exceeds the number of graph nodes ({n})")
    gen = make_generator(stable_seed("central-canaries", seed))
    c = int(num_classes if num_classes is not None else int(data.y.max()) + 1)
    x = float(feature_scale) * torch.randn(num_canaries, d, generator=gen)
    y = torch.randint(0, c, (num_canaries,), generator=gen)
    nbrs = (
        torch.stack([torch.randperm(n, generator=gen)[:degree] for _ in range(num_canaries)])
        if degree
        else torch.zeros(num_canaries, 0, dtype=torch.long)
    )
    edges = torch.stack([torch.arange(num_canaries).repeat_interleave(degree), nbrs.reshape(-1)])
    included = torch.rand(num_canaries, generator=gen) < 0.5
    return CanaryGraph(base=data, x=x, y=y, edges=edges, included=included)


# ---------------------------------------------------------------------------------------------------------------
# one training run per method, through its public entry point; each returns (claim, run ledger, logits on scoring)
# ---------------------------------------------------------------------------------------------------------------
def _run_progap(cg: CanaryGraph, epsilon: float, noise_factor: float, seed: int, kw: dict[str, Any]):
    from dpgnn.methods.progap import NAP, ProGAPConfig, train_progap
    from dpgnn.privacy.progap import default_delta, privacy_ledger

    train = cg.node_level()
    n_train = int(train.train_mask.sum())
    delta = default_delta(n_train)
    if math.isinf(epsilon):  # non-private ProGAP (level "none"): the positive control
        cfg = ProGAPConfig(level="none", **kw)
        claim = privacy_ledger("none", depth=cfg.depth)
    else:
        cfg = ProGAPConfig(level="node", epsilon=epsilon, delta=delta, **kw)
        claim = privacy_ledger(
            "node",
            depth=cfg.depth,
            delta=delta,
            target_epsilon=epsilon,
            train_nodes=n_train,
            batch_size=cfg.batch_size,
            epochs=cfg.epochs,
            max_degree=cfg.max_degree,
            clip=cfg.clip,
        )
    if noise_factor != 1.0:
        cfg = replace(cfg, noise=claim["noise_multiplier"] * noise_factor)
    last: dict[str, Any] = {}
    res = train_progap(train, cfg, seed=seed, device="cpu", on_stage=lambda s, m, xs: last.update(model=m))
    model = last["model"].eval()
    g, ids = cg.scoring()
    nap = NAP(g.edge_index, g.num_nodes, 0.0, generator=make_generator(0))  # noise-free aggregation
    with torch.no_grad():
        xs = [g.x]
        for s in range(cfg.depth):
            xs.append(nap(model.bases[s](xs[-1])))
        logits = model(*xs)
    return claim, res.ledger, logits, g, ids, res.test_acc


def _run_dp_gnn(cg: CanaryGraph, epsilon: float, noise_factor: float, seed: int, kw: dict[str, Any]):
    from torch_geometric.utils import to_torch_csr_tensor

    from dpgnn.methods.dp_gnn import DPGNNConfig, dp_gnn_ledger, train_dp_gnn
    from dpgnn.privacy.progap import default_delta

    if math.isinf(epsilon):
        raise ValueError("dp-gnn has no non-private mode; audit the broken control (noise_factor < 1) instead")
    train = cg.node_level()
    n_train = int(train.train_mask.sum())
    delta = default_delta(n_train)
    cfg = DPGNNConfig(epsilon=epsilon, delta=delta, **kw)
    claim = dp_gnn_ledger(
        train_nodes=n_train,
        batch_size=cfg.batch_size,
        epochs=cfg.epochs,
        max_degree=cfg.max_degree,
        delta=delta,
        target_epsilon=epsilon,
        clip=cfg.clip,
    )
    if noise_factor != 1.0:
        cfg = replace(cfg, noise=claim["noise_multiplier"] * noise_factor)
    last: dict[str, Any] = {}
    res = train_dp_gnn(train, cfg, seed=seed, device="cpu", on_model=lambda m: last.update(model=m))
    model = last["model"].eval()
    g, ids = cg.scoring()
    adj = to_torch_csr_tensor(g.edge_index.flip(0), size=(g.num_nodes, g.num_nodes))
    with torch.no_grad():
        logits = model.full(g.x.float(), adj)
    return claim, res.ledger, logits, g, ids, res.test_acc


def _run_drw(method: str):
    def run(cg: CanaryGraph, epsilon: float, noise_factor: float, seed: int, kw: dict[str, Any]):
        from dpgnn.methods import drw

        if noise_factor != 1.0:
            raise ValueError(
                f"{method}: the broken control is not offered (the run length follows the accountant); "
                "use epsilon=inf, the non-private control"
            )
        kw = dict(kw)
        z = float(kw.pop("noise_multiplier"))
        delta = float(kw.pop("delta", 1e-5))
        train = drw.prepare("canary-graph", data=cg.feature_level(), scaling="none")
        last: dict[str, Any] = {}
        hook = lambda m: last.update(model=m)  # noqa: E731
        if math.isinf(epsilon):  # the method's own non-private baseline (Table 1 "GCN") on the same data
            keep = {k: kw[k] for k in ("num_layers", "hidden", "batch") if k in kw}
            res = drw.train_nondp(
                train,
                "gcn",
                seed=seed,
                device="cpu",
                lr=kw.get("lr_nondp", 0.01),
                max_steps=kw.get("steps_nondp", 300),
                patience=10**9,
                on_model=hook,
                **keep,
            )
            claim = res["ledger"]
        else:
            kw.pop("lr_nondp", None)
            kw.pop("steps_nondp", None)
            res = drw.train_dp(
                train,
                method,
                noise_multiplier=z,
                target_epsilon=epsilon,
                clip_norm=kw.pop("clip_norm", 1.0),
                select="last",
                delta=delta,
                seed=seed,
                device="cpu",
                eval_every=10**9,
                on_model=hook,
                **kw,
            )
            claim = res["ledger"]
        model = last["model"].eval()
        g, ids = cg.scoring()
        adj = drw.normalized_adjacency(g.edge_index, g.num_nodes)
        with torch.no_grad():
            logits = model(g.x.float(), adj)
        return claim, res["ledger"], logits, g, ids, res["test_f1"]

    return run


_RUNNERS: dict[str, Callable] = {
    "progap-node": _run_progap,
    "dp-gnn": _run_dp_gnn,
    "drw": _run_drw("drw"),
    "fdp": _run_drw("fdp"),
}


def audit_central(
    method: str,
    data: Data,
    *,
    epsilon: float,
    num_canaries: int,
    seed: int,
    noise_factor: float = 1.0,
    degree: int = 2,
    feature_scale: float = 4.0,
    guesses: tuple[int, ...] | None = None,
    alpha: float = 0.05,
    **method_kw: Any,
) -> dict[str, Any]:
    """One-run canary audit of ``method`` (one of :data:`CENTRAL_METHODS`) trained at the claimed ``epsilon``
    (``inf``: the non-private positive control — non-private ProGAP, DRW's non-private GCN baseline).

    ``method_kw`` goes to the method's configuration (``ProGAPConfig``, ``DPGNNConfig`` or ``drw.train_dp``, which
    needs ``noise_multiplier`` and takes ``delta``; the others use ProGAP's δ rule on the realised training set).
    ``noise_factor < 1`` is the broken negative control (module docstring). Returns a flat row: the claimed ε
    (``epsilon_claimed``) and the ε accounted for the run actually trained (``epsilon_accounted``; larger for the
    control), δ, the audited lower bound ``epsilon_lb`` and the guess counts.
    """
    if method not in _RUNNERS:
        raise ValueError(f"unknown method {method!r}; valid: {sorted(_RUNNERS)}")
    if isinstance(epsilon, bool) or not (isinstance(epsilon, (int, float)) and epsilon > 0):
        raise ValueError(f"epsilon (the claim) must be a number > 0 (inf: the non-private control), got {epsilon!r}")
    if isinstance(noise_factor, bool) or not (isinstance(noise_factor, (int, float)) and 0.0 < noise_factor <= 1.0):
        raise ValueError(
            f"noise_factor must be in (0, 1] (zero noise with a finite ε is refused by every method), "
            f"got {noise_factor!r}"
        )
    if math.isinf(epsilon) and noise_factor != 1.0:
        raise ValueError("the non-private control (epsilon=inf) has no noise to scale")
    cg = canary_graph(data, num_canaries, seed=seed, degree=degree, feature_scale=feature_scale)
    torch.manual_seed(stable_seed("central-audit", method, seed))
    claim, ledger, logits, g, ids, acc = _RUNNERS[method](
        cg, float(epsilon), float(noise_factor), seed, dict(method_kw)
    )
    ledger = {k: v for k, v in ledger.items() if k not in ("event", "config")}
    if noise_factor != 1.0:  # the run's own ledger (its true ε), marked as the deliberately broken control
        ledger["guarantee"] = "as_published"
        ledger["issues"] = list(ledger.get("issues", [])) + [
            f"deliberately broken negative control: noise multiplier x {noise_factor:g} of the one calibrated for "
            f"the claimed epsilon {float(claim['epsilon']):.4g}"
        ]
    score = -F.cross_entropy(logits[ids].float(), g.y[ids], reduction="none").numpy()
    m = num_canaries
    ks = guesses or tuple(sorted({max(1, m // 20), max(1, m // 10), max(1, m // 4)}))
    delta = float(claim.get("delta", 0.0))
    res = one_run_guess_audit(score, cg.included.numpy(), guesses=ks, delta=delta, alpha=alpha)
    return {
        "method": method,
        "unit": UNIT_OF[method],
        "epsilon_claimed": float(claim["epsilon"]),
        "epsilon_accounted": float(ledger["epsilon"]),
        "delta": delta,
        "noise_factor": float(noise_factor),
        "noise_multiplier": float(ledger.get("noise_multiplier", 0.0)),
        "epsilon_lb": res["epsilon_lb"],
        "canaries": m,
        "canaries_in": int(cg.included.sum()),
        "guesses": res["r"],
        "correct": res["v"],
        "k": res["k"],
        "alpha": alpha,
        "utility": float(acc),
        "score_gap": float(np.mean(score[cg.included.numpy()]) - np.mean(score[~cg.included.numpy()])),
        "ledger": ledger,
    }
