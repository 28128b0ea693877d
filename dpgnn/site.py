"""The report as a small static site: ``results/<profile>/site/`` (written by :func:`dpgnn.report.build_report`).

Pages (plain HTML + inline SVG charts, no JavaScript of its own). Every link is relative, and figures and CSVs are
linked where they already are (``figures/``, ``results/``) rather than copied, so the site opens from disk or from
the repository as it is laid out:

- ``index.html``: one summary per paper (within / outside / not_run counts as a chart), the course and the
  cross-paper comparison, the environment (package versions, device, date);
- ``<paper>/index.html``: the paper's artifacts with their counts;
- ``<paper>/<artifact>.html``: our figure (from ``figures/<profile>/<paper>/``), the paper's values beside ours, the
  misses (``outside`` / ``not_run``) with their notes, links to the notebooks that draw it (the repository's
  ``notebooks/<paper>/``) and to the result CSV (``results/<profile>/<paper>/``);
- ``notebooks/<series>/<notebook>.html``: the executed notebooks rendered to HTML (nbconvert, from
  ``papermill_runs/<profile>/``, only those that ran here; git ignores them, so no committed page links to them).

Every committed page follows from the stored results and the repository alone (the devices come from the rows'
``cell_device``), so rebuilding the site of unchanged results on a clean checkout leaves ``git status`` clean.

Rendered notebooks load MathJax from its CDN for the LaTeX in their markdown (the only external resource); the
pages of the site itself load nothing from outside.
"""

from __future__ import annotations

import datetime as _dt
import html
import os
from pathlib import Path
from typing import Iterable

import pandas as pd

from dpgnn.utils import ROOT

__all__ = ["build_site", "status_chart", "COURSE_SERIES"]

STATUSES = ("within", "explained", "outside", "not_run", "stand_in")
COLOURS = {"within": "#4c9a2a", "explained": "#dd8452", "outside": "#c44e52", "not_run": "#a0a0a0",
           "stand_in": "#4c72b0"}
