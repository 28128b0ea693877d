"""ProGAP's configuration and result: :class:`ProGAPConfig` (one run's settings, validated) and
:class:`ProGAPResult` (its accuracies, ledger and trained model)."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, fields
from typing import Any

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import RunResult
from dpgnn.privacy.progap import check_level as _level
from dpgnn.privacy.progap import edge_sensitivity
from dpgnn.privacy.validation import check_fraction as _delta
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos

__all__ = ["ProGAPConfig", "ProGAPResult"]


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
    #: ``Fidelity.AUTHORS_CODE`` (or ``"authors_code"``): the official code's edge-level calibration (autodp RDP
    #: composition); a string is parsed on construction
    fidelity: Fidelity = Fidelity.PAPER

    def __post_init__(self) -> None:
        _level(self.level)
        edge_sensitivity(self.edge_relation)
        object.__setattr__(self, "fidelity", parse(self.fidelity, "fidelity"))
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
    """One ProGAP-family run: train/validation/test accuracy, the ledger, the per-epoch history, each stage's
    accuracies, the number of graph queries, the wall time and the trained model."""

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
        """Every field but ``history`` and ``model``, deep-copied: the run as one flat record."""
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
