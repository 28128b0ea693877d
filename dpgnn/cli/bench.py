"""``dpgnn bench``: every method of each privacy unit under one protocol, tuned as in the papers and privately.

Only ``typer`` is imported here; the library is imported inside the command.
"""

from __future__ import annotations

import typer


def bench(
    profile: str = typer.Option("smoke", "--profile", help="test, smoke or bench (dpgnn.bench.profiles)."),
    unit: list[str] | None = typer.Option(None, "--unit", help="Restrict to these units (repeatable)."),
    dataset: list[str] | None = typer.Option(None, "--dataset", help="Restrict to these datasets (repeatable)."),
    tuning: list[str] | None = typer.Option(
        None, "--tuning", help="as_published and/or private (repeatable; default both)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the cells per unit, stored and missing; run none."),
) -> None:
    """Run the missing cells of a bench profile into results/<profile>/bench/<unit>.csv (resumable).

    The bench profile's rows go to results/paper/bench/, as those of dpgnn run bench --profile paper.

    A bad option is one line on stderr (exit status 2) before anything runs or is written.
    """
    try:
        from dpgnn.bench import cells, get_profile, plan, run

        prof = get_profile(profile)
        filters = {"units": unit or None, "datasets": dataset or None, "tunings": tuning or None}
        cells(prof, **filters)  # every check before anything runs
    except ValueError as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(code=2) from None
    if dry_run:
        table = plan(prof, **filters)
        typer.echo(table.to_string(index=False))
        typer.echo(f"{int(table['missing'].sum())} of {int(table['cells'].sum())} cells to run")
        return
    rows = run(prof, **filters)
    typer.echo(f"{len(rows)} rows stored in results/{prof.folder}/bench/")


def register(app: typer.Typer) -> None:
    """Mount ``bench`` on the top-level ``dpgnn`` app."""
    app.command("bench")(bench)
