"""What the engine prints and returns: per (paper, artifact) cells stored, missing and not run, the estimated cost,
and :func:`comparable` frames for comparing two computations of the same cells."""

from __future__ import annotations

import math

import pandas as pd

from dpgnn.engine.planning import unavailable_hashes


def summary_frame(targets, per_spec, stale: str) -> pd.DataFrame:
    """One row per spec of ``per_spec`` (:func:`~dpgnn.engine.planning.plan_targets`): its cells stored, from other
    code, missing and not run here, and the estimated cost of the missing ones from the stored cell times."""
    rows = []
    for spec, cfg, hashes, cells in per_spec:
        t = targets[(spec.paper, spec.store)]
        hs = set(hashes)
        stored = hs & t.done
        old = stored & t.stale
        redo = hs & t.redo
        unavailable = unavailable_hashes(t, spec, cfg, cells) - stored
        missing = ((hs - t.done) | redo) - unavailable
        secs = [t.durations[h][0] for h in stored if h in t.durations]
        per_cell = sum(secs) / len(secs) if secs else math.nan
        devices = sorted({t.durations[h][1] for h in stored if h in t.durations})
        rows.append(
            {
                "paper": spec.paper,
                "artifact": spec.name,
                "store": spec.store,
                "cells": len(hs),
                "stored": len(stored),
                "from_other_code": len(old),
                "missing": len(missing),
                "unavailable": len(unavailable),
                "sec_per_cell": per_cell,
                "est_seconds": per_cell * len(missing) if missing else 0.0,
                "devices": ",".join(devices),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "paper",
            "artifact",
            "store",
            "cells",
            "stored",
            "from_other_code",
            "missing",
            "unavailable",
            "sec_per_cell",
            "est_seconds",
            "devices",
        ],
    )


def summary_lines(summary: pd.DataFrame, stale: str, force: bool) -> list[str]:
    """One line per artifact, then what applies to all of them once: cells from other code, and the total."""
    out = []
    for r in summary.itertuples(index=False):
        line = f"{r.paper}/{r.artifact} ({r.store}): {r.stored} of {r.cells} cells stored"
        if r.from_other_code:
            line += f", {r.from_other_code} of them from other code"
        line += f"; {r.missing} to compute" + (" (--force: all)" if force else "")
        if r.missing:
            line += f", est. {_fmt_seconds(r.est_seconds)}"
            if r.sec_per_cell == r.sec_per_cell:
                line += f" at {r.sec_per_cell:.1f} s/cell on {_devices(r.devices)}"
        if r.unavailable:
            line += f"; {r.unavailable} not run (dataset not here)"
        out.append(line)
    if not len(summary):
        return out
    old = int(summary["from_other_code"].sum())
    if old:
        what = "recomputing them (--stale rerun)" if stale == "rerun" else "kept (--stale rerun recomputes them)"
        out.append(f"{old} stored cells come from other code: {what}")
    est = float(summary["est_seconds"].sum())
    unknown = int(summary.loc[summary["missing"] > 0, "sec_per_cell"].isna().sum())
    out.append(
        f"total: {int(summary['cells'].sum())} cells, {int(summary['stored'].sum())} stored, "
        f"{int(summary['missing'].sum())} to compute"
        + (
            f" (est. {_fmt_seconds(est)}"
            + (f"; {unknown} artifacts without stored cell times" if unknown else "")
            + ")"
            if summary["missing"].sum()
            else ""
        )
        + f", {int(summary['unavailable'].sum())} not run (dataset not here)"
    )
    return out


def _devices(devices: str) -> str:
    """The stored cells' devices as a reader wants them: ``?`` (rows from before devices were recorded) said so."""
    names = [d for d in str(devices).split(",") if d]
    known = [d for d in names if d != "?"]
    text = ", ".join(known) if known else ""
    if "?" in names or not names:
        text = (text + " and " if text else "") + "an unrecorded device"
    return text


def _fmt_seconds(s: float) -> str:
    if s != s:
        return "unknown (no stored cell times)"
    if s < 120:
        return f"{s:.0f} s"
    return f"{s / 60:.0f} min" if s < 7200 else f"{s / 3600:.1f} h"


#: columns that differ between two computations of the same cell by design (wall times, when, where, code)
_VOLATILE = ("timestamp", "versions", "cell_seconds", "cell_device", "device")


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its wall-time / timestamp / device / version columns (``*_s``, ``*seconds``, ``*_per_s``),
    rows in a canonical order: two computations of the same cells compare equal with ``pandas.testing``."""
    drop = [c for c in df.columns if c in _VOLATILE or c.endswith(("_s", "seconds", "_per_s", "_per_second"))]
    df = df.drop(columns=drop)
    df = df.astype({c: str for c in df.columns if df[c].dtype == object})
    keys = [
        c
        for c in (
            "config_hash",
            "metric",
            "run",
            "checkpoint",
            "epoch_total",
            "stage",
            "epoch",
            "degree",
            "artifact",
            "method",
            "setting",
        )
        if c in df.columns
    ]
    return df[sorted(df.columns)].sort_values(keys or sorted(df.columns), kind="stable").reset_index(drop=True)
