"""DRW's privacy statement (Ayle et al., arXiv 2301.00738, Sec. 4) and its FDP baseline's (Daigavane et al.,
arXiv 2111.15521): events, ε and guarantee fields. Pure math, no graphs.

The method (:mod:`dpgnn.methods.drw`) and the calculators ``dpgnn epsilon drw`` / ``dpgnn epsilon fdp``
(:mod:`dpgnn.cli.epsilon_drw`) both build their events and ε here, so a result row and the calculator cannot
disagree.

- **DRW / DRW-D / DRW-R** (feature-level DP, replace-one neighbouring: the graphs differ in one node's feature row).
  One node's features enter at most one per-subgraph gradient, so the clipped batch sum has sensitivity ``2C`` and
  noise ``z·2C`` is added; a batch is ``B`` of the disjoint subgraphs drawn uniformly without replacement and holds
  a node's subgraph with probability at most ``q = B / m_min``, ``m_min = ⌈N / (1 + R·L)⌉`` (Sec. 4.2). ``T``
  steps: ``T`` compositions of the uniformly subsampled Gaussian (:func:`drw_event`), accountant ``autodp`` as in
  the authors' code.
- **FDP**: one node's features reach at most ``K = (D^(L+1) − 1)/(D − 1)`` roots' gradients, noise ``z·2KC``; the
  multi-term hypergeometric RDP accountant (:mod:`dpgnn.privacy.fdp`, :class:`FdpSampledGaussianEvent`, composed by
  the ``rdp`` accountant), with the DRW authors' variant (one order α = 10, classic conversion) as ``authors``.
- **Sound ε** (``epsilon_sound`` of :func:`run_accounting`, :func:`drw_sound_epsilon`, :func:`fdp_sound_epsilon`):
  the privacy-loss distributions of :mod:`dpgnn.privacy.sampled_pld` for the same steps, never above the RDP
  values (benchmarks/epsilon_tightness.py); ``epsilon`` stays the paper's accountant, which also sets the steps.

What the code guarantees (:func:`guarantee_fields`): the paper's pipeline z-scores features with the
training nodes' statistics (one node's raw features then move every input: the 2C sensitivity fails), calibrates the
clipping norm on private gradients and selects the best validation epoch on private data; none is in ε
(``as_published``). With ``scaling="none"``, a fixed ``clip_norm`` and ``select="last"`` only the accounted Gaussian
steps remain (``sound``).
"""

from __future__ import annotations

from typing import Any

from dpgnn.fidelity import FIDELITIES, Fidelity, parse
from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.events import Event, GaussianEvent, SampledWithoutReplacementEvent, SelfComposedEvent
from dpgnn.privacy.fdp import FdpSampledGaussianEvent, fdp_epsilon
from dpgnn.privacy.guarantee import AS_PUBLISHED, CLIPPING, MODEL_SELECTION, PREPROCESSING, SOUND, statement
from dpgnn.privacy.pld_limits import TooLargeToAccount
from dpgnn.privacy.sampled_pld import MAX_COMPOSITIONS
from dpgnn.privacy.validation import check_choice, check_int, check_positive

__all__ = [
    "FIDELITIES",
    "FDP_ACCOUNTING",
    "NEIGHBOURING",
    "drw_event",
    "drw_epsilon",
    "drw_sound_epsilon",
    "fdp_event",
    "fdp_run_epsilon",
    "fdp_sound_epsilon",
    "run_accounting",
    "guarantee_fields",
]

#: FDP accounting per variant: the paper's multi-order tight conversion, or the DRW code's α = 10, classic
FDP_ACCOUNTING: dict[str, dict[str, Any]] = {"paper": {}, "authors": {"orders": [10.0], "conversion": "classic"}}
NEIGHBOURING = "replace one node's features (feature-level, graph public)"


