"""Typed configurations of the methods behind :func:`dpgnn.fit`: one frozen dataclass per method.

Every field carries its documentation in ``metadata`` (meaning, unit, valid range, the paper's section) and is
checked in ``__post_init__``: a bad value raises one ``ValueError`` line naming the field and its range;
:func:`make_config` refuses an unknown key and lists the valid ones. The privacy budget (``epsilon``, ``delta``),
the level and the seed are arguments of :func:`dpgnn.fit`, not fields.

Defaults are fixed constants chosen without looking at any dataset (no degree bound or width is read off the
user's graph). They are the papers' Table/§ settings except where stated in the field's ``doc``: DP-GNN uses
``max_degree=10`` and ``epochs=100`` (its paper-series setting of ``max_degree=100``, 10 epochs lands at chance on a
small random graph at ε 8: noise grows with ``D + 1``).
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

ACTIVATIONS = ("selu", "relu", "tanh")
EDGE_RELATIONS = ("auto", "directed", "undirected")


def documented(
    default: Any,
    doc: str,
    *,
    low: float | None = None,
    high: float | None = None,
    choices: tuple[str, ...] | None = None,
    integer: bool = False,
    paper: str = "",
) -> Any:
    """A documented field: ``low``/``high`` inclusive bounds, ``choices`` for strings, ``integer`` for counts."""
    return field(
        default=default,
        metadata={"doc": doc, "low": low, "high": high, "choices": choices, "integer": integer, "paper": paper},
    )


def field_range(f) -> str:
    """The valid range of a field in words (used by the errors and :func:`dpgnn.api.describe`)."""
    m = f.metadata
    if m.get("choices"):
        return "one of " + ", ".join(repr(c) for c in m["choices"])
    if isinstance(f.default, bool):
        return "True or False"
    kind = "an integer" if m.get("integer") else "a number"
    low, high = m.get("low"), m.get("high")
    if low is not None and high is not None:
        return f"{kind} in [{low:g}, {high:g}]"
    if low is not None:
        return f"{kind} >= {low:g}"
    return kind


def _check(cfg: Any) -> None:
    """One line per bad field: ``<Config>.<field> must be <range>, got <value>``."""
    for f in fields(cfg):
        v, m = getattr(cfg, f.name), f.metadata
        msg = f"{type(cfg).__name__}.{f.name} must be {field_range(f)}, got {v!r}"
        if m.get("choices"):
            if v not in m["choices"]:
                raise ValueError(msg)
        elif isinstance(f.default, bool):
            if not isinstance(v, bool):
                raise ValueError(msg)
        else:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(msg)
            if m.get("integer") and int(v) != v:
                raise ValueError(msg)
            if (m.get("low") is not None and v < m["low"]) or (m.get("high") is not None and v > m["high"]):
                raise ValueError(msg)


class Checked:
    """Mixin of the typed configs: every field is checked against its documented range when constructed."""

    def __post_init__(self) -> None:
        _check(self)


# -- the fields shared by several methods ---------------------------------------------------------------------------
def _hidden(paper: str) -> Any:
    return documented(16, "width of every hidden layer (units)", low=1, integer=True, paper=paper)


def _lr(paper: str) -> Any:
    return documented(0.01, "Adam learning rate", low=1e-6, high=10.0, paper=paper)


def _epochs(default: int, paper: str, what: str = "training epochs (per stage where the method has stages)") -> Any:
    return documented(default, what, low=1, integer=True, paper=paper)


def _batch(paper: str) -> Any:
    return documented(
        256,
        "expected batch size of DP-Adam (nodes; node level only: Poisson rate = batch_size / N_train)",
        low=1,
        integer=True,
        paper=paper,
    )


def _clip(paper: str) -> Any:
    return documented(1.0, "per-sample gradient clipping bound C (L2 norm; node level only)", low=1e-6, paper=paper)


def _max_degree(default: int, paper: str) -> Any:
    return documented(
        default,
        "degree bound D at node level (in- and out-edges kept per node, sampled; a fixed constant, "
        "never read off the graph); sensitivity grows with D",
        low=1,
        integer=True,
        paper=paper,
    )


def _activation(paper: str) -> Any:
    return documented("selu", "activation function", choices=ACTIVATIONS, paper=paper)


def _edge_relation(paper: str) -> Any:
    return documented(
        "auto",
        "edge level: what one neighbouring change is; 'auto' = 'undirected' (edge level needs a "
        "symmetric edge_index): one undirected edge, both directions, sensitivity √2; 'directed': one "
        "directed edge, sensitivity 1 (the authors' relation)",
        choices=EDGE_RELATIONS,
        paper=paper,
    )


@dataclass(frozen=True)
class ProGAPConfig(Checked):
    """ProGAP (Sajadmanesh & Gatica-Perez, WSDM 2024): progressive training, K noisy aggregations (NAP)."""

    depth: int = documented(
        3,
        "K: number of stages / NAP aggregations of the graph",
        low=1,
        high=10,
        integer=True,
        paper="ProGAP §4.1; grid {1..5} in §5.3",
    )
    hidden: int = _hidden("ProGAP §5.3")
    base_layers: int = documented(1, "layers of each stage's base MLP", low=1, integer=True, paper="ProGAP §5.3")
    head_layers: int = documented(1, "layers of each stage's head MLP", low=1, integer=True, paper="ProGAP §5.3")
    dropout: float = documented(0.0, "dropout probability in the MLPs", low=0.0, high=0.95, paper="ProGAP code")
    activation: str = _activation("ProGAP §5.3")
    lr: float = _lr("ProGAP §5.3")
    epochs: int = _epochs(100, "ProGAP §5.3")
    batch_size: int = _batch("ProGAP §5.3")
    max_degree: int = _max_degree(100, "ProGAP §4.2, §5.3")
    clip: float = _clip("ProGAP §4.2, §5.3")
    layerwise: bool = documented(
        False, "freeze earlier bases (the paper's layer-wise ablation)", paper="ProGAP §4.1 (progressive vs layer-wise)"
    )
    edge_relation: str = _edge_relation("ProGAP §4.2")


@dataclass(frozen=True)
class GAPConfig(Checked):
    """GAP (Sajadmanesh et al., USENIX Security 2023): encoder, H perturbed aggregations, classifier."""

    hops: int = documented(
        2, "H: number of perturbed aggregations", low=1, high=10, integer=True, paper="GAP, as run in ProGAP §5.2-5.3"
    )
    hidden: int = _hidden("GAP, as run in ProGAP §5.2-5.3")
    activation: str = _activation("GAP, as run in ProGAP §5.2-5.3")
    dropout: float = documented(
        0.0,
        "dropout probability in the encoder and classifier MLPs",
        low=0.0,
        high=0.95,
        paper="GAP authors' code (sisaman/GAP)",
    )
    lr: float = _lr("GAP, as run in ProGAP §5.2-5.3")
    epochs: int = _epochs(100, "GAP, as run in ProGAP §5.2-5.3", "epochs of the encoder and of the classifier")
    batch_size: int = _batch("GAP, as run in ProGAP §5.2-5.3")
    max_degree: int = _max_degree(100, "GAP, as run in ProGAP §5.2-5.3")
    clip: float = _clip("GAP, as run in ProGAP §5.2-5.3")
    edge_relation: str = _edge_relation("GAP, as run in ProGAP §5.2-5.3")


@dataclass(frozen=True)
class DPGNNConfig(Checked):
    """DP-GNN (Daigavane et al., arXiv 2111.15521): per-root clipped gradients of degree-bounded 1-hop subgraphs."""

    max_degree: int = _max_degree(10, "Daigavane et al., as run in ProGAP §5.2; 10 here (ProGAP's series: 100)")
    hidden: int = _hidden("ProGAP §5.2-5.3 (baseline)")
    base_layers: int = documented(2, "layers of the base MLP", low=1, integer=True, paper="ProGAP §5.2-5.3 (baseline)")
    head_layers: int = documented(1, "layers of the head MLP", low=1, integer=True, paper="ProGAP §5.2-5.3 (baseline)")
    activation: str = _activation("ProGAP §5.2-5.3 (baseline)")
    lr: float = _lr("Daigavane et al., as run in ProGAP §5.2")
    epochs: int = _epochs(100, "Daigavane et al., as run in ProGAP §5.2; 100 here (ProGAP's series: 10)")
    batch_size: int = documented(
        256, "roots drawn per step (nodes)", low=1, integer=True, paper="Daigavane et al., as run in ProGAP §5.2"
    )
    clip: float = documented(
        1.0, "per-root gradient clipping bound C (L2 norm)", low=1e-6, paper="Daigavane et al., as run in ProGAP §5.2"
    )


@dataclass(frozen=True)
class MLPConfig(Checked):
    """MLP on the node features alone (never reads the graph); DP-MLP (node level) trains it with DP-Adam."""

    base_layers: int = documented(2, "hidden layers before the 1-layer head", low=1, integer=True, paper="ProGAP §5.3")
    hidden: int = _hidden("ProGAP §5.3")
    lr: float = _lr("ProGAP §5.3")
    epochs: int = _epochs(100, "ProGAP §5.3")
    batch_size: int = _batch("ProGAP §5.3")
    clip: float = _clip("ProGAP §5.3")


@dataclass(frozen=True)
class SAGEConfig(Checked):
    """GraphSAGE (mean aggregation, jumping knowledge); EdgeRand (Wu et al. 2022) trains it on a randomized-
    response copy of the graph."""

    depth: int = documented(
        2, "SAGE message-passing layers", low=1, high=10, integer=True, paper="ProGAP §5.2-5.3 (baseline)"
    )
    base_layers: int = documented(2, "layers of the base MLP", low=1, integer=True, paper="ProGAP §5.2-5.3 (baseline)")
    hidden: int = _hidden("ProGAP §5.2-5.3 (baseline)")
    lr: float = _lr("ProGAP §5.2-5.3 (baseline)")
    epochs: int = _epochs(100, "ProGAP §5.2-5.3 (baseline)")


def make_config(cls: type, overrides: dict[str, Any]) -> Any:
    """``cls`` with ``overrides``; an unknown key raises one line listing the valid fields."""
    valid = [f.name for f in fields(cls)]
    unknown = sorted(set(overrides) - set(valid))
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown} for {cls.__name__}; valid: {', '.join(valid)}")
    return cls(**overrides)


def field_rows(cls: type) -> list[dict[str, Any]]:
    """One dict per field: name, default, range, doc, paper (for :func:`dpgnn.api.describe` and the CLI)."""
    return [
        {
            "name": f.name,
            "default": None if f.default is MISSING else f.default,
            "range": field_range(f),
            "doc": f.metadata["doc"],
            "paper": f.metadata["paper"],
        }
        for f in fields(cls)
    ]
