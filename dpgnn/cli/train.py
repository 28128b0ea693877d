"""``dpgnn train`` (a method on your own graph at a chosen ε) and ``dpgnn methods`` (what ``train`` offers).

Only ``typer`` is imported here; the library (torch, PyG) is imported inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import typer


def train(
    method: str = typer.Argument(..., help="Method name (`dpgnn methods` lists them), e.g. progap."),
    level: str = typer.Option(..., "--level", help="Privacy unit: none, edge or node (as the method supports)."),
    epsilon: float | None = typer.Option(None, "--epsilon", help="Privacy budget ε (> 0; omit at level none)."),
    data: Path = typer.Option(
        ...,
        "--data",
        help="The graph: a .pt (torch.save of a PyG Data), an .npz "
        "(edge_index, x, y, optional masks) or a folder with edges.csv, features.csv, "
        "labels.csv (see examples/own_graph/).",
    ),
    delta: float | None = typer.Option(
        None,
        "--delta",
        help="δ; default: the documented rule from the node count (stated in result.json and the summary).",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the split, initialisation and noise."),
    set_: list[str] | None = typer.Option(
        None,
        "--set",
        help="A config field, KEY=VALUE (YAML value, "
        "repeatable), e.g. --set depth=2; `dpgnn methods METHOD` lists them.",
    ),
    out: Path | None = typer.Option(
        None, "--out", help="Output folder for model.pt and result.json (default: trained/METHOD-LEVEL)."
    ),
    device: str = typer.Option("auto", "--device", help="auto (cuda when present, else cpu), cpu or cuda."),
) -> None:
    """Train METHOD on your graph; write model.pt and result.json; print one summary line.

    Every input problem is one line on stderr (exit status 2) before any training; nothing is written then.
    """
    from dpgnn.runner import parse_parameters

    try:
        overrides = parse_parameters(set_, option="--set")
        from dpgnn.api import fit, write_result
        from dpgnn.api.io import load_graph
        from dpgnn.train import progress_bars

        graph = load_graph(data)
        typer.echo(
            f"training {method} [{level}] on {data} ({graph.num_nodes} nodes, "
            f"{graph.edge_index.size(1) if graph.edge_index is not None else 0} edge rows) ...",
            err=True,
        )
        with progress_bars():  # a bar per training loop on stderr (refreshed at most every 5 s)
            model = fit(graph, method, level=level, epsilon=epsilon, delta=delta, seed=seed, device=device, **overrides)
    except ValueError as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(code=2) from None
    for note in model.notes["changes"]:
        typer.echo(f"input: {note}", err=True)
    folder = out if out is not None else Path("trained") / f"{model.method}-{level}"
    model_path, result = write_result(model, folder)
    typer.echo(f"wrote {model_path} and {result} ({model.seconds:.1f} s)", err=True)
    typer.echo(model.summary())


def methods(method: str | None = typer.Argument(None, help="A method: list its levels and config fields.")) -> None:
    """List the methods of `dpgnn train` / `dpgnn.fit` (levels, paper), or one method's config fields."""
    from dpgnn.api import describe

    try:
        typer.echo(describe(method))
    except ValueError as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(code=2) from None


def register(app: typer.Typer) -> None:
    """Mount ``train`` and ``methods`` on the top-level ``dpgnn`` app."""
    app.command("train")(train)
    app.command("methods")(methods)
