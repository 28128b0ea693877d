"""One full ProGAP run (Algorithm 2): set-up and ledger, ``K + 1`` stages on cached NAP aggregates, result."""

from __future__ import annotations

import copy
import time
from typing import Any

import torch
from torch import Tensor, nn
from torch_geometric.data import Data

from dpgnn.data.transforms import EdgeCleaning
from dpgnn.methods.hooks import DPStepHook
from dpgnn.methods.progap.config import ProGAPConfig, ProGAPResult
from dpgnn.methods.progap.graph import NAP, bound_degree, graph_edges, note_edges
from dpgnn.methods.progap.stage import PER_SAMPLE, DPSettings, predict, train_stage
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import MLP, StageModel, sparse_rows
from dpgnn.privacy.progap import default_delta, privacy_ledger
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = ["run_setup", "stage_base", "stage_head", "train_progap"]


def _masks(data: Data, device: torch.device) -> dict[str, Tensor]:
    for m in ("train_mask", "val_mask", "test_mask"):
        if getattr(data, m, None) is None:
            raise ValueError(f"data has no {m}: load it with a split (e.g. variant='progap')")
    return {"train": data.train_mask.to(device), "val": data.val_mask.to(device), "test": data.test_mask.to(device)}


def _delta_for(cfg: ProGAPConfig, num_edges: int, n_train: int) -> float:
    if cfg.delta is not None:
        return float(cfg.delta)
    return default_delta(num_edges if cfg.level == "edge" else n_train)


def run_setup(
    data: Data, cfg: ProGAPConfig, dev: torch.device
) -> tuple[dict[str, Tensor], Tensor, EdgeCleaning, dict[str, Any]]:
    """What a ProGAP run needs before its first random draw: the split masks on ``dev``, the cleaned edge list
    (:func:`graph_edges`, before degree bounding), what cleaning merged, and the ledger (noise calibrated)."""
    masks = _masks(data, dev)
    check_features(data.x, "data.x (node features)")
    n_train = int(masks["train"].sum())
    if n_train == 0:
        raise ValueError("data has no training nodes")
    private = cfg.level != "none"
    edge_index, cleaning = graph_edges(data, cfg.level, "ProGAP")
    delta = _delta_for(cfg, edge_index.size(1), n_train) if private else None
    ledger = privacy_ledger(
        cfg.level,
        depth=cfg.depth,
        delta=delta,
        noise=cfg.noise if private else None,
        target_epsilon=(cfg.epsilon if cfg.noise is None else None) if private else None,
        train_nodes=n_train,
        batch_size=cfg.batch_size,
        epochs=cfg.epochs,
        max_degree=cfg.max_degree if cfg.level == "node" else None,
        clip=cfg.clip,
        accountant=cfg.accountant,
        edge_relation=cfg.edge_relation,
        fidelity=cfg.fidelity,
    )
    if private and ledger["epsilon"] > 0 and not ledger["noise_multiplier"] > 0:
        raise ValueError("a finite epsilon with zero noise is not a private run")
    return masks, edge_index, cleaning, ledger


def stage_base(cfg: ProGAPConfig, in_dim: int, norm: str, dev: torch.device) -> MLP:
    """Stage ``s``'s new base MLP on its cached input of width ``in_dim`` (initialised from the global stream)."""
    return MLP(
        in_dim, cfg.hidden, cfg.base_layers, dropout=cfg.dropout, activation=cfg.activation, norm=norm, plain_last=False
    ).to(dev)


def stage_head(cfg: ProGAPConfig, stage: int, num_classes: int, norm: str, dev: torch.device) -> MLP:
    """Stage ``stage``'s head on the JK concatenation of its ``stage + 1`` bases."""
    return MLP(
        cfg.hidden * (stage + 1),
        cfg.hidden,
        cfg.head_layers,
        out_dim=num_classes,
        dropout=cfg.dropout,
        activation=cfg.activation,
        norm=norm,
        plain_last=True,
    ).to(dev)


