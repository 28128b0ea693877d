"""What the ``pld`` accountant can compute: a size check before ``dp_accounting`` allocates its loss grids.

A privacy-loss distribution (PLD) is a probability vector on a grid of spacing Δ (the accountant's
``value_discretization_interval``). Its length decides memory and time, and some requests cannot be computed at
all (``dpgnn epsilon dpsgd -z 1 -q 0.01 -t 1e12 --accountant pld`` asked numpy for terabytes and ended in a
MemoryError traceback). Two sizes are checked, and a request above either is refused with one line
(:class:`TooLargeToAccount`, naming the size, the limit and the ``rdp`` accountant, which composes any count):

- **one step**, before it is built (:func:`step_points`): a Gaussian of noise multiplier σ (sensitivity 1) has
  losses ``(2x − 1)/(2σ²)`` for ``x`` within about ±10.5σ (``dp_accounting`` truncates the tails at mass e^-50),
  so about ``(21/σ + 1/σ²)/Δ`` grid points; subsampling only shrinks that range. A Laplace of scale b has losses in
  ``[−1/b, 1/b]``: ``2/(bΔ)`` points. FDP's step is a mixture of ``min(K, B)`` Gaussians, counted as many.
  Limit :data:`MAX_STEP_POINTS` (building a sampled step costs seconds per 10^5 points);
- **the composition**: ``T`` self-compositions are one FFT over the range that ``dp_accounting``'s own Chernoff
  bound (``common.compute_self_convolve_bounds``, tail mass 1e-15) keeps; :func:`bounded_convolutions` computes
  that length first, with the library's own function, and refuses above :data:`MAX_POINTS` (about 1.5 GiB of
  complex FFT buffers) instead of allocating. A small (sparse) step PMF of ``s`` points decides dense or sparse
  composition by the exact integer ``s ** T`` (``SparsePLDPmf.self_compose``): at ``T = 10^8`` that power alone
  runs for minutes, so within the block the dense path is taken directly where ``T·log s`` already shows
  ``s ** T`` above the library's sparse limit (the branch the library takes then anyway).

The check changes no number: whatever it lets through is computed exactly as before.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from typing import Any

from dpgnn.privacy.events import Event, GaussianEvent, LaplaceEvent

__all__ = ["MAX_POINTS", "MAX_STEP_POINTS", "TooLargeToAccount", "step_points", "check_steps", "bounded_convolutions"]

#: most grid points of one composed PLD (the FFT of ``self_compose``: ~48 bytes per point at its peak)
MAX_POINTS = 2**25
#: most grid points of one step's PLD before it is built
MAX_STEP_POINTS = 2**21
#: ``dp_accounting``'s tail mass truncation in ``self_compose`` (its default, which the accountant uses)
TAIL_MASS = 1e-15


class TooLargeToAccount(ValueError):
    """The requested composition is too large for the ``pld`` accountant (one line: size, limit, what to do)."""


def _base(event: Event) -> Event:
    inner = getattr(event, "event", None)  # Poisson / without-replacement sampling wraps a base event
    return inner if isinstance(inner, (GaussianEvent, LaplaceEvent)) else event


def step_points(event: Event, interval: float) -> float:
    """Grid points of one step's PLD (an upper estimate, see the module docstring). The FDP step (noise
    ``z``, a mixture over ``c = min(K, B)`` affected-root counts ``i`` of Gaussians of sensitivity ``i / (zK)``)
    counts ``c`` Gaussians of the largest sensitivity ``c / (zK)``. Other events give 0 (not checked here)."""
    base = _base(event)
    if isinstance(base, LaplaceEvent):
        return 2.0 / (base.scale * interval)
    if isinstance(base, GaussianEvent):
        return _gaussian_points(base.noise_multiplier, interval)
    if all(hasattr(base, a) for a in ("noise_multiplier", "num_train", "batch_size", "max_affected")):
        k = min(base.max_affected, base.num_train)
        parts = min(k, base.batch_size)
        return parts * _gaussian_points(base.noise_multiplier * k / parts, interval)
    return 0.0


def _gaussian_points(sigma: float, interval: float) -> float:
    return (21.0 / sigma + 1.0 / sigma**2) / interval


def check_steps(leaves: Iterable[tuple[Event, int]], interval: float) -> None:
    """:class:`TooLargeToAccount` if one step of ``leaves`` (``(event, count)`` pairs) is above
    :data:`MAX_STEP_POINTS` grid points."""
    for event, _ in leaves:
        n = step_points(event, interval)
        if n > MAX_STEP_POINTS:
            raise TooLargeToAccount(
                f"the pld accountant would need about {n:.3g} loss-grid points for one step of {event.to_dict()} "
                f"(limit {MAX_STEP_POINTS:,}; the noise is too small for grid spacing {interval:g}); use the 'rdp' "
                "accountant"
            )


@contextlib.contextmanager
def bounded_convolutions(max_points: int = MAX_POINTS) -> Iterator[None]:
    """Within the block, ``dp_accounting``'s self-composition first computes its output length with its own
    Chernoff bound and raises :class:`TooLargeToAccount` above ``max_points`` instead of allocating it; a sparse
    step goes dense without the library's ``size ** num_times`` (module docstring). Results are unchanged."""
    from dp_accounting.pld import common, pld_pmf

    original, sparse_self_compose = common.self_convolve, pld_pmf.SparsePLDPmf.self_compose

    def checked(input_list: Any, num_times: int, tail_mass_truncation: float = 0) -> Any:
        lower, upper = common.compute_self_convolve_bounds(input_list, num_times, tail_mass_truncation)
        points = max(upper - lower + 1, len(input_list))
        if points > max_points:
            raise TooLargeToAccount(
                f"the pld accountant would need {points:,} loss-grid points to compose {num_times:,} steps "
                f"(limit {max_points:,}); use the 'rdp' accountant, or fewer steps"
            )
        return original(input_list, num_times, tail_mass_truncation)

    def sparse(self: Any, num_times: int, tail_mass_truncation: float = 1e-15) -> Any:
        if self.size > 1 and num_times * math.log(self.size) > math.log(pld_pmf._MAX_PMF_SPARSE_SIZE) + 1:
            return self.to_dense_pmf().self_compose(num_times, tail_mass_truncation)
        return sparse_self_compose(self, num_times, tail_mass_truncation)

    common.self_convolve, pld_pmf.SparsePLDPmf.self_compose = checked, sparse
    try:
        yield
    finally:
        common.self_convolve, pld_pmf.SparsePLDPmf.self_compose = original, sparse_self_compose
