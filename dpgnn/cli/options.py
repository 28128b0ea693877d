"""Shared pieces of the ``dpgnn epsilon`` calculators: option checks, clean usage errors (exit status 2), and
:func:`report` (runs an accountant on an event and prints ε, or one JSON object with ``--json``).

Every calculator module (:mod:`dpgnn.cli.epsilon` and ``dpgnn/cli/epsilon_<paper>.py``) imports from here; this
module imports none of them, so the calculators form no import circle.
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any, Callable, Dict, Iterator, Optional

import typer

from dpgnn.privacy.accountant import available_accountants, get_accountant
from dpgnn.privacy.events import Event
from dpgnn.privacy.validation import check_delta

__all__ = ["CliInputError", "option_check", "option_errors", "report", "DELTA", "ACCOUNTANT", "JSON"]


class CliInputError(Exception):
    """An invalid command-line value; the message names the option and the valid range."""


def option_check(option: str, check: Callable[..., Any], value: Any, *args: Any) -> Any:
    """Run a validator from :mod:`dpgnn.privacy.validation`, re-raising its error under the option's name."""
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
