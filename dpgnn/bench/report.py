"""What the benchmark's stored rows say: accuracy against ε with confidence intervals, which method at which ε,
what the private search costs, and which cells of a profile are still missing (and why).

Every function reads stored rows only (``results/<folder>/bench/<unit>.csv``, :func:`rows`); nothing here trains.
Accuracy is test accuracy in %; an interval is the 95 % Student-t interval of the mean over the seeds (none for one
seed). ``private`` rows are the honest ones (ε includes the search); ``as_published`` rows tune as the papers do::

    from dpgnn.bench import get_profile, report
    df = report.rows(get_profile("smoke"))
    report.summary(df)                      # mean, interval, seeds per unit, dataset, method, tuning and ε
    report.plot_accuracy(df)                # accuracy vs ε per unit and dataset, both tunings, references dashed
    report.which_method(df)                 # per unit, dataset and ε: the best method under private tuning
    report.private_cost(df)                 # private minus as_published accuracy, per method and ε
    report.missing(get_profile("smoke"))    # cells not computed yet, methods and units outside the profile
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dpgnn.bench.profiles import BenchProfile
from dpgnn.bench.units import UNITS

__all__ = [
    "rows",
    "summary",
    "plot_accuracy",
    "which_method",
    "plot_which_method",
    "private_cost",
    "by_budget",
    "missing",
    "cell_seconds",
    "conclusion",
    "stored_conclusion",
    "readme_block",
]

KEYS = ["unit", "dataset", "method", "tuning", "epsilon"]
#: the stored cells a time estimate reads per (unit, method, dataset): the latest, one seed's ε grid under both
#: tunings (older cells were often timed on older, slower code)
RECENT = 10
#: why a stored row has no accuracy: its private search fits no trial (:func:`dpgnn.bench.protocol.run_cell`)
NO_TRIAL = "stored without accuracy: no trial budget fits the private search (one DP step already costs more)"
#: line style per tuning in the figures
STYLES = {"private": ("-", "o", None), "as_published": (":", "s", "none")}


def rows(profile: BenchProfile, units: list[str] | None = None, root: Path | None = None) -> pd.DataFrame:
    """The stored rows of ``profile`` (every unit, or ``units``), with ``accuracy`` = test accuracy in %; ``root``:
    the folder holding ``<profile>/bench/`` (default: the output root's ``results/``)."""
    from dpgnn.results import ResultStore

    store = ResultStore("bench", profile.folder, root)
    frames = [store.load(u) for u in (units or profile.units)]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=[*KEYS, "seed", "accuracy", "guarantee", "epsilon_accounted"])
    df = pd.concat(frames, ignore_index=True)
    df["epsilon"] = df["epsilon"].astype(float)
    df["accuracy"] = 100 * df["value"].astype(float)
    return df


