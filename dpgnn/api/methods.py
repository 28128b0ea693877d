"""The methods :func:`dpgnn.fit` offers: short paper-independent names over the registry :mod:`dpgnn.methods`.

Each entry names its levels (each one a registry key), its typed config (:mod:`dpgnn.api.configs`), its paper,
how the config becomes the registry's config, and how the trained model scores a graph (``predict``). Prediction
on a graph queries that graph the way the method's inference does (ProGAP/GAP: the same noisy aggregations, NAP
noise ``σ`` and, at node level, the degree bound ``D``; DP-GNN: degrees bounded to ``D``; EdgeRand/GraphSAGE:
the graph as given); it is a new use of that graph, not covered by the training ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.utils import to_torch_csr_tensor

from dpgnn.api.configs import DPGNNConfig, GAPConfig, MLPConfig, ProGAPConfig, SAGEConfig
from dpgnn.api.drw import DRWConfig, drw_runner, predict_drw
from dpgnn.api.ldp import LPGCNConfig, lpgcn_predictor, lpgcn_runner
from dpgnn.api.lpgnn import LPGNNConfig, lpgnn_predictor, lpgnn_runner
from dpgnn.api.privgnn import PATEConfig, PrivGNNConfig, pate_runner, predict_privgnn, privgnn_runner


@dataclass(frozen=True)
class Context:
    """What a predictor needs besides the model: level, resolved config, training ledger, seed, device."""

    level: str
    config: Any
    ledger: dict[str, Any]
    seed: int
    device: torch.device


@dataclass(frozen=True)
class FrontDoor:
    """One method of :func:`dpgnn.fit`: ``levels`` maps a level to its registry key ``(paper, method, level)``;
    ``to_registry(cfg, level, relation)`` the registry's config (without ε/δ); ``predict(parts, x, edge_index,
    ctx)`` the logits of every node of a graph."""

    name: str
    config: type
    levels: dict[str, tuple[str, str, str]]
    provenance: str
    summary: str
    to_registry: Callable[[Any, str, str], dict[str, Any]]
    predict: Callable[[Any, Tensor, Tensor, Context], Tensor]
    pure: bool = False  # pure ε-DP: δ = 0, no δ rule
    #: ``runner(graph, cfg, level, epsilon, seed, device) -> RunResult`` where the method is composed here from
    #: its paper module's functions (the registry's entry needs a paper dataset's name); else the registry runs it
    runner: Callable[..., Any] | None = None
    #: the ε to pass the method so that its sound ε is fit's target, where the two differ (EdgeRand)
    method_epsilon: Callable[[float], float] | None = None


def _eval(module: torch.nn.Module, *inputs: Any) -> Tensor:
    module.eval()
    with torch.no_grad():
        return module(*inputs)


def _bounded(edge_index: Tensor, n: int, ctx: Context, method: str) -> Tensor:
    """Node level: degrees capped to ``D`` with the training run's seed (the same edges kept on the same graph)."""
    from dpgnn.methods.progap import bound_degree
    from dpgnn.utils import stable_seed

    return bound_degree(edge_index, n, ctx.config.max_degree, stable_seed(f"{method}-degree", ctx.seed))


def _nap(edge_index: Tensor, n: int, ctx: Context, method: str):
    from dpgnn.methods.progap import NAP
    from dpgnn.utils import make_generator, stable_seed

    if ctx.level == "node":
        edge_index = _bounded(edge_index, n, ctx, method)
    gen = make_generator(stable_seed("fit-predict-noise", ctx.seed))
    return NAP(edge_index, n, float(ctx.ledger.get("sigma_nap", 0.0)), generator=gen, device=ctx.device)


def _predict_progap(parts: dict[str, Any], x: Tensor, ei: Tensor, ctx: Context) -> Tensor:
    """``X̃^(0) = X``, ``X̃^(s) = NAP(base_{s-1}(X̃^(s-1)))`` with each base as it was at its training query, then
    the final stage model on all cached inputs (Algorithm 2's inference)."""
    nap = _nap(ei, x.size(0), ctx, "progap")
    xs = [x]
    with torch.no_grad():
        for enc in parts["encoders"]:
            xs.append(nap(_eval(enc, xs[-1])))
    return _eval(parts["stages"], *xs)