def drw_event(
    noise_multiplier: float, sample_rate: float, steps: int, fidelity: str | Fidelity = Fidelity.PAPER
) -> Event:
    """``steps`` compositions of a Gaussian (``z`` relative to the replace-one sensitivity 2C) on a uniform
    without-replacement subsample with rate ``q``.

    At ``q = 1`` (every subgraph in every batch: 1-layer DRW on Cora, 70 of 70; DRW-R 2-layer, 28 of 28) the
    ``paper`` fidelity composes the plain Gaussian exactly (no sampling happens); ``authors_code`` keeps the
    authors' accountant, autodp's subsampled RDP with ``q = 1`` -- a looser but valid bound (ε 7.99 after 157 steps
    at z 8, δ 1e-5, against 7.98 after 177 exactly), so that mode trains the official 157 steps instead of 177.
    Below rate 1 both fidelities are the same event.
    """
    z = check_positive(noise_multiplier, "noise_multiplier")
    t = check_int(steps, "steps", 1)
    base: Event = GaussianEvent(z)
    if sample_rate < 1.0 or parse(fidelity) is Fidelity.AUTHORS_CODE:
        base = SampledWithoutReplacementEvent(sample_rate, base)
    return SelfComposedEvent(base, t) if t > 1 else base


def drw_epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float,
    accountant: str = "autodp",
    fidelity: str | Fidelity = Fidelity.PAPER,
) -> float:
    """ε of :func:`drw_event` (``steps=0``: 0)."""
    if steps == 0:
        return 0.0
    event = drw_event(noise_multiplier, sample_rate, steps, fidelity)
    return get_accountant(accountant).compose(event).get_epsilon(delta)


def drw_sound_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
    """The tightest sound ε we compute for :func:`drw_event` (paper fidelity; ``steps=0``: 0).

    Replace-one on the ``m ≥ m_min`` disjoint subgraphs, sensitivity 2C, ``q = B / m_min`` an upper bound on the
    inclusion probability (ε grows with q): rate < 1 is the symmetrised without-replacement PLD of
    :mod:`dpgnn.privacy.sampled_pld` (Dong, Roth & Su 2022, Thm. 4.2; Zhu, Dong & Wang 2022, Prop. 30), rate 1
    the exact Gaussian composition (Balle & Wang 2018); above :data:`~dpgnn.privacy.sampled_pld.MAX_COMPOSITIONS`
    steps or a loss grid too large to build (:mod:`dpgnn.privacy.pld_limits`) the RDP accountant. Never above the
    ``rdp`` accountant's value (the smaller of two sound bounds)."""
    if check_int(steps, "steps", 0) == 0:
        return 0.0
    event = drw_event(noise_multiplier, sample_rate, steps)
    rdp = get_accountant("rdp").compose(event).get_epsilon(delta)
    if steps > MAX_COMPOSITIONS:
        return rdp
    try:
        tight = get_accountant("exact_gaussian" if sample_rate == 1.0 else "pld").compose(event).get_epsilon(delta)
    except (TooLargeToAccount, OverflowError):  # a grid too large to build, or losses beyond float range
        return rdp
    return min(tight, rdp)


def fdp_sound_epsilon(
    steps: int, noise_multiplier: float, num_train: int, batch_size: int, max_affected: int, delta: float
) -> float:
    """The tightest sound ε we compute for ``steps`` FDP steps (``steps=0``: 0): the PLD of the hypergeometric
    pair (:func:`dpgnn.privacy.sampled_pld.fdp_pld`; exact for K = 1, the count revealed for K > 1), never above
    Daigavane et al.'s multi-term RDP bound (the smaller of the two sound values; RDP alone beyond
    :data:`~dpgnn.privacy.sampled_pld.MAX_COMPOSITIONS` steps or where the loss grid is too large to build)."""
    rdp = fdp_run_epsilon(steps, noise_multiplier, num_train, batch_size, max_affected, delta)[0]
    if steps == 0 or steps > MAX_COMPOSITIONS:
        return rdp
    event = FdpSampledGaussianEvent(noise_multiplier, num_train, batch_size, max_affected)
    try:
        return min(get_accountant("pld").compose(event, steps).get_epsilon(delta), rdp)
    except (TooLargeToAccount, OverflowError):  # a grid too large to build, or losses beyond float range
        return rdp


