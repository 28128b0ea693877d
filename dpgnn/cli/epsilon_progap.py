"""``dpgnn epsilon progap``: ε of a ProGAP run (edge or node level), or the noise calibrated to a target ε.

::

    dpgnn epsilon progap --level edge --sigma S --depth K --delta D --json
    dpgnn epsilon progap --level node --noise-multiplier Z --depth K --max-degree D --batch-size B \\
        --train-nodes N --epochs-per-stage E --delta D --json
    dpgnn epsilon progap --level edge --target-epsilon 1 --depth 2 --delta 1e-7 --json   # calibrate σ

The JSON object holds ``epsilon`` (the numerical accountant: ``exact_gaussian`` at edge level, ``autodp`` at
node level; ``--fidelity authors_code``: the authors' code's autodp RDP composition; ``--accountant`` overrides),
``fidelity``, ``epsilon_paper_bound`` (Theorem 4.1 / 4.2) and, when
calibrating, the calibrated ``sigma`` (edge) or ``noise_multiplier`` (node) with ``epsilon ≤ target_epsilon`` and
``target_reached``: ``false`` when even the smallest noise searched stays below the target (e.g. ``--target-epsilon
1e5``); then a warning line on stderr says so and names the ε actually returned.
"""

from __future__ import annotations

import json

import typer

from dpgnn.cli.options import CliInputError, option_check, option_errors, relation_text, tightest
from dpgnn.fidelity import Fidelity, parse
from dpgnn.privacy.accountant import get_accountant
from dpgnn.privacy.progap import calibrate_noise, privacy_event, privacy_ledger
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``progap`` to ``dpgnn epsilon``."""
    app.command("progap")(progap)


def progap(
    level: str = typer.Option(..., "--level", help="edge or node."),
    depth: int = typer.Option(..., "--depth", "-k", help="Depth K (number of NAP queries), an integer >= 1."),
    delta: float = typer.Option(..., "--delta", help="Target delta, in (0, 1)."),
    sigma: float | None = typer.Option(
        None, "--sigma", help="Edge level: NAP noise std sigma (> 0; sensitivity 1, one directed edge)."
    ),
    noise_multiplier: float | None = typer.Option(
        None, "--noise-multiplier", "-z", help="Node level: shared noise multiplier z (> 0)."
    ),
    target_epsilon: float | None = typer.Option(
        None, "--target-epsilon", help="Calibrate the noise to this epsilon (> 0) instead of giving it."
    ),
    max_degree: int | None = typer.Option(None, "--max-degree", help="Node level: degree bound D, >= 1."),
    batch_size: int | None = typer.Option(None, "--batch-size", help="Node level: expected batch size B."),
    train_nodes: int | None = typer.Option(None, "--train-nodes", help="Node level: training nodes N."),
    epochs: int | None = typer.Option(None, "--epochs-per-stage", help="Node level: epochs per stage E."),
    accountant: str | None = typer.Option(
        None, "--accountant", help="Override the accountant (default exact_gaussian / autodp; also rdp)."
    ),
    fidelity: str = typer.Option(
        "paper",
        "--fidelity",
        help="paper (exact Gaussian composition at edge level) or authors_code (the "
        "official code's autodp RDP composition: more noise for the same epsilon).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
) -> None:
    """Epsilon of ProGAP: K NAP Gaussians (edge) or K Gaussians + K+1 DP-SGD runs (node)."""
    with option_errors():
        fid = _check_choices(level, fidelity, accountant)
        k = option_check("--depth", check_count, depth)
        d = option_check("--delta", check_delta, delta)
        noise = _check_noise(level, sigma, noise_multiplier, target_epsilon)
        kw = _node_inputs(level, max_degree, batch_size, train_nodes, epochs)
        led = privacy_ledger(
            level,
            depth=k,
            delta=d,
            noise=noise,
            target_epsilon=target_epsilon,
            accountant=accountant,
            fidelity=fid,
            **kw,
        )
        reached = _target_reached(level, k, d, target_epsilon, led, kw)
        payload = _payload(level, k, d, target_epsilon, reached, fid, led, kw)
    _report(payload, led, level, k, d, target_epsilon, reached, as_json)


_NODE_OPTIONS = ("--max-degree", "--batch-size", "--train-nodes", "--epochs-per-stage")


def _check_choices(level: str, fidelity: str, accountant: str | None) -> Fidelity:
    """``--level``, ``--fidelity`` (returned parsed) and ``--accountant`` checked; a :class:`CliInputError`
    otherwise."""
    if level not in ("edge", "node"):
        raise CliInputError(f"--level must be 'edge' or 'node', got {level!r}")
    try:
        fid = parse(fidelity, "--fidelity")
    except ValueError:
        raise CliInputError(f"--fidelity must be 'paper' or 'authors_code', got {fidelity!r}") from None
    if accountant is not None:
        try:
            get_accountant(accountant)
        except ValueError as err:
            raise CliInputError(f"--accountant: {err}") from None
    return fid


def _check_noise(level: str, sigma, noise_multiplier, target_epsilon) -> float | None:
    """The noise option of ``level`` (``--sigma`` at edge level, ``--noise-multiplier`` at node level), checked:
    the other level's option refused, exactly one of it and ``--target-epsilon``, each finite and > 0."""
    noise_opt, noise = ("--sigma", sigma) if level == "edge" else ("--noise-multiplier", noise_multiplier)
    other = "--noise-multiplier" if level == "edge" else "--sigma"
    if (noise_multiplier if level == "edge" else sigma) is not None:
        raise CliInputError(f"{other} does not apply to --level {level}; use {noise_opt}")
    if (noise is None) == (target_epsilon is None):
        raise CliInputError(f"give exactly one of {noise_opt} and --target-epsilon")
    if noise is not None:
        option_check(noise_opt, check_positive_finite, noise)
    if target_epsilon is not None:
        option_check("--target-epsilon", check_positive_finite, target_epsilon)
    return noise


