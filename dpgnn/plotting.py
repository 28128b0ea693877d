"""Plotting helpers: figures are drawn only from result frames and saved as PNG + PDF (embedded fonts).

No backend is chosen here: in JupyterLab and in notebooks executed by papermill (``dpgnn reproduce``) the kernel's
inline backend shows every figure under its cell, and :func:`savefig` leaves the figure open so that it still does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.rcParams["pdf.fonttype"] = 42  # embed TrueType fonts in PDFs
matplotlib.rcParams["ps.fonttype"] = 42
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dpgnn.utils import output_root  # noqa: E402

#: One colour per method across every figure of the project.
PALETTE = {"lm": "#1f77b4", "pm": "#2ca02c", "pgc": "#ff7f0e", "raw": "#7f7f7f", "paper": "#000000"}
LABELS = {"lm": "LM", "pm": "PM", "pgc": "PGC", "raw": "RAW"}


def figures_dir(profile: str, paper: str, root: Path | None = None) -> Path:
    """The folder of ``paper``'s figures under ``profile``: ``<root>/<profile>/<paper>`` (default root: the
    output root's ``figures``)."""
    return Path(root or output_root() / "figures") / profile / paper


def savefig(fig: plt.Figure, name: str, *, paper: str, profile: str, root: Path | None = None) -> list[Path]:
    """Save ``fig`` as ``figures/<profile>/<paper>/<name>.{png,pdf}`` and return the paths (the figure stays open, so
    a notebook still shows it inline). The files carry no creation date: redrawing an unchanged figure rewrites
    identical bytes (``git status`` stays clean)."""
    out = figures_dir(profile, paper, root)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight", metadata={"CreationDate": None})  # same figure, same bytes
    return paths


def _colours(hues: Sequence) -> dict[str, str]:
    """One colour per hue for the whole figure: the project palette where it has one, else the next colour of the
    tab10 cycle (so a method keeps its colour in every panel, whichever methods a panel happens to have)."""
    used = set(PALETTE.values())
    cycle = []
    for c in list(plt.get_cmap("tab10").colors) + list(plt.get_cmap("Dark2").colors):
        c = matplotlib.colors.to_hex(c)
        if c not in used and c not in cycle:
            cycle.append(c)  # 13 distinct colours before a repeat
    out, i = {}, 0
    for h in hues:
        if str(h) in PALETTE:
            out[str(h)] = PALETTE[str(h)]
        else:
            out[str(h)] = cycle[i % len(cycle)]
            i += 1
    return out


def _legend(fig: plt.Figure, axes: np.ndarray, fontsize: int) -> None:
    """One legend for the figure, right of the panels, with every label drawn in any panel (each once)."""
    seen: dict[str, object] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(
            list(seen.values()),
            list(seen),
            fontsize=fontsize,
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            frameon=False,
        )


