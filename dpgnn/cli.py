"""Command-line interface: ``dpgnn data ...``, ``dpgnn epsilon ...``, ``dpgnn run``, ``dpgnn reproduce``,
``dpgnn report``."""

from __future__ import annotations

import logging
from typing import List, Optional

import typer

from dpgnn.data.cli import app as data_app
from dpgnn.privacy.cli import app as epsilon_app, option_errors

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="dpgnn: reproduce five differentially private GNN papers (figures, tables, privacy accounting).",
)
app.add_typer(data_app, name="data", help="Datasets of the five papers: list, fetch, locate.")
app.add_typer(epsilon_app, name="epsilon", help="Privacy calculators: epsilon of a mechanism/training run.")


@app.command()
def reproduce(
    papers: Optional[List[str]] = typer.Argument(None, help="Paper series to run (default: all), e.g. lpgcn."),
    profile: str = typer.Option("smoke", help="smoke (minutes on a CPU) or paper (the papers' settings)."),
    device: str = typer.Option("auto", help="auto (cuda when present, else cpu), cpu or cuda."),
    jobs: int = typer.Option(1, min=1, help="Notebooks executed in parallel (separate processes)."),
    force: bool = typer.Option(False, help="Recompute everything instead of resuming from stored results."),
    timeout: int = typer.Option(0, min=0, help="Per-notebook timeout in seconds (0 = none)."),
) -> None:
    """Execute the notebook series with papermill and write the manifest and the report."""
    from dpgnn.runner import plan, reproduce as _reproduce

    with option_errors():  # an unknown paper or profile: one line and exit status 2, before any work
        plan(papers or None, profile=profile, jobs=jobs)
    manifest = _reproduce(papers or None, profile=profile, device=device, jobs=jobs, force=force,
                          timeout=timeout or None)
    failed = manifest[manifest["status"] == "failed"]
    if len(failed):
        typer.echo(f"{len(failed)} notebook(s) failed; see the manifest and papermill_runs/{profile}/", err=True)
        raise typer.Exit(code=1)


@app.command("run")
def run_cells(
    papers: Optional[List[str]] = typer.Argument(None, help="Paper series (default: all), e.g. lpgnn drw."),
    profile: str = typer.Option("smoke", help="smoke, paper (or test)."),
    artifact: Optional[List[str]] = typer.Option(None, "--artifact", help="Only these artifacts (repeatable), "
                                                 "e.g. fig_a, table1; default: every grid of the papers."),
    workers: Optional[int] = typer.Option(None, min=1, help="Local Dask worker processes (default: sized to the "
                                          "machine, or G per GPU)."),
    threads_per_worker: int = typer.Option(1, min=1, help="Torch/BLAS threads per worker (workers x threads <= "
                                           "cores)."),
    workers_per_gpu: int = typer.Option(1, min=1, help="Workers sharing each GPU (small graph models leave a GPU "
                                        "mostly idle)."),
    scheduler: Optional[str] = typer.Option(None, help="Attach to a running Dask cluster, e.g. tcp://host:8786."),
    device: str = typer.Option("auto", help="auto (cuda when present, else cpu), cpu or cuda."),
    stale: str = typer.Option("keep", help="Stored cells computed by other code: keep or rerun."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print cells stored / missing and the estimated cost; "
                                 "compute nothing."),
    force: bool = typer.Option(False, "--force", help="Recompute every cell (swapped in per artifact when "
                               "complete)."),
) -> None:
    """Compute every missing grid cell of the chosen papers on Dask and store the rows (no notebooks)."""
    from dpgnn.engine import cluster_size, compute, select

    with option_errors():  # bad papers / artifacts / sizes: one line and exit status 2, before any work
        from dpgnn.profiles import settings

        for s in select(papers or None, artifact or None):
            settings(s.paper, profile)
        if stale not in ("keep", "rerun"):
            raise ValueError(f"--stale must be keep or rerun, got {stale!r}")
        if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
            raise ValueError(f"--device must be auto, cpu, cuda or cuda:N, got {device!r}")
        if not scheduler and not dry_run:
            cluster_size(workers, threads_per_worker, workers_per_gpu, device)
    summary = compute(papers or None, profile=profile, artifacts=artifact or None, workers=workers,
                      threads_per_worker=threads_per_worker, workers_per_gpu=workers_per_gpu, scheduler=scheduler,
                      force=force, dry_run=dry_run, device=device, stale=stale)
    if not dry_run and "failed" in summary and summary["failed"].sum():
        typer.echo(f"{int(summary['failed'].sum())} cell(s) failed (see above); the others are stored", err=True)
        raise typer.Exit(code=1)


@app.command()
def report(
    profile: str = typer.Option("smoke", help="Which profile's results to compare with the papers."),
    papers: Optional[List[str]] = typer.Argument(None, help="Restrict to these papers."),
) -> None:
    """Build results/<profile>/report.csv (+ .md, .html) and print a per-paper summary."""
    from dpgnn.report import build_report, check_papers, summarize

    with option_errors():
        check_papers(papers or None)
    rep = build_report(profile, papers=papers or None)
    typer.echo(summarize(rep))


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
