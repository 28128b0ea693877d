"""The DRW series' typed profiles (``dpgnn.profiles.settings("drw", profile)``): the grids of Table 1 and Fig. 2,
the sound mode's one configuration and the sampling bound's datasets and noises."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from dpgnn.fidelity import Fidelity, parse
from dpgnn.methods import drw
from dpgnn.profiles import Profile

PAPER = "drw"


@dataclass(frozen=True)
class DPGrid:
    """The DP-SGD hyper-parameter grid searched by validation for Table 1 (docs/papers/drw.md#grids-and-seeds)."""

    lrs: list[float]
    """learning rates"""
    clip_fractions: list[float]
    """clipping norms, as the quantile of per-sample gradient norms the norm is set to"""
    noise_multipliers: list[float]
    """noise multipliers z (noise std / clipping norm)"""


@dataclass(frozen=True)
class SoundMode:
    """The sound mode's one configuration, fixed in advance (no selection on private data): raw features, absolute
    clipping norm, the final model."""

    methods: list[str]
    """the DP methods it runs (drw, fdp)"""
    lr: float
    """learning rate"""
    clip_norm: float
    """absolute clipping norm"""
    noise_multiplier: float
    """noise multiplier z"""


@dataclass(frozen=True)
class DRWProfile(Profile):
    """The settings of the DRW notebooks and grids (``dpgnn.profiles.settings("drw", profile)``)."""

    datasets: list[str]
    """datasets of Table 1 and Fig. 2 (those whose files are missing are recorded not run)"""
    methods: list[str]
    """Table 1's methods (gcn, mlp, drw, fdp, ...)"""
    archs: list[str]
    """architectures (1-layer, 2-layer)"""
    seeds: list[int]
    """training seeds (the paper: 3)"""
    grid: DPGrid
    """the DP-SGD grid searched by validation"""
    target_epsilon: float
    """ε every DP run is calibrated to (the paper: 8)"""
    nondp_max_steps: int
    """training steps of the non-private baselines"""
    patience: int
    """validation checks without improvement before stopping (fidelity variants other than the paper's)"""
    eval_every: int
    """steps between validation checks"""
    resample_every: int
    """steps between resampling the random-walk subgraphs"""
    fdp_degree: int
    """FDP's degree bound"""
    fdp_variant: str
    """which FDP accounting: ``paper`` or the authors' code"""
    fidelity: Fidelity
    """which version of the grid: ``paper`` (the paper's) or ``authors_code`` (:class:`dpgnn.fidelity.Fidelity`; a
    string is parsed)"""
    bound_datasets: list[str]
    """datasets of the sampling-bound notebook (03)"""
    bound_noises: list[float]
    """noise multipliers of the sampling-bound notebook (03)"""
    sound: SoundMode
    """the sound mode's one configuration (Table 1 sound)"""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fidelity", parse(self.fidelity))


_DP_GRID = DPGrid(lrs=[0.01, 0.1, 0.2], clip_fractions=[0.001, 0.01, 0.1], noise_multipliers=[1.0, 2.0, 4.0, 8.0])
_SOUND = SoundMode(methods=["drw", "fdp"], lr=0.1, clip_norm=1.0, noise_multiplier=4.0)

PROFILES: dict[str, DRWProfile] = {
    # smoke: both offline datasets, every Table-1 method, the 1-layer architecture, one DP configuration
    "smoke": DRWProfile(
        datasets=["cora", "citeseer"],
        methods=list(drw.METHODS),
        archs=["1-layer"],
        seeds=[1234],
        grid=DPGrid(lrs=[0.1], clip_fractions=[0.1], noise_multipliers=[4.0]),
        target_epsilon=8.0,
        nondp_max_steps=100,
        patience=30,
        eval_every=2,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity=Fidelity.PAPER,
        bound_datasets=list(drw.DATASETS),
        bound_noises=[1.0, 4.0],
        sound=_SOUND,
    ),
    # test: the smallest end-to-end execution (tests/test_notebooks.py)
    "test": DRWProfile(
        datasets=["cora"],
        methods=["gcn", "mlp", "drw", "fdp"],
        archs=["1-layer"],
        seeds=[1234],
        grid=DPGrid(lrs=[0.1], clip_fractions=[0.1], noise_multipliers=[1.0]),
        target_epsilon=8.0,
        nondp_max_steps=10,
        patience=5,
        eval_every=1,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity=Fidelity.PAPER,
        bound_datasets=["cora", "reddit"],
        bound_noises=[4.0],
        sound=dataclasses.replace(_SOUND, methods=["drw"]),
    ),
    # paper: docs/papers/drw.md#grids-and-seeds grid, 3 seeds, target eps = 8, every dataset whose files exist
    "paper": DRWProfile(
        datasets=list(drw.DATASETS),
        methods=list(drw.METHODS),
        archs=list(drw.ARCHS),
        seeds=list(drw.SEEDS),
        grid=_DP_GRID,
        target_epsilon=8.0,
        nondp_max_steps=1000,
        patience=30,
        eval_every=1,
        resample_every=10,
        fdp_degree=4,
        fdp_variant="paper",
        fidelity=Fidelity.PAPER,
        bound_datasets=list(drw.DATASETS),
        bound_noises=[1.0, 2.0, 4.0, 8.0],
        sound=_SOUND,
    ),
}
