"""ProGAP: progressive aggregation perturbation (Sajadmanesh & Gatica-Perez, WSDM 2024), edge and node level.

The model is trained in ``K + 1`` stages (Algorithm 2). Stage ``s`` learns base MLPs ``0..s``, a jumping-knowledge
concatenation and a head on the cached inputs ``X̃^(0) = X`` and ``X̃^(k) = NAP(A, X^(k-1))``; after the stage
(with the best-validation epoch restored) its last base's output ``X^(s)`` is aggregated ONCE by the NAP
mechanism (normalise rows to unit L2 norm → sum over in-neighbours → Gaussian noise) and cached. Training and
inference afterwards only post-process cached aggregates, so the graph is queried exactly ``K`` times.

Privacy (docs/papers/progap.md#edge-level-privacy and docs/papers/progap.md#node-level-privacy):

- **edge level** (neighbouring graphs differ in one edge): each NAP query has L2 sensitivity 1, noise ``σ``;
  the run is the composition of ``K`` Gaussian mechanisms. Tight accounting: ``exact_gaussian`` (one Gaussian of
  noise ``σ/√K``, the exact (ε, δ) profile, = autodp's ``ComposeGaussian``); paper bound: Theorem 4.1,
  ``ε = K/(2σ²) + √(2K log(1/δ))/σ``.
- **node level** (one node and its edges added/removed): in-degrees bounded to ``D`` so a NAP query has
  sensitivity ``√D`` (noise ``z·√D``); every stage is trained with DP-Adam (per-sample clipping ``C``, noise
  ``z·C``, Poisson sampling with rate ``B/N_train``, ``E·⌊N_train/B⌋`` steps). One shared noise multiplier ``z``.
  The run is the composition of ``K`` Gaussians and ``K + 1`` DP-SGD runs. Tight accounting: ``autodp`` (the
  authors' accountant; ``rdp`` is our own independent one); paper bound: Theorem 4.2.

Calibration (``target_epsilon``) is conservative: the returned noise satisfies ``ε(noise) ≤ target``.
"""

from __future__ import annotations

import copy
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data

from dpgnn.data.transforms import EdgeCleaning, clean_edges
from dpgnn.methods import RunResult, register
from dpgnn.methods.hooks import DPStepHook, DPStepInfo
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import MLP, GhostClipper, StageModel
from dpgnn.privacy.progap import (  # noqa: F401  (re-exported: the method's accounting)
    DEFAULT_ACCOUNTANT,
    LEVELS,
    accountant_for,
    calibrate_noise,
    default_delta,
    edge_sensitivity,
    privacy_event,
    privacy_ledger,
    stage_steps,
    theorem41_epsilon,
    theorem42_epsilon,
)
from dpgnn.privacy.progap import check_level as _level
from dpgnn.privacy.validation import check_fraction as _delta
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos
from dpgnn.train import GradientStep, NoisyStep, fit
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = [
    "LEVELS",
    "ProGAPConfig",
    "ProGAPResult",
    "NAP",
    "bound_degree",
    "default_delta",
    "privacy_event",
    "privacy_ledger",
    "calibrate_noise",
    "theorem41_epsilon",
    "theorem42_epsilon",
    "stage_steps",
    "train_progap",
    "train_stage",
    "DPSettings",
    "predict",
    "PER_SAMPLE",
    "method_config",
    "graph_edges",
]

PAPER = "progap"
PER_SAMPLE = ("ghost", "opacus")  # how node-level DP-Adam computes its clipped gradient sums (train_stage)


# ---------------------------------------------------------------------------------------------------------------
# graph side: degree bounding and the NAP mechanism with its query counter
# ---------------------------------------------------------------------------------------------------------------
def _cap_per_group(group: Tensor, num_nodes: int, cap: int, gen: torch.Generator) -> Tensor:
    """Indices (sorted) of at most ``cap`` entries per value of ``group``, chosen uniformly without replacement."""
    key = torch.rand(group.numel(), generator=gen, dtype=torch.float64)
    order = torch.argsort(group.double() * 2.0 + key)  # by group, random within a group (key < 1)
    g_sorted = group[order]
    counts = torch.bincount(g_sorted, minlength=num_nodes)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.arange(group.numel()) - starts[g_sorted]
    return torch.sort(order[rank < cap]).values


