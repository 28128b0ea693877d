"""The audit hook into a method's DP-SGD step: what a white-box auditor may see and insert.

Every DP-SGD step of ProGAP/GAP/DP-MLP (:func:`dpgnn.methods.progap.train_stage`), DP-GNN
(:func:`dpgnn.methods.dp_gnn.train_dp_gnn`) and DRW/FDP (:func:`dpgnn.methods.drw.train_dp`) computes the clipped
gradient sum of its batch, adds Gaussian noise and updates the model (:class:`dpgnn.train.NoisyStep`). With
``canary=None`` (the default) nothing changes. With a :class:`DPStepHook` the method calls, on its real noise path,

1. ``hook.before_noise(sums, info)`` with the batch's clipped gradient sums (``{parameter name: tensor}``, the
   tensors the noise is added to); the hook may add, **in place**, the gradients of examples of its own (canary
   gradients, each clipped by the hook to the norm the method's clipping allows: ``info.clip``);
2. the method adds its noise (``N(0, info.std²)`` per coordinate) to the same tensors;
3. ``hook.after_noise(noisy, info)`` with the privatized sums (read only): the white-box threat model of Nasr et al.
   (2023, "Tight auditing of differentially private machine learning"), where the adversary sees every noisy update
   the accountant charges for.

``info`` (:class:`DPStepInfo`) states the step's sampling law (``batch`` of ``population`` units, Poisson or
uniform without replacement), the noise standard deviation and the clipping norm, so that a canary is sampled by the
method's own law and clipped to the method's own norm. The hook never changes the noise, the clipping of real
examples or the sampling of the real batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from torch import Tensor

__all__ = ["DPStepInfo", "DPStepHook"]


@dataclass(frozen=True)
class DPStepInfo:
    """One DP-SGD step as the method runs it.

    Attributes:
        population: units the batch is drawn from (training nodes, roots or subgraphs).
        batch: expected (Poisson) or exact (uniform without replacement) batch size in units.
        poisson: True for Poisson sampling (each unit independently with rate ``batch/population``), False for
            ``batch`` units drawn uniformly without replacement.
        std: standard deviation of the Gaussian noise added to every coordinate of the sums.
        clip: the per-unit clipping norm: one flat norm, or per parameter tensor (DRW/FDP) ``{name: C_j}``.
    """

    population: int
    batch: int
    poisson: bool
    std: float
    clip: float | Mapping[str, float]

    @property
    def rate(self) -> float:
        """Probability that one given unit is in the batch."""
        return min(1.0, self.batch / self.population)


class DPStepHook(Protocol):
    """What a method calls around its noise (module docstring)."""

    def before_noise(self, sums: dict[str, Tensor], info: DPStepInfo) -> None:
        """Sees the batch's clipped gradient sums ``{parameter name: tensor}`` before the noise; may add, in place,
        gradients of its own examples, each clipped to ``info.clip``."""

    def after_noise(self, noisy: dict[str, Tensor], info: DPStepInfo) -> None:
        """Sees the same sums after the noise ``N(0, info.std²)`` per coordinate (read only: the privatized update)."""
