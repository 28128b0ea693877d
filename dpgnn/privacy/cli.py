"""``dpgnn epsilon …``: privacy calculators (mounted by :mod:`dpgnn.cli`).

Commands::

    dpgnn epsilon dpsgd   --noise-multiplier Z --sample-rate Q --steps T --delta D [--sampling poisson|uniform]
    dpgnn epsilon dpsgd   --target-epsilon E --sample-rate Q --steps T --delta D [--accountant pld]   # calibrate Z
    dpgnn epsilon laplace --scale B --sample-rate Q --count N --delta D

Both accept ``--accountant`` (``rdp`` default; ``pld`` = tight privacy-loss-distribution accounting with
``dp_accounting``, pessimistic, Poisson sampling only; ``autodp``, ``autodp_rdp_acct``) and ``--json`` (exactly one
JSON object on stdout). Invalid input exits with status 2 and a message naming the option and its valid range; no
number is printed.

Adding a calculator (e.g. ``privgnn``, ``pate``, ``drw``, ``fdp``, ``progap``): build the event from validated
options with :func:`option_check`, then call :func:`report` — it runs the accountant and prints::

    @app.command("mine")
    def mine(..., delta: float = DELTA, accountant: str = ACCOUNTANT, as_json: bool = JSON) -> None:
        with option_errors():
            event = ...
            report("mine", event, delta, accountant, as_json, inputs={...})
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any, Callable, Dict, Iterator, Optional

import typer

from dpgnn.privacy._validation import check_count, check_delta, check_positive_finite, check_sample_rate
from dpgnn.privacy.accountant import available_accountants, get_accountant
from dpgnn.privacy.calibration import calibrate_noise_multiplier, dpsgd_event
from dpgnn.privacy.events import Event, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent

__all__ = ["app", "report", "option_check", "option_errors", "CliInputError"]

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Privacy calculators: epsilon of a mechanism or a training run (pure accounting, no data needed).",
)


class CliInputError(Exception):
    """An invalid command-line value; the message names the option and the valid range."""


def option_check(option: str, check: Callable[..., Any], value: Any, *args: Any) -> Any:
    """Run a validator from :mod:`dpgnn.privacy._validation`, re-raising its error under the option's name."""
    try:
        return check(value, option, *args)
    except (TypeError, ValueError) as err:
        raise CliInputError(str(err)) from None


@contextlib.contextmanager
def option_errors() -> Iterator[None]:
    """Turn :class:`CliInputError` (and library validation errors) into a clean exit with status 2."""
    try:
        yield
    except (CliInputError, ValueError, TypeError, NotImplementedError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(code=2) from None


def _json_float(x: Optional[float]) -> Any:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return x


def report(command: str, event: Event, delta: float, accountant: str, as_json: bool,
           inputs: Dict[str, Any], neighbouring: str) -> Dict[str, Any]:
    """Compute ε of ``event`` with ``accountant`` at ``delta`` and print it (one JSON object with ``as_json``)."""
    d = option_check("--delta", check_delta, delta)
    try:
        acc = get_accountant(accountant)
    except ValueError as err:
        raise CliInputError(f"--accountant: {err}") from None
    eps, order = acc.compose(event).get_epsilon_and_order(d)
    payload: Dict[str, Any] = {
        "command": command,
        "epsilon": _json_float(eps),
        "delta": d,
        **inputs,
        "accountant": accountant,
        "order": _json_float(order),
        "neighbouring": neighbouring,
        "event": event.to_dict(),
    }
    if as_json:
        typer.echo(json.dumps(payload))
    else:
        args = ", ".join(f"{k}={v}" for k, v in inputs.items())
        if order is None:
            at = ""
        elif math.isinf(order):
            at = " (pure-DP basic composition is tighter)"
        else:
            at = f" (optimal RDP order {order:g})"
        typer.echo(f"{command}: epsilon = {eps:.6g} at delta = {d:g} [{args}; accountant={accountant}{at}]")
    return payload


DELTA = typer.Option(..., "--delta", help="Target delta, in (0, 1).")
ACCOUNTANT = typer.Option("rdp", "--accountant", help="Accountant: " + ", ".join(available_accountants()) + ".")
JSON = typer.Option(False, "--json", help="Print exactly one JSON object.")


@app.command("dpsgd")
def dpsgd(
    noise_multiplier: Optional[float] = typer.Option(
        None, "--noise-multiplier", "-z", help="Noise std / clipping norm (sensitivity-1 Gaussian), > 0."),
    target_epsilon: Optional[float] = typer.Option(
        None, "--target-epsilon", help="Calibrate the smallest noise multiplier with epsilon <= this (> 0) "
                                       "instead of giving it."),
    sample_rate: float = typer.Option(..., "--sample-rate", "-q", help="Sampling probability per step, in (0, 1]."),
    steps: int = typer.Option(..., "--steps", "-t", help="Number of steps, an integer >= 1."),
    delta: float = DELTA,
    sampling: str = typer.Option("poisson", "--sampling",
                                 help="poisson (add/remove neighbouring) or uniform (without replacement, "
                                      "replace-one neighbouring)."),
    accountant: str = ACCOUNTANT,
    as_json: bool = JSON,
) -> None:
    """Epsilon of DP-SGD: STEPS compositions of a sampled Gaussian mechanism (or, with --target-epsilon, the
    calibrated noise multiplier and its epsilon)."""
    with option_errors():
        if (noise_multiplier is None) == (target_epsilon is None):
            raise CliInputError("give exactly one of --noise-multiplier and --target-epsilon")
        q = option_check("--sample-rate", check_sample_rate, sample_rate)
        t = option_check("--steps", check_count, steps)
        d = option_check("--delta", check_delta, delta)
        if sampling not in ("poisson", "uniform"):
            raise CliInputError(f"--sampling must be 'poisson' or 'uniform', got {sampling!r}")
        inputs: Dict[str, Any] = {}
        if target_epsilon is not None:
            target = option_check("--target-epsilon", check_positive_finite, target_epsilon)
            try:
                get_accountant(accountant)
            except ValueError as err:
                raise CliInputError(f"--accountant: {err}") from None
            cal = calibrate_noise_multiplier(target, d, sample_rate=q, steps=t, sampling=sampling,
                                             accountant=accountant)
            z = cal.value
            inputs.update(target_epsilon=target, target_reached=cal.target_reached)
            if not cal.target_reached:
                typer.echo(f"Warning: {cal.describe('noise multiplier')}", err=True)
        else:
            z = option_check("--noise-multiplier", check_positive_finite, noise_multiplier)
        event = dpsgd_event(z, q, t, sampling)
        neighbouring = "add/remove one record" if sampling == "poisson" else "replace one record"
        report("dpsgd", event, delta, accountant, as_json,
               inputs={"noise_multiplier": z, "sample_rate": q, "steps": t, "sampling": sampling, **inputs},
               neighbouring=neighbouring)


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
        report("laplace", event, delta, accountant, as_json,
               inputs={"scale": b, "sample_rate": q, "count": n}, neighbouring="add/remove one record")


# Paper-specific calculators live in their own modules ``dpgnn/privacy/cli_<paper>.py``, each exposing
# ``register(app)`` that adds its subcommands (e.g. ``dpgnn epsilon privgnn``); one module per paper keeps them apart.
def _register_paper_commands() -> None:
    import importlib
    import pkgutil

    import dpgnn.privacy as pkg

    for mod in sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("cli_")):
        importlib.import_module(f"dpgnn.privacy.{mod}").register(app)


_register_paper_commands()