def bound_degree(
    edge_index: Tensor, num_nodes: int, max_degree: int, seed: int | torch.Generator = 0, *, cap_out_degree: bool = True
) -> Tensor:
    """Keep at most ``max_degree`` in-edges per node, sampled uniformly without replacement
    (docs/papers/progap.md#node-level-privacy).

    ``edge_index[1]`` is the receiving node. With ``cap_out_degree`` (default) a second pass also keeps at most
    ``D`` out-edges per node, so that removing one node changes at most ``D`` aggregates by one unit row each:
    the ``√D`` node-level sensitivity then holds for any graph. The authors' code caps in-degrees only (and, via
    its seed list ``arange(0, N-1)``, drops every in-edge of the last node); ``cap_out_degree=False`` reproduces
    the in-degree cap alone.
    """
    d = _int(max_degree, "max_degree", 1)
    n = _int(num_nodes, "num_nodes", 1)
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must be a tensor of shape [2, E], got {getattr(edge_index, 'shape', None)}")
    if edge_index.numel() == 0:
        return edge_index
    if int(edge_index.max()) >= n or int(edge_index.min()) < 0:
        raise ValueError(f"edge_index has node ids outside [0, num_nodes={n})")
    gen = make_generator(seed)
    ei = edge_index.cpu()
    ei = ei[:, _cap_per_group(ei[1], n, d, gen)]
    if cap_out_degree:
        ei = ei[:, _cap_per_group(ei[0], n, d, gen)]
    return ei.to(edge_index.device)


