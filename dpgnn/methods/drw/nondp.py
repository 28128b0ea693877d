"""DRW's non-private baselines (Table 1's ``gcn`` on random-walk batches and ``mlp`` on uniform batches):
:func:`train_nondp`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch_geometric.utils import subgraph

from dpgnn.data.random_walks import (
    csr,
    random_walk_batch,
    uniform_batch,
)
from dpgnn.methods.drw.data import DRWData, normalized_adjacency
from dpgnn.methods.drw.evaluation import _make, _scores, eval_features
from dpgnn.methods.drw.gradients import (
    _loss,
)
from dpgnn.methods.drw.paper import _method_key, batch_size
from dpgnn.privacy.guarantee import non_private
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _positive
from dpgnn.train import GradientStep, fit
from dpgnn.utils import resolve_device, seed_everything, versions


def _random_walk_forward(model: nn.Module, d: DRWData, x: Tensor, y: Tensor, batch) -> tuple[Tensor, Tensor]:
    """The non-DP GCN on one random-walk batch ``(nodes, loss_nodes)``: the subgraph induced on the visited nodes,
    the outputs and labels of its training nodes."""
    nodes, loss_nodes = batch
    dev = x.device
    nodes_t = torch.as_tensor(nodes)
    sub_ei = subgraph(nodes_t, d.train_edge_index, relabel_nodes=True, num_nodes=d.num_nodes)[0]
    a = normalized_adjacency(sub_ei, len(nodes)).to(dev)
    pos = torch.as_tensor(np.searchsorted(nodes, loss_nodes), device=dev)
    return model(x[nodes_t.to(dev)], a)[pos], y[torch.as_tensor(loss_nodes, device=dev)]


def train_nondp(
    d: DRWData,
    method: str,
    *,
    num_layers: int = 1,
    hidden: int = 256,
    lr: float = 0.01,
    batch: int | None = None,
    max_steps: int = 1000,
    patience: int = 30,
    grad_clip: float = 5.0,
    seed: int = 1234,
    device: str = "auto",
    on_model: Callable[[nn.Module], None] | None = None,
) -> dict[str, Any]:
    """Non-DP baselines: ``gcn`` on RW batches (induced on the visited nodes, loss on their training nodes) and
    ``mlp`` on uniform batches; Adam, global gradient-norm clip 5, early stopping on validation F1.

    Runs on the plain engine :func:`dpgnn.train.fit`, one "epoch" per mini-batch step: every step is evaluated on
    the full graph, the best-validation step is kept (its scores, not its weights) and training stops after
    ``patience`` steps without a better validation F1. ``on_model(model)`` is called with the final model
    (audits)."""
    method = _method_key(method)
    if method not in ("gcn", "mlp"):
        raise ValueError(f"train_nondp runs 'gcn' or 'mlp', got {method!r}")
    L = _int(num_layers, "num_layers", 1)
    _int(max_steps, "max_steps", 1)
    _int(patience, "patience", 1)
    dev = resolve_device(device)
    B = _int(batch if batch is not None else batch_size(d.name, "drw", L), "batch", 1)
    t0 = time.perf_counter()
    seed_everything(seed)
    rng = np.random.default_rng(seed)
    model = _make(d, method, L, hidden, dev)
    opt = torch.optim.Adam(model.parameters(), lr=_positive(lr, "lr"))
    x, adj, y = d.x.to(dev), d.adj_full.to(dev), d.y.to(dev)
    x_eval = eval_features(x)
    ptr, col = csr(d.train_edge_index, d.num_nodes)
    splits = {"train": torch.as_tensor(d.train).to(dev), "val": d.val.to(dev), "test": d.test.to(dev)}

    def loss(_: int) -> Tensor:
        if method == "gcn":
            out, target = _random_walk_forward(model, d, x, y, random_walk_batch(ptr, col, d.train, B, L, rng))
        else:
            idx = torch.as_tensor(uniform_batch(d.train, B, rng), device=dev)
            out, target = model(x[idx]), y[idx]
        return _loss(out, target, d.multilabel)

    def evaluate(_: int) -> dict[str, float]:
        return _scores(model, d, x_eval, adj if method == "gcn" else None, splits)

    step = GradientStep(opt, loss, max_grad_norm=grad_clip)
    res = fit(model, step, evaluate, epochs=max_steps, monitor="val", mode="max", patience=patience, restore_best=False)
    best = res.best
    if on_model is not None:
        on_model(model)
    ledger = {"level": "none", "epsilon": math.inf, **non_private()}
    return {
        "dataset": d.name,
        "method": method,
        "num_layers": L,
        "hidden": hidden,
        "test_f1": best.get("test", math.nan),
        "val_f1": best.get("val", math.nan),
        "train_f1": best.get("train", math.nan),
        "best_step": res.best_epoch,
        "steps": res.epochs,
        "epsilon": math.inf,
        "delta": 0.0,
        "level": "none",
        "ledger": ledger,
        "checkpoints": [],
        "history": res.history,
        "seconds": time.perf_counter() - t0,
        "versions": versions(),
    }