#: notebook series that are not papers (shown in their own sections)
COURSE_SERIES = ("learn", "compare")
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:1.5em auto;padding:0 1em;
color:#222;line-height:1.45}
a{color:#1f5fa8}table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f3f3f3}
tr.within{background:#eef8ea}tr.outside{background:#fbeaea}tr.not_run{background:#f4f4f4}"
          "tr.explained{background:#fbf1e4}tr.stand_in{background:#e8eef8}
nav{font-size:13px;margin-bottom:1em}img.figure{max-width:100%;border:1px solid #ddd}
.legend span{display:inline-block;margin-right:1em;font-size:12px}.muted{color:#666;font-size:13px}
"""


def _e(x: object) -> str:
    return html.escape("" if x is None or (isinstance(x, float) and pd.isna(x)) else str(x))


def _page(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    nav = f'<nav><a href="{up}index.html">dpgnn report</a></nav>' if depth else ""
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<meta name='viewport' content='width=device-width,initial-scale=1'><style>{_STYLE}</style></head>"
            f"<body>{nav}<h1>{_e(title)}</h1>{body}</body></html>")


def status_chart(rows: Iterable[tuple[str, int, int, int]], *, width: int = 560) -> str:
    """Inline SVG: one horizontal stacked bar per ``(label, *counts)`` in the order of :data:`STATUSES`
    (within, explained, outside, not_run, stand_in; trailing ones may be left out), counts printed."""
    rows = list(rows)
    total = max([sum(c) for _, *c in rows] + [1])
    bar, label_w, h = width - 170, 160, 22
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h * len(rows) + 24}" role="img" '
             f'aria-label="cells within, outside and not run">']
    for i, (label, *counts) in enumerate(rows):
        y = i * h
        parts.append(f'<text x="0" y="{y + 15}" font-size="12">{_e(label)}</text>')
        x = float(label_w)
        for status, c in zip(STATUSES, counts):
            if c:
                w = bar * c / total
                parts.append(f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{h - 6}" '
                             f'fill="{COLOURS[status]}"><title>{status}: {c}</title></rect>')
                if w > 18:
                    parts.append(f'<text x="{x + w / 2:.1f}" y="{y + 15}" font-size="11" fill="white" '
                                 f'text-anchor="middle">{c}</text>')
                x += w
    legend_y = h * len(rows) + 16
    for k, status in enumerate(STATUSES):
        parts.append(f'<rect x="{label_w + 80 * k}" y="{legend_y - 10}" width="10" height="10" '
                     f'fill="{COLOURS[status]}"/><text x="{label_w + 80 * k + 14}" y="{legend_y}" '
                     f'font-size="11">{status}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rel(target: Path, start: Path) -> str:
    """A relative link (``/`` separated) from the folder ``start`` to ``target``."""
    return Path(os.path.relpath(target, start)).as_posix()


def _counts(rep: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    c = rep.groupby(by + ["status"]).size().unstack("status", fill_value=0)
    for s in STATUSES:
        if s not in c:
            c[s] = 0
    return c[list(STATUSES)].reset_index()


def _environment(profile: str, results: Path) -> str:
    """The environment table. Everything in it follows from the stored results and the installed libraries (no
    build time, no commit of the code that drew the site), so rebuilding the site of unchanged results leaves its
    files byte-identical."""
    import importlib.metadata as md

    stamps, codes, devices = [], set(), {}
    for path in sorted((results / profile).glob("*/*.csv*")):
        if path.name.startswith(("skipped", "report")) or not path.name.endswith((".csv", ".csv.gz")):
            continue
        try:
            df = pd.read_csv(path, usecols=lambda c: c in ("timestamp", "versions", "cell_device"), dtype=str)
        except (ValueError, OSError):
            continue
        if "timestamp" in df:
            stamps += [t for t in (df["timestamp"].dropna().min(), df["timestamp"].dropna().max()) if isinstance(t, str)]
        if "versions" in df:
            codes |= {v.split(";")[0].removeprefix("dpgnn=") for v in df["versions"].dropna()}
        kinds = df["cell_device"].fillna("not recorded") if "cell_device" in df else pd.Series("not recorded",
                                                                                               index=df.index)
        for kind, n in kinds.value_counts().items():
            devices[kind] = devices.get(kind, 0) + int(n)
    devices_text = ", ".join(f"{k}: {n:,} rows" for k, n in sorted(devices.items())) or "no result rows"
    dated = f"{min(stamps)} to {max(stamps)}" if stamps else "no result rows"
    libs = []
    for pkg in ("torch", "torch-geometric", "opacus", "autodp", "dp-accounting"):
        try:
            libs.append(f"{pkg}={md.version(pkg)}")
        except md.PackageNotFoundError:
            libs.append(f"{pkg}=?")
    return ("<table>"
            f"<tr><th>profile</th><td>{_e(profile)}</td></tr>"
            f"<tr><th>results computed</th><td>{_e(dated)}</td></tr>"
            f"<tr><th>code versions of the rows</th><td>{len(codes)} distinct dpgnn versions/commits (each row's "
            f"<code>versions</code> column names its own)</td></tr>"
            f"<tr><th>libraries here</th><td>{_e(';'.join(libs))}</td></tr>"
            f"<tr><th>device of the stored rows</th><td>{_e(devices_text)}</td></tr></table>")


def _render_notebook(src: Path, dest: Path) -> bool:
    """Executed notebook -> HTML (nbconvert's lab template, no require.js); skipped when up to date."""
    if dest.exists() and dest.stat().st_mtime >= src.stat().st_mtime:
        return True
    import nbformat
    from nbconvert import HTMLExporter

    try:
        nb = nbformat.read(src, as_version=4)
    except Exception:  # an unreadable (e.g. killed mid-write) run is listed without a link
        return False
    exporter = HTMLExporter(template_name="lab")
    exporter.require_js_url = ""
    body, _ = exporter.from_notebook_node(nb)
    body = body.replace('<script src=""></script>', "")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return True


def _notebook_pages(series: str, profile: str, runs: Path, site: Path) -> dict[str, str]:
    """``{notebook name: site-relative HTML path}`` for the executed notebooks of one series."""
    out = {}
    for nb in sorted((runs / profile / series).glob("*.ipynb")):
        rel = f"notebooks/{series}/{nb.stem}.html"
        if _render_notebook(nb, site / rel):
            out[nb.name] = rel
    return out


def _artifact_notebooks(paper: str, artifacts: Iterable[str]) -> dict[str, list[str]]:
    """Which notebooks of ``notebooks/<paper>/`` produce each artifact (its name quoted in a code cell)."""
    import nbformat

    found: dict[str, list[str]] = {a: [] for a in artifacts}
    for nb in sorted((ROOT / "notebooks" / paper).glob("*.ipynb")):
        code = "\n".join(c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == "code")
        for a in found:
            if f'"{a}"' in code or f"'{a}'" in code:
                found[a].append(nb.name)
    return found


def _artifact_csvs(results: Path, paper: str) -> dict[str, Path]:
    """``{artifact: the result CSV holding its rows}`` (an artifact may live in a differently named file)."""
    out: dict[str, Path] = {}
    for csv in sorted((results / paper).glob("*.csv")):
        if csv.name == "skipped.csv":
            continue
        try:
            arts = pd.read_csv(csv, usecols=["artifact"])["artifact"].dropna().unique()
        except (ValueError, KeyError):
            continue
        for a in arts:
            out.setdefault(str(a), csv)
    return out


def _ours_table(rows: pd.DataFrame) -> str:
    head = ["dataset", "method", "setting", "metric", "paper", "ours", "diff", "n", "status", "note", "source"]
    body = []
    for r in rows.itertuples(index=False):
        paper = "" if pd.isna(r.paper_value) else f"{r.paper_value:.4g}" + (
            "" if pd.isna(r.paper_spread) else f" ± {r.paper_spread:.3g}")
        ours = "" if pd.isna(r.ours_value) else f"{r.ours_value:.4g}" + (
            "" if pd.isna(r.ours_spread) else f" ± {r.ours_spread:.3g}")
        diff = "" if pd.isna(r.diff) else f"{r.diff:+.3g}"
        cells = [r.dataset, r.method, r.setting, r.metric, paper, ours, diff, r.n_runs, r.status, r.note, r.source]
        body.append(f'<tr class="{_e(r.status)}">' + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    return "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(body) + "</table>"


def build_site(rep: pd.DataFrame, profile: str, *, results_root: Path, figures_root: Path | None = None,
               runs_root: Path | None = None) -> Path:
    """Write ``<results_root>/<profile>/site/`` from the report rows ``rep``; returns the site folder.

    ``figures_root`` defaults to ``<results_root>/../figures`` and ``runs_root`` to ``<results_root>/..``
    (which holds ``papermill_runs/``). Missing figures, CSVs or executed notebooks are stated on the page.
    """
    results_root = Path(results_root)
    figures_root = Path(figures_root or results_root.parent / "figures")
    runs = Path(runs_root or results_root.parent) / "papermill_runs"
    site = results_root / profile / "site"
    site.mkdir(parents=True, exist_ok=True)
    results = results_root / profile
    papers = list(dict.fromkeys(rep["paper"])) if len(rep) else []

    index = ["<p>Every reported cell of the papers' tables and figures that we reproduce, compared with our results "
             "in the <b>" + _e(profile) + "</b> profile. A cell is <i>within</i> when |ours − paper| ≤ max(floor, "
             "2 × the paper's spread) (floor: 2 points for percentages), <i>explained</i> when outside with a measured "
             "cause in the note, <i>outside</i> otherwise, <i>not_run</i> when we have no result (the note says why); "
             "<i>stand_in</i> rows are ours on a stand-in dataset, never compared.</p>",
             f'<p>Whole report: <a href="../report.csv">report.csv</a> · <a href="../report.html">one-table '
             f'HTML</a> · <a href="../report.md">Markdown</a></p>', "<h2>Papers</h2>"]
    pc = _counts(rep, ["paper"]) if len(rep) else pd.DataFrame(columns=["paper", *STATUSES])
    index.append(status_chart([(p, *map(int, pc.loc[pc["paper"] == p, list(STATUSES)].iloc[0])) for p in papers]))
    index.append("<ul>" + "".join(f'<li><a href="{_e(p)}/index.html">{_e(p)}</a></li>' for p in papers) + "</ul>")

    for paper in papers:
        prep = rep[rep["paper"] == paper]
        arts = list(dict.fromkeys(prep["artifact"]))
        ac = _counts(prep, ["artifact"])
        _notebook_pages(paper, profile, runs, site)
        nb_of = _artifact_notebooks(paper, arts)
        csv_of = _artifact_csvs(results, paper)
        (site / paper).mkdir(exist_ok=True)
        lines = [status_chart([(a, *map(int, ac.loc[ac["artifact"] == a, list(STATUSES)].iloc[0])) for a in arts]),
                 "<ul>" + "".join(f'<li><a href="{_e(a)}.html">{_e(a)}</a></li>' for a in arts) + "</ul>"]
        (site / paper / "index.html").write_text(_page(f"{paper}: paper vs ours", "".join(lines), 1), "utf-8")
        for art in arts:
            rows = prep[prep["artifact"] == art]
            body = []
            fig = figures_root / profile / paper / f"{art}.png"
            if fig.exists():
                body.append(f'<h2>Our figure</h2><img class="figure" src="{_e(_rel(fig, site / paper))}" '
                            f'alt="{_e(paper)} {_e(art)}, profile {_e(profile)}"> <a href="'
                            f'{_e(_rel(fig.with_suffix(".pdf"), site / paper))}">PDF</a>')
            else:
                body.append(f"<p class='muted'>No figure named {_e(art)}.png in figures/{_e(profile)}/"
                            f"{_e(paper)}/.</p>")
            links = [f'<a href="{_e(_rel(ROOT / "notebooks" / paper / nb, site / paper))}">notebook {_e(nb)}</a>'
                     for nb in nb_of.get(art, [])]
            csv = csv_of.get(art)
            if csv is not None:
                links.append(f'<a href="{_e(_rel(csv, site / paper))}">result CSV {_e(csv.name)}</a>')
            else:
                links.append("no result CSV stored")
            body.append("<p>" + " · ".join(links) + "</p>")
            c = rows["status"].value_counts()
            body.append(f"<p>{int(c.get('within', 0))} within, {int(c.get('explained', 0))} explained, "
                        f"{int(c.get('outside', 0))} outside, {int(c.get('not_run', 0))} not run (of "
                        f"{len(rows) - int(c.get('stand_in', 0))} reported cells); {int(c.get('stand_in', 0))} "
                        f"stand-in rows.</p>")
            misses = rows[~rows["status"].isin(["within", "stand_in"])]
            if len(misses):
                body.append("<h2>Misses and their explanation</h2>" + _ours_table(misses))
            body.append("<h2>Paper beside ours</h2>" + _ours_table(rows))
            (site / paper / f"{art}.html").write_text(_page(f"{paper} · {art}", "".join(body), 1), "utf-8")

    index.append("<h2>Course and comparison</h2>")
    for series, title in (("learn", "Course: DP-GNNs one concept at a time"),
                          ("compare", "Cross-paper comparison")):
        _notebook_pages(series, profile, runs, site)
        sources = sorted((ROOT / "notebooks" / series).glob("*.ipynb"))
        items = [f'<li><a href="{_e(_rel(nb, site))}">{_e(nb.stem)}</a></li>' for nb in sources]
        for name in ("accuracy_vs_epsilon", "best_method") if series == "compare" else ():
            fig = figures_root / profile / series / f"{name}.png"
            if fig.exists():
                items.append(f'<li><img class="figure" src="{_e(_rel(fig, site))}" alt="{_e(name)}"></li>')
        index.append(f"<h3>{_e(title)}</h3><ul>{''.join(items)}</ul>")
    index.append("<p class='muted'>Notebook links open the notebooks of the repository. The executed notebooks of "
                 "this profile, where they ran here, are rendered to <code>notebooks/&lt;series&gt;/</code> beside "
                 "these pages (not part of the repository: they come from <code>papermill_runs/</code>, which git "
                 "ignores).</p>")
    index.append("<h2>Environment</h2>" + _environment(profile, results_root))
    (site / "index.html").write_text(_page(f"dpgnn report — profile {profile}", "".join(index), 0), "utf-8")
    return site
