"""GAP (Sajadmanesh et al., USENIX Security 2023) as ProGAP's main baseline (docs/papers/progap.md#baselines), edge and
node level.

Three modules trained one after the other:

1. **encoder**: MLP (``encoder_layers`` layers) + 1-layer head, trained with cross-entropy on the raw features
   (node level: DP-Adam, no BatchNorm); ``X_0 = normalise(encoder(X))``.
2. **aggregation** (PMA): ``X_k = normalise(Σ_{j→i} X_{k-1,j} + N(0, σ²))`` for ``k = 1..H``, computed once
   (``H`` NAP queries of sensitivity 1 per edge, ``√D`` per node after degree bounding).
3. **classifier**: one 1-layer base MLP per hop, concatenated, 1-layer head (node level: DP-Adam).

Accounting: edge level ``H`` Gaussians; node level ``H`` Gaussians + 2 DP-SGD runs (encoder and classifier), one
shared noise multiplier (as the authors' code).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data.transforms import EdgeCleaning
from dpgnn.methods import RunResult, register
from dpgnn.methods.hooks import DPStepHook
from dpgnn.methods.progap import (
    LEVELS,
    NAP,
    DPSettings,
    ProGAPResult,
    _masks,
    bound_degree,
    default_delta,
    edge_sensitivity,
    graph_edges,
    method_config,
    note_edges,
    predict,
    privacy_ledger,
    train_stage,
)
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import MLP, StageModel, sparse_rows
from dpgnn.privacy.progap import check_level as _level
from dpgnn.privacy.validation import check_fraction as _delta
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = ["GAPConfig", "train_gap"]


@dataclass(frozen=True)
class GAPConfig:
    """One GAP run; ``hops`` = H (the paper's grid 1..5)."""

    level: str = "edge"
    hops: int = 2
    epsilon: float = 1.0
    delta: float | None = None
    noise: float | None = None
    hidden: int = 16
    encoder_layers: int = 2
    lr: float = 0.01
    epochs: int = 100
    batch_size: int = 256
    max_degree: int = 100
    clip: float = 1.0
    activation: str = "selu"
    #: dropout probability after each hidden layer of the encoder and classifier MLPs (the authors' GAP code has
    #: one; 0 = none, the setting of every stored ProGAP-series run)
    dropout: float = 0.0
    accountant: str | None = None
    edge_relation: str = "directed"  # or "undirected" (sensitivity √2), see dpgnn.privacy.progap

    def __post_init__(self) -> None:
        _level(self.level)
        edge_sensitivity(self.edge_relation)
        _int(self.hops, "hops", 1)
        _int(self.epochs, "epochs", 1)
        _int(self.batch_size, "batch_size", 1)
        _int(self.max_degree, "max_degree", 1)
        _int(self.encoder_layers, "encoder_layers", 1)
        _pos(self.lr, "lr")
        if not (isinstance(self.dropout, (int, float)) and 0.0 <= self.dropout < 1.0):
            raise ValueError(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        if self.level != "none" and self.noise is None and not (0 < self.epsilon < math.inf):
            raise ValueError(f"epsilon must be a finite number > 0 for level={self.level!r}, got {self.epsilon!r}")
        if self.delta is not None:
            _delta(self.delta)


def run_setup(
    data: Data, cfg: GAPConfig, dev: torch.device
) -> tuple[dict[str, Tensor], Tensor, EdgeCleaning, dict[str, Any]]:
    """What a GAP run needs before its first random draw: the split masks on ``dev``, the cleaned edge list
    (before degree bounding), what cleaning merged, and the ledger (noise calibrated)."""
    masks = _masks(data, dev)
    check_features(data.x, "data.x (node features)")
    n_train = int(masks["train"].sum())
    private = cfg.level != "none"
    edge_index, cleaning = graph_edges(data, cfg.level, "GAP")
    delta = None
    if private:
        delta = (
            cfg.delta
            if cfg.delta is not None
            else default_delta(edge_index.size(1) if cfg.level == "edge" else n_train)
        )
    ledger = privacy_ledger(
        cfg.level,
        depth=cfg.hops,
        delta=delta,
        noise=cfg.noise if private else None,
        target_epsilon=(cfg.epsilon if cfg.noise is None else None) if private else None,
        dpsgd_runs=2 if cfg.level == "node" else None,
        train_nodes=n_train,
        batch_size=cfg.batch_size,
        epochs=cfg.epochs,
        max_degree=cfg.max_degree if cfg.level == "node" else None,
        clip=cfg.clip,
        accountant=cfg.accountant,
        method="gap",
        edge_relation=cfg.edge_relation,
    )
    return masks, edge_index, cleaning, ledger


def encoder(cfg: GAPConfig, in_dim: int, num_classes: int, norm: str, dev: torch.device) -> StageModel:
    """The encoder (``encoder_layers``-layer MLP) and its training head, initialised from the global stream."""
    return StageModel(
        [MLP(in_dim, cfg.hidden, cfg.encoder_layers, activation=cfg.activation, norm=norm, dropout=cfg.dropout)],
        MLP(cfg.hidden, cfg.hidden, 1, out_dim=num_classes, plain_last=True, norm=norm),
    ).to(dev)


def classifier(cfg: GAPConfig, num_classes: int, norm: str, dev: torch.device) -> StageModel:
    """One 1-layer base per hop ``0..H`` on the aggregates, concatenated (not normalised), and a 1-layer head."""
    return StageModel(
        [
            MLP(cfg.hidden, cfg.hidden, 1, activation=cfg.activation, norm=norm, dropout=cfg.dropout)
            for _ in range(cfg.hops + 1)
        ],
        MLP(cfg.hidden * (cfg.hops + 1), cfg.hidden, 1, out_dim=num_classes, plain_last=True, norm=norm),
        normalize_jk=False,
    ).to(dev)


def train_gap(
    data: Data, cfg: GAPConfig, *, seed: int = 0, device: str = "auto", canary: DPStepHook | None = None
) -> ProGAPResult:
    """One GAP run with its ledger (``epsilon`` from the numerical accountant of the level). ``canary`` (audits,
    :mod:`dpgnn.methods.hooks`): passed to both node-level DP-SGD runs (encoder and classifier)."""
    t0 = time.perf_counter()
    dev = resolve_device(device)
    masks, edge_index, cleaning, ledger = run_setup(data, cfg, dev)
    torch.manual_seed(stable_seed("gap-init", seed))
    gen = make_generator(stable_seed("gap-noise", seed), dev if dev.type == "cuda" else "cpu")
    if cfg.level == "node":
        edge_index = bound_degree(edge_index, data.num_nodes, cfg.max_degree, stable_seed("gap-degree", seed))
    dp = DPSettings(ledger["noise_multiplier"], cfg.batch_size, cfg.clip) if cfg.level == "node" else None
    norm = "none" if dp is not None else "batch"
    x, y = data.x.to(dev).float(), data.y.to(dev)
    c = int(data.y.max()) + 1
    # 1. encoder
    enc = encoder(cfg, x.size(1), c, norm, dev)
    x0 = sparse_rows(x)
    enc, hist = train_stage(
        enc, [x0], y, masks, epochs=cfg.epochs, lr=cfg.lr, dp=dp, generator=gen, stage=0, canary=canary
    )
    enc.eval()
    with torch.no_grad():
        xs = [F.normalize(enc.embed(x0), dim=-1)]
    # 2. aggregations, computed once
    nap = NAP(edge_index, data.num_nodes, ledger["sigma_nap"], generator=gen, device=dev)
    with torch.no_grad():
        for _ in range(cfg.hops):
            xs.append(F.normalize(nap(xs[-1]), dim=-1))
    # 3. classifier
    clf = classifier(cfg, c, norm, dev)
    clf, hist2 = train_stage(
        clf, xs, y, masks, epochs=cfg.epochs, lr=cfg.lr, dp=dp, generator=gen, stage=1, canary=canary
    )
    acc = split_accuracy(predict(clf, *xs), y, masks)
    ledger["queries"] = nap.queries
    note_edges(ledger, cleaning)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=ledger,
        history=hist + hist2,
        queries=nap.queries,
        seconds=time.perf_counter() - t0,
        model={"encoder": enc, "classifier": clf},
    )


_GAP_KEYS = (
    "epsilon",
    "delta",
    "noise",
    "depth",
    "hidden",
    "lr",
    "epochs",
    "batch_size",
    "max_degree",
    "clip",
    "activation",
    "dropout",
    "accountant",
    "edge_relation",
)


def _gap_runner(level: str):
    def config_of(config: Mapping[str, Any]) -> GAPConfig:
        cfg = method_config(config, level, _GAP_KEYS, fixed={"base_layers": 1})
        if "depth" in cfg:
            cfg["hops"] = cfg.pop("depth")
        if level == "none":
            cfg.pop("epsilon", None)
        return GAPConfig(level=level, **cfg)

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        """GAP under the method contract: ``depth`` = hops H; the encoder has 2 layers and 1-layer bases per hop
        (``base_layers`` is fixed at 1, the series' label of the per-hop bases)."""
        return train_gap(data, config_of(config), seed=seed, device=device).to_run_result()

    def repeats(
        data: Data, config: Mapping[str, Any], *, seeds: Sequence[int], device: str = "auto"
    ) -> list[RunResult]:
        """``run`` for each of ``seeds``, trained together (:func:`dpgnn.methods.repeats.train_gap_repeats`; one
        seed at a time with dropout): one result per seed, each ``run``'s up to float rounding."""
        from dpgnn.methods.repeats import repeats_supported, train_gap_repeats

        cfg = config_of(config)
        if not repeats_supported(cfg):
            return [train_gap(data, cfg, seed=s, device=device).to_run_result() for s in seeds]
        return [r.to_run_result() for r in train_gap_repeats(data, cfg, seeds, device=device)]

    run.__name__ = run.__qualname__ = f"run_gap_{level}"
    run.repeats = repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together through it)
    return run


for _level_name in LEVELS:
    register("progap", "gap", _level_name, description=f"GAP (aggregation perturbation), {_level_name} level")(
        _gap_runner(_level_name)
    )
