"""Paper-vs-ours report: one row per reported cell of a paper table/figure that we reproduce.

``results/<profile>/report.csv`` columns: ``paper, artifact, dataset, method, setting, metric, paper_value,
paper_spread, ours_value, ours_spread, n_runs, profile, status, tolerance, diff, approx, note, source``.
``status`` is one of :data:`STATUSES`:

- ``within``: ``|ours - paper| <= max(tolerance floor, 2 * paper_spread)``;
- ``outside``: beyond that band and no measured cause is recorded;
- ``explained``: beyond the band, with a *measured* cause recorded in ``dpgnn/reference/explanations.csv`` (e.g. the
  authors' official code, run on the same data and configuration, gives the same number); the note states it;
- ``not_run``: no result for the cell; the note says why (the dataset is not available here, it is not in this
  profile, or the paper prints no value for it);
- ``stand_in``: our result on a stand-in dataset (ProGAP's Facebook100 universities for FB-100, PrivGNN's
  ``fb100-cornell5`` for Facebook), shown in its own row with the paper's value for the paper's dataset as context
  only: it is never compared (no ``diff``) and is not counted among the reported cells.

Our spread uses the paper's convention (``spread_kind`` of the reference row). ``report.md``, ``report.html`` and the
site show numbers rounded by one rule, :func:`format_value`: the paper's precision for the quantity
(:func:`paper_decimals`), else 3 significant figures; ``report.csv`` keeps 4 significant figures.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpgnn.reference import load_explanations, load_reference, stand_in_for
from dpgnn.results import ResultStore
from dpgnn.utils import output_root

KEY = ["paper", "artifact", "dataset", "method", "setting", "metric"]
STATUSES = ("within", "explained", "outside", "not_run", "stand_in")
REPORTED = ("within", "explained", "outside", "not_run")  # statuses of the papers' reported cells (stand_in is extra)
REPORT_COLUMNS = KEY + [
    "paper_value",
    "paper_spread",
    "ours_value",
    "ours_spread",
    "n_runs",
    "profile",
    "status",
    "tolerance",
    "diff",
    "approx",
    "note",
    "source",
]


def bootstrap_ci_halfwidth(
    values: Iterable[float], *, n_resamples: int = 1000, seed: int = 12345, level: float = 0.95
) -> float:
    """Half-width of the percentile bootstrap CI of the mean (the Sajadmanesh repos' ± convention)."""
    v = np.asarray(list(values), dtype=float)
    if v.size == 0:
        return float("nan")
    rng = np.random.default_rng(seed)
    means = rng.choice(v, size=(n_resamples, v.size), replace=True).mean(axis=1)
    lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float((hi - lo) / 2)


def spread(values: Iterable[float], kind: str) -> float:
    """Spread of our runs in the paper's convention ``kind``."""
    v = np.asarray(list(values), dtype=float)
    if kind == "std_ddof0":
        return float(v.std(ddof=0)) if v.size else float("nan")
    if kind == "std":
        return float(v.std(ddof=1)) if v.size > 1 else float("nan")
    if kind == "ci95_bootstrap":
        return bootstrap_ci_halfwidth(v)
    if kind in ("none", "", None) or (isinstance(kind, float) and np.isnan(kind)):
        return float(v.std(ddof=0)) if v.size > 1 else float("nan")
    raise ValueError(f"unknown spread_kind {kind!r}; expected std_ddof0, std, ci95_bootstrap or none")


def _not_run_reason(
    dataset: str, artifact: str, skipped: pd.DataFrame | None, paper_value: float, paper: str | None = None
) -> str:
    """Why a reference cell has no result: the skip log's reason, else dataset availability here, else profile.

    Availability is the ``paper``'s graph where the name is ambiguous ("facebook" is LPGNN's page-page graph, which
    is mirrored, but PrivGNN's and ProGAP's Facebook100 UIUC, which is not)."""
    if skipped is not None and len(skipped):
        hit = skipped[(skipped["dataset"] == dataset) & skipped["artifact"].isin([artifact, "*"])]
        if len(hit):  # the skip log says why: usually missing raw files, sometimes a run out of reach here
            reason = str(hit["reason"].iloc[-1])
            unavailable = "not available" in reason or "unavailable" in reason or "missing" in reason
            return f"{'dataset not available here' if unavailable else 'not run here'}: {reason}"
    if np.isnan(paper_value):
        return "the paper prints no value for this cell (figure only)"
    from dpgnn.data.registry import paper_dataset_available

    available = paper_dataset_available(dataset, paper)
    if available is None:
        return f"dataset not available here ({dataset!r} is not in our offline registry)"
    if not available:
        return f"dataset not available here ({dataset!r}: raw files missing from the mirror)"
    return "not in this profile (no result stored for this cell)"


def _explanation(explanations: pd.DataFrame, key: tuple) -> str:
    """The measured cause recorded for an ``outside`` cell (``*`` matches any value), or ``""``."""
    if explanations is None or not len(explanations):
        return ""
    m = np.ones(len(explanations), dtype=bool)
    for col, val in zip(KEY, key):
        e = explanations[col].astype(str).to_numpy()
        m &= (e == "*") | (e == str(val))
    return str(explanations["cause"][m].iloc[0]) if m.any() else ""


def compare(
    reference: pd.DataFrame,
    ours: pd.DataFrame,
    *,
    profile: str,
    skipped: pd.DataFrame | None = None,
    explanations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Match reference rows with our result rows (same paper/artifact/dataset/method/setting/metric).

    ``explanations`` (default: the paper's rows of ``explanations.csv``) turn an ``outside`` cell into
    ``explained``; our results on a stand-in dataset get their own ``stand_in`` rows after the reported cells.
    """
    groups = {k: g["value"].astype(float).to_numpy() for k, g in ours.groupby(KEY, dropna=False)} if len(ours) else {}
    if explanations is None:
        papers_here = set(reference["paper"])
        explanations = load_explanations()
        explanations = explanations[explanations["paper"].isin(papers_here)]
    out, standins = [], []
    for ref in reference.itertuples(index=False):
        key = tuple(getattr(ref, k) for k in KEY)
        vals = groups.get(key, np.array([]))
        vals = vals[~np.isnan(vals)]
        paper_value = float(ref.value) if pd.notna(ref.value) else float("nan")
        paper_spread = float(ref.spread) if pd.notna(ref.spread) and str(ref.spread) != "" else float("nan")
        out.append(_reported_row(ref, key, vals, paper_value, paper_spread, profile, skipped, explanations))
        standins += _stand_in_rows(ref, key, groups, paper_value, paper_spread, profile)
    return pd.DataFrame(out + standins, columns=REPORT_COLUMNS)


def _reported_row(
    ref: Any,
    key: tuple,
    vals: np.ndarray,
    paper_value: float,
    paper_spread: float,
    profile: str,
    skipped: pd.DataFrame | None,
    explanations: pd.DataFrame,
) -> dict[str, Any]:
    """The report row of one reference cell ``ref`` against our values ``vals`` (NaNs dropped): ``within`` /
    ``outside`` / ``explained`` the tolerance, or ``not_run`` with the reason."""
    tol = float(ref.tolerance)
    if not np.isnan(paper_spread):
        tol = max(tol, 2 * paper_spread)
    row = dict(
        zip(KEY, key),
        paper_value=paper_value,
        paper_spread=paper_spread,
        profile=profile,
        tolerance=tol,
        approx=bool(ref.approx),
        source=ref.source,
        note="",
    )
    if vals.size == 0 or np.isnan(paper_value):
        note = _not_run_reason(ref.dataset, ref.artifact, skipped, paper_value, ref.paper)
        row.update(
            ours_value=float(vals.mean()) if vals.size else float("nan"),
            ours_spread=spread(vals, ref.spread_kind) if vals.size else float("nan"),
            n_runs=int(vals.size),
            status="not_run",
            diff=float("nan"),
            note=note,
        )
        return row
    mean = float(vals.mean())
    diff = mean - paper_value
    status = "within" if abs(diff) <= tol + 1e-9 else "outside"
    note = ""
    if status == "outside":
        note = _explanation(explanations, key)
        status = "explained" if note else "outside"
    row.update(
        ours_value=mean,
        ours_spread=spread(vals, ref.spread_kind),
        n_runs=int(vals.size),
        diff=diff,
        status=status,
        note=note,
    )
    return row


def _stand_in_rows(
    ref: Any,
    key: tuple,
    groups: dict[tuple, np.ndarray],
    paper_value: float,
    paper_spread: float,
    profile: str,
) -> list[dict[str, Any]]:
    """Our rows on a stand-in for the reference cell's dataset (``stand_in``: shown for context, never
    compared)."""
    rows = []
    for (p, a, d, m, st, me), v in groups.items():
        if (
            (p, a, m, st, me) == (key[0], key[1], key[3], key[4], key[5])
            and d != key[2]
            and stand_in_for(p, d) == key[2]
        ):
            v = v[~np.isnan(v)]
            if v.size:
                rows.append(
                    dict(
                        zip(KEY, (p, a, d, m, st, me)),
                        paper_value=paper_value,
                        paper_spread=paper_spread,
                        ours_value=float(v.mean()),
                        ours_spread=spread(v, ref.spread_kind),
                        n_runs=int(v.size),
                        profile=profile,
                        status="stand_in",
                        tolerance=float("nan"),
                        diff=float("nan"),
                        approx=bool(ref.approx),
                        source=ref.source,
                        note=f"stand-in for the paper's {key[2]!r}: a different graph, shown for "
                        f"context and never compared (paper value is for {key[2]!r})",
                    )
                )
    return rows


def paper_vs_ours(paper: str, artifact: str, profile: str, *, root: Path | None = None) -> pd.DataFrame:
    """One artifact's reference cells beside our stored results (what notebooks display last)."""
    store = ResultStore(paper, profile, root=root)
    return compare(load_reference(paper, artifact), store.load(artifact), profile=profile, skipped=store.skipped())


def check_papers(papers: list[str] | None = None) -> list[str]:
    """``papers`` (default: every registered series with reference data, :attr:`dpgnn.series.Series.reference`,
    by name); a ``ValueError`` naming any without reference data."""
    from dpgnn import series

    known = sorted(s.name for s in series.all_series() if s.reference)
    names = list(papers or known)
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"no reference data for {unknown}; known papers: {known}")
    return names


def build_report(
    profile: str, papers: list[str] | None = None, *, root: Path | None = None, write: bool = True
) -> pd.DataFrame:
    """Compare every paper's reference data with ``results/<profile>/`` and write report.csv/.md/.html and the
    static site ``results/<profile>/site/`` (:mod:`dpgnn.site`)."""
    root = Path(root or output_root() / "results")
    names = check_papers(papers)
    frames = []
    for paper in names:
        store = ResultStore(paper, profile, root=root)
        frames.append(compare(load_reference(paper), store.load(), profile=profile, skipped=store.skipped()))
    rep = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=REPORT_COLUMNS)
    if write:
        outdir = root / profile
        outdir.mkdir(parents=True, exist_ok=True)
        rep.to_csv(outdir / "report.csv", index=False, float_format="%.4g")
        (outdir / "report.md").write_text(to_markdown(rep, profile))
        (outdir / "report.html").write_text(to_html(rep, profile))
        from dpgnn.site import build_site

        build_site(rep, profile, results_root=root)  # results/<profile>/site/: summary, artifact pages, notebooks
    return rep


