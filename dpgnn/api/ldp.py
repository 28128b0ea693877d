"""Local DP of the node features (LPGCN: Lin et al., "When Differential Privacy Meets Graph Neural Networks",
arXiv 2006.05535) behind :func:`dpgnn.fit`: ``lm`` (Laplace), ``pm`` (piecewise), ``pgc`` (the paper's PGC) on
every node's features, then a 2-layer GCN on the server's unbiased estimates.

Privacy (:func:`dpgnn.methods.lpgcn.privacy_ledger`): each of a node's ``d`` features in ``[0, 1]`` is perturbed
once with budget ``ε`` by its owner, so the server's view is ``ε``-LDP per feature and ``ε·d``-LDP per node
(basic composition, ledger ``epsilon_node_total``); neighbouring: any two feature vectors of one node; δ = 0.
Training is post-processing. Features must already lie in ``[0, 1]`` (the range is a preprocessing statistic,
``not_covered`` in the ledger). Prediction perturbs the given graph's features the same way (the server only ever
sees perturbed features), with a generator seeded by the training seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.api.configs import Checked, documented
from dpgnn.methods import RunResult

_LPGCN = "LPGCN Table 4 (Cora)"


@dataclass(frozen=True)
class LPGCNConfig(Checked):
    """GCN on LDP features (LPGCN §5): defaults are Table 4's Cora values and the authors' code's width."""

    hidden: int = documented(
        16,
        "GCN hidden width (units; the authors' code: 16, the paper's text: 32)",
        low=1,
        integer=True,
        paper="LPGCN §5 / authors' code",
    )
    lr: float = documented(0.01, "Adam learning rate", low=1e-6, high=10.0, paper=_LPGCN)
    weight_decay: float = documented(0.01, "Adam weight decay (L2)", low=0.0, high=1.0, paper=_LPGCN)
    dropout: float = documented(0.5, "dropout between the GCN layers", low=0.0, high=0.95, paper=_LPGCN)
    max_epochs: int = documented(500, "most training epochs", low=1, integer=True, paper="LPGCN §5")
    min_epochs: int = documented(10, "epochs before early stopping may fire", low=1, integer=True, paper="LPGCN §5")
    patience: int = documented(
        20, "early stopping: epochs without a lower validation loss", low=1, integer=True, paper="LPGCN §5"
    )


def check_unit_range(x: Tensor) -> None:
    """The LDP mechanisms take features in ``[0, 1]``; anything else is one line naming the fix."""
    lo, hi = float(x.min()), float(x.max())
    if lo < 0.0 or hi > 1.0:
        raise ValueError(
            f"the LDP feature mechanisms need data.x in [0, 1], got [{lo:.4g}, {hi:.4g}]: min-max "
            "normalise the features (dpgnn.data.transforms.minmax_normalize)"
        )


def _perturb(x: Tensor, mechanism: str, epsilon: float, seed: int, what: str) -> Tensor:
    from dpgnn.methods.lpgcn import perturb_features
    from dpgnn.utils import make_generator, stable_seed

    check_unit_range(x)
    return perturb_features(x.cpu(), mechanism, epsilon, make_generator(stable_seed("fit-ldp", what, seed)))


def lpgcn_runner(mechanism: str):
    """``run(graph, cfg, level, epsilon, seed, device) -> RunResult`` for one LPGCN mechanism (``extra['model']``:
    the GCN with its adjacency cache off, so it scores any graph)."""

    def run(graph: Data, cfg: LPGCNConfig, level: str, epsilon: float, seed: int, device: str) -> RunResult:
        from dpgnn.methods.lpgcn import privacy_ledger, train_node_classifier
        from dpgnn.nn.models import GCN
        from dpgnn.utils import seed_everything, stable_seed

        x_hat = _perturb(graph.x, mechanism, epsilon, seed, "train")
        seed_everything(stable_seed("fit-ldp-model", seed))
        model = GCN(graph.num_features, cfg.hidden, int(graph.y.max()) + 1, dropout=cfg.dropout, cached=False)
        view = Data(
            x=x_hat,
            y=graph.y,
            edge_index=graph.edge_index,
            num_nodes=graph.num_nodes,
            train_mask=graph.train_mask,
            val_mask=graph.val_mask,
            test_mask=graph.test_mask,
        )
        res = train_node_classifier(
            model,
            view,
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            max_epochs=cfg.max_epochs,
            min_epochs=cfg.min_epochs,
            patience=cfg.patience,
            device=device,
        )
        hist = [
            {"epoch": i + 1, "train_loss": a, "val_loss": b}
            for i, (a, b) in enumerate(zip(res["history"]["train_loss"], res["history"]["val_loss"]))
        ]
        return RunResult(
            metrics={"train": res["train_f1"], "val": res["val_f1"], "test": res["test_f1"]},
            ledger=privacy_ledger(mechanism, epsilon, graph.num_features),
            history=hist,
            seconds=res["train_time_s"],
            extra={"model": model},
        )

    run.__name__ = run.__qualname__ = f"run_{mechanism}_gcn"
    return run


def lpgcn_predictor(mechanism: str):
    """Logits of every node: the given features perturbed by ``mechanism`` at the training ε, then the GCN."""

    def predict(model: Any, x: Tensor, ei: Tensor, ctx: Any) -> Tensor:
        eps = float(ctx.ledger["epsilon"])
        x_hat = _perturb(x, mechanism, eps, ctx.seed, "predict").to(ctx.device)
        model.eval()
        with torch.no_grad():
            return model(x_hat, ei)

    return predict


def per_node_total(ledger: dict[str, Any]) -> str:
    """The per-node ε of a per-feature LDP ledger, in words ('' when the ledger has none)."""
    total = ledger.get("epsilon_node_total")
    return "" if total is None or not math.isfinite(total) else f" per feature, ε·d = {total:.4g} per node"