def _interval(values: pd.Series) -> tuple[float, float, int]:
    """Mean, half-width of the 95 % Student-t interval (NaN for one value) and the number of values."""
    from scipy.stats import t

    v = values.dropna().to_numpy(float)
    n = len(v)
    if n == 0:
        return math.nan, math.nan, 0
    half = float(t.ppf(0.975, n - 1) * v.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return float(v.mean()), half, n


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per unit, dataset, method, tuning and ε: mean accuracy (%), the interval's half-width ``ci95``, the number
    of seeds, the mean accounted ε and the guarantees of its rows (``sound`` when every row is)."""
    out = []
    for key, g in df.groupby(KEYS, sort=True):
        mean, half, n = _interval(g["accuracy"])
        guarantees = sorted(set(g["guarantee"].astype(str)))
        out.append(
            dict(
                zip(KEYS, key),
                accuracy=mean,
                ci95=half,
                seeds=n,
                epsilon_accounted=float(pd.to_numeric(g["epsilon_accounted"], errors="coerce").mean()),
                guarantee="/".join(guarantees),
            )
        )
    return pd.DataFrame(out, columns=[*KEYS, "accuracy", "ci95", "seeds", "epsilon_accounted", "guarantee"])


def _private_methods(unit: str) -> tuple[str, ...]:
    u = UNITS[unit]
    return u.methods + u.trivial


def _panel(ax: plt.Axes, d: pd.DataFrame, unit: str, colours: dict) -> None:
    """One dataset's panel of :func:`plot_accuracy` (``d``: its :func:`summary` rows)."""
    u = UNITS[unit]
    for (method, tuning), g in d.groupby(["method", "tuning"]):
        g = g.sort_values("epsilon")
        if method in u.methods:
            ls, marker, face = STYLES[tuning]
            ax.plot(g["epsilon"], g["accuracy"], ls=ls, marker=marker, mfc=face, ms=4, color=colours[method])
            low, high = g["accuracy"] - g["ci95"], g["accuracy"] + g["ci95"]
            ax.fill_between(g["epsilon"], low, high, color=colours[method], alpha=0.15)
        elif tuning == "private":
            ax.axhline(g["accuracy"].iloc[0], ls="--", lw=0.9, color=colours[method])
    grid = sorted(e for e in d["epsilon"].unique() if 0 < e < math.inf)
    if grid:
        ax.set_xscale("log")
        ax.set_xticks(grid, [f"{e:g}" for e in grid])
        ax.minorticks_off()
    ax.set_xlabel("ε", fontsize=7)
    ax.tick_params(labelsize=7)


def plot_accuracy(df: pd.DataFrame, units: list[str] | None = None) -> plt.Figure:
    """Accuracy (%) against ε for every method of each unit (one row of panels per unit, one panel per dataset):
    both tunings (solid: private, dotted: as_published), 95 % intervals as bands; trivially private methods
    (ε = 0) and non-private references as dashed horizontal lines at their private-tuning mean. A ``ValueError``
    when no unit has a stored row."""
    s = summary(df[df["unit"].isin(units)] if units else df)
    units = [u for u in UNITS if u in set(s["unit"])]
    if not units:
        raise ValueError("no stored bench rows to plot")
    ncol = max(s[s["unit"] == u]["dataset"].nunique() for u in units)
    fig, axes = plt.subplots(len(units), ncol, figsize=(4.6 * ncol, 2.6 * len(units)), squeeze=False)
    for i, unit in enumerate(units):
        sub = s[s["unit"] == unit]
        methods = sorted(sub["method"].unique())
        colours = {m: plt.cm.tab10(k % 10) for k, m in enumerate(methods)}
        for j, ds in enumerate(sorted(sub["dataset"].unique())):
            _panel(axes[i, j], sub[sub["dataset"] == ds], unit, colours)
            axes[i, j].set_title(f"{unit} · {ds}", fontsize=8)
        for j in range(sub["dataset"].nunique(), ncol):
            axes[i, j].axis("off")
        axes[i, 0].set_ylabel("test accuracy (%)", fontsize=7)
        kinds = {m: "ε = 0" if m in UNITS[unit].trivial else "non-private" for m in methods}
        handles = [plt.Line2D([], [], color=colours[m], ls="-" if m in UNITS[unit].methods else "--") for m in methods]
        labels = [m if m in UNITS[unit].methods else f"{m} ({kinds[m]})" for m in methods]
        for tuning, (ls, marker, face) in STYLES.items():
            handles.append(plt.Line2D([], [], color="grey", ls=ls, marker=marker, mfc=face, ms=4))
            labels.append(f"tuning {tuning}")
        axes[i, -1].legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle("Accuracy vs ε per unit, both tunings; bands: 95 % interval over seeds", fontsize=9)
    fig.tight_layout()
    return fig


def which_method(df: pd.DataFrame, tuning: str = "private") -> pd.DataFrame:
    """Per unit, dataset and ε of the unit's grid: the method with the highest mean accuracy under ``tuning``
    (private methods at that ε and trivially private ones, which fit every ε; ties to the first name), its
    accuracy (``score``, %), interval and guarantee, and the runner-up's accuracy."""
    s = summary(df[df["tuning"] == tuning])
    out = []
    for (unit, ds), g in s.groupby(["unit", "dataset"]):
        trivial = g[g["method"].isin(UNITS[unit].trivial)]
        for eps in sorted(e for e in g["epsilon"].unique() if 0 < e < math.inf):
            cand = pd.concat([g[(g["epsilon"] == eps) & g["method"].isin(UNITS[unit].methods)], trivial])
            cand = cand.dropna(subset=["accuracy"]).sort_values(["accuracy", "method"], ascending=[False, True])
            if cand.empty:
                continue
            best = cand.iloc[0]
            second = float(cand["accuracy"].iloc[1]) if len(cand) > 1 else math.nan
            out.append(
                dict(
                    unit=unit,
                    dataset=ds,
                    budget=float(eps),
                    method=best["method"],
                    score=float(best["accuracy"]),
                    ci95=float(best["ci95"]),
                    guarantee=best["guarantee"],
                    runner_up=second,
                )
            )
    cols = ["unit", "dataset", "budget", "method", "score", "ci95", "guarantee", "runner_up"]
    return pd.DataFrame(out, columns=cols)


def plot_which_method(best: pd.DataFrame) -> plt.Figure:
    """The :func:`which_method` grid as coloured strips (one per unit and dataset, accuracy printed)."""
    from dpgnn.compare import plot_best_method

    fig = plot_best_method(best)
    fig.axes[0].set_title(
        "Which method at which ε (one protocol per unit; ε of different units are different guarantees)", fontsize=8
    )
    return fig


def private_cost(df: pd.DataFrame) -> pd.DataFrame:
    """What the private search costs: per unit, dataset, method and ε, private minus as_published accuracy
    (percentage points), paired by seed, with its 95 % interval and the number of pairs (methods of a unit only;
    references and trivial methods tune the same way in both)."""
    keep = df[[m in UNITS[u].methods for u, m in zip(df["unit"], df["method"])]] if len(df) else df
    wide = keep.pivot_table(index=[*KEYS[:3], "epsilon", "seed"], columns="tuning", values="accuracy", aggfunc="mean")
    cols = [*KEYS[:3], "epsilon", "cost", "ci95", "pairs"]
    if not {"private", "as_published"} <= set(wide.columns):
        return pd.DataFrame(columns=cols)
    diff = (wide["private"] - wide["as_published"]).dropna().rename("cost").reset_index()
    out = []
    for key, g in diff.groupby([*KEYS[:3], "epsilon"]):
        mean, half, n = _interval(g["cost"])
        out.append(dict(zip([*KEYS[:3], "epsilon"], key), cost=mean, ci95=half, pairs=n))
    return pd.DataFrame(out, columns=cols)


def by_budget(table: pd.DataFrame, index: str, column: str, cell: Callable[[pd.Series], str]) -> pd.DataFrame:
    """``table`` (e.g. one unit's :func:`which_method` rows) wide: a row per ``index`` value, a column per ``column``
    value (the budgets as given, e.g. an LDP grid's ε = 0.01, in increasing order), ``cell(row)`` in each, blank
    where nothing is stored."""
    long = table.assign(_cell=table.apply(cell, axis=1))
    wide = long.pivot_table(index=index, columns=column, values="_cell", aggfunc="first").reset_index()
    values = sorted(long[column].unique())
    wide = wide[[index, *values]].fillna("")
    wide.columns = [index, *(f"{v:g}" for v in values)]
    return wide


def missing(profile: BenchProfile, results: Path | None = None) -> pd.DataFrame:
    """What the profile's stored rows do not cover yet, and why: per unit and method, the cells not computed
    (``not computed yet``, or the dataset's files missing), the stored private searches that no trial budget fits
    (:data:`NO_TRIAL`), the unit's methods the profile does not run, the registered methods the unit excludes, and
    the units outside the profile (``results``: the folder holding ``<profile>/bench/``; default: the output root's
    ``results/``). ``cpu_hours``: for cells not computed yet, the sum of their estimated wall times
    (:func:`cell_seconds`), the compute they still need on one core like the one that stored them."""
    from dpgnn.bench.runner import cells
    from dpgnn.results import ResultStore
    from dpgnn.utils import config_hash

    store = ResultStore("bench", profile.folder, results)
    skipped = dict(zip(store.skipped()["dataset"], store.skipped()["reason"]))
    stored = {unit: store.load(unit).drop_duplicates("config_hash") for unit in profile.units}
    seconds = cell_seconds(pd.concat([df.assign(unit=u) for u, df in stored.items()], ignore_index=True))
    out = []
    for unit, u in UNITS.items():
        if unit not in profile.units:
            out.append(dict(unit=unit, method="(all)", cells=0, why=f"unit not in the {profile.name} profile"))
            continue
        done = set(stored[unit]["config_hash"].astype(str))
        ran = profile.methods_of(unit)
        for method in stored[unit][stored[unit]["value"].isna()]["method"]:
            out.append(dict(unit=unit, method=method, cells=1, why=NO_TRIAL, cpu_hours=math.nan))
        for c in cells(profile, units=[unit])[unit]:
            if config_hash(c) not in done:
                why = f"dataset not here: {skipped[c['dataset']]}" if c["dataset"] in skipped else "not computed yet"
                hours = seconds(unit, c["method"], c["dataset"]) / 3600 if why == "not computed yet" else math.nan
                out.append(dict(unit=unit, method=c["method"], cells=1, why=why, cpu_hours=hours))
        for m in u.methods + u.trivial + u.references:
            if m not in ran:
                out.append(dict(unit=unit, method=m, cells=0, why=f"method not in the {profile.name} profile"))
        for m, reason in u.excluded:
            out.append(dict(unit=unit, method=m, cells=0, why=f"excluded: {reason}"))
    df = pd.DataFrame(out, columns=["unit", "method", "cells", "why", "cpu_hours"])
    df = df.groupby(["unit", "method", "why"], sort=False, as_index=False).agg(
        cells=("cells", "sum"), cpu_hours=("cpu_hours", lambda h: h.sum(min_count=1))
    )
    return df


def cell_seconds(stored: pd.DataFrame) -> Callable[[str, str, str], float]:
    """``seconds(unit, method, dataset)``: the estimated wall time of one more cell, from the ``cell_seconds`` of the
    ``stored`` rows (columns ``unit``, ``method``, ``dataset``).

    The mean of the stored cells of the same unit, method and dataset where there are some (the latest
    :data:`RECENT` of them by ``timestamp`` where the rows have one); else the method's time scaled to the dataset
    by a log-additive fit over every stored (unit, method, dataset) mean, ``log t = a(unit, method) + b(dataset)``
    (so a method timed on Cora alone is scaled by how much longer the other methods took on the dataset than on
    Cora); else, for a dataset with no stored cell, the method's mean; else the unit's mean; NaN with no stored
    time at all."""
    cols = ["unit", "method", "dataset", "cell_seconds"]
    kept = cols + ["timestamp"] * ("timestamp" in stored.columns)
    t = stored[kept].dropna(subset=cols) if set(cols) <= set(stored.columns) else pd.DataFrame(columns=cols)
    t = t[t["cell_seconds"] > 0]
    if "timestamp" in t.columns:
        t = t.sort_values("timestamp", kind="stable").groupby(["unit", "method", "dataset"]).tail(RECENT)
    if t.empty:
        return lambda unit, method, dataset: math.nan
    pair = t.groupby(["unit", "method", "dataset"])["cell_seconds"].mean()
    of_method = t.groupby(["unit", "method"])["cell_seconds"].mean()
    of_unit = t.groupby("unit")["cell_seconds"].mean()
    keys = sorted(set(zip(pair.index.get_level_values(0), pair.index.get_level_values(1))))
    names = sorted(set(pair.index.get_level_values(2)))
    design = np.zeros((len(pair), len(keys) + len(names)))
    for i, (unit, method, dataset) in enumerate(pair.index):
        design[i, keys.index((unit, method))] = 1.0
        design[i, len(keys) + names.index(dataset)] = 1.0
    coef = np.linalg.lstsq(design, np.log(pair.to_numpy()), rcond=None)[0]
    a = dict(zip(keys, coef[: len(keys)]))
    b = dict(zip(names, coef[len(keys) :]))

    def seconds(unit: str, method: str, dataset: str) -> float:
        if (unit, method, dataset) in pair.index:
            return float(pair[(unit, method, dataset)])
        if (unit, method) in a and dataset in b:
            return float(np.exp(a[(unit, method)] + b[dataset]))
        if (unit, method) in of_method.index:
            return float(of_method[(unit, method)])
        return float(of_unit.get(unit, math.nan))

    return seconds


def _wins(best: pd.DataFrame, df: pd.DataFrame, profile: BenchProfile) -> str:
    """Per unit, the method that is best in most (dataset, ε) cells of :func:`which_method`, with its count and
    how many of the unit's competing methods (private and trivially private ones) have stored rows."""
    parts = []
    for unit in [u for u in UNITS if u in set(best["unit"])]:
        counts = best[best["unit"] == unit]["method"].value_counts()
        top = sorted(counts.index, key=lambda m: (-counts[m], m))[0]
        competing = [m for m in profile.methods_of(unit) if m in UNITS[unit].methods + UNITS[unit].trivial]
        stored = df[(df["unit"] == unit) & (df["tuning"] == "private")]["method"]
        n = len(set(stored) & set(competing))
        parts.append(
            f"{unit} `{top}` ({counts[top]} of {int(counts.sum())}; {n} of {len(competing)} methods with rows)"
        )
    return ", ".join(parts)


def conclusion(df: pd.DataFrame, profile: BenchProfile, stored: int, total: int, hours: float | None = None) -> str:
    """Two sentences on what the stored rows of ``profile`` conclude (``stored`` of ``total`` cells; ``hours``: the
    CPU hours the rest still needs, :func:`missing`): per unit, the method best under private tuning in most
    (dataset, ε) cells, and what the private search costs; said plainly when no row is stored."""
    where = f"`results/{profile.folder}/bench/`"
    if df.empty or stored == 0:
        return (
            f"The benchmark's {profile.name} profile has no stored rows yet ({where}: 0 of {total} cells; "
            f"`dpgnn run bench --profile {profile.folder}` computes them), so it concludes nothing yet.\n"
        )
    best = which_method(df)
    cost = private_cost(df)
    private = df[(df["tuning"] == "private") & (df["guarantee"] != "non-private")]  # not the references
    sound = int((private["guarantee"] == "sound").sum())
    unsound = private[private["guarantee"] != "sound"].drop_duplicates(["unit", "method"])
    others = ", ".join(f"{u} `{m}`" for u, m in sorted(zip(unsound["unit"], unsound["method"])))
    part = "" if stored == total else f"; {stored} of {total} cells stored, the rest not yet run"
    if stored != total and hours is not None and not math.isnan(hours):
        part += f", about {hours:.0f} CPU hours by the latest stored cells' times"
    first = (
        f"Under one protocol per privacy unit ({profile.name} profile: {len(profile.datasets)} dataset(s), "
        f"{len(profile.seeds)} seed(s), private tuning with the search inside ε{part}), the method most often "
        f"best over (dataset, ε) cells is: {_wins(best, df, profile)}."
    )
    if cost.empty:
        second = "No method has both tunings stored yet, so the cost of tuning privately is not measured."
    else:
        second = (
            f"Tuning privately instead of as the papers do changes test accuracy by {cost['cost'].mean():+.1f} "
            f"points on average (from {cost['cost'].min():+.1f} to {cost['cost'].max():+.1f} over "
            f"{len(cost)} method and ε cells), and {sound} of the {len(private)} privately tuned rows of private "
            f"methods are `sound`" + (f" (the others, `as_published`: {others})." if others else ".")
        )
    return f"{first} {second}\n"


def stored_conclusion(profile: BenchProfile, results: Path | None = None) -> str:
    """:func:`conclusion` for the rows of ``profile`` stored under ``results`` (the folder holding
    ``<profile>/bench/``; default: the output root's ``results/``)."""
    from dpgnn.bench.runner import cells
    from dpgnn.results import ResultStore
    from dpgnn.utils import config_hash

    store = ResultStore("bench", profile.folder, results)
    todo = cells(profile)
    stored = sum(len({config_hash(c) for c in todo[u]} & store.done(u)) for u in profile.units)
    total = sum(len(c) for c in todo.values())
    hours = missing(profile, results)["cpu_hours"].sum(min_count=1)
    return conclusion(rows(profile, root=results), profile, stored, total, hours)


def readme_block(root: Path) -> str:
    """The README's ``bench`` block: :func:`conclusion` for the ``bench`` profile's rows stored under ``root``."""
    from dpgnn.bench.profiles import get_profile

    return stored_conclusion(get_profile("bench"), root / "results")
