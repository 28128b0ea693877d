"""The pure part of the GPU acceptance run (``benchmarks/gpu_check.py``): rows of two computations of the same
cells matched and compared -- config hashes, ledger columns, accuracies within a stated tolerance -- and the verdicts.
No torch, no device: ``tests/test_gpu_check.py`` tests it on hand-made rows.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

#: papers whose stored accuracies are fractions (scaled to points before the comparison)
FRACTIONS = ("privgnn",)
#: columns that identify a cell: a config hash within a paper's store artifact (those present are used)
CELL_COLUMNS = ("paper", "store", "config_hash")
#: columns that identify a row within a cell (those present are used)
KEY_COLUMNS = (
    "task",
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
#: the privacy ledger of a row: must be equal on every device
LEDGER_COLUMNS = ("level", "epsilon", "delta", "ledger")


@dataclasses.dataclass
class Check:
    """One verdict: ``pass``, ``fail``, ``info`` (a measurement without a threshold) or ``skip``."""

    phase: str
    name: str
    verdict: str
    value: float | None = None
    unit: str = ""
    detail: str = ""


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and v in ("", "nan"))


def _norm(v: Any) -> str:
    """A key value as text: missing (``None``, NaN, ``""``, ``"nan"``) is empty, numbers in one format (``1``,
    ``1.0`` and ``"1.0"`` are ``"1"``)."""
    if _missing(v):
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return format(float(v), ".12g")
    try:
        return format(float(str(v)), ".12g")
    except ValueError:
        return str(v)


def keyed(df, columns: list[str] | None = None):
    """``df`` with a ``_cell`` column (:data:`CELL_COLUMNS` as text) and a ``_key`` column (the cell, then the
    ``columns`` of :data:`KEY_COLUMNS` -- default those of ``df``; one ``df`` lacks is empty --, then a counter for
    repeated keys)."""
    cells = [c for c in CELL_COLUMNS if c in df.columns]
    keys = [c for c in KEY_COLUMNS if c in df.columns] if columns is None else list(columns)
    df = df.reset_index(drop=True).reindex(columns=list(dict.fromkeys([*df.columns, *keys])))
    # the cell's columns verbatim (a config hash of digits only is not a number)
    df["_cell"] = (
        df[cells].apply(lambda r: "|".join("" if _missing(v) else str(v) for v in r), axis=1) if len(df) else ""
    )
    key = (
        df["_cell"]
        + "|"
        + (df[keys].apply(lambda r: "|".join(_norm(v) for v in r), axis=1) if len(df) and keys else "")
    )
    df["_key"] = key + "#" + df.groupby(key).cumcount().astype(str)
    return df


def _parse(v: Any) -> Any:
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v


def ledger_diff(a: Any, b: Any, rtol: float = 1e-5, path: str = "") -> list[str]:
    """Paths where two ledger values differ: dicts key by key, lists item by item, numbers within ``rtol``
    (NaN equals NaN, infinities must match), anything else by equality. ``[]`` when they are equal."""
    a, b = _parse(a), _parse(b)
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}".lstrip(".") for k in sorted(set(a) ^ set(b), key=str)]
        for k in sorted(set(a) & set(b), key=str):
            out += ledger_diff(a[k], b[k], rtol, f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [path or "."]
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in ledger_diff(x, y, rtol, f"{path}[{i}]")]
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        fa, fb = float(a), float(b)
        same = (math.isnan(fa) and math.isnan(fb)) or fa == fb or math.isclose(fa, fb, rel_tol=rtol, abs_tol=1e-12)
        return [] if same else [path or "."]
    if _missing(a) and _missing(b):
        return []
    return [] if a == b else [path or "."]


def accuracy_check(label: str, paper: str, pairs, *, acc_tol: float, gross_tol: float, alpha: float) -> Check:
    """Per paper: the paired differences ``value_test - value_ref`` (points; fractions scaled) show no systematic
    shift, ``|mean| <= max(acc_tol, t(1 - alpha/2, n - 1) * sd / sqrt(n))`` with the cells' mean differences as the
    n units (the rows when fewer than 3 cells), and no gross one, ``mean |difference| <= gross_tol``; a value finite
    on one side only fails. Different random streams (CUDA vs CPU dropout and negative sampling) move single runs,
    not their mean."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    scale = 100.0 if paper in FRACTIONS else 1.0
    a = pd.to_numeric(pairs["value_test"], errors="coerce").to_numpy(float) * scale
    b = pd.to_numeric(pairs["value_ref"], errors="coerce").to_numpy(float) * scale
    lopsided = int((np.isfinite(a) != np.isfinite(b)).sum())
    ok = np.isfinite(a) & np.isfinite(b)
    d = pd.Series(a[ok] - b[ok], index=pairs.loc[ok, "_cell"].astype(str).to_numpy())
    if not len(d):
        verdict = "fail" if lopsided else "pass"
        return Check(label, f"accuracy {paper}", verdict, None, "points", f"no finite pairs; {lopsided} lopsided")
    cells = d.groupby(level=0).mean()
    units = cells if len(cells) >= 3 else d
    n, mean = len(units), float(units.mean())
    sd = float(units.std(ddof=1)) if n > 1 else 0.0
    t_tol = float(stats.t.ppf(1 - alpha / 2, n - 1)) * sd / math.sqrt(n) if n > 1 else 0.0
    tol = max(acc_tol, t_tol)
    mean_abs, max_abs = float(d.abs().mean()), float(d.abs().max())
    same = int((d == 0).sum())
    passed = abs(mean) <= tol and mean_abs <= gross_tol and lopsided == 0
    detail = (
        f"{len(d)} rows of {len(cells)} cells: mean difference {mean:+.3f} points (tolerance {tol:.3f} = "
        f"max({acc_tol:g}, t-test {t_tol:.3f}) over {n} {'cells' if units is cells else 'rows'}), mean |diff| "
        f"{mean_abs:.3f} (limit {gross_tol:g}), max |diff| {max_abs:.3f}, identical {same}/{len(d)}"
        + (f", {lopsided} finite on one side only" if lopsided else "")
    )
    return Check(label, f"accuracy {paper}", "pass" if passed else "fail", mean, "points", detail)