def counts(rep: pd.DataFrame) -> pd.DataFrame:
    """Cells per paper and artifact by status; ``total`` counts the papers' reported cells (``stand_in`` rows are
    extra rows of ours, not reported cells)."""
    cols = ["paper", "artifact", *STATUSES, "total"]
    if rep.empty:
        return pd.DataFrame(columns=cols)
    c = rep.groupby(["paper", "artifact", "status"], sort=False).size().unstack("status", fill_value=0)
    for s in STATUSES:
        if s not in c:
            c[s] = 0
    c = c[list(STATUSES)]
    c["total"] = c[list(REPORTED)].sum(axis=1)
    return c.reset_index()[cols]


def summarize(rep: pd.DataFrame) -> str:
    """A short text summary per paper (printed by ``dpgnn report``)."""
    if rep.empty:
        return "no reference cells"
    lines = []
    for paper, g in counts(rep).groupby("paper", sort=False):
        tot = g[list(STATUSES)].sum()
        lines.append(
            f"{paper}: {tot.within} within, {tot.explained} explained, {tot.outside} outside, "
            f"{tot.not_run} not run (of {int(tot[list(REPORTED)].sum())} reported cells)"
            + (f"; {tot.stand_in} stand-in rows" if tot.stand_in else "")
        )
        for r in g.itertuples(index=False):
            lines.append(
                f"  {r.artifact:<12} within {r.within:>3}  explained {r.explained:>3}  outside "
                f"{r.outside:>3}  not_run {r.not_run:>3}  stand_in {r.stand_in:>3}"
            )
    tot = counts(rep)[list(STATUSES)].sum()
    lines.append(
        f"all papers: {tot.within} within, {tot.explained} explained, {tot.outside} outside, "
        f"{tot.not_run} not run (of {int(tot[list(REPORTED)].sum())} reported cells); "
        f"{tot.stand_in} stand-in rows"
    )
    prof = rep["profile"].iloc[0]
    lines.append(f"written: results/{prof}/report.csv (.md, .html) and the site results/{prof}/site/index.html")
    return "\n".join(lines)


