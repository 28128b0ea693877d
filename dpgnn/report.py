"""Paper-vs-ours report: one row per reported cell of a paper table/figure that we reproduce.

``results/<profile>/report.csv`` columns: ``paper, artifact, dataset, method, setting, metric, paper_value,
paper_spread, ours_value, ours_spread, n_runs, profile, status, tolerance, diff, approx, note, source``.
``status`` is ``within`` when ``|ours - paper| <= max(tolerance floor, 2 * paper_spread)``, ``outside`` otherwise,
and ``not_run`` when we have no result for the cell (the note says why, e.g. the dataset's files are missing).
Our spread uses the paper's convention (``spread_kind`` of the reference row).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from dpgnn.reference import load_reference, papers as reference_papers
from dpgnn.results import ResultStore, results_dir
from dpgnn.utils import output_root

KEY = ["paper", "artifact", "dataset", "method", "setting", "metric"]
REPORT_COLUMNS = KEY + ["paper_value", "paper_spread", "ours_value", "ours_spread", "n_runs", "profile", "status",
                        "tolerance", "diff", "approx", "note", "source"]


def bootstrap_ci_halfwidth(values: Iterable[float], *, n_resamples: int = 1000, seed: int = 12345,
                           level: float = 0.95) -> float:
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


def compare(reference: pd.DataFrame, ours: pd.DataFrame, *, profile: str,
            skipped: pd.DataFrame | None = None) -> pd.DataFrame:
    """Match reference rows with our result rows (same paper/artifact/dataset/method/setting/metric)."""
    groups = {k: g["value"].astype(float).to_numpy() for k, g in ours.groupby(KEY, dropna=False)} if len(ours) else {}
    out = []
    for ref in reference.itertuples(index=False):
        key = tuple(getattr(ref, k) for k in KEY)
        vals = groups.get(key, np.array([]))
        vals = vals[~np.isnan(vals)]
        paper_spread = float(ref.spread) if pd.notna(ref.spread) and str(ref.spread) != "" else float("nan")
        tol = float(ref.tolerance)
        if not np.isnan(paper_spread):
            tol = max(tol, 2 * paper_spread)
        row = dict(zip(KEY, key), paper_value=float(ref.value), paper_spread=paper_spread, profile=profile,
                   tolerance=tol, approx=bool(ref.approx), source=ref.source, note="")
        if vals.size == 0:
            note = ""
            if skipped is not None and len(skipped):
                hit = skipped[(skipped["dataset"] == ref.dataset) & skipped["artifact"].isin([ref.artifact, "*"])]
                if len(hit):
                    note = str(hit["reason"].iloc[-1])
            row.update(ours_value=float("nan"), ours_spread=float("nan"), n_runs=0, status="not_run",
                       diff=float("nan"), note=note or "no result stored for this cell")
        else:
            mean = float(vals.mean())
            diff = mean - float(ref.value)
            row.update(ours_value=mean, ours_spread=spread(vals, ref.spread_kind), n_runs=int(vals.size), diff=diff,
                       status="within" if abs(diff) <= tol + 1e-9 else "outside")
        out.append(row)
    return pd.DataFrame(out, columns=REPORT_COLUMNS)


def paper_vs_ours(paper: str, artifact: str, profile: str, *, root: Path | None = None) -> pd.DataFrame:
    """One artifact's reference cells beside our stored results (what notebooks display last)."""
    store = ResultStore(paper, profile, root=root)
    return compare(load_reference(paper, artifact), store.load(artifact), profile=profile, skipped=store.skipped())


def check_papers(papers: list[str] | None = None) -> list[str]:
    """``papers`` (default: every paper with reference data); a ``ValueError`` naming any without reference data."""
    names = list(papers or reference_papers())
    unknown = sorted(set(names) - set(reference_papers()))
    if unknown:
        raise ValueError(f"no reference data for {unknown}; known papers: {reference_papers()}")
    return names


