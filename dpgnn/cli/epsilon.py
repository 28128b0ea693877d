"""``dpgnn epsilon …``: privacy calculators (mounted by :mod:`dpgnn.cli`).

Commands::

    dpgnn epsilon dpsgd   --noise-multiplier Z --sample-rate Q --steps T --delta D [--sampling poisson|uniform]
    dpgnn epsilon dpsgd   --target-epsilon E --sample-rate Q --steps T --delta D [--accountant pld]   # calibrate Z
    dpgnn epsilon laplace --scale B --sample-rate Q --count N --delta D

Both accept ``--accountant`` (``rdp`` default; ``pld`` = tight privacy-loss-distribution accounting with
``dp_accounting``, pessimistic; ``autodp``, ``autodp_rdp_acct``) and ``--json`` (exactly one JSON object on stdout).

**What ``-z`` means, in every calculator**: the noise standard deviation divided by the clipping norm ``C`` (the
norm each per-example, per-subgraph or per-node gradient is clipped to). The neighbouring relation fixes the
sensitivity of the clipped sum: ``C`` for add/remove one record (Poisson sampling), ``2C`` for replace one record
(``--sampling uniform``, DRW), ``2KC`` for FDP's K affected roots; the calculator divides ``z`` by it before
accounting (``noise_multiplier_accounted`` in ``--json``) and prints the relation and the sensitivity beside ε.
``--target-epsilon`` returns ``z`` in the same meaning.

Invalid input exits with status 2 and one line on stderr naming the option and its valid range; a computation the
accountant cannot do (e.g. ``pld`` with 10^12 steps) exits with status 1 and one line; no number is printed.

The papers' calculators live in ``dpgnn/cli/epsilon_<paper>.py`` (``drw``/``fdp``, ``lpgnn``, ``privgnn``/``pate``,
``progap``), each with ``register(app)``, and are listed below by name. Adding one: a module that builds the paper's
event (or statement) with its ``dpgnn.privacy.<paper>`` functions from options validated by :func:`option_check`
and calls :func:`report` (:mod:`dpgnn.cli.options`) — it runs the accountant and prints::

    def register(app):
        @app.command("mine")
        def mine(..., delta: float = DELTA, accountant: str = ACCOUNTANT, as_json: bool = JSON) -> None:
            with option_errors():
                event = ...
                report("mine", event, delta, accountant, as_json, inputs={...}, neighbouring="...",
                       sensitivity="2C")
"""

from __future__ import annotations

from typing import Any

import typer

from dpgnn.cli import epsilon_drw, epsilon_lpgnn, epsilon_privgnn, epsilon_progap
from dpgnn.cli.options import (
    ACCOUNTANT,
    DELTA,
    JSON,
    CliInputError,
    OneLineErrors,
    option_check,
    option_errors,
    report,
)
from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.calibration import DPSGD_RELATIONS, calibrate_noise_multiplier, dpsgd_event, dpsgd_relation
from dpgnn.privacy.events import Event, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpgnn.privacy.pld_limits import TooLargeToAccount
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite, check_sample_rate

__all__ = ["app", "PAPER_CALCULATORS"]

#: the largest multiplier of the event that ``dpsgd --target-epsilon`` searches (``calibrate_noise_multiplier``'s
#: default ``upper``; times the relation's sensitivity in std / C)
Z_MAX = 500.0

app = typer.Typer(
    cls=OneLineErrors,
    no_args_is_help=True,
    add_completion=False,
    help="Privacy calculators: epsilon of a mechanism or a training run (pure accounting, no data needed).",
)


