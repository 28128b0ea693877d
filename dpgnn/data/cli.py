"""``dpgnn data list | fetch | info``: the dataset registry from the command line."""

from __future__ import annotations

import json
from typing import Optional

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Datasets of the five papers.")


def _stats(data) -> dict:
    y = data.y
    classes = int(y.size(1)) if y.dim() > 1 else int(y[y >= 0].unique().numel())
    out = {"nodes": int(data.num_nodes), "edges (undirected)": int(data.edge_index.size(1) // 2),
           "directed entries": int(data.edge_index.size(1)), "features": int(data.x.size(1)), "classes": classes}
    for key in sorted(data.keys()):
        if key.endswith("_mask"):
            out[key] = int(data[key].sum())
    return out


@app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON records."),
    all_universities: bool = typer.Option(False, "--all", help="Also list all 100 Facebook100 universities "
                                          "(default: only those available here)."),
) -> None:
    """Table of every dataset: papers, size, availability here, variants."""
    from dpgnn.data import list_datasets

    df = list_datasets()
    if not all_universities:
        uni = df["name"].str.startswith("fb100-") & ~df["name"].isin(["fb100-present"])
        df = df[~uni | df["available"]]
    if as_json:
        typer.echo(json.dumps(json.loads(df.to_json(orient="records")), indent=1))
        return
    show = df.assign(available=df["available"].map({True: "yes", False: "no"}))
    cols = ["name", "papers", "nodes", "edges", "features", "classes", "available", "variants"]
    import pandas as pd

    with pd.option_context("display.max_rows", None, "display.max_colwidth", 60, "display.width", 200):
        typer.echo(show[cols].to_string(index=False))


@app.command()
def fetch(
    name: str = typer.Argument(..., help="Dataset name, e.g. cora, twitch, fb100-caltech36."),
    variant: Optional[str] = typer.Option(None, "--variant", "-v", help="Paper variant, e.g. lpgcn."),
    no_download: bool = typer.Option(False, "--no-download", help="Use only the mirror/cache."),
) -> None:
    """Load (download/verify/parse) a dataset, cache it, and print its statistics."""
    from dpgnn.data import DatasetUnavailable, load_dataset

    try:
        data = load_dataset(name, variant, download=not no_download)
    except DatasetUnavailable as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2)
    except ValueError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=1)
    typer.echo(f"{name}" + (f" [{variant}]" if variant else ""))
    for k, v in _stats(data).items():
        typer.echo(f"  {k}: {v:,}")


@app.command()
def info(name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Docstring, variants, URLs, sha256 and where the raw files are expected."""
    from dpgnn.data import describe

    try:
        typer.echo(describe(name))
    except ValueError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=1)