def _receiver_csr(edge_index: Tensor, num_nodes: int, device: torch.device) -> Tensor:
    """The 0/1 matrix ``A[dst, src]`` of a coalesced edge list as CSR, rows sorted by ``(dst, src)`` -- what
    ``sparse_coo_tensor(...).coalesce()`` then ``to_sparse_csr()`` give for distinct pairs, without the COO
    coalesce (a per-entry loop that dominated the set-up on graphs of tens of millions of edges)."""
    src, dst = edge_index[0].to(device, torch.long), edge_index[1].to(device, torch.long)
    key = torch.sort(dst * num_nodes + src).values
    counts = torch.bincount(key // num_nodes, minlength=num_nodes)
    crow = torch.zeros(num_nodes + 1, dtype=torch.long, device=device)
    torch.cumsum(counts, 0, out=crow[1:])
    ones = torch.ones(key.numel(), device=device)
    with warnings.catch_warnings():  # torch's one-time "CSR support is in beta" (as dpgnn.utils.to_csr)
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support", category=UserWarning)
        return torch.sparse_csr_tensor(crow, key % num_nodes, ones, (num_nodes, num_nodes), check_invariants=False)


class NAP:
    """Normalise-aggregate-perturb on a fixed graph (docs/papers/progap.md#architecture-and-training):
    ``Σ_{j→i} h_j/‖h_j‖ + N(0, σ² I)``.

    Each call is one query of the graph and is counted in :attr:`queries` (Algorithm 2 makes exactly ``K``).
    ``sigma = 0`` is the non-private aggregation. L2 sensitivity of one query: 1 for one directed edge (a unit row
    enters one aggregate), ``√2`` for one undirected edge (two rows); ``√D`` for one node once degrees are bounded
    to ``D`` (paper §4.2, GAP's Lemma 3), so the caller passes ``sigma = z`` (edge) or ``z·√D`` (node). These
    hold for a simple graph: the edge list is coalesced first (:func:`dpgnn.data.transforms.clean_edges`), since a
    pair listed twice would enter its aggregate twice (sensitivity ``2``, ``2√2`` for an undirected edge).
    :attr:`cleaning` reports what was merged.
    """

    def __init__(
        self,
        edge_index: Tensor,
        num_nodes: int,
        sigma: float,
        *,
        generator: torch.Generator,
        device: str | torch.device = "cpu",
    ) -> None:
        if not (isinstance(sigma, (int, float)) and math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
        self.sigma = float(sigma)
        self.num_nodes = _int(num_nodes, "num_nodes", 1)
        edge_index, self.cleaning = clean_edges(edge_index, self.num_nodes, owner="NAP")
        self.adj = _receiver_csr(edge_index, self.num_nodes, torch.device(device))
        self.generator = generator
        self.queries = 0

    def __call__(self, h: Tensor) -> Tensor:
        self.queries += 1
        h = F.normalize(h, p=2.0, dim=-1)
        out = self.adj @ h
        if self.sigma > 0:
            noise = torch.randn(out.shape, generator=self.generator, device=self.generator.device)
            out = out + self.sigma * noise.to(out.device)
        return out


def graph_edges(data: Data, level: str, owner: str) -> tuple[Tensor, EdgeCleaning]:
    """The edge list a ProGAP-family run uses (:func:`dpgnn.data.transforms.clean_edges`): repeated pairs merged,
    self-loops kept (a self-loop is one unit row in one aggregate, within every sensitivity above); at edge level
    the graph must be undirected (both directions of every pair), as the ledger's neighbouring relation is one
    undirected edge -- a one-direction ``edge_index`` is refused with the fix. Node level caps in- and out-degrees
    (:func:`bound_degree`), which bounds a node's influence for any directed graph."""
    return clean_edges(data.edge_index, data.num_nodes, undirected=level == "edge", owner=owner)


def note_edges(ledger: dict[str, Any], cleaning: EdgeCleaning) -> dict[str, Any]:
    """Record in ``ledger`` (as ``edge_input``) what :func:`graph_edges` merged; nothing when the graph was used as
    given (every paper dataset)."""
    if cleaning.changed:
        ledger["edge_input"] = cleaning.describe()
    return ledger


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DPSettings:
    """DP-Adam of one stage: per-sample clipping ``clip``, noise ``noise_multiplier·clip``, Poisson sampling of the
    training rows with rate ``batch_size/N_train`` for ``epochs·max(1, ⌊N_train/batch_size⌋)`` steps."""

    noise_multiplier: float
    batch_size: int
    clip: float = 1.0


def predict(model: nn.Module, *inputs: Tensor) -> Tensor:
    """The model's outputs on ``inputs`` in eval mode, without gradients (what every evaluation of ProGAP, GAP and
    the baselines scores with :func:`dpgnn.metrics.split_accuracy`)."""
    model.eval()
    with torch.no_grad():
        return model(*inputs)


def train_stage(
    model: StageModel,
    xs: Sequence[Tensor],
    y: Tensor,
    masks: dict[str, Tensor],
    *,
    epochs: int,
    lr: float,
    dp: DPSettings | None = None,
    generator: torch.Generator,
    weight_decay: float = 0.0,
    stage: int = 0,
    per_sample: str = "ghost",
    canary: DPStepHook | None = None,
) -> tuple[StageModel, list[dict[str, Any]]]:
    """Train one stage; restore the epoch with the best validation accuracy ("early stopping",
    docs/papers/progap.md#architecture-and-training).

    Both branches run on the plain engine :func:`dpgnn.train.fit` (one ``step`` per epoch, then train/validation
    accuracy in eval mode; the best validation epoch, strictly better than the earlier ones, is restored; the
    initial weights are kept if no epoch has a validation accuracy, e.g. an empty validation split).

    Non-private: full-batch Adam, one step per epoch. With ``dp``: DP-Adam on Poisson-sampled training rows
    (flat per-sample clipping to ``dp.clip``, Gaussian noise ``dp.noise_multiplier·dp.clip`` per coordinate, the
    sum divided by the expected batch size), ``⌊N_train/B⌋`` steps per epoch; the model must hold no BatchNorm (see
    :func:`dpgnn.nn.progap.batchnorm_to_groupnorm`). ``per_sample`` picks how each step's clipped gradient sum
    is computed: ``"ghost"`` (default; :class:`dpgnn.nn.progap.GhostClipper`, exact per-sample norms from
    layer inputs and output gradients, no per-sample gradients stored; fused Adam) or ``"opacus"``
    (``GradSampleModule`` + ``DPOptimizer`` around the default Adam, per-sample gradients materialised; the
    original path, ~3x slower). Both draw the same Poisson batches and the same noise from ``generator`` in the
    same order, so a seed gives the same run up to float rounding (tested). Returns the
    restored model and the per-epoch history (train/val accuracy of the model in eval mode after each epoch).
    ``canary`` (audits only; ghost path): a :class:`dpgnn.methods.hooks.DPStepHook` called around every step's
    noise with the clipped sums ``{parameter name: tensor}`` (Poisson law over the ``N_train`` rows).
    """
    _int(epochs, "epochs", 1)
    _pos(lr, "lr")
    if per_sample not in PER_SAMPLE:
        raise ValueError(f"per_sample must be one of {PER_SAMPLE}, got {per_sample!r}")
    if canary is not None and (dp is None or per_sample != "ghost"):
        raise ValueError("canary needs a DP stage (dp) with per_sample='ghost'")
    train_idx = masks["train"].nonzero().view(-1)
    params = [p for p in model.parameters() if p.requires_grad]
    watched = {"train": masks["train"], "val": masks["val"]}

    def evaluate(epoch: int) -> dict[str, float]:
        return split_accuracy(predict(model, *xs), y, watched)

    def history(fitted) -> list[dict[str, Any]]:
        return [
            {"stage": stage, "epoch": h["epoch"], "train_acc": h["train"], "val_acc": h["val"]} for h in fitted.history
        ]

    if dp is None:
        opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
        x_train, y_train = [x[train_idx] for x in xs], y[train_idx]  # full batch: gathered once per stage
        step = GradientStep(opt, lambda epoch: F.cross_entropy(model(*x_train), y_train))
        return model, history(fit(model, step, evaluate, epochs=epochs, monitor="val", mode="max", keep_initial=True))

    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        raise ValueError("DP training needs per-sample normalisation: convert BatchNorm with batchnorm_to_groupnorm")
    n_train = train_idx.numel()
    q, steps = stage_steps(n_train, dp.batch_size, epochs)
    steps_per_epoch = steps // epochs
    expected = min(dp.batch_size, n_train)
    info = DPStepInfo(population=n_train, batch=expected, poisson=True, std=dp.noise_multiplier * dp.clip, clip=dp.clip)
    make = _opacus_update if per_sample == "opacus" else _ghost_update
    update, close = make(model, params, xs, y, dp, info, lr, weight_decay, generator, canary)
    sample_sizes = []

    def dp_step(epoch: int) -> None:
        """One epoch of DP-Adam: ``steps_per_epoch`` Poisson-sampled, clipped and noised steps."""
        for _ in range(steps_per_epoch):
            pick = torch.rand(n_train, generator=generator, device=generator.device).to(train_idx.device) < q
            batch = train_idx[pick]
            sample_sizes.append(int(batch.numel()))
            update(batch)

    try:
        fitted = fit(model, dp_step, evaluate, epochs=epochs, monitor="val", mode="max", keep_initial=True)
    finally:
        close()
        for p in params:
            p.grad_sample = None
            p.grad = None
    hist = history(fitted)
    hist[-1]["sample_sizes"] = sample_sizes
    return model, hist


def _ghost_update(model, params, xs, y, dp: DPSettings, info: DPStepInfo, lr, weight_decay, generator, canary):
    """The ghost path of :func:`train_stage`: ``update(batch)`` is one DP-Adam step on the batch's rows (Σ_i
    clip(∇ℓ_i) by ghost norms; then opacus DPOptimizer's noise draws, one N(0, (zC)²) tensor per parameter in
    parameter order from ``generator``, none when zC = 0, and its 1/B scaling; fused Adam). Returns ``(update,
    close)``."""
    if len({(p.dtype, p.device) for p in params}) > 1:
        raise ValueError(
            "ghost clipping needs all trainable parameters on one device and dtype; use per_sample='opacus'"
        )
    # fused Adam (one kernel per parameter): the same update as the default loop up to float rounding, ~5x
    # less time per step for these small tensors
    fused = all(p.device.type in ("cpu", "cuda") for p in params) or None
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=fused)
    sizes = [p.numel() for p in params]
    noise = torch.empty(sum(sizes), dtype=params[0].dtype, device=params[0].device)
    noise_views = noise.split(sizes)
    clipper = GhostClipper(model, params)
    names = [k for k, p in model.named_parameters() if p.requires_grad]

    def add_noise(sums: dict[str, Tensor]) -> dict[str, Tensor]:
        if info.std > 0:
            for v in noise_views:
                v.normal_(0.0, info.std, generator=generator)
            for s, v in zip(sums.values(), noise_views):
                s += v.view_as(s)
        return sums

    private = NoisyStep(opt, dict(zip(names, params)), add_noise, info.batch, canary=canary, info=info)

    def update(batch: Tensor) -> None:
        if batch.numel() == 0:  # an empty Poisson batch: the step is pure noise
            flat = torch.zeros_like(noise)
        else:
            sums, _ = clipper([x.index_select(0, batch) for x in xs], y[batch], dp.clip)
            flat = torch.cat([g.reshape(-1) for g in sums])
        private({k: v.view_as(p) for k, v, p in zip(names, flat.split(sizes), params)})

    return update, lambda: None


def _opacus_update(model, params, xs, y, dp: DPSettings, info: DPStepInfo, lr, weight_decay, generator, canary):
    """The opacus path of :func:`train_stage`: ``GradSampleModule`` + ``DPOptimizer`` around the default Adam
    (per-sample gradients materialised, clipped and noised by the optimizer). Returns ``(update, close)``."""
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    gsm = GradSampleModule(model, loss_reduction="mean")
    opt = DPOptimizer(
        torch.optim.Adam(params, lr=lr, weight_decay=weight_decay),
        noise_multiplier=dp.noise_multiplier,
        max_grad_norm=dp.clip,
        expected_batch_size=info.batch,
        loss_reduction="mean",
        generator=generator,
    )

    def loss(batch: Tensor) -> Tensor | None:
        if batch.numel() == 0:  # an empty Poisson batch: zero per-sample gradients, the step is pure noise
            for p in params:
                p.grad_sample = torch.zeros((0, *p.shape), device=p.device)
            return None
        return F.cross_entropy(gsm(*[x[batch] for x in xs]), y[batch])

    step = GradientStep(opt, loss)

    def update(batch: Tensor) -> None:
        gsm.train()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            step(batch)

    return update, gsm._close


@dataclass(frozen=True)
class ProGAPConfig:
    """One ProGAP run (docs/papers/progap.md#architecture-and-training to
    docs/papers/progap.md#hyper-parameter-search-and-reporting). ``epsilon=inf`` / ``level='none'`` is non-private
    ProGAP.

    ``noise`` (the noise multiplier) may be given instead of ``epsilon``; ``delta=None`` applies the authors' δ
    rule. ``layerwise=True`` freezes earlier bases (the ablation). ``batch_size``/``max_degree`` matter only at
    node level.
    """

    level: str = "edge"
    depth: int = 3
    epsilon: float = 1.0
    delta: float | None = None
    noise: float | None = None
    hidden: int = 16
    base_layers: int = 1
    head_layers: int = 1
    lr: float = 0.01
    epochs: int = 100
    batch_size: int = 256
    max_degree: int = 100
    clip: float = 1.0
    dropout: float = 0.0
    activation: str = "selu"
    layerwise: bool = False
    accountant: str | None = None
    #: edge level: "directed" (the authors' sensitivity 1) or "undirected" (one friendship = two directed edges,
    #: sensitivity √2; the sound option for the undirected Facebook100 graphs)
    edge_relation: str = "directed"
    fidelity: str = "paper"  # "authors_code": the official code's edge-level calibration (autodp RDP composition)

    def __post_init__(self) -> None:
        _level(self.level)
        edge_sensitivity(self.edge_relation)
        accountant_for("edge", self.fidelity)  # validates the fidelity
        _int(self.depth, "depth", 0)
        _int(self.hidden, "hidden", 1)
        _int(self.base_layers, "base_layers", 1)
        _int(self.head_layers, "head_layers", 1)
        _int(self.epochs, "epochs", 1)
        _int(self.batch_size, "batch_size", 1)
        _int(self.max_degree, "max_degree", 1)
        _pos(self.lr, "lr")
        _pos(self.clip, "clip")
        if self.level != "none" and self.noise is None:
            if not (isinstance(self.epsilon, (int, float)) and self.epsilon > 0) or math.isinf(self.epsilon):
                raise ValueError(
                    f"epsilon must be a finite number > 0 for level={self.level!r} (use level='none' "
                    f"for the non-private model), got {self.epsilon!r}"
                )
        if self.noise is not None and self.level != "none":
            _pos(self.noise, "noise")
        if self.delta is not None:
            _delta(self.delta)


@dataclass
class ProGAPResult:
    train_acc: float
    val_acc: float
    test_acc: float
    ledger: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)
    stage_val_acc: list[float] = field(default_factory=list)
    stage_test_acc: list[float] = field(default_factory=list)
    queries: int = 0
    seconds: float = 0.0
    #: the trained model(s) the metrics were scored with (what :func:`dpgnn.fit` returns to the user): ProGAP
    #: ``{"stages": StageModel, "encoders": [base_s at its NAP query]}``, GAP ``{"encoder", "classifier"}``, the
    #: baselines their module; not part of :meth:`row`
    model: Any = field(default=None, repr=False, compare=False)

    def row(self) -> dict[str, Any]:
        return {
            f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self) if f.name not in ("history", "model")
        }

    def to_run_result(self) -> RunResult:
        """This run under the method contract (:class:`dpgnn.methods.RunResult`): the accuracies as ``metrics``,
        the per-stage accuracies and the number of graph queries in ``extra``."""
        return RunResult(
            metrics={"train": self.train_acc, "val": self.val_acc, "test": self.test_acc},
            ledger=self.ledger,
            history=self.history,
            seconds=self.seconds,
            extra={
                "stage_val_acc": self.stage_val_acc,
                "stage_test_acc": self.stage_test_acc,
                "queries": self.queries,
                "model": self.model,
            },
        )


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
    k = cfg.depth
    torch.manual_seed(stable_seed("progap-init", seed))
    gen = make_generator(stable_seed("progap-noise", seed), dev if dev.type == "cuda" else "cpu")
    if cfg.level == "node":
        edge_index = bound_degree(edge_index, data.num_nodes, cfg.max_degree, stable_seed("progap-degree", seed))
    nap = NAP(edge_index, data.num_nodes, ledger["sigma_nap"], generator=gen, device=dev)
    x, y = data.x.to(dev).float(), data.y.to(dev)
    num_classes = int(data.y.max()) + 1
    dp = DPSettings(ledger["noise_multiplier"], cfg.batch_size, cfg.clip) if cfg.level == "node" else None
    norm = "group" if dp is not None else "batch"
    xs: list[Tensor] = [x]
    bases: list[nn.Module] = []
    history: list[dict[str, Any]] = []
    stage_val, stage_test = [], []
    model: StageModel | None = None
    encoders: list[nn.Module] = []  # base_{s-1} as it was when X^(s-1) was aggregated (to predict on new graphs)
    for s in range(k + 1):
        if s > 0:
            assert model is not None
            model.eval()
            encoders.append(copy.deepcopy(model.bases[-1]))
            xs.append(nap(model.embed(xs[-1])))  # the only use of the graph in stage s
        base = stage_base(cfg, xs[s].size(1), norm, dev)
        if cfg.layerwise:
            for b in bases:
                b.requires_grad_(False)
        bases.append(base)
        model = StageModel(bases, stage_head(cfg, s, num_classes, norm, dev))
        model, hist = train_stage(
            model,
            xs,
            y,
            masks,
            epochs=cfg.epochs,
            lr=cfg.lr,
            dp=dp,
            generator=gen,
            stage=s,
            per_sample=per_sample,
            canary=canary,
        )
        history += hist
        acc = split_accuracy(predict(model, *xs), y, masks)
        stage_val.append(acc["val"])
        stage_test.append(acc["test"])
        if on_stage is not None:
            on_stage(s, model, xs)
    assert model is not None
    acc = split_accuracy(predict(model, *xs), y, masks)  # inference: stage-K model on the cached aggregates
    ledger["queries"] = nap.queries
    note_edges(ledger, cleaning)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=ledger,
        history=history,
        stage_val_acc=stage_val,
        stage_test_acc=stage_test,
        queries=nap.queries,
        seconds=time.perf_counter() - t0,
        model={"stages": model, "encoders": encoders},
    )