def train_progap(
    data: Data,
    cfg: ProGAPConfig,
    *,
    seed: int = 0,
    device: str = "auto",
    on_stage=None,
    per_sample: str = "ghost",
    canary: DPStepHook | None = None,
) -> ProGAPResult:
    """One full ProGAP run (Algorithm 2): ``K + 1`` stages, ``K`` cached NAP queries, ledger attached.

    ``seed`` drives everything random in the run (initialisation, degree bounding, NAP noise, Poisson sampling,
    DP noise); a seed of 0 is a seed. ``on_stage(stage, model, xs)`` is called after each stage (tests).
    ``per_sample`` (node level): ``"ghost"`` or ``"opacus"`` clipped gradient sums, the same run up to float
    rounding (see :func:`train_stage`); not part of the configuration. ``canary`` (audits): passed to every
    node-level stage's :func:`train_stage`.
    """
    t0 = time.perf_counter()
    if per_sample not in PER_SAMPLE:
        raise ValueError(f"per_sample must be one of {PER_SAMPLE}, got {per_sample!r}")
    dev = resolve_device(device)
    masks, edge_index, cleaning, ledger = run_setup(data, cfg, dev)
    torch.manual_seed(stable_seed("progap-init", seed))
    gen = make_generator(stable_seed("progap-noise", seed), dev if dev.type == "cuda" else "cpu")
    if cfg.level == "node":
        edge_index = bound_degree(edge_index, data.num_nodes, cfg.max_degree, stable_seed("progap-degree", seed))
    nap = NAP(edge_index, data.num_nodes, ledger["sigma_nap"], generator=gen, device=dev)
    x, y = data.x.to(dev).float(), data.y.to(dev)
    dp = DPSettings(ledger["noise_multiplier"], cfg.batch_size, cfg.clip) if cfg.level == "node" else None
    stages = _Stages(cfg, nap, y, masks, dp, gen, int(data.y.max()) + 1, dev)
    xs = stages.train([sparse_rows(x)], per_sample=per_sample, canary=canary, on_stage=on_stage)
    acc = split_accuracy(predict(stages.model, *xs), y, masks)  # inference: stage-K model on the cached aggregates
    ledger["queries"] = nap.queries
    note_edges(ledger, cleaning)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=ledger,
        history=stages.history,
        stage_val_acc=stages.val,
        stage_test_acc=stages.test,
        queries=nap.queries,
        seconds=time.perf_counter() - t0,
        model={"stages": stages.model, "encoders": stages.encoders},
    )


class _Stages:
    """The ``K + 1`` stages of one run (Algorithm 2) on one NAP and one noise stream: :meth:`train` fills the
    stage-``K`` model, the encoders (``base_{s-1}`` as it was when ``X^(s-1)`` was aggregated, to predict on new
    graphs), the per-epoch history and each stage's validation and test accuracy."""

    def __init__(self, cfg: ProGAPConfig, nap: NAP, y: Tensor, masks, dp, gen, num_classes: int, dev) -> None:
        self.cfg, self.nap, self.y, self.masks, self.dp, self.gen = cfg, nap, y, masks, dp, gen
        self.num_classes, self.dev = num_classes, dev
        self.norm = "group" if dp is not None else "batch"
        self.model: StageModel | None = None
        self.bases: list[nn.Module] = []
        self.encoders: list[nn.Module] = []
        self.history: list[dict[str, Any]] = []
        self.val: list[float] = []
        self.test: list[float] = []

    def train(self, xs: list[Tensor], *, per_sample: str, canary, on_stage) -> list[Tensor]:
        """Train every stage on ``xs`` (``[X]``, extended by each stage's NAP aggregate); returns ``xs``."""
        cfg = self.cfg
        for s in range(cfg.depth + 1):
            if s > 0:
                assert self.model is not None
                self.model.eval()
                self.encoders.append(copy.deepcopy(self.model.bases[-1]))
                xs.append(self.nap(self.model.embed(xs[-1])))  # the only use of the graph in stage s
            base = stage_base(cfg, xs[s].size(1), self.norm, self.dev)
            if cfg.layerwise:
                for b in self.bases:
                    b.requires_grad_(False)
            self.bases.append(base)
            model = StageModel(self.bases, stage_head(cfg, s, self.num_classes, self.norm, self.dev))
            self.model, hist = train_stage(
                model,
                xs,
                self.y,
                self.masks,
                epochs=cfg.epochs,
                lr=cfg.lr,
                dp=self.dp,
                generator=self.gen,
                stage=s,
                per_sample=per_sample,
                canary=canary,
            )
            self.history += hist
            acc = split_accuracy(predict(self.model, *xs), self.y, self.masks)
            self.val.append(acc["val"])
            self.test.append(acc["test"])
            if on_stage is not None:
                on_stage(s, self.model, xs)
        assert self.model is not None
        return xs
