"""``dpgnn epsilon drw`` and ``dpgnn epsilon fdp``: privacy of the DRW paper's training runs
(docs/papers/drw.md#samplers-and-the-sampling-bound, docs/papers/drw.md#dp-training-step,
docs/papers/drw.md#fdp-baseline).

::

    dpgnn epsilon drw --noise-multiplier Z --batch-size B --train-nodes N --walk-length L [--restarts R]
                      --steps T --delta D [--accountant autodp] [--json]
    dpgnn epsilon fdp --noise-multiplier Z --batch-size B --train-nodes N --max-degree D --layers L
                      --steps T --delta D [--variant paper|authors] [--json]

Both build their events and ε with :mod:`dpgnn.privacy.drw`, as the method's ledgers do. ``-z`` is the noise std
over the clipping norm C, as in every ``dpgnn epsilon`` calculator; the relation's sensitivity is applied inside.
``drw``: replace one node's features, sensitivity 2C (one node is in one subgraph, whose clipped gradient is
swapped), so the event's multiplier is z / 2 (the DRW method's ``noise_multiplier`` z adds std z·2C: pass 2z here);
q = B / ⌈N / (1 + R·L)⌉ (R walks of length L per root: 1 = DRW/DRW-D, 2 = the paper's DRW-R), then T
compositions of the Gaussian on a uniform subsample without replacement; ``--accountant autodp`` (default) follows
the authors' code. ``fdp``: one node's features reach K = (D^(L+1) − 1)/(D − 1) roots, sensitivity 2KC, the
event's multiplier z / (2K) (the method's z adds std z·2KC: pass 2Kz); the multi-term hypergeometric RDP accountant
of Daigavane et al. (``--variant authors``: the DRW code's single order α = 10 with the classic conversion).
Both also print ``epsilon_sound``, the tightest sound ε of the same steps
(:func:`dpgnn.privacy.drw.drw_sound_epsilon` / :func:`~dpgnn.privacy.drw.fdp_sound_epsilon`: privacy-loss
distributions of :mod:`dpgnn.privacy.sampled_pld`); ``epsilon`` stays the paper's accountant.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import typer

from dpgnn.cli.options import JSON, CliInputError, option_check, option_errors, relation_text, report
from dpgnn.fidelity import Fidelity
from dpgnn.privacy.drw import drw_event, drw_sound_epsilon, fdp_event, fdp_run_epsilon, fdp_sound_epsilon
from dpgnn.privacy.fdp import max_affected
from dpgnn.privacy.pld_limits import TooLargeToAccount
from dpgnn.privacy.subgraphs import min_num_subgraphs
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite

__all__ = ["register", "DRW_SENSITIVITY", "MAX_AFFECTED_LOG10"]

#: replace-one sensitivity of a clipped gradient sum in units of the clipping norm C (one gradient swapped for
#: another: up to 2C; Ayle et al., Sec. 4.1); FDP multiplies it by K affected roots
DRW_SENSITIVITY = 2.0
#: FDP's K = (D^(L+1) - 1)/(D - 1) is refused above 10^this (the noise multiplier z / 2K would underflow)
MAX_AFFECTED_LOG10 = 300


def _sound(fn: Callable[..., float], *args: Any) -> float | None:
    """``fn(*args)`` (the tight sound ε), or ``None`` with a warning on stderr when its privacy-loss distribution
    is too large to compute (the paper's ε is still printed)."""
    try:
        return fn(*args)
    except TooLargeToAccount as err:
        typer.echo(f"Warning: epsilon_sound not computed: {err}", err=True)
        return None


def _nonneg_int(value: Any, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CliInputError(f"{option} must be an integer >= 0, got {value!r}")
    return int(value)


def drw_cmd(
    noise_multiplier: float = typer.Option(
        ...,
        "--noise-multiplier",
        "-z",
        help="Noise std / clipping norm C, > 0 (sensitivity 2C applied inside: "
        "the DRW method's noise_multiplier z is 2z here).",
    ),
    batch_size: int = typer.Option(..., "--batch-size", "-b", help="Subgraphs (roots) per batch B, >= 1."),
    train_nodes: int = typer.Option(..., "--train-nodes", "-n", help="Training nodes N (the root pool), >= 1."),
    walk_length: int = typer.Option(..., "--walk-length", "-l", help="Walk length L (= GNN layers), >= 0."),
    restarts: int = typer.Option(1, "--restarts", "-r", help="Walks per root R: 1 = DRW, 2 = DRW-R; >= 1."),
    steps: int = typer.Option(..., "--steps", "-t", help="Training steps T, >= 1."),
    delta: float = typer.Option(..., "--delta", help="Target delta, in (0, 1)."),
    accountant: str = typer.Option(
        "autodp", "--accountant", help="Accountant (autodp = the authors'; rdp = dpgnn's RDP accountant)."
    ),
    as_json: bool = JSON,
) -> None:
    """Epsilon of DRW / DRW-D / DRW-R training: q = B / ceil(N / (1 + R*L)), T sampled Gaussian steps."""
    with option_errors():
        z = option_check("--noise-multiplier", check_positive_finite, noise_multiplier)
        b = option_check("--batch-size", check_count, batch_size)
        n = option_check("--train-nodes", check_count, train_nodes)
        L = _nonneg_int(walk_length, "--walk-length")
        r = option_check("--restarts", check_count, restarts)
        t = option_check("--steps", check_count, steps)
        option_check("--delta", check_delta, delta)
        m_min = min_num_subgraphs(n, L, r)
        if b > m_min:
            raise CliInputError(
                f"--batch-size must be in [1, m_min={m_min}] where m_min = ceil(N / (1 + R*L)) "
                f"for --train-nodes {n}, --walk-length {L}, --restarts {r}; got {b}"
            )
        q = b / m_min
        z_acc = z / DRW_SENSITIVITY
        event = drw_event(z_acc, q, t, Fidelity.PAPER)  # the event the method's ledger records
        report(
            "drw",
            event,
            delta,
            accountant,
            as_json,
            inputs={
                "noise_multiplier": z,
                "noise_multiplier_accounted": z_acc,
                "batch_size": b,
                "train_nodes": n,
                "walk_length": L,
                "restarts": r,
                "min_subgraphs": m_min,
                "sample_rate": q,
                "steps": t,
                "epsilon_sound": _sound(drw_sound_epsilon, z_acc, q, t, delta),
            },
            neighbouring="replace one node's features (uniform sampling without replacement)",
            sensitivity="2C (one node's subgraph gradient swapped)",
        )


def fdp_cmd(
    noise_multiplier: float = typer.Option(
        ...,
        "--noise-multiplier",
        "-z",
        help="Noise std / clipping norm C, > 0 (sensitivity 2KC applied inside: "
        "the method's noise_multiplier z is 2Kz here).",
    ),
    batch_size: int = typer.Option(..., "--batch-size", "-b", help="Roots per batch B, in [1, N]."),
    train_nodes: int = typer.Option(..., "--train-nodes", "-n", help="Training nodes N, >= 1."),
    max_degree: int = typer.Option(..., "--max-degree", "-d", help="Degree bound D, >= 1."),
    layers: int = typer.Option(..., "--layers", "-l", help="GNN layers (hops) L, >= 0."),
    steps: int = typer.Option(..., "--steps", "-t", help="Training steps T, >= 1."),
    delta: float = typer.Option(..., "--delta", help="Target delta, in (0, 1)."),
    variant: str = typer.Option(
        "paper",
        "--variant",
        help="paper (orders 1.1-256, tight conversion) or authors (DRW code: alpha=10, classic conversion).",
    ),
    as_json: bool = JSON,
) -> None:
    """Epsilon of the FDP baseline: hypergeometric multi-term RDP with K = (D^(L+1)-1)/(D-1) affected roots."""
    with option_errors():
        z = option_check("--noise-multiplier", check_positive_finite, noise_multiplier)
        b = option_check("--batch-size", check_count, batch_size)
        n = option_check("--train-nodes", check_count, train_nodes)
        dmax = option_check("--max-degree", check_count, max_degree)
        L = _nonneg_int(layers, "--layers")
        t = option_check("--steps", check_count, steps)
        d = option_check("--delta", check_delta, delta)
        if b > n:
            raise CliInputError(f"--batch-size must be in [1, --train-nodes={n}], got {b}")
        if variant not in ("paper", "authors"):
            raise CliInputError(f"--variant must be 'paper' or 'authors', got {variant!r}")
        if dmax > 1 and (L + 1) * math.log10(dmax) > MAX_AFFECTED_LOG10:  # before D^(L+1) is computed
            raise TooLargeToAccount(
                f"--max-degree {dmax} and --layers {L} give K = (D^(L+1) - 1)/(D - 1) above "
                f"1e{MAX_AFFECTED_LOG10} affected roots, which cannot be accounted"
            )
        k = max_affected(dmax, L)
        z_acc = z / (DRW_SENSITIVITY * k)
        eps, order = fdp_run_epsilon(t, z_acc, n, b, k, d, variant)
        sound = _sound(fdp_sound_epsilon, t, z_acc, n, b, k, d)
        neighbouring = "replace one node's features (uniform sampling without replacement)"
        sensitivity = f"2KC = {2 * k}C (one node's features in at most K = {k} roots' gradients)"
        payload = {
            "command": "fdp",
            "epsilon": eps,
            "epsilon_sound": sound,
            "delta": d,
            "noise_multiplier": z,
            "noise_multiplier_accounted": z_acc,
            "batch_size": b,
            "train_nodes": n,
            "max_degree": dmax,
            "layers": L,
            "max_affected": k,
            "sample_rate": b / n,
            "steps": t,
            "variant": variant,
            "accountant": "fdp-hypergeometric-rdp",
            "order": None if math.isnan(order) else order,
            "neighbouring": neighbouring,
            "sensitivity": sensitivity,
            "event": fdp_event(z_acc, n, b, k, t).to_dict(),
        }
        if as_json:
            typer.echo(json.dumps(payload))
        else:
            typer.echo(
                f"fdp: epsilon = {eps:.6g} at delta = {d:g} [noise_multiplier={z}, "
                f"noise_multiplier_accounted={z_acc:.6g}, batch_size={b}, train_nodes={n}, max_degree={dmax}, "
                f"layers={L}, K={k}, steps={t}; variant={variant}, optimal RDP order {order:g}; "
                f"{relation_text(neighbouring, sensitivity)}]; epsilon_sound = "
                + ("not computed" if sound is None else f"{sound:.6g} (privacy-loss distribution)")
            )


def register(app: typer.Typer) -> None:
    """Add the ``drw`` and ``fdp`` subcommands to ``dpgnn epsilon``."""
    app.command("drw")(drw_cmd)
    app.command("fdp")(fdp_cmd)