def paper_decimals(rep: pd.DataFrame) -> pd.Series:
    """Per report row, the decimals the paper prints for its quantity: the most that any of the paper's values of
    the same metric in the same artifact shows (written as briefly as the float allows, so a trailing zero of one
    value is made up by its siblings); ``NaN`` where the paper prints no value of that metric there."""
    if rep.empty:
        return pd.Series(dtype=float, index=rep.index)

    def places(v: float) -> float:
        return float("nan") if pd.isna(v) else float(max(0, -Decimal(repr(float(v))).normalize().as_tuple().exponent))

    shown = rep["paper_value"].map(places)
    return shown.groupby([rep["paper"], rep["artifact"], rep["metric"]], sort=False).transform("max")


def format_value(
    value: float, decimals: float | None = None, *, spread: float | None = None, signed: bool = False
) -> str:
    """The report's one rounding rule: ``value`` (and its ``± spread``, with the same places) rounded to
    ``decimals`` places, the paper's precision for the quantity (:func:`paper_decimals`); where the paper prints
    none (``decimals`` ``None``/``NaN``), to 3 significant figures (one decimal for a percentage from 10 to 99.9).
    ``signed`` prints a sign (a difference); ``""`` for a missing value."""
    if value is None or pd.isna(value):
        return ""
    if decimals is None or pd.isna(decimals):
        decimals = 0 if value == 0 else max(0, 2 - int(np.floor(np.log10(abs(value)))))
    d = min(int(decimals), 8)
    text = f"{value:+.{d}f}" if signed else f"{value:.{d}f}"
    return text + ("" if spread is None or pd.isna(spread) else f" ± {spread:.{d}f}")


