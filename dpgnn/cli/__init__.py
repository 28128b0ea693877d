"""Command-line interface: ``dpgnn data ...``, ``dpgnn epsilon ...``, ``dpgnn run``, ``dpgnn reproduce``,
``dpgnn report``.

The sub-command groups live beside this module: :mod:`dpgnn.cli.data` (``dpgnn data``), :mod:`dpgnn.cli.epsilon`
(``dpgnn epsilon``, with one ``epsilon_<paper>`` module per paper and the shared :mod:`dpgnn.cli.options`). They
import the library (``dpgnn.privacy``, ``dpgnn.data``), never this module; the library never imports the CLI.

Heavy imports (torch, PyG, the privacy library) happen only inside the command that needs them: ``dpgnn --help``,
``dpgnn reproduce --help`` and the sub-groups' listings load none of them, so they answer at once.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import logging
from collections.abc import Iterator

import click
import typer
from typer.core import TyperGroup

from dpgnn.profiles import PROFILE_NAMES

#: Choices shown in ``--help``: the profile names come from the light :mod:`dpgnn.profiles`; the devices and stale
#: policies are kept equal to ``dpgnn.runner``'s by a test (not imported from there so that ``--help`` imports
#: nothing heavy).
PROFILES = PROFILE_NAMES
DEVICES = ("auto", "cpu", "cuda")
STALE = ("rerun", "keep")
Profile = enum.Enum("Profile", {p: p for p in PROFILES}, type=str)
Device = enum.Enum("Device", {d: d for d in DEVICES}, type=str)
Stale = enum.Enum("Stale", {s: s for s in STALE}, type=str)


class _LazyGroup(click.Group):
    """A sub-command group (``data``, ``epsilon``) whose module is imported only when the group is used; the
    top-level ``--help`` shows its one-line help without importing it."""

    def __init__(self, name: str, module: str, help: str):
        super().__init__(name=name, help=help, short_help=help)
        self._module = module
        self._real: click.Group | None = None

    def _load(self) -> click.Group:
        if self._real is None:
            self._real = typer.main.get_group(importlib.import_module(self._module).app)
            self._real.name = self.name
        return self._real

    def make_context(self, info_name, args, parent=None, **extra):
        return self._load().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx):
        return self._load().list_commands(ctx)

    def get_command(self, ctx, cmd_name):
        return self._load().get_command(ctx, cmd_name)


_LAZY = {
    "data": ("dpgnn.cli.data", "Datasets of the five papers: list, info, fetch."),
    "epsilon": ("dpgnn.cli.epsilon", "Privacy calculators: epsilon of a mechanism/training run."),
}


class _Root(TyperGroup):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, (module, text) in _LAZY.items():
            self.add_command(_LazyGroup(name, module, text), name)


def _version(value: bool) -> None:
    if value:
        from dpgnn.utils import code_version

        typer.echo(f"dpgnn {code_version()}")
        raise typer.Exit()


app = typer.Typer(
    cls=_Root,
    no_args_is_help=True,
    add_completion=False,
    help="dpgnn: reproduce five differentially private GNN papers (figures, tables, privacy accounting).",
)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the package version and git commit of the code, then exit.",
    ),
) -> None:
    """dpgnn: reproduce five differentially private GNN papers (figures, tables, privacy accounting)."""


@contextlib.contextmanager
def _usage_errors() -> Iterator[None]:
    """A ``ValueError`` from checking the input: one line on stderr and exit status 2, before any work."""
    try:
        yield
    except ValueError as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(code=2) from None


@app.command()
def reproduce(
    papers: list[str] | None = typer.Argument(None, help="Paper series to run (default: all), e.g. lpgcn."),
    profile: Profile = typer.Option(
        "smoke", help="smoke (minutes on a CPU), test (seconds, tiny) or paper (the papers' settings)."
    ),
    device: Device = typer.Option("auto", help="auto (cuda when present, else cpu), cpu or cuda."),
    jobs: int = typer.Option(1, min=1, help="Notebooks executed in parallel (separate processes)."),
    force: bool = typer.Option(False, help="Recompute everything instead of resuming from stored results."),
    timeout: int = typer.Option(0, min=0, help="Per-notebook timeout in seconds (0 = none)."),
    notebook: list[str] | None = typer.Option(
        None, "--notebook", "-n", help="Only this notebook, as paper/name or a unique prefix (lpgcn/03); repeatable."
    ),
    param: list[str] | None = typer.Option(
        None,
        "--param",
        "-p",
        help="Notebook parameter key=value (YAML value: runs=2, datasets=\\[cora]), passed to "
        "the notebooks that declare it; repeatable.",
    ),
    stale: Stale = typer.Option(
        "rerun",
        help="A notebook whose last successful run came from other code (another "
        "dpgnn commit or uncommitted changes): rerun it, or keep its outputs "
        "(status 'stale').",
    ),
    cells: bool = typer.Option(
        True,
        "--cells/--no-cells",
        help="First compute the missing grid cells on Dask (as "
        "`dpgnn run`), so the notebooks only read and draw; skipped with --notebook or -p.",
    ),
    workers: int | None = typer.Option(
        None, min=1, help="Dask worker processes for the grid cells (default: sized to the machine)."
    ),
    scheduler: str | None = typer.Option(
        None, help="Compute the grid cells on a running Dask cluster, e.g. tcp://host:8786."
    ),
) -> None:
    """Execute the notebook series with papermill and write the manifest and the report.

    Resumable: notebooks whose last run succeeded with the same notebook, parameters and code are skipped
    ('cached'); SIGTERM or Ctrl-C stops the running notebooks and records them as 'interrupted'.
    """
    from dpgnn.runner import parse_parameters, plan
    from dpgnn.runner import reproduce as _reproduce

    profile, device, stale = profile.value, device.value, stale.value

    with _usage_errors():  # an unknown paper, notebook or parameter: one line and exit status 2, before any work
        parameters = parse_parameters(param)
        plan(
            papers or None,
            profile=profile,
            jobs=jobs,
            notebooks=notebook,
            parameters=parameters,
            device=device,
            stale=stale,
        )
    manifest = _reproduce(
        papers or None,
        profile=profile,
        device=device,
        jobs=jobs,
        force=force,
        timeout=timeout or None,
        notebooks=notebook,
        parameters=parameters,
        stale=stale,
        cells=cells,
        workers=workers,
        scheduler=scheduler,
    )
    failed = manifest[manifest["status"] == "failed"]
    if len(failed):
        typer.echo(f"{len(failed)} notebook(s) failed; see the manifest and papermill_runs/{profile}/", err=True)
        raise typer.Exit(code=1)


@app.command("run")
def run_cells(
    papers: list[str] | None = typer.Argument(None, help="Paper series (default: all), e.g. lpgnn drw."),
    profile: Profile = typer.Option(
        "smoke", help="smoke (minutes on a CPU), test (seconds, tiny) or paper (the papers' settings)."
    ),
    artifact: list[str] | None = typer.Option(
        None,
        "--artifact",
        help="Only these artifacts (repeatable), e.g. fig_a, table1; default: every grid of the papers.",
    ),
    workers: int | None = typer.Option(
        None, min=1, help="Local Dask worker processes (default: sized to the machine, or G per GPU)."
    ),
    threads_per_worker: int = typer.Option(
        1, min=1, help="Torch/BLAS threads per worker (workers x threads <= cores)."
    ),
    workers_per_gpu: int = typer.Option(
        1, min=1, help="Workers sharing each GPU (small graph models leave a GPU mostly idle)."
    ),
    scheduler: str | None = typer.Option(None, help="Attach to a running Dask cluster, e.g. tcp://host:8786."),
    device: str = typer.Option("auto", help="auto (cuda when present, else cpu), cpu or cuda."),
    stale: str = typer.Option("keep", help="Stored cells computed by other code: keep or rerun."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Print cells stored / missing and the estimated cost; compute nothing."
    ),
    force: bool = typer.Option(False, "--force", help="Recompute every cell (swapped in per artifact when complete)."),
    set_: list[str] | None = typer.Option(
        None,
        "--set",
        help="Replace a setting of the profile, KEY=VALUE (YAML, repeatable; a nested "
        "setting as PART.FIELD=VALUE), e.g. --set fidelity_k=[300]; the cells are "
        "stored beside the profile's own.",
    ),
) -> None:
    """Compute every missing grid cell of the chosen papers on Dask and store the rows (no notebooks)."""
    from dpgnn.engine import cluster_size, compute, select
    from dpgnn.runner import parse_parameters

    profile = profile.value
    with _usage_errors():  # bad papers / artifacts / sizes / settings: one line and exit status 2, before any work
        from dpgnn.profiles import settings

        overrides = parse_parameters(set_, option="--set")
        for s in select(papers or None, artifact or None):
            settings(s.paper, profile, **overrides)
        if stale not in ("keep", "rerun"):
            raise ValueError(f"--stale must be keep or rerun, got {stale!r}")
        if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
            raise ValueError(f"--device must be auto, cpu, cuda or cuda:N, got {device!r}")
        if not scheduler and not dry_run:
            cluster_size(workers, threads_per_worker, workers_per_gpu, device)
    try:
        summary = compute(
            papers or None,
            profile=profile,
            artifacts=artifact or None,
            workers=workers,
            threads_per_worker=threads_per_worker,
            workers_per_gpu=workers_per_gpu,
            scheduler=scheduler,
            force=force,
            dry_run=dry_run,
            device=device,
            stale=stale,
            overrides=overrides,
        )
    except KeyboardInterrupt:  # Ctrl-C, or a time limit's SIGINT: every finished cell is already stored
        typer.echo("dpgnn run: interrupted; finished cells are stored, the same command computes the rest", err=True)
        raise typer.Exit(code=130) from None
    if not dry_run and "failed" in summary and summary["failed"].sum():
        typer.echo(f"{int(summary['failed'].sum())} cell(s) failed (see above); the others are stored", err=True)
        raise typer.Exit(code=1)


@app.command()
def report(
    profile: Profile = typer.Option("smoke", help="Which profile's results to compare with the papers."),
    papers: list[str] | None = typer.Argument(None, help="Restrict to these papers."),
) -> None:
    """Build results/<profile>/report.csv (+ .md, .html) and print a per-paper summary."""
    from dpgnn.report import build_report, check_papers, summarize

    with _usage_errors():
        check_papers(papers or None)
    rep = build_report(profile.value, papers=papers or None)
    typer.echo(summarize(rep))


from dpgnn.cli.train import register as _register_train  # noqa: E402  (typer only; the library on use)

_register_train(app)  # dpgnn train, dpgnn methods

from dpgnn.cli.bench import register as _register_bench  # noqa: E402  (typer only; the library on use)

_register_bench(app)  # dpgnn bench


def main() -> None:
    """The ``dpgnn`` command (``python -m dpgnn``): INFO logging on stderr, then the typer app."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    app()
