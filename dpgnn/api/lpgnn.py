"""LPGNN (Sajadmanesh & Gatica-Perez, "Locally Private Graph Neural Networks", CCS 2021) behind :func:`dpgnn.fit`:
``mbm`` (the multi-bit mechanism on each node's features, KProp denoising; optionally randomized-response labels
with Drop) and ``rr`` (randomized-response labels with Drop, raw features).

Privacy (:func:`dpgnn.privacy.lpgnn.privacy_ledger`): every node reports its features once (multi-bit, ``ε_x``-LDP
for the whole vector in ``[0, 1]^d``, §4.1) and/or its label once (randomized response, ``ε_y``-LDP, §5.1); δ = 0;
KProp, Drop and training are post-processing. The ledger's ``epsilon`` is the budget of the level's unit:
``feature``: ``ε_x`` (labels not protected); ``label``: ``ε_y`` (features not protected); ``feature+label``:
``ε_x + ε_y`` (basic composition). Model selection uses noisy validation labels only (§5.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.api.configs import Checked, documented
from dpgnn.api.ldp import check_unit_range
from dpgnn.methods import RunResult

_STEPS = "LPGNN §4.2/§5.1; grid {0, 2, 4, 8, 16}"
_LWD = "LPGNN authors' lwd.csv (Cora, finite ε)"


@dataclass(frozen=True)
class LPGNNConfig(Checked):
    """KProp + GNN backbone on LDP features and/or labels (LPGNN §4-5); fixed defaults from the paper's grids."""

    backbone: str = documented("sage", "GNN after KProp", choices=("sage", "gcn", "gat"), paper="LPGNN §6.1")
    k_x: int = documented(
        8,
        "KProp steps on the features (denoising by neighbourhood averaging)",
        low=0,
        high=16,
        integer=True,
        paper=_STEPS,
    )
    k_y: int = documented(
        4, "label propagation steps of Drop (level with labels)", low=0, high=16, integer=True, paper=_STEPS
    )
    label_epsilon: float = documented(
        1.0,
        "ε_y of randomized response on the labels (level feature+label only; at level "
        "label the budget is fit's epsilon)",
        low=1e-3,
        high=100.0,
        paper="LPGNN §5.1",
    )
    lr: float = documented(0.01, "Adam learning rate", low=1e-6, high=10.0, paper=_LWD)
    weight_decay: float = documented(0.001, "Adam weight decay (L2)", low=0.0, high=1.0, paper=_LWD)
    dropout: float = documented(0.5, "dropout after each activation", low=0.0, high=0.95, paper=_LWD)
    epochs: int = documented(
        500, "training epochs (the selected epoch's weights are kept)", low=1, integer=True, paper="LPGNN §6.1"
    )


def _budgets(name: str, level: str, epsilon: float, cfg: LPGNNConfig) -> tuple[str, float, float]:
    """(feature method, ε_x, ε_y) of a level."""
    if name == "rr":
        return "raw", math.inf, epsilon
    return "mbm", epsilon, cfg.label_epsilon if level == "feature+label" else math.inf


def _draw(x: Tensor, meth: str, eps_x: float, seed: int, what: str) -> dict[str, Any]:
    """One release of the features (:func:`~dpgnn.methods.lpgnn.draw_features`: sparse parts or dense)."""
    from dpgnn.methods.lpgnn import draw_features
    from dpgnn.utils import stable_seed

    if meth == "mbm":
        check_unit_range(x)
    return draw_features(Data(x=x.cpu()), meth, eps_x, generator=stable_seed("fit-lpgnn", what, seed))


def _features(x: Tensor, meth: str, eps_x: float, seed: int, what: str) -> Tensor:
    from dpgnn.methods.lpgnn import dense_features

    return dense_features(_draw(x, meth, eps_x, seed, what), x.size(0), x.size(1))