def to_markdown(rep: pd.DataFrame, profile: str) -> str:
    """The report ``rep`` of ``profile`` as markdown: the tolerance rule, a summary per artifact, one row per cell."""
    lines = [
        f"# dpgnn report — profile `{profile}`",
        "",
        "Tolerance: |ours − paper| ≤ max(floor, 2 × paper spread); floor = 2 points for percentages. "
        "`explained`: outside, with a measured cause in the note; `stand_in`: ours on a stand-in dataset, "
        "never compared (not a reported cell).",
        "",
    ]
    summary = counts(rep)
    if len(summary):
        lines += [
            "| paper | artifact | within | explained | outside | not run | reported cells | stand-in rows |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.paper} | {r.artifact} | {r.within} | {r.explained} | {r.outside} | {r.not_run} | {r.total} "
            f"| {r.stand_in} |"
            for r in summary.itertuples(index=False)
        ]
        lines.append("")
    lines += [
        "| paper | artifact | dataset | method | setting | metric | paper | ours | n | status | note |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r, d in zip(rep.itertuples(index=False), paper_decimals(rep)):
        p = format_value(r.paper_value, d, spread=r.paper_spread)
        o = format_value(r.ours_value, d, spread=r.ours_spread)
        lines.append(
            f"| {r.paper} | {r.artifact} | {r.dataset} | {r.method} | {r.setting} | {r.metric} | {p} | {o} "
            f"| {r.n_runs} | {r.status} | {r.note} |"
        )
    return "\n".join(lines) + "\n"


def to_html(rep: pd.DataFrame, profile: str) -> str:
    """The report ``rep`` of ``profile`` as one HTML page: a table with one row per cell, coloured by status."""
    colours = {
        "within": "#d8f0d8",
        "explained": "#f8ecd0",
        "outside": "#f8d8d8",
        "not_run": "#eeeeee",
        "stand_in": "#dde8f8",
    }
    rows = []
    for r, d in zip(rep.itertuples(index=False), paper_decimals(rep)):
        cells = [
            r.paper,
            r.artifact,
            r.dataset,
            r.method,
            r.setting,
            r.metric,
            format_value(r.paper_value, d),
            format_value(r.paper_spread, d),
            format_value(r.ours_value, d),
            format_value(r.ours_spread, d),
            r.n_runs,
            r.status,
            r.note,
        ]
        tds = "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
        rows.append(f'<tr style="background:{colours.get(r.status, "#fff")}">{tds}</tr>')
    head = "".join(
        f"<th>{h}</th>"
        for h in [
            "paper",
            "artifact",
            "dataset",
            "method",
            "setting",
            "metric",
            "paper",
            "± paper",
            "ours",
            "± ours",
            "n",
            "status",
            "note",
        ]
    )
    return (
        f"<!doctype html><meta charset='utf-8'><title>dpgnn report ({profile})</title>"
        f"<h1>dpgnn report — profile {html.escape(profile)}</h1>"
        "<p>Tolerance: |ours − paper| ≤ max(floor, 2 × paper spread); floor = 2 points for percentages.</p>"
        f"<table border=1 cellspacing=0 cellpadding=3><tr>{head}</tr>{''.join(rows)}</table>"
    )
