"""Shared pieces of the ``dpgnn epsilon`` calculators: option checks, one-line errors, and :func:`report` (runs an
accountant on an event and prints ε with the neighbouring relation and the sensitivity, or one JSON object with
``--json``).

Errors never print a traceback: a bad value (typer's own parsing included, through :class:`OneLineErrors`) is one
``Error: ...`` line on stderr naming the option, exit status 2; a computation that cannot be done (too large for
the accountant, an overflow) is one ``Error: cannot compute ...`` line, exit status 1. Nothing goes to stdout then.

Every calculator module (:mod:`dpgnn.cli.epsilon` and ``dpgnn/cli/epsilon_<paper>.py``) imports from here; this
module imports none of them, so the calculators form no import circle.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import typer
from typer.core import TyperGroup

from dpgnn.privacy.accountant import available_accountants, get_accountant
from dpgnn.privacy.events import Event
from dpgnn.privacy.pld_limits import TooLargeToAccount
from dpgnn.privacy.validation import check_delta

__all__ = [
    "CliInputError",
    "OneLineErrors",
    "option_check",
    "option_errors",
    "report",
    "relation_text",
    "one_line",
    "DELTA",
    "ACCOUNTANT",
    "JSON",
    "USAGE_EXIT",
    "COMPUTE_EXIT",
]

#: exit status of a refused input (as click's usage errors) and of a computation that cannot be done
USAGE_EXIT = 2
COMPUTE_EXIT = 1


class CliInputError(Exception):
    """An invalid command-line value; the message names the option and the valid range."""


def one_line(text: str) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space)."""
    return " ".join(str(text).split())


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"Error: {one_line(message)}", err=True)
    return typer.Exit(code=code)


class OneLineErrors(TyperGroup):
    """A command group whose usage errors (unknown option or command, a value typer cannot parse, a missing
    option, a wrong choice) print one ``Error:`` line on stderr and exit with status 2, instead of click's usage
    block or typer's framed panel."""

    def make_context(self, info_name, args, parent=None, **extra):
        """click's context for ``args``, its parsing errors as one line (:func:`_one_line_usage_errors`)."""
        with _one_line_usage_errors():
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx):
        """Run the chosen command, its usage errors as one line (:func:`_one_line_usage_errors`)."""
        with _one_line_usage_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _one_line_usage_errors() -> Iterator[None]:
    """typer's parsing errors (``typer.TyperException``: click's usage errors, as typer ships them) as one line,
    with the option's help (its valid range) appended; a bare ``dpgnn epsilon`` still prints the help
    (``NoArgsIsHelpError``)."""
    try:
        yield
    except typer.TyperException as err:
        if type(err).__name__ == "NoArgsIsHelpError" or not hasattr(err, "format_message"):
            raise
        hint = getattr(getattr(err, "param", None), "help", None)  # the option's help states its valid range
        message = err.format_message().rstrip(".") + (f"; expected: {hint}" if hint else "")
        raise _fail(message, getattr(err, "exit_code", USAGE_EXIT)) from None


def option_check(option: str, check: Callable[..., Any], value: Any, *args: Any) -> Any:
    """Run a validator from :mod:`dpgnn.privacy.validation`, re-raising its error under the option's name."""
    try:
        return check(value, option, *args)
    except (TypeError, ValueError) as err:
        raise CliInputError(str(err)) from None


@contextlib.contextmanager
def option_errors() -> Iterator[None]:
    """One line on stderr instead of a traceback: :class:`CliInputError` and library validation errors exit with
    status 2; a computation the library cannot do (:class:`~dpgnn.privacy.pld_limits.TooLargeToAccount`,
    ``ArithmeticError`` such as an overflow, ``MemoryError``, ``RecursionError``) with status 1. Numeric
    ``RuntimeWarning`` lines (overflow in exp) are not printed: what they warn of ends in one of these errors or in
    a checked value."""
    try:
        with warnings.catch_warnings():  # numpy / autodp overflow warnings: the result is checked instead
            warnings.simplefilter("ignore", RuntimeWarning)
            yield
    except TooLargeToAccount as err:  # a ValueError of the library, but the input is valid: too large to compute
        raise _fail(str(err), COMPUTE_EXIT) from None
    except (CliInputError, ValueError, TypeError, NotImplementedError) as err:
        raise _fail(str(err), USAGE_EXIT) from None
    except (ArithmeticError, MemoryError, RecursionError) as err:
        raise _fail(
            f"cannot compute this: {type(err).__name__}: {err}; give smaller counts or more noise, or "
            "another --accountant",
            COMPUTE_EXIT,
        ) from None