# ---------------------------------------------------------------------------------------------------------------
# the method contract: ProGAP's methods in the registry, one config vocabulary for all of them
# ---------------------------------------------------------------------------------------------------------------
def method_config(
    config: Mapping[str, Any],
    level: str,
    allowed: Sequence[str],
    *,
    fixed: Mapping[str, Any] | None = None,
    unused: Sequence[str] = (),
) -> dict[str, Any]:
    """``config`` checked against a method's keys: every key must be in ``allowed``, ``fixed`` (the method's
    architecture fixes it, and a given value must equal it) or ``unused`` (a setting of the level that the method
    has no use for, e.g. the degree bound of a method that never reads the graph: dropped), and a ``level`` in it
    must be the registered one.

    The vocabulary shared by ProGAP's methods (the series' cells use it): ``epsilon``, ``delta``, ``noise``,
    ``depth`` (ProGAP's K, GAP's hops, GraphSAGE's and DP-GNN's message-passing layers, 0 for an MLP),
    ``base_layers``, ``hidden``, ``lr``, ``epochs``, ``batch_size``, ``max_degree``, ``clip``, ``accountant``,
    ``edge_relation``, ``fidelity``. Returns the config without ``level``."""
    cfg = dict(config)
    if "level" in cfg and str(cfg.pop("level")).lower() != level:
        raise ValueError(f"config level {config['level']!r} differs from the method's level {level!r}")
    fixed = dict(fixed or {})
    unknown = sorted(set(cfg) - set(allowed) - set(fixed) - set(unused))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown}; valid: {sorted(set(allowed) | set(fixed) | set(unused))}")
    for k in unused:
        cfg.pop(k, None)
    for k, v in fixed.items():
        if k in cfg and cfg.pop(k) != v:
            raise ValueError(f"{k} is fixed to {v!r} by the method's architecture, got {config[k]!r}")
    return cfg