def compare_rows(
    test,
    ref,
    *,
    label: str,
    acc_tol: float = 3.0,
    gross_tol: float = 10.0,
    alpha: float = 1e-3,
    ledger_rtol: float = 1e-5,
    subset: bool = True,
):
    """``test`` rows against ``ref`` rows (each with a ``paper`` column): ``(checks, pairs)``.

    Checks: *config hashes* (every cell of ``test`` -- :data:`CELL_COLUMNS` -- is in ``ref``, and with
    ``subset=False`` every cell of ``ref`` in ``test``; the common cells have the same rows, matched by
    :data:`KEY_COLUMNS`), *ledger columns* (:data:`LEDGER_COLUMNS` equal row by row, numbers within
    ``ledger_rtol``) and one *accuracy* check per paper (:func:`accuracy_check`). ``pairs``: the matched rows with
    ``value_test``, ``value_ref`` and ``diff``.
    """
    import pandas as pd

    keys = [c for c in KEY_COLUMNS if c in test.columns or c in ref.columns]  # a column one side lacks is empty
    t, r = keyed(test, keys), keyed(ref, keys)
    cells_t, cells_r = set(t["_cell"]), set(r["_cell"])
    missing, extra = cells_t - cells_r, (set() if subset else cells_r - cells_t)
    r = r[r["_cell"].isin(cells_t)]
    ledger = [c for c in LEDGER_COLUMNS if c in t.columns or c in r.columns]
    cols = ["_key", "_cell", "paper", "value"] + ledger
    shown = [c for c in ("store",) + KEY_COLUMNS if c in test.columns and c not in cols]
    m = t.reindex(columns=cols + shown).merge(
        r.reindex(columns=cols).drop(columns=["_cell", "paper"]),
        on="_key",
        how="outer",
        suffixes=("_test", "_ref"),
        indicator=True,
    )
    unmatched = int((m["_merge"] != "both").sum())
    both = m[m["_merge"] == "both"].drop(columns=["_merge"])
    checks = [
        Check(
            label,
            "config hashes",
            "fail" if missing or extra or unmatched else "pass",
            float(len(cells_t)),
            "cells",
            f"{len(cells_t)} cells, {len(both)} rows matched"
            + (f"; {len(missing)} cells not in the reference (e.g. {min(missing)})" if missing else "")
            + (f"; {len(extra)} reference cells not computed" if extra else "")
            + (f"; {unmatched} rows without a partner" if unmatched else ""),
        )
    ]
    bad: dict[str, int] = {}
    for col in ledger:
        for x, y in zip(both[f"{col}_test"], both[f"{col}_ref"]):
            for p in ledger_diff(x, y, ledger_rtol, col):
                bad[p] = bad.get(p, 0) + 1
    checks.append(
        Check(
            label,
            "ledger columns",
            "fail" if bad or both.empty else "pass",
            float(sum(bad.values())),
            "differences",
            f"{len(both)} rows, columns {', '.join(ledger)}"
            + (": differ at " + ", ".join(f"{k} ({v} rows)" for k, v in sorted(bad.items())[:8]) if bad else ": equal"),
        )
    )
    for paper in sorted(both["paper"].astype(str).unique()):
        checks.append(
            accuracy_check(
                label,
                paper,
                both[both["paper"].astype(str) == paper],
                acc_tol=acc_tol,
                gross_tol=gross_tol,
                alpha=alpha,
            )
        )
    both = both.assign(
        diff=pd.to_numeric(both["value_test"], errors="coerce") - pd.to_numeric(both["value_ref"], errors="coerce")
    )
    return checks, both.drop(columns=["_key"])


def summary_line(checks: list[Check]) -> tuple[int, str]:
    """The exit status and the one line that ends the run."""
    failed = [f"{c.phase}/{c.name}" for c in checks if c.verdict == "fail"]
    skipped = [f"{c.phase}/{c.name}" for c in checks if c.verdict == "skip"]
    if failed:
        return 1, f"gpu_check: FAIL: {len(failed)} check(s) failed: {', '.join(failed)}"
    if skipped:
        return 2, f"gpu_check: INCOMPLETE: {len(skipped)} check(s) not run: {', '.join(skipped)}"
    return 0, f"gpu_check: PASS: all {sum(c.verdict == 'pass' for c in checks)} checks passed"