def _json_float(x: float | None) -> Any:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return x


def relation_text(neighbouring: str, sensitivity: str) -> str:
    """``neighbouring: <relation>, sensitivity <value>`` as the calculators print it."""
    return f"neighbouring: {neighbouring}; sensitivity {sensitivity}"


def report(
    command: str,
    event: Event,
    delta: float,
    accountant: str,
    as_json: bool,
    inputs: dict[str, Any],
    neighbouring: str,
    sensitivity: str,
) -> dict[str, Any]:
    """Compute ε of ``event`` with ``accountant`` at ``delta`` and print it (one JSON object with ``as_json``), with
    ``epsilon_sound``: the tightest of it and the exact or ``pld`` value (:func:`tightest`), unless ``inputs``
    carries the calculator's own.

    ``neighbouring`` (the relation, in words) and ``sensitivity`` (of the noised quantity under it, e.g. ``"2C"``)
    are printed beside ε, so that a reader sees what the noise multiplier is relative to."""
    d = option_check("--delta", check_delta, delta)
    try:
        acc = get_accountant(accountant)
    except ValueError as err:
        raise CliInputError(f"--accountant: {err}") from None
    eps, order = acc.compose(event).get_epsilon_and_order(d)
    if math.isnan(eps):
        raise ArithmeticError(f"the {accountant!r} accountant returned epsilon = nan")
    # a calculator that derives its own sound value (DRW, FDP) passes it in ``inputs``
    sound, sound_by = (None, accountant) if "epsilon_sound" in inputs else tightest(event, d, eps, accountant)
    payload: dict[str, Any] = {
        "command": command,
        "epsilon": _json_float(eps),
        "delta": d,
        **inputs,
        "accountant": accountant,
        "order": _json_float(order),
        **({} if sound is None else {"epsilon_sound": _json_float(sound), "sound_accountant": sound_by}),
        "neighbouring": neighbouring,
        "sensitivity": sensitivity,
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
        typer.echo(
            f"{command}: epsilon = {eps:.6g} at delta = {d:g} [{args}; accountant={accountant}{at}; "
            f"{relation_text(neighbouring, sensitivity)}]"
        )
        if sound is not None and sound_by != accountant:
            typer.echo(f"sound: epsilon = {sound:.6g} (tightest: {sound_by} accountant)")
    return payload


def tightest(event: Event, delta: float, epsilon: float, accountant: str) -> tuple[float, str]:
    """The smaller of ``epsilon`` (from ``accountant``) and the tightest value we can compute, with the name of the
    accountant that gave it: for a composition of unsampled Gaussians the ``exact_gaussian`` accountant's (exact, and
    cheap), otherwise the ``pld`` accountant's where it supports the event and can compute it (tight up to its
    pessimistic rounding). All are sound upper bounds."""
    if accountant == "pld":
        return epsilon, accountant
    exact = get_accountant("exact_gaussian")
    if exact.supports(event):  # nothing sound is below the exact value: no PLD to build (nor dp_accounting to load)
        tight = exact.compose(event).get_epsilon(delta)
        return (tight, "exact_gaussian") if tight < epsilon else (epsilon, accountant)
    pld = get_accountant("pld")
    if not pld.supports(event):
        return epsilon, accountant
    try:
        tight = pld.compose(event).get_epsilon(delta)
    except (TooLargeToAccount, OverflowError, MemoryError):
        return epsilon, accountant
    return (tight, "pld") if tight < epsilon else (epsilon, accountant)


DELTA = typer.Option(..., "--delta", help="Target delta, in (0, 1).")
ACCOUNTANT = typer.Option("rdp", "--accountant", help="Accountant: " + ", ".join(available_accountants()) + ".")
JSON = typer.Option(False, "--json", help="Print exactly one JSON object.")
