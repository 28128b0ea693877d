"""``dpgnn data list | fetch | info``: the dataset registry from the command line."""

from __future__ import annotations

import json
import textwrap

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Datasets of the five papers.")
#: the widest line ``dpgnn data list`` prints
WIDTH = 120


def _stats(data) -> dict:
    y = data.y
    classes = int(y.size(1)) if y.dim() > 1 else int(y[y >= 0].unique().numel())
    out = {
        "nodes": int(data.num_nodes),
        "edges (undirected)": int(data.edge_index.size(1) // 2),
        "directed entries": int(data.edge_index.size(1)),
        "features": int(data.x.size(1)),
        "classes": classes,
    }
    for key in sorted(data.keys()):
        if key.endswith("_mask"):
            out[key] = int(data[key].sum())
    return out


def _collapse_universities(df):
    """The Facebook100 universities (``fb100-<university>``) as one summary row: their statistics differ per
    university and are known only once a graph is loaded (``dpgnn data fetch fb100-caltech36`` prints them)."""
    import pandas as pd

    uni = df["name"].str.startswith("fb100-") & ~df["name"].isin(["fb100-present"])
    if not uni.any():
        return df
    here = df.loc[uni & df["available"], "name"].str.removeprefix("fb100-")
    papers = sorted({p for v in df.loc[uni, "variants"] for p in str(v).replace(" ", "").split(",") if p})
    summary = {
        "name": "fb100-<university>",
        "papers": ",".join(papers),
        "available": f"{int(df.loc[uni, 'available'].sum())} of {int(uni.sum())}",
        "variants": ", ".join(papers),
        "note": "here: " + (", ".join(sorted(here)) if len(here) else "none") + " (--all lists each)",
    }
    first = int(uni.to_numpy().nonzero()[0][0])
    rows = df[~uni]
    return pd.concat([rows.iloc[:first], pd.DataFrame([summary]), rows.iloc[first:]], ignore_index=True)


def _table(df, left: tuple[str, ...]) -> str:
    """``df`` as aligned text: the ``left`` columns flush left, the others flush right, two spaces apart."""
    widths = {c: max(len(c), *(len(v) for v in df[c])) for c in df.columns}

    def line(values) -> str:
        return "  ".join(
            v.ljust(widths[c]) if c in left else v.rjust(widths[c]) for c, v in zip(df.columns, values)
        ).rstrip()

    return "\n".join([line(df.columns), *(line(r) for r in df.itertuples(index=False))])


@app.command("list")
def list_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the table as JSON records."),
    all_universities: bool = typer.Option(
        False,
        "--all",
        help="List each of the 100 Facebook100 universities (default: one summary row saying which are here).",
    ),
) -> None:
    """Table of every dataset: papers, size, availability here, variants ("-": not known before loading)."""
    from dpgnn.data import list_datasets

    df = list_datasets()
    if as_json:
        if not all_universities:
            df = _collapse_universities(df)
        typer.echo(json.dumps(json.loads(df.to_json(orient="records")), indent=1))
        return
    if not all_universities:
        df = _collapse_universities(df)
    df = df.assign(available=df["available"].map(lambda a: {True: "yes", False: "no"}.get(a, a)))
    cols = ["name", "papers", "nodes", "edges", "features", "classes", "available"]
    show = df[cols].astype(object).where(df[cols].notna(), "-")
    show = show.replace("", "-")
    typer.echo(_table(show.astype(str), left=("name", "papers")))
    for name, variants in zip(df["name"], df["variants"]):
        if isinstance(variants, str) and "->" in variants:  # names that mean another graph per paper
            typer.echo(textwrap.fill(f"{name}: {variants}", width=WIDTH, subsequent_indent="  "))
    if not all_universities and "note" in df and (df["name"] == "fb100-<university>").any():
        note = df.loc[df["name"] == "fb100-<university>", "note"].iloc[0]
        typer.echo(textwrap.fill(f"fb100-<university> {note}", width=WIDTH, subsequent_indent="  "))


def _check_name(name: str, variant: str | None = None) -> None:
    """An unknown dataset or variant is a usage error: one line naming the valid choices, exit status 2."""
    from dpgnn.data.registry import _resolve_variant, get_spec

    try:
        spec = get_spec(name)
        _resolve_variant(spec, variant)
    except (KeyError, ValueError) as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(code=2) from None


@app.command()
def fetch(
    name: str = typer.Argument(..., help="Dataset name, e.g. cora, twitch, fb100-caltech36."),
    variant: str | None = typer.Option(None, "--variant", "-v", help="Paper variant, e.g. lpgcn."),
    no_download: bool = typer.Option(False, "--no-download", help="Use only the mirror/cache."),
) -> None:
    """Load (download/verify/parse) a dataset, cache it, and print its statistics."""
    from dpgnn.data import DatasetUnavailable, load_dataset

    _check_name(name, variant)
    try:
        data = load_dataset(name, variant, download=not no_download)
    except DatasetUnavailable as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=2) from None
    except ValueError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=1) from None
    typer.echo(f"{name}" + (f" [{variant}]" if variant else ""))
    for k, v in _stats(data).items():
        typer.echo(f"  {k}: {v:,}")


@app.command()
def info(name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Docstring, variants, URLs, sha256 and where the raw files are expected."""
    from dpgnn.data import describe

    _check_name(name)
    try:
        typer.echo(describe(name))
    except ValueError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(code=1) from None