def build_report(profile: str, papers: list[str] | None = None, *, root: Path | None = None,
                 write: bool = True) -> pd.DataFrame:
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
    """Cells per paper and artifact by status (within / outside / not_run)."""
    if rep.empty:
        return pd.DataFrame(columns=["paper", "artifact", "within", "outside", "not_run", "total"])
    c = rep.groupby(["paper", "artifact", "status"]).size().unstack("status", fill_value=0)
    for s in ("within", "outside", "not_run"):
        if s not in c:
            c[s] = 0
    c = c[["within", "outside", "not_run"]]
    c["total"] = c.sum(axis=1)
    return c.reset_index()


def summarize(rep: pd.DataFrame) -> str:
    """A short text summary per paper (printed by ``dpgnn report``)."""
    if rep.empty:
        return "no reference cells"
    lines = []
    for paper, g in counts(rep).groupby("paper"):
        tot = g[["within", "outside", "not_run"]].sum()
        lines.append(f"{paper}: {tot.within} within, {tot.outside} outside, {tot.not_run} not run "
                     f"(of {int(tot.sum())} reported cells)")
        for r in g.itertuples(index=False):
            lines.append(f"  {r.artifact:<10} within {r.within:>3}  outside {r.outside:>3}  not_run {r.not_run:>3}")
    prof = rep["profile"].iloc[0]
    lines.append(f"written: results/{prof}/report.csv (.md, .html) and the site results/{prof}/site/index.html")
    return "\n".join(lines)


def _fmt(v: float, nd: int = 2) -> str:
    return "" if pd.isna(v) else f"{v:.{nd}f}"


def to_markdown(rep: pd.DataFrame, profile: str) -> str:
    lines = [f"# dpgnn report — profile `{profile}`", "",
             "Tolerance: |ours − paper| ≤ max(floor, 2 × paper spread); floor = 2 points for percentages.", ""]
    summary = counts(rep)
    if len(summary):
        lines += ["| paper | artifact | within | outside | not run |", "|---|---|---|---|---|"]
        lines += [f"| {r.paper} | {r.artifact} | {r.within} | {r.outside} | {r.not_run} |"
                  for r in summary.itertuples(index=False)]
        lines.append("")
    lines += ["| paper | artifact | dataset | method | setting | metric | paper | ours | n | status | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep.itertuples(index=False):
        p = _fmt(r.paper_value, 3) + ("" if pd.isna(r.paper_spread) else f" ± {r.paper_spread:g}")
        o = _fmt(r.ours_value, 3) + ("" if pd.isna(r.ours_spread) else f" ± {r.ours_spread:.2f}")
        lines.append(f"| {r.paper} | {r.artifact} | {r.dataset} | {r.method} | {r.setting} | {r.metric} | {p} | {o} "
                     f"| {r.n_runs} | {r.status} | {r.note} |")
    return "\n".join(lines) + "\n"


def to_html(rep: pd.DataFrame, profile: str) -> str:
    colours = {"within": "#d8f0d8", "outside": "#f8d8d8", "not_run": "#eeeeee"}
    rows = []
    for r in rep.itertuples(index=False):
        cells = [r.paper, r.artifact, r.dataset, r.method, r.setting, r.metric,
                 _fmt(r.paper_value, 3), _fmt(r.paper_spread, 2), _fmt(r.ours_value, 3), _fmt(r.ours_spread, 2),
                 r.n_runs, r.status, r.note]
        tds = "".join(f"<td>{html.escape(str(c))}</td>" for c in cells)
        rows.append(f'<tr style="background:{colours.get(r.status, "#fff")}">{tds}</tr>')
    head = "".join(f"<th>{h}</th>" for h in ["paper", "artifact", "dataset", "method", "setting", "metric", "paper",
                                             "± paper", "ours", "± ours", "n", "status", "note"])
    return (f"<!doctype html><meta charset='utf-8'><title>dpgnn report ({profile})</title>"
            f"<h1>dpgnn report — profile {html.escape(profile)}</h1>"
            "<p>Tolerance: |ours − paper| ≤ max(floor, 2 × paper spread); floor = 2 points for percentages.</p>"
            f"<table border=1 cellspacing=0 cellpadding=3><tr>{head}</tr>{''.join(rows)}</table>")