def _fdp_variant(variant: str) -> dict[str, Any]:
    return dict(FDP_ACCOUNTING[check_choice(variant, tuple(FDP_ACCOUNTING), "fdp_variant")])


def fdp_event(noise_multiplier: float, num_train: int, batch_size: int, max_affected: int, steps: int) -> Event:
    """``steps`` FDP steps (:class:`FdpSampledGaussianEvent`, always wrapped: ``self_composed`` with its count)."""
    return SelfComposedEvent(
        FdpSampledGaussianEvent(noise_multiplier, num_train, batch_size, max_affected), check_int(steps, "steps", 1)
    )


def fdp_run_epsilon(
    steps: int,
    noise_multiplier: float,
    num_train: int,
    batch_size: int,
    max_affected: int,
    delta: float,
    variant: str = "paper",
) -> tuple[float, float]:
    """(ε, order) of ``steps`` FDP steps under ``variant`` (:data:`FDP_ACCOUNTING`; ``steps=0``: ε = 0)."""
    return fdp_epsilon(steps, noise_multiplier, num_train, batch_size, max_affected, delta, **_fdp_variant(variant))


def run_accounting(
    method: str,
    *,
    noise_multiplier: float,
    steps: int,
    delta: float,
    sample_rate: float = 1.0,
    num_train: int = 1,
    batch: int = 1,
    max_affected: int = 1,
    accountant: str = "autodp",
    fidelity: str | Fidelity = Fidelity.PAPER,
    fdp_variant: str = "paper",
) -> dict[str, Any]:
    """``epsilon``, ``accountant`` (the ledger's name), ``event`` (one step for FDP; the whole run otherwise, one
    step when ``steps = 0``) and ``epsilon_sound`` (:func:`drw_sound_epsilon` / :func:`fdp_sound_epsilon`, the
    tightest sound ε of the same steps; ``epsilon`` stays the paper's accountant) of a DP training run of
    ``method`` (``fdp``, ``drw``, ``drw-d`` or ``drw-r``)."""
    if method == "fdp":
        step = FdpSampledGaussianEvent(noise_multiplier, num_train, batch, max_affected)
        eps = fdp_run_epsilon(steps, noise_multiplier, num_train, batch, max_affected, delta, fdp_variant)[0]
        return {
            "epsilon": eps,
            "accountant": f"fdp-hypergeometric-rdp ({fdp_variant})",
            "event": step.to_dict(),
            "epsilon_sound": fdp_sound_epsilon(steps, noise_multiplier, num_train, batch, max_affected, delta),
        }
    eps = drw_epsilon(noise_multiplier, sample_rate, steps, delta, accountant, fidelity)
    return {
        "epsilon": eps,
        "accountant": accountant,
        "event": drw_event(noise_multiplier, sample_rate, max(steps, 1), fidelity).to_dict(),
        "epsilon_sound": drw_sound_epsilon(noise_multiplier, sample_rate, steps, delta),
    }


def guarantee_fields(*, scaling: str, clip_norm: float | None, select: str, method: str) -> dict[str, Any]:
    """Guarantee fields of one DP run (module docstring, "What the code guarantees")."""
    nc = (
        ([PREPROCESSING] if scaling != "none" else [])
        + ([CLIPPING] if clip_norm is None else [])
        + ([MODEL_SELECTION] if select != "last" else [])
    )
    acc = (
        "T batches of B disjoint subgraphs drawn uniformly without replacement, per-subgraph clipped gradient "
        "sum + Gaussian noise z*2C (sensitivity 2C: one node's features in one subgraph)"
        if method != "fdp"
        else "T uniform batches of B roots, per-root clipped gradients + Gaussian noise z*2KC (one node's features "
        "in at most K subgraphs)"
    )
    return statement(AS_PUBLISHED if nc else SOUND, NEIGHBOURING, accounted=acc, not_covered=nc)