_PROGAP_KEYS = (
    "epsilon",
    "delta",
    "noise",
    "depth",
    "hidden",
    "base_layers",
    "head_layers",
    "lr",
    "epochs",
    "batch_size",
    "max_degree",
    "clip",
    "dropout",
    "activation",
    "accountant",
    "edge_relation",
    "fidelity",
)


def _progap_runner(level: str, layerwise: bool):
    def config_of(config: Mapping[str, Any]) -> ProGAPConfig:
        cfg = method_config(config, level, _PROGAP_KEYS)
        if level == "none":  # the non-private model: no budget (a cell's ε = inf is its label, not a setting)
            cfg.pop("epsilon", None)
        return ProGAPConfig(level=level, layerwise=layerwise, **cfg)

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        return train_progap(data, config_of(config), seed=seed, device=device).to_run_result()

    def repeats(
        data: Data, config: Mapping[str, Any], *, seeds: Sequence[int], device: str = "auto"
    ) -> list[RunResult]:
        """``run`` for each of ``seeds``, trained together (:func:`dpgnn.methods.repeats.train_progap_repeats`;
        one seed at a time where that cannot, e.g. with dropout): one result per seed, each ``run``'s up to float
        rounding."""
        from dpgnn.methods.repeats import repeats_supported, train_progap_repeats

        cfg = config_of(config)
        if not repeats_supported(cfg):
            return [train_progap(data, cfg, seed=s, device=device).to_run_result() for s in seeds]
        return [r.to_run_result() for r in train_progap_repeats(data, cfg, seeds, device=device)]

    run.__name__ = run.__qualname__ = f"run_progap{'_layerwise' if layerwise else ''}_{level}"
    run.repeats = repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together through it)
    return run


for _level_name in LEVELS:
    for _layerwise in (False, True):
        _name = "progap-layerwise" if _layerwise else "progap"
        register(
            PAPER,
            _name,
            _level_name,
            description=(
                "ProGAP, "
                + ("earlier bases frozen (the layer-wise ablation), " if _layerwise else "")
                + {
                    "none": "non-private",
                    "edge": "edge-level DP (K NAP queries)",
                    "node": "node-level DP (K NAP queries + K+1 DP-Adam stages)",
                }[_level_name]
            ),
        )(_progap_runner(_level_name, _layerwise))