def _node_inputs(level: str, max_degree, batch_size, train_nodes, epochs) -> dict[str, int]:
    """The node-level options as :func:`dpgnn.privacy.progap.privacy_ledger` keywords (each required, an integer
    >= 1, the batch no larger than the training set); ``{}`` at edge level, where each is refused."""
    values = dict(zip(_NODE_OPTIONS, (max_degree, batch_size, train_nodes, epochs)))
    if level != "node":
        for opt, val in values.items():
            if val is not None:
                raise CliInputError(f"{opt} applies to --level node only")
        return {}
    node_inputs = {}
    for opt, val in values.items():
        if val is None:
            raise CliInputError(f"{opt} is required with --level node (an integer >= 1)")
        node_inputs[opt] = option_check(opt, check_count, val)
    if node_inputs["--batch-size"] > node_inputs["--train-nodes"]:
        raise CliInputError(
            f"--batch-size must be <= --train-nodes ({node_inputs['--train-nodes']}), got {node_inputs['--batch-size']}"
        )
    return dict(
        max_degree=node_inputs["--max-degree"],
        batch_size=node_inputs["--batch-size"],
        train_nodes=node_inputs["--train-nodes"],
        epochs=node_inputs["--epochs-per-stage"],
    )


def _event_inputs(level: str, k: int, kw: dict[str, int]) -> dict[str, int]:
    """The keywords of the run's privacy event: ``K`` aggregations, ``K + 1`` DP-SGD runs at node level."""
    return dict(
        aggregations=k,
        dpsgd_runs=k + 1 if level == "node" else 0,
        **{key: kw[key] for key in ("train_nodes", "batch_size", "epochs") if key in kw},
    )


def _target_reached(level: str, k: int, d: float, target_epsilon: float | None, led, kw: dict[str, int]) -> bool:
    """Whether the calibration met ``--target-epsilon`` (the same cached calibration privacy_ledger ran); ``True``
    when the noise was given."""
    if target_epsilon is None:
        return True
    cal = calibrate_noise(level, target_epsilon, d, accountant=led["accountant"], **_event_inputs(level, k, kw))
    return cal.target_reached


def _payload(level, k, d, target_epsilon, reached, fid: Fidelity, led, kw) -> dict:
    """The JSON object of the command (module docstring), the sound ε and its accountant included."""
    event = privacy_event(level, led["noise_multiplier"], **_event_inputs(level, k, kw))
    payload = {
        "command": "progap",
        "level": level,
        "epsilon": led["epsilon"],
        "delta": d,
        "depth": k,
        ("sigma" if level == "edge" else "noise_multiplier"): led["noise_multiplier"],
        "target_epsilon": target_epsilon,
        "calibrated": target_epsilon is not None,
        "target_reached": reached if target_epsilon is not None else None,
        "epsilon_paper_bound": led.get("epsilon_paper_bound"),
        "paper_bound": led.get("paper_bound"),
        "accountant": led["accountant"],
        "fidelity": fid,
        "neighbouring": led["neighbouring"],
        "sigma_nap": led["sigma_nap"],
        **kw,
        "event": event.to_dict(),
    }
    sound, sound_by = tightest(event, d, led["epsilon"], led["accountant"])
    payload.update(epsilon_sound=sound, sound_accountant=sound_by)
    if level == "node":
        payload.update(sample_rate=led["sample_rate"], steps_per_stage=led["steps_per_run"], sigma_sgd=led["sigma_sgd"])
    payload["sensitivity"] = (
        f"C per DP-SGD step (one clipped example), sqrt(D) = {led['sensitivity_nap']:.4g} per NAP query"
        if level == "node"
        else "1 per NAP query (one directed edge)"
    )
    return payload


def _report(payload, led, level, k, d, target_epsilon, reached, as_json: bool) -> None:
    """Print the command's result: a warning on stderr when the target was not reached, then the JSON object or
    the text line (and the sound ε when a tighter accountant than the reported one gives it)."""
    z, name = led["noise_multiplier"], "sigma" if level == "edge" else "noise multiplier"
    if not reached:
        typer.echo(
            f"Warning: --target-epsilon {target_epsilon:g} cannot be reached: the smallest {name} searched, "
            f"{z:.6g}, already gives epsilon = {led['epsilon']:.6g} at delta = {d:g}; that {name} and "
            f"its epsilon are returned (give a smaller target, or the noise itself)",
            err=True,
        )
    if as_json:
        typer.echo(json.dumps(payload))
        return
    if target_epsilon is None:
        how = "given"
    elif reached:
        how = f"calibrated to {target_epsilon:g}"
    else:
        how = f"target {target_epsilon:g} NOT reached: smallest {name} searched"
    typer.echo(
        f"progap ({level} level, K={k}): epsilon = {led['epsilon']:.6g} at delta = {d:g} "
        f"[{led['accountant']}]; {name} = {z:.6g} ({how}); paper {led.get('paper_bound')}: "
        f"epsilon <= {led.get('epsilon_paper_bound'):.6g}; "
        f"{relation_text(led['neighbouring'], payload['sensitivity'])}"
    )
    if payload["sound_accountant"] != led["accountant"]:
        typer.echo(
            f"sound: epsilon = {payload['epsilon_sound']:.6g} (tightest: {payload['sound_accountant']} accountant)"
        )