def _predict_gap(parts: dict[str, Any], x: Tensor, ei: Tensor, ctx: Context) -> Tensor:
    """Encoder embedding, ``H`` normalised noisy aggregations, classifier (GAP's inference)."""
    nap = _nap(ei, x.size(0), ctx, "gap")
    enc = parts["encoder"].eval()
    with torch.no_grad():
        xs = [F.normalize(enc.embed(x), dim=-1)]
        for _ in range(ctx.config.hops):
            xs.append(F.normalize(nap(xs[-1]), dim=-1))
    return _eval(parts["classifier"], *xs)


def _predict_dp_gnn(model: Any, x: Tensor, ei: Tensor, ctx: Context) -> Tensor:
    n = x.size(0)
    ei = _bounded(ei, n, ctx, "dp-gnn")
    adj = to_torch_csr_tensor(ei.flip(0), size=(n, n)).to(ctx.device)
    model.eval()
    with torch.no_grad():
        return model.full(x, adj)


def _predict_sage(model: Any, x: Tensor, ei: Tensor, ctx: Context) -> Tensor:
    n = x.size(0)
    return _eval(model, x, to_torch_csr_tensor(ei.flip(0), size=(n, n)).to(ctx.device))


def _predict_mlp(model: Any, x: Tensor, ei: Tensor, ctx: Context) -> Tensor:
    return _eval(model, x)


def _progap_cfg(cfg: ProGAPConfig, level: str, relation: str) -> dict[str, Any]:
    out = {k: v for k, v in asdict(cfg).items() if k != "layerwise"}
    out["edge_relation"] = relation
    return out


def _gap_cfg(cfg: GAPConfig, level: str, relation: str) -> dict[str, Any]:
    out = asdict(cfg)
    out["depth"] = out.pop("hops")
    out["edge_relation"] = relation
    return out


def _plain(cfg: Any, level: str, relation: str) -> dict[str, Any]:
    return asdict(cfg)


def _mlp_cfg(cfg: MLPConfig, level: str, relation: str) -> dict[str, Any]:
    out = asdict(cfg)
    if level == "none":  # the non-private MLP trains full batch: no DP-Adam settings
        out.pop("batch_size"), out.pop("clip")
    return out


def _sage_cfg(cfg: SAGEConfig, level: str, relation: str) -> dict[str, Any]:
    return asdict(cfg)


def _edgerand_budget(target: float) -> float:
    """EdgeRand's ε argument whose sound ε (one undirected edge enters the density twice:
    :func:`dpgnn.methods.progap_baselines.edgerand_epsilon_sound`, linear in ε) equals ``target``."""
    from dpgnn.methods.progap_baselines import edgerand_epsilon_sound

    return target / edgerand_epsilon_sound(1.0)


_PROGAP = "Sajadmanesh & Gatica-Perez, ProGAP, WSDM 2024"
METHODS: dict[str, FrontDoor] = {
    m.name: m
    for m in [
        FrontDoor(
            "progap",
            ProGAPConfig,
            {lv: ("progap", "progap", lv) for lv in ("none", "edge", "node")},
            _PROGAP,
            "progressive stages, K noisy aggregations (NAP) of the graph; edge or node level",
            _progap_cfg,
            _predict_progap,
        ),
        FrontDoor(
            "gap",
            GAPConfig,
            {lv: ("progap", "gap", lv) for lv in ("none", "edge", "node")},
            "Sajadmanesh et al., GAP, USENIX Security 2023 (as run in ProGAP's experiments)",
            "encoder, H perturbed aggregations, classifier; edge or node level",
            _gap_cfg,
            _predict_gap,
        ),
        FrontDoor(
            "dp-gnn",
            DPGNNConfig,
            {"node": ("progap", "dp-gnn", "node")},
            "Daigavane et al., arXiv 2111.15521 (as run in ProGAP's experiments)",
            "per-root clipped gradients of degree-bounded 1-hop subgraphs; node level",
            _plain,
            _predict_dp_gnn,
        ),
        FrontDoor(
            "dp-mlp",
            MLPConfig,
            {"node": ("progap", "dp-mlp", "node")},
            _PROGAP + " (baseline)",
            "MLP on the features trained with DP-Adam (never reads the graph); node level",
            _mlp_cfg,
            _predict_mlp,
        ),
        FrontDoor(
            "mlp",
            MLPConfig,
            {"none": ("progap", "mlp", "none")},
            _PROGAP + " (baseline)",
            "MLP on the features, non-private reference (never reads the graph)",
            _mlp_cfg,
            _predict_mlp,
        ),
        FrontDoor(
            "graphsage",
            SAGEConfig,
            {"none": ("progap", "graphsage", "none")},
            _PROGAP + " (baseline)",
            "GraphSAGE, non-private reference",
            _sage_cfg,
            _predict_sage,
        ),
        FrontDoor(
            "edgerand",
            SAGEConfig,
            {"edge": ("progap", "edgerand", "edge")},
            "Wu et al., LinkTeller/EdgeRand, IEEE S&P 2022 (as run in ProGAP's experiments)",
            "randomized response on the undirected graph (pure ε), then GraphSAGE; edge level",
            _sage_cfg,
            _predict_sage,
            pure=True,
            method_epsilon=lambda target: _edgerand_budget(target),
        ),
    ]
}
_LPGCN_PAPER = "Lin et al., When Differential Privacy Meets Graph Neural Networks (LPGCN), arXiv 2006.05535"
for _name, _what in (("lm", "Laplace"), ("pm", "piecewise"), ("pgc", "PGC")):
    METHODS[_name] = FrontDoor(
        _name,
        LPGCNConfig,
        {"feature": ("lpgcn", f"{_name}-gcn", "feature")},
        _LPGCN_PAPER,
        f"{_what} mechanism on each node's features in [0, 1] (ε per feature, local DP), then a GCN; feature level",
        _plain,
        lpgcn_predictor(_name),
        pure=True,
        runner=lpgcn_runner(_name),
    )

