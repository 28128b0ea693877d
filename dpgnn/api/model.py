"""The trained model :func:`dpgnn.fit` returns: predict on any graph of the same feature space, save and load."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from dpgnn.api.configs import make_config
from dpgnn.api.inputs import check_new_graph
from dpgnn.api.ldp import per_node_total
from dpgnn.api.methods import Context, front_door
from dpgnn.atomic import atomic_open, write_json

FORMAT = "dpgnn-trained-model/1"


@dataclass
class TrainedModel:
    """A model trained by :func:`dpgnn.fit`.

    Attributes:
        method: the front-door name (``progap``, ``gap``, ``dp-gnn``, ...); ``level``: ``none``/``edge``/``node``.
        config: the resolved typed config (every field, defaults included).
        metrics: ``train``/``val``/``test`` accuracy in [0, 1] on the training graph's split.
        history: per-epoch train/val accuracy (per stage where the method has stages; DRW/FDP: per step, every
            10th step and the last).
        ledger: the privacy ledger: ε, δ and ``delta_rule`` (how δ was chosen), ``neighbouring`` (the relation in
            words), ``guarantee`` (``sound`` or ``as_published``), mechanism, noise, accountant.
        notes: what the input checks did (self-loops, duplicates, direction, split).
        parts: the trained modules (method-specific).
    """

    method: str
    level: str
    config: Any
    metrics: dict[str, float]
    history: list[dict[str, Any]]
    ledger: dict[str, Any]
    notes: dict[str, Any]
    parts: Any
    num_features: int
    num_classes: int
    seed: int
    seconds: float = 0.0
    device: str = field(default="cpu", repr=False)

    def predict(self, data: Any, *, labels: bool = False) -> Tensor:
        """Scores of every node of ``data`` (a :class:`torch_geometric.data.Data` with ``x`` of the training
        feature width; ``y`` and masks are not needed; new nodes and new graphs are fine).

        Args:
            data: the graph to score; its ``edge_index`` is used as the method's inference uses a graph
                (ProGAP/GAP: the same noisy aggregations; see :mod:`dpgnn.api.methods`). That is a new use of the
                graph, outside the training ledger.
            labels: return the predicted class per node instead of the logits.

        Returns:
            ``[N, C]`` float logits on the CPU, or ``[N]`` int64 labels with ``labels=True``. Deterministic: the
            aggregation noise is drawn from a generator seeded by the training seed.
        """
        graph = check_new_graph(data, self.num_features)
        dev = torch.device(self.device)
        ctx = Context(self.level, self.config, self.ledger, self.seed, dev)
        out = front_door(self.method).predict(self.parts, graph.x.to(dev), graph.edge_index.to(dev), ctx).cpu()
        return out.argmax(-1) if labels else out

    def summary(self) -> str:
        """One line: accuracy, ε, δ and how δ was chosen, the guarantee and the neighbouring relation."""
        eps, delta = float(self.ledger.get("epsilon", math.inf)), float(self.ledger.get("delta", 0.0) or 0.0)
        sound = float(self.ledger.get("epsilon_sound", math.nan))
        budget = "non-private (ε = ∞)" if self.level == "none" else f"ε = {eps:.3g}, δ = {delta:.1e}"
        if self.level != "none" and math.isfinite(sound) and abs(sound - eps) > 1e-9:
            budget = f"ε = {sound:.3g} (sound; the paper's accounting: {eps:.3g}), δ = {delta:.1e}"
        if self.level != "none":
            budget += f" ({self.ledger.get('delta_rule', '')}){per_node_total(self.ledger)}"
        return (
            f"{self.method} [{self.level}]: test accuracy {self.metrics.get('test', math.nan):.4f} (val "
            f"{self.metrics.get('val', math.nan):.4f}); {budget}; guarantee {self.ledger.get('guarantee')}: "
            f"{self.ledger.get('neighbouring')}"
        )

    def to_json(self) -> dict[str, Any]:
        """``result.json``'s content: method, level, metrics, ledger, resolved config, input notes, seconds."""
        return {
            "method": self.method,
            "level": self.level,
            "metrics": self.metrics,
            "ledger": self.ledger,
            "config": asdict(self.config),
            "input": self.notes,
            "seed": self.seed,
            "seconds": self.seconds,
            "num_features": self.num_features,
            "num_classes": self.num_classes,
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Write the model (modules, config, metrics, history, ledger) to ``path`` with :func:`torch.save`.

        Args:
            path: the file to write (its folder is created).

        Returns:
            the path written. Load it with :func:`dpgnn.load` (which unpickles: load only files you trust).
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = {
            "format": FORMAT,
            **{
                k: getattr(self, k)
                for k in (
                    "method",
                    "level",
                    "metrics",
                    "history",
                    "ledger",
                    "notes",
                    "num_features",
                    "num_classes",
                    "seed",
                    "seconds",
                )
            },
            "config": asdict(self.config),
            "parts": self.parts,
        }
        with atomic_open(path, "wb") as f:
            torch.save(state, f)
        return path


def load(path: str | os.PathLike, *, device: str = "cpu") -> TrainedModel:
    """A model written by :meth:`TrainedModel.save`.

    Args:
        path: the file; it is unpickled (``torch.load(weights_only=False)``): load only files you trust.
        device: where to put the modules (``cpu``, ``cuda``).

    Returns:
        the :class:`TrainedModel`, with the same predictions as the saved one.
    """
    state = torch.load(path, map_location=device, weights_only=False)
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise ValueError(f"{path} is not a model saved by dpgnn (TrainedModel.save)")
    cfg = make_config(front_door(state["method"]).config, state.pop("config"))
    state.pop("format")
    return TrainedModel(config=cfg, device=device, **state)


def write_result(model: TrainedModel, out: str | os.PathLike) -> tuple[Path, Path]:
    """``out/model.pt`` and ``out/result.json`` (the CLI's output); returns both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model_path = model.save(out / "model.pt")
    result = out / "result.json"
    write_json(result, model.to_json(), indent=2, default=str)
    return model_path, result