@app.command("dpsgd")
def dpsgd(
    noise_multiplier: float | None = typer.Option(
        None,
        "--noise-multiplier",
        "-z",
        help="Noise std / clipping norm C, > 0 (the relation's sensitivity, C or 2C, is applied inside).",
    ),
    target_epsilon: float | None = typer.Option(
        None,
        "--target-epsilon",
        help="Calibrate the smallest noise multiplier (std / C) with epsilon <= this (> 0) instead of giving it.",
    ),
    sample_rate: float = typer.Option(..., "--sample-rate", "-q", help="Sampling probability per step, in (0, 1]."),
    steps: int = typer.Option(..., "--steps", "-t", help="Number of steps, an integer >= 1."),
    delta: float = DELTA,
    sampling: str = typer.Option(
        "poisson",
        "--sampling",
        help="poisson (add/remove one record: sensitivity C) or uniform (without "
        "replacement, replace one record: sensitivity 2C).",
    ),
    accountant: str = ACCOUNTANT,
    as_json: bool = JSON,
) -> None:
    """Epsilon of DP-SGD: STEPS compositions of a sampled Gaussian mechanism (or, with --target-epsilon, the
    calibrated noise multiplier and its epsilon). The noise std is Z*C for clipping norm C, under either sampling;
    the accountant sees Z / (sensitivity / C)."""
    with option_errors():
        if (noise_multiplier is None) == (target_epsilon is None):
            raise CliInputError("give exactly one of --noise-multiplier and --target-epsilon")
        q = option_check("--sample-rate", check_sample_rate, sample_rate)
        t = option_check("--steps", check_count, steps)
        d = option_check("--delta", check_delta, delta)
        if sampling not in DPSGD_RELATIONS:
            raise CliInputError(f"--sampling must be 'poisson' or 'uniform', got {sampling!r}")
        neighbouring, sens = dpsgd_relation(sampling)
        inputs: dict[str, Any] = {}
        if target_epsilon is not None:
            target = option_check("--target-epsilon", check_positive_finite, target_epsilon)
            try:
                get_accountant(accountant)
            except ValueError as err:
                raise CliInputError(f"--accountant: {err}") from None
            try:
                cal = calibrate_noise_multiplier(
                    target, d, sample_rate=q, steps=t, sampling=sampling, accountant=accountant, sensitivity=sens
                )
            except TooLargeToAccount:
                raise
            except ValueError:
                raise CliInputError(
                    f"--target-epsilon {target:g} cannot be reached with a noise multiplier up to "
                    f"{Z_MAX * sens:g} (std / C) at this sample rate and these steps; give a "
                    "larger target"
                ) from None
            z = cal.value
            inputs.update(target_epsilon=target, target_reached=cal.target_reached)
            if not cal.target_reached:
                typer.echo(f"Warning: {cal.describe('noise multiplier')}", err=True)
        else:
            z = option_check("--noise-multiplier", check_positive_finite, noise_multiplier)
        event = dpsgd_event(z / sens, q, t, sampling)
        report(
            "dpsgd",
            event,
            delta,
            accountant,
            as_json,
            inputs={
                "noise_multiplier": z,
                "noise_multiplier_accounted": z / sens,
                "sample_rate": q,
                "steps": t,
                "sampling": sampling,
                **inputs,
            },
            neighbouring=neighbouring,
            sensitivity=f"{sens:g}C" if sens != 1 else "C",
        )


@app.command("laplace")
def laplace(
    scale: float = typer.Option(..., "--scale", "-b", help="Laplace scale / L1 sensitivity (b = 1/lambda), > 0."),
    sample_rate: float = typer.Option(..., "--sample-rate", "-q", help="Poisson sampling probability, in (0, 1]."),
    count: int = typer.Option(..., "--count", "-n", help="Number of compositions (answered queries), >= 1."),
    delta: float = DELTA,
    accountant: str = ACCOUNTANT,
    as_json: bool = JSON,
) -> None:
    """Epsilon of COUNT compositions of a Poisson-subsampled Laplace mechanism (sensitivity 1)."""
    with option_errors():
        b = option_check("--scale", check_positive_finite, scale)
        q = option_check("--sample-rate", check_sample_rate, sample_rate)
        n = option_check("--count", check_count, count)
        option_check("--delta", check_delta, delta)
        base: Event = LaplaceEvent(b)
        if q < 1.0:
            base = PoissonSampledEvent(q, base)
        event = SelfComposedEvent(base, n) if n > 1 else base
        report(
            "laplace",
            event,
            delta,
            accountant,
            as_json,
            inputs={"scale": b, "sample_rate": q, "count": n},
            neighbouring="add/remove one record",
            sensitivity="1 (L1; the scale is in its units)",
        )


#: The papers' calculators, registered after ``dpsgd`` and ``laplace`` in this order (the order ``--help`` lists).
PAPER_CALCULATORS = (epsilon_drw, epsilon_lpgnn, epsilon_privgnn, epsilon_progap)
for _module in PAPER_CALCULATORS:
    _module.register(app)