def _panels(n: int, ncols: int | None, size: float = 3.2) -> tuple[plt.Figure, np.ndarray]:
    ncols = min(n, ncols or 5)
    nrows = int(np.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, size * 0.85 * nrows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes


def lines(
    df: pd.DataFrame,
    *,
    x: str,
    y: str,
    hue: str,
    col: str | None = None,
    err: str | None = None,
    order: Sequence[str] | None = None,
    col_order: Sequence[str] | None = None,
    ncols: int | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = False,
    logy: bool = False,
    reference: pd.DataFrame | None = None,
    title: str | None = None,
    xticks: dict[float, str] | None = None,
    connect: bool = True,
) -> plt.Figure:
    """Line plot of ``y`` vs ``x`` per ``hue`` (one panel per ``col``), error bars from column ``err``.

    ``reference`` (same columns) is drawn as open markers labelled "paper" so paper values sit beside ours.
    ``xticks`` maps x positions to tick labels (for categorical axes such as ε ∈ {0.01, 0.1, 1, ∞} drawn at 0..3).
    With ``logx`` the ticks sit at the data's x values, labelled plainly (0.25, 1, 4). ``connect=False`` draws
    markers only (a table's cells, where a line between settings would suggest an order that is not there).
    """
    if df.empty:
        raise ValueError("nothing to plot: the result frame is empty")
    cols = list(col_order or (sorted(df[col].unique()) if col else [None]))
    fig, axes = _panels(len(cols), ncols)
    hues = list(order or sorted(df[hue].unique()))
    colours = _colours(hues)
    for ax, c in zip(axes.flat, cols):
        sub = df if c is None else df[df[col] == c]
        for h in hues:
            s = sub[sub[hue] == h].sort_values(x)
            if s.empty:
                continue
            _draw_line(ax, s, h, x=x, y=y, err=err, colour=colours[str(h)], connect=connect)
            if reference is not None and len(reference):
                r = reference[(reference[hue] == h) & ((reference[col] == c) if col else True)]
                if len(r):
                    _draw_paper(ax, r, h, x=x, y=y, colour=colours[str(h)])
        if c is not None:
            ax.set_title(str(c))
        _label_axes(ax, sub, x=x, xlabel=xlabel or x, ylabel=ylabel or y, xticks=xticks, logx=logx, logy=logy)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _legend(fig, axes, 7)
    return fig


def _draw_line(ax, s: pd.DataFrame, h, *, x: str, y: str, err: str | None, colour: str, connect: bool) -> None:
    """One ``hue`` value's rows ``s`` as a line (markers only without ``connect``) with error bars from ``err``."""
    ax.errorbar(
        s[x],
        s[y],
        yerr=s[err] if err else None,
        marker="o",
        ms=3 if connect else 5,
        capsize=2,
        lw=1.2,
        ls="-" if connect else "none",
        color=colour,
        label=LABELS.get(str(h), str(h)),
    )


def _draw_paper(ax, r: pd.DataFrame, h, *, x: str, y: str, colour: str) -> None:
    """The paper's rows ``r`` of one ``hue`` value as open diamonds labelled "(paper)"."""
    ax.plot(
        r[x],
        r[y],
        ls="none",
        marker="D",
        mfc="none",
        ms=6,
        color=colour,
        label=f"{LABELS.get(str(h), h)} (paper)",
    )


def _label_axes(
    ax,
    sub: pd.DataFrame,
    *,
    x: str,
    xlabel: str,
    ylabel: str,
    xticks: dict[float, str] | None,
    logx: bool,
    logy: bool,
) -> None:
    """A panel's axis labels, ticks (``xticks``, or with ``logx`` the data's x values ``sub[x]``), scales, grid."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xticks:
        ax.set_xticks(list(xticks), list(xticks.values()))
    if logx:
        ax.set_xscale("log")
        if not xticks:
            ticks = sorted(pd.to_numeric(sub[x], errors="coerce").dropna().unique())
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    if logy:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)


def bands(
    df: pd.DataFrame,
    *,
    x: str,
    low: str,
    high: str,
    hue: str,
    col: str | None = None,
    order: Sequence[str] | None = None,
    col_order: Sequence[str] | None = None,
    ncols: int | None = None,
    xlabel: str | None = None,
    ylabel: str | None = None,
    logy: bool = True,
    title: str | None = None,
) -> plt.Figure:
    """Shaded band between ``low`` and ``high`` per ``hue`` (a line where they coincide), e.g. min/max variance."""
    if df.empty:
        raise ValueError("nothing to plot: the result frame is empty")
    cols = list(col_order or (sorted(df[col].unique()) if col else [None]))
    fig, axes = _panels(len(cols), ncols, size=3.6)
    hues = list(order or sorted(df[hue].unique()))
    hatches = {"pm": "//", "pgc": "..", "lm": ""}
    colours = _colours(hues)
    for ax, c in zip(axes.flat, cols):
        sub = df if c is None else df[df[col] == c]
        for h in hues:
            s = sub[sub[hue] == h].sort_values(x)
            if s.empty:
                continue
            colour = colours[str(h)]
            label = LABELS.get(str(h), str(h))
            if np.allclose(s[low], s[high]):
                ax.plot(s[x], s[low], color=colour, lw=1.5, label=label)
            else:
                ax.fill_between(
                    s[x], s[low], s[high], color=colour, alpha=0.25, hatch=hatches.get(str(h), ""), label=label
                )
                ax.plot(s[x], s[low], color=colour, lw=0.8)
                ax.plot(s[x], s[high], color=colour, lw=0.8)
        if c is not None:
            ax.set_title(str(c))
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(ylabel or "")
        if logy:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _legend(fig, axes, 8)
    return fig