def _ledger(meth: str, level: str, eps_x: float, eps_y: float, d: int) -> dict[str, Any]:
    from dpgnn.privacy.lpgnn import privacy_ledger

    led = privacy_ledger(meth, eps_x, eps_y, d, None)
    if level == "feature":
        led.update(epsilon=eps_x, neighbouring="LDP: any two feature vectors of one node (labels not protected)")
    elif level == "label":
        led.update(epsilon=eps_y, neighbouring="LDP: any two labels of one node (features not protected)")
    return led


def lpgnn_runner(name: str):
    """``run(graph, cfg, level, epsilon, seed, device) -> RunResult`` (``extra['model']``: the selected backbone)."""

    def run(graph: Data, cfg: LPGNNConfig, level: str, epsilon: float, seed: int, device: str) -> RunResult:
        from dpgnn.methods.lpgnn import perturb_labels, train_batched
        from dpgnn.methods.lpgnn.cell import batched_features
        from dpgnn.nn.lpgnn import normalized_adjacency
        from dpgnn.utils import resolve_device, stable_seed

        meth, eps_x, eps_y = _budgets(name, level, epsilon, cfg)
        c = int(graph.y.max()) + 1
        draw = _draw(graph.x, meth, eps_x, seed, "train")
        noisy = perturb_labels(
            graph.y, eps_y, c, graph.train_mask | graph.val_mask, stable_seed("fit-lpgnn-labels", seed)
        )
        view = Data(
            x=graph.x,
            y=graph.y,
            edge_index=graph.edge_index,
            num_nodes=graph.num_nodes,
            train_mask=graph.train_mask,
            val_mask=graph.val_mask,
            test_mask=graph.test_mask,
        )
        view.num_classes = c
        label_method = "drop" if math.isfinite(eps_y) else "ce"
        # one repeat of the series' batched trainer: a sparse release is propagated after its projection (or held
        # dense and propagated once, where that is cheaper), and an epoch's evaluation reuses the next step's first
        # layer; train_reference's run up to float rounding, which hundreds of epochs can grow into another selected
        # epoch, as any change of summation order can
        n, d = graph.x.shape
        adj = normalized_adjacency(view.edge_index, n)  # KProp's; fit's graph has no duplicates (check_graph)
        res = train_batched(
            view,
            batched_features([draw], meth, n, d, adj, cfg.k_x, resolve_device(device)),
            noisy.unsqueeze(1),
            backbone=cfg.backbone,
            seeds=[stable_seed("fit-lpgnn-model", seed)],
            lr=cfg.lr,
            weight_decay=cfg.weight_decay,
            dropout=cfg.dropout,
            k_y=cfg.k_y if label_method == "drop" else 0,
            label_method=label_method,
            eps_y=eps_y,
            epochs=cfg.epochs,
            device=device,
            kprop_adj=adj,
            threads=None,
            models=True,
        )
        res = {k: v[0] if isinstance(v, list) else v for k, v in res.items()}  # the one repeat's
        metrics = {"train": res["train_acc"], "val": res["val_acc"], "test": res["test_acc"]}
        hist = [{"epoch": int(res["epoch"]), "selected": True, "val_acc_noisy": res["val_acc"]}]
        return RunResult(
            metrics=metrics,
            ledger=_ledger(meth, level, eps_x, eps_y, graph.num_features),
            history=hist,
            extra={"model": res["models"]},
        )

    run.__name__ = run.__qualname__ = f"run_{name}_kprop"
    return run


def lpgnn_predictor(name: str):
    """Logits: the given features perturbed as in training (``mbm``; raw for ``rr``), KProp(k_x), the backbone."""

    def predict(model: Any, x: Tensor, ei: Tensor, ctx: Any) -> Tensor:
        from dpgnn.nn.lpgnn import KProp

        meth = "raw" if name == "rr" else "mbm"
        eps_x = float(ctx.ledger.get("eps_x", math.inf))
        x_hat = _features(x, meth, eps_x, ctx.seed, "predict").to(ctx.device)
        model.eval()
        with torch.no_grad():
            return model(KProp(ctx.config.k_x, cached=False)(x_hat, ei), ei)

    return predict