_LPGNN_PAPER = "Sajadmanesh & Gatica-Perez, Locally Private Graph Neural Networks (LPGNN), CCS 2021"
METHODS["mbm"] = FrontDoor(
    "mbm",
    LPGNNConfig,
    {lv: ("lpgnn", "mbm", lv) for lv in ("feature", "feature+label")},
    _LPGNN_PAPER,
    "multi-bit mechanism on each node's features in [0, 1] (local DP; + RR labels at feature+label), KProp, GNN",
    _plain,
    lpgnn_predictor("mbm"),
    pure=True,
    runner=lpgnn_runner("mbm"),
)
METHODS["rr"] = FrontDoor(
    "rr",
    LPGNNConfig,
    {"label": ("lpgnn", "raw", "label")},
    _LPGNN_PAPER,
    "randomized response on each node's label (local DP), Drop label propagation, KProp, GNN; label level",
    _plain,
    lpgnn_predictor("rr"),
    pure=True,
    runner=lpgnn_runner("rr"),
)

_DRW_PAPER = "Ayle et al., Training Differentially Private GNNs with Random Walk Sampling (DRW)"
METHODS["drw"] = FrontDoor(
    "drw",
    DRWConfig,
    {"feature": ("drw", "drw", "feature")},
    _DRW_PAPER,
    "DP-SGD on disjoint random-walk subgraphs, sound mode (raw features, fixed clip, final model); node features",
    _plain,
    predict_drw,
    runner=drw_runner("drw"),
)
METHODS["fdp"] = FrontDoor(
    "fdp",
    DRWConfig,
    {"feature": ("drw", "fdp", "feature")},
    _DRW_PAPER + "; Daigavane et al.'s neighbourhoods",
    "DP-SGD on degree-bounded L-hop neighbourhoods (DRW's FDP baseline), sound mode; node features",
    _plain,
    predict_drw,
    runner=drw_runner("fdp"),
)

METHODS["privgnn"] = FrontDoor(
    "privgnn",
    PrivGNNConfig,
    {"node": ("privgnn", "privgnn", "node")},
    "Olatunji et al., Releasing Graph Neural Networks with Differential Privacy Guarantees (PrivGNN), TMLR 2023",
    "teachers on the private part label public nodes by noisy argmax; a GraphSAGE student on the public part",
    _plain,
    predict_privgnn,
    runner=privgnn_runner,
)
METHODS["pate"] = FrontDoor(
    "pate",
    PATEConfig,
    {"node": ("privgnn", "pate_g", "node")},
    "PATE-G/PATE-M as the PrivGNN paper's baselines (Olatunji et al., TMLR 2023; Papernot et al. 2017)",
    "teachers on disjoint private partitions vote; noisy argmax labels public nodes; a GraphSAGE student",
    _plain,
    predict_privgnn,
    runner=pate_runner,
)


def front_door(name: str) -> FrontDoor:
    """The method ``name`` (case-insensitive, ``_`` = ``-``); an unknown name lists the valid ones."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in METHODS:
        raise ValueError(f"unknown method {name!r}; valid: {', '.join(METHODS)}")
    return METHODS[key]
