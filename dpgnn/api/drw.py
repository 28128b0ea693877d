"""DRW (Ayle et al., "Training Differentially Private Graph Neural Networks with Random Walk Sampling") and its
FDP baseline (Daigavane et al.'s degree-bounded neighbourhoods) behind :func:`dpgnn.fit`, in the paper's sound
mode: raw features (no private scaling statistics), a fixed clipping norm and the final model released
(:func:`dpgnn.privacy.drw.guarantee_fields` then states ``sound``).

Privacy (:func:`dpgnn.methods.drw.train_dp`): DP-SGD over disjoint random-walk subgraphs (DRW) or degree-bounded
``L``-hop neighbourhoods (FDP); neighbouring: replace one node's features (the graph is public in DRW's
feature-level setting); each step clips per-subgraph gradients to ``C`` and adds Gaussian noise
``z·2C`` (DRW: a node is in one subgraph) or ``z·2KC`` (FDP: in at most ``K`` neighbourhoods); training runs until
the accountant would exceed the target ε (or ``max_steps``), so the accounted ε ≤ the target.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.api.configs import Checked, documented
from dpgnn.methods import RunResult

_DRW = "DRW §5 (Table 4)"


#: steps between two evaluations of a front-door run. The released model is the last step's, so evaluations (a
#: full-graph forward pass each) only draw its history; the last step and the integer-ε checkpoints are always
#: evaluated. Every 10th step gives the same model and scores as every step, in less time.
EVAL_EVERY = 10


@dataclass(frozen=True)
class DRWConfig(Checked):
    """DP-SGD on random-walk subgraphs (DRW) or degree-bounded neighbourhoods (FDP), sound mode."""

    num_layers: int = documented(
        1, "GCN layers = walk length / neighbourhood hops", low=1, high=4, integer=True, paper=_DRW
    )
    hidden: int = documented(256, "GCN hidden width (units)", low=1, integer=True, paper=_DRW)
    lr: float = documented(0.1, "Adam learning rate", low=1e-6, high=10.0, paper=_DRW)
    noise_multiplier: float = documented(4.0, "z: noise std over the sensitivity", low=0.1, high=1000.0, paper=_DRW)
    clip_norm: float = documented(
        1.0, "fixed per-subgraph gradient clipping norm C (L2)", low=1e-6, paper="DRW §4 (sound mode)"
    )
    batch: int = documented(
        0,
        "subgraphs per step; 0 = the public rule max(8, N // 40) from the node count N (Cora: 67, the paper's 70)",
        low=0,
        integer=True,
        paper=_DRW,
    )
    fdp_degree: int = documented(4, "FDP only: degree bound of the neighbourhoods", low=1, integer=True, paper="DRW §5")
    max_steps: int = documented(
        1000,
        "stop after this many steps (the accounted ε is then that of the steps "
        "taken, at most the target); 0 = run until the target ε is reached",
        low=0,
        integer=True,
        paper="DRW Alg. 1",
    )


def drw_runner(method: str):
    """``run(graph, cfg, level, epsilon, seed, device, delta) -> RunResult`` (``extra``: the final GCN and the
    resolved config)."""

    def run(
        graph: Data, cfg: DRWConfig, level: str, epsilon: float, seed: int, device: str, delta: float | None = None
    ) -> RunResult:
        from dpgnn.methods.drw import prepare, train_dp

        if cfg.batch == 0:
            cfg = replace(cfg, batch=max(8, graph.num_nodes // 40))
        data = prepare("own-graph", graph, scaling="none")
        final: list[Any] = []
        res = train_dp(
            data,
            method,
            num_layers=cfg.num_layers,
            hidden=cfg.hidden,
            lr=cfg.lr,
            clip_fraction=None,
            clip_norm=cfg.clip_norm,
            noise_multiplier=cfg.noise_multiplier,
            batch=cfg.batch,
            delta=delta,
            target_epsilon=epsilon,
            seed=seed,
            max_steps=cfg.max_steps or None,
            fdp_degree=cfg.fdp_degree,
            select="last",
            eval_every=EVAL_EVERY,
            device=device,
            on_model=final.append,
        )
        return RunResult(
            metrics={"train": res["train_f1"], "val": res["val_f1"], "test": res["test_f1"]},
            ledger=res["ledger"],
            history=res["history"],
            seconds=res["seconds"],
            extra={"model": final[0], "config": cfg},
        )

    run.__name__ = run.__qualname__ = f"run_{method.replace('-', '_')}_sound"
    return run


def predict_drw(model: Any, x: Tensor, ei: Tensor, ctx: Any) -> Tensor:
    """The final GCN on the given graph's raw features and ``D^{-1/2}(A+I)D^{-1/2}`` (self-loops added)."""
    from dpgnn.methods.drw import normalized_adjacency

    adj = normalized_adjacency(ei.cpu(), x.size(0)).to(ctx.device)
    model.eval()
    with torch.no_grad():
        return model(x, adj)
