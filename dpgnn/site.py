"""The report as a small static site: ``results/<profile>/site/`` (written by :func:`dpgnn.report.build_report`).

Pages (plain HTML + inline SVG charts, no JavaScript, nothing loaded from the network). Every link is relative, and
figures and CSVs are linked where they already are (``figures/``, ``results/``) rather than copied, so the site opens
from disk or from the repository as it is laid out:

- ``index.html``: per paper, what is reproduced in words and numbers (cells within the paper's tolerance, explained,
  outside, not run and why) and as a chart; the course and the cross-paper comparison; the environment (package
  versions, device, date);
- ``bench/index.html``: the benchmark (:mod:`dpgnn.bench.report`, from its stored rows of the profile): what they
  conclude (the README's sentences), its figures, the which-method grid, the cost of private tuning, and what is
  still missing and why; the front page quotes the sentences and links it;
- ``<paper>/index.html``: the paper's artifacts with their counts;
- ``<paper>/<artifact>.html``: our figures (from ``figures/<profile>/<paper>/``), links to the notebooks that draw
  them (the repository's ``notebooks/<paper>/``) and to the result CSV (``results/<profile>/<paper>/``), then the
  paper's values beside ours, misses first: cells outside the tolerance, then those explained (grouped by their
  measured cause), then those within and the stand-in rows; the cells not run are folded in a ``<details>``, as is
  every table longer than :data:`LONG_TABLE` rows, so a page stays short with its details closed;
- ``notebooks/<series>/<notebook>.html``: the executed notebooks rendered to HTML (:mod:`dpgnn.notebook_html`: math
  as MathML, no script from outside), from ``papermill_runs/<profile>/``, only those that ran here; git ignores
  them, so no committed page links to them.

Numbers are rounded by :func:`dpgnn.report.format_value` to the paper's precision. Every committed page follows from
the stored results and the repository alone (the devices come from the rows' ``cell_device``), so rebuilding the site
of unchanged results on a clean checkout leaves ``git status`` clean.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dpgnn.report import format_value, paper_decimals
from dpgnn.utils import ROOT

__all__ = ["LONG_TABLE", "build_site", "grid_section", "paper_summary", "status_chart"]

STATUSES = ("within", "explained", "outside", "not_run", "stand_in")
COLOURS = {
    "within": "#4c9a2a",
    "explained": "#dd8452",
    "outside": "#c44e52",
    "not_run": "#a0a0a0",
    "stand_in": "#4c72b0",
}
#: a table with more rows than this is folded in a ``<details>`` element
LONG_TABLE = 25
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:1.5em auto;padding:0 1em;
color:#222;line-height:1.45}
a{color:#1f5fa8}table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}td.src{color:#555;font-size:12px}
tr.within{background:#eef8ea}tr.outside{background:#fbeaea}tr.not_run{background:#f4f4f4}
tr.explained{background:#fbf1e4}tr.stand_in{background:#e8eef8}
p.cause{border-left:4px solid #dd8452;padding:.2em .7em;margin:.8em 0 .2em;font-size:14px}
p.cause.stand_in{border-color:#4c72b0}p.cause.not_run{border-color:#a0a0a0}
details{margin:.4em 0 .8em}summary{cursor:pointer;color:#1f5fa8}details.section>summary{font-size:1.25em;
font-weight:600;color:#222;margin:.8em 0 .4em}
nav{font-size:13px;margin-bottom:1em}img.figure{max-width:100%;border:1px solid #ddd}
ul.papers li{margin-bottom:.5em}
.legend span{display:inline-block;margin-right:1em;font-size:12px}.muted{color:#666;font-size:13px}
"""


def _e(x: object) -> str:
    return html.escape("" if x is None or (isinstance(x, float) and pd.isna(x)) else str(x))


def _page(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    nav = f'<nav><a href="{up}index.html">dpgnn report</a></nav>' if depth else ""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<meta name='viewport' content='width=device-width,initial-scale=1'><style>{_STYLE}</style></head>"
        f"<body>{nav}<h1>{_e(title)}</h1>{body}</body></html>"
    )


def status_chart(rows: Iterable[tuple[str, int, int, int]], *, width: int = 560) -> str:
    """Inline SVG: one horizontal stacked bar per ``(label, *counts)`` in the order of :data:`STATUSES`
    (within, explained, outside, not_run, stand_in; trailing ones may be left out), counts printed."""
    rows = list(rows)
    total = max([sum(c) for _, *c in rows] + [1])
    bar, label_w, h = width - 170, 160, 22
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h * len(rows) + 24}" role="img" '
        f'aria-label="cells within, outside and not run">'
    ]
    for i, (label, *counts) in enumerate(rows):
        y = i * h
        parts.append(f'<text x="0" y="{y + 15}" font-size="12">{_e(label)}</text>')
        x = float(label_w)
        for status, c in zip(STATUSES, counts):
            if c:
                w = bar * c / total
                parts.append(
                    f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{h - 6}" '
                    f'fill="{COLOURS[status]}"><title>{status}: {c}</title></rect>'
                )
                if w > 18:
                    parts.append(
                        f'<text x="{x + w / 2:.1f}" y="{y + 15}" font-size="11" fill="white" '
                        f'text-anchor="middle">{c}</text>'
                    )
                x += w
    legend_y = h * len(rows) + 16
    for k, status in enumerate(STATUSES):
        parts.append(
            f'<rect x="{label_w + 80 * k}" y="{legend_y - 10}" width="10" height="10" '
            f'fill="{COLOURS[status]}"/><text x="{label_w + 80 * k + 14}" y="{legend_y}" '
            f'font-size="11">{status}</text>'
        )
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
            stamps += [
                t for t in (df["timestamp"].dropna().min(), df["timestamp"].dropna().max()) if isinstance(t, str)
            ]
        if "versions" in df:
            codes |= {v.split(";")[0].removeprefix("dpgnn=") for v in df["versions"].dropna()}
        kinds = (
            df["cell_device"].fillna("not recorded")
            if "cell_device" in df
            else pd.Series("not recorded", index=df.index)
        )
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
    return (
        "<table>"
        f"<tr><th>profile</th><td>{_e(profile)}</td></tr>"
        f"<tr><th>results computed</th><td>{_e(dated)}</td></tr>"
        f"<tr><th>code versions of the rows</th><td>{len(codes)} distinct dpgnn versions/commits (each row's "
        f"<code>versions</code> column names its own)</td></tr>"
        f"<tr><th>libraries here</th><td>{_e(';'.join(libs))}</td></tr>"
        f"<tr><th>device of the stored rows</th><td>{_e(devices_text)}</td></tr></table>"
    )


def _notebook_pages(series: str, profile: str, runs: Path, site: Path) -> dict[str, str]:
    """``{notebook name: site-relative HTML path}`` for the executed notebooks of one series; a page is rendered
    again when its run or the renderer is newer than it."""
    from dpgnn import notebook_html

    renderer_time = Path(notebook_html.__file__).stat().st_mtime
    out = {}
    for nb in sorted((runs / profile / series).glob("*.ipynb")):
        rel = f"notebooks/{series}/{nb.stem}.html"
        dest = site / rel
        fresh = dest.exists() and dest.stat().st_mtime >= max(nb.stat().st_mtime, renderer_time)
        if fresh or notebook_html.render_notebook(nb, dest, repo_notebook=ROOT / "notebooks" / series / nb.name):
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


def _reason(note: object) -> str:
    """The kind of a not-run cell's note: its words before the first ``:`` or `` (``."""
    return str(note).split(":")[0].split(" (")[0].strip()


def _tally(rows: pd.DataFrame) -> dict[str, int]:
    c = rows["status"].value_counts()
    return {s: int(c.get(s, 0)) for s in STATUSES}


def paper_summary(rows: pd.DataFrame) -> str:
    """Report rows (one paper's, one artifact's or all) in words and numbers: the cells we ran within the paper's
    tolerance, explained and outside; the cells not run, by reason (naming the datasets missing here); the stand-in
    rows."""
    n = _tally(rows)
    ran = n["within"] + n["explained"] + n["outside"]
    text = (
        f"{n['within']:,} of {ran:,} cells run within the paper's tolerance, {n['explained']:,} explained, "
        f"{n['outside']:,} outside"
        if ran
        else "no cell run"
    )
    if n["not_run"]:
        missed = rows[rows["status"] == "not_run"]
        parts = []
        for kind, g in sorted(missed.groupby(missed["note"].map(_reason), sort=False), key=lambda kg: -len(kg[1])):
            names = sorted(g["dataset"].astype(str).unique()) if kind.startswith("dataset not available") else []
            parts.append(f"{len(g):,} {kind}" + (f" ({', '.join(names)})" if names else ""))
        text += f"; not run: {n['not_run']:,} of {ran + n['not_run']:,} reported cells, " + ", ".join(parts)
    if n["stand_in"]:
        text += f"; {n['stand_in']:,} stand-in rows (ours on a stand-in graph, never compared)"
    return text + "."


def _source_prefix(sources: pd.Series) -> str:
    """What every source of a table begins with, up to its last ``", "`` (stated once above the tables)."""
    texts = sorted({str(s) for s in sources.dropna()})
    common = os.path.commonprefix(texts) if len(texts) > 1 else ""
    cut = common.rfind(", ")
    return common[: cut + 2] if cut > 0 else ""


def _table(rows: pd.DataFrame, decimals: pd.Series, prefix: str, *, fold: bool = True) -> str:
    """Report rows as a table, numbers at the paper's precision; folded in a ``<details>`` when longer than
    :data:`LONG_TABLE` rows (and ``fold``)."""
    head = ["dataset", "method", "setting", "metric", "paper", "ours", "diff", "n", "source"]
    body = []
    for r, d in zip(rows.itertuples(index=False), decimals.loc[rows.index]):
        src = str(r.source)
        nums = [
            format_value(r.paper_value, d, spread=r.paper_spread),
            format_value(r.ours_value, d, spread=r.ours_spread),
            format_value(r.diff, d, signed=True),
            r.n_runs if r.n_runs else "",
        ]
        body.append(
            f'<tr class="{_e(r.status)}">'
            + "".join(f"<td>{_e(c)}</td>" for c in (r.dataset, r.method, r.setting, r.metric))
            + "".join(f'<td class="num">{_e(c)}</td>' for c in nums)
            + f'<td class="src">{_e(src.removeprefix(prefix))}</td></tr>'
        )
    table = "<table><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" + "".join(body) + "</table>"
    if fold and len(rows) > LONG_TABLE:
        return f"<details><summary>show the {len(rows)} rows</summary>{table}</details>"
    return table


def _grouped(rows: pd.DataFrame, decimals: pd.Series, prefix: str, *, fold: bool = True) -> str:
    """One table per distinct note (a measured cause, a stand-in, a reason not run), the note stated once above it."""
    return "".join(
        f'<p class="cause {_e(g["status"].iloc[0])}">{_e(note)}</p>' + _table(g, decimals, prefix, fold=fold)
        for note, g in rows.groupby("note", sort=False, dropna=False)
    )


def _figures(paper: str, art: str, artifacts: Iterable[str], profile: str, figures_root: Path, here: Path) -> str:
    """Our figures of an artifact: ``<art>.png`` and ``<art>_<part>.png`` (not another artifact's), PDF linked."""
    folder = figures_root / profile / paper
    others = set(artifacts) - {art}
    figs = [
        f
        for f in sorted(folder.glob(f"{art}*.png"))
        if f.stem == art or (f.stem.startswith(f"{art}_") and f.stem not in others)
    ]
    if not figs:
        return f"<p class='muted'>No figure named {_e(art)}.png in figures/{_e(profile)}/{_e(paper)}/.</p>"
    out = ["<h2>Our figure" + ("s" if len(figs) > 1 else "") + "</h2>"]
    for fig in figs:
        pdf = fig.with_suffix(".pdf")
        link = f' · <a href="{_e(_rel(pdf, here))}">PDF</a>' if pdf.exists() else ""
        out.append(
            f'<p><img class="figure" src="{_e(_rel(fig, here))}" alt="{_e(paper)} {_e(fig.stem)}, profile '
            f'{_e(profile)}"><br><span class="muted">{_e(fig.name)}{link}</span></p>'
        )
    return "".join(out)


def _artifact_body(
    paper: str, art: str, rows: pd.DataFrame, decimals: pd.Series, links: list[str], figures: str
) -> str:
    """An artifact page: summary, figures, links, then the cells, misses first and the cells not run folded."""
    n = _tally(rows)
    body = [f"<p>{_e(paper_summary(rows))}</p>", figures, "<p>" + " · ".join(links) + "</p>"]
    prefix = _source_prefix(rows["source"])
    if prefix:
        body.append(
            f"<p class='muted'>Paper values: {_e(prefix.rstrip(', '))}; each row's source column "
            "gives the rest of its citation. Numbers are rounded to the paper's precision.</p>"
        )
    by = {s: rows[rows["status"] == s] for s in STATUSES}
    if n["outside"]:
        body.append(
            f"<h2>Outside the paper's tolerance ({n['outside']})</h2>" + _table(by["outside"], decimals, prefix)
        )
    if n["explained"]:
        body.append(
            f"<h2>Explained: outside the tolerance, with a measured cause ({n['explained']})</h2>"
            + _grouped(by["explained"], decimals, prefix)
        )
    if n["within"]:
        body.append(f"<h2>Within the paper's tolerance ({n['within']})</h2>" + _table(by["within"], decimals, prefix))
    if n["stand_in"]:
        body.append(
            f"<h2>Stand-in rows ({n['stand_in']}): ours on a different graph, never compared</h2>"
            + _grouped(by["stand_in"], decimals, prefix)
        )
    if n["not_run"]:
        kinds = by["not_run"]["note"].map(_reason).value_counts(sort=False)
        body.append(
            f'<details class="section"><summary>Not run ({n["not_run"]} cells: '
            + _e(", ".join(f"{c} {k}" for k, c in kinds.items()))
            + ")</summary>"
            + _grouped(by["not_run"], decimals, prefix, fold=False)
            + "</details>"
        )
    return "".join(body)


def _write_paper(
    paper: str,
    prep: pd.DataFrame,
    decimals: pd.Series,
    *,
    site: Path,
    results: Path,
    profile: str,
    figures_root: Path,
    grids: pd.DataFrame,
) -> None:
    """``<paper>/index.html`` (with how much of the paper's grids is computed, ``grids``) and one page per
    artifact."""
    arts = list(dict.fromkeys(prep["artifact"]))
    ac = _counts(prep, ["artifact"])
    nb_of = _artifact_notebooks(paper, arts)
    csv_of = _artifact_csvs(results, paper)
    here = site / paper
    here.mkdir(exist_ok=True)
    items = "".join(
        f'<li><a href="{_e(a)}.html">{_e(a)}</a>: {_e(paper_summary(prep[prep["artifact"] == a]))}</li>' for a in arts
    )
    lines = [
        f"<p>{_e(paper_summary(prep))}</p>",
        status_chart([(a, *map(int, ac.loc[ac["artifact"] == a, list(STATUSES)].iloc[0])) for a in arts]),
        f"<ul class='papers'>{items}</ul>",
        grid_section(grids, profile),
    ]
    (here / "index.html").write_text(_page(f"{paper}: paper vs ours", "".join(lines), 1), "utf-8")
    for art in arts:
        links = [
            f'<a href="{_e(_rel(ROOT / "notebooks" / paper / nb, here))}">notebook {_e(nb)}</a>'
            for nb in nb_of.get(art, [])
        ]
        csv = csv_of.get(art)
        links.append(
            f'<a href="{_e(_rel(csv, here))}">result CSV {_e(csv.name)}</a>'
            if csv is not None
            else "no result CSV stored"
        )
        figures = _figures(paper, art, arts, profile, figures_root, here)
        body = _artifact_body(paper, art, prep[prep["artifact"] == art], decimals, links, figures)
        (here / f"{art}.html").write_text(_page(f"{paper} · {art}", body, 1), "utf-8")


def _grids(papers: list[str], profile: str, results_root: Path) -> pd.DataFrame:
    """:func:`dpgnn.engine.coverage` of the papers among ``papers`` with grids in this profile (an empty frame if
    none)."""
    from dpgnn import engine, series

    with_grids = [p for p in papers if p in engine.grid_papers() and profile in series.get(p).profiles]
    if not with_grids:
        return pd.DataFrame(columns=["paper", "artifact", "cells", "stored", "missing", "unavailable", "est_seconds"])
    return engine.coverage(with_grids, profile=profile, root=results_root)


def grid_section(grids: pd.DataFrame, profile: str) -> str:
    """How much of a paper's grids of this profile is stored (``grids``: rows of :func:`dpgnn.engine.coverage`),
    a table row per artifact; the cells of datasets not on this machine are counted apart."""
    if not len(grids):
        return ""
    table = pd.DataFrame(
        {
            "artifact": grids["artifact"],
            "cells in the grid": grids["cells"],
            "stored": grids["stored"],
            "to compute": grids["missing"],
            "dataset not here": grids["unavailable"],
            "est. CPU hours to compute": (grids["est_seconds"].fillna(0) / 3600).round(1),
        }
    )
    return (
        f"<h2>The {_e(profile)} profile's grids</h2><p>Cells stored and still to compute per artifact, as "
        f"<code>dpgnn run --profile {_e(profile)} --dry-run</code> prints them (<code>dpgnn run</code> resumes "
        "them; the estimate is the stored cells' mean time). A run that two artifacts share is computed once and "
        "counted in each row.</p>" + table.to_html(index=False, border=0)
    )


def _course_series() -> list:
    """The notebook series that are not papers (shown in their own sections): the registry's ``course`` kind."""
    from dpgnn import series

    return series.all_series("course")


def _paper_title(paper: str, site: Path) -> str:
    """The paper's title (:attr:`dpgnn.series.Series.title`), linked to its page under ``docs/``, or ``""``."""
    from dpgnn import series

    known = {s.name: s for s in series.all_series()}.get(paper)
    if known is None or not known.docs or not (ROOT / known.docs).exists():
        return ""
    return f' — <a href="{_e(_rel(ROOT / known.docs, site))}">{_e(known.title)}</a>'


def _bench_section(profile: str, site: Path, figures_root: Path, results_root: Path) -> str:
    """The benchmark's section of the front page (what its stored rows of this profile conclude: the README's
    sentences, :func:`dpgnn.bench.report.stored_conclusion`), linking its page ``bench/index.html``: the same
    sentences, its figures, the which-method grid, the cost of private tuning and what is still missing."""
    from dpgnn import series
    from dpgnn.bench import report

    bench = series.get("bench")
    if profile not in bench.profiles:
        return ""
    cfg = bench.profiles[profile]
    text = _e(report.stored_conclusion(cfg, results_root).strip())
    page = site / "bench" / "index.html"
    items = [f'<li><a href="{_e(_rel(nb, page.parent))}">{_e(nb.stem)}</a></li>' for nb in _notebooks(bench)]
    body = [f"<p>{text} Protocol: <a href='{_e(_rel(ROOT / bench.docs, page.parent))}'>docs/bench.md</a>.</p>"]
    body.append(f"<h2>Notebooks</h2><ul>{''.join(items)}</ul>")
    for name in ("accuracy_vs_epsilon", "which_method"):
        fig = figures_root / profile / bench.name / f"{name}.png"
        if fig.exists():
            body.append(f'<p><img class="figure" src="{_e(_rel(fig, page.parent))}" alt="{_e(name)}"></p>')
    df = report.rows(cfg, root=results_root)
    best = report.which_method(df)
    cost = report.private_cost(df).groupby(["unit", "method", "epsilon"], as_index=False)["cost"].mean()
    # per unit, a row per dataset (per method for the costs) and a column per budget of the unit's grid: the page
    # stays a few screens tall however many cells the profile stores (the notebook has the long tables)
    sections = {
        "Which method at which ε (private tuning; test accuracy %)": [
            (unit, report.by_budget(g, "dataset", "budget", lambda r: f"{r['method']} ({r['score']:.1f})"))
            for unit, g in best.groupby("unit", sort=False)
        ],
        "What the private search costs (points; mean over the datasets with both tunings)": [
            (unit, report.by_budget(g, "method", "epsilon", lambda r: f"{r['cost']:+.1f}"))
            for unit, g in cost.groupby("unit", sort=False)
        ],
        "What is still missing, and why": [(None, report.missing(cfg, results_root))],
    }
    for title, tables in sections.items():
        body.append(f"<h2>{_e(title)}</h2>")
        for unit, table in tables:
            shown = table.to_html(index=False, float_format="%.1f", border=0) if len(table) else "<p>none</p>"
            body.append((f"<h3>{_e(unit)}</h3>" if unit else "") + shown)
        if not tables:
            body.append("<p>none</p>")
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(_page(f"dpgnn bench — profile {profile}", "".join(body), 1), "utf-8")
    return f"<h2>{_e(bench.title)}</h2><p>{text} <a href='bench/index.html'>The benchmark's page</a>.</p>"


def _notebooks(s) -> list[Path]:
    """The notebooks of series record ``s``, in name order."""
    return sorted((ROOT / s.notebooks).glob("*.ipynb"))


def _index_body(
    rep: pd.DataFrame, papers: list[str], profile: str, site: Path, figures_root: Path, results_root: Path
) -> str:
    """The site's front page: what is reproduced per paper, the course and comparison, the environment."""
    index = [
        "<p>Every reported cell of the papers' tables and figures that we reproduce, compared with our results "
        "in the <b>" + _e(profile) + "</b> profile. A cell is <i>within</i> when |ours − paper| ≤ max(floor, "
        "2 × the paper's spread) (floor: 2 points for percentages), <i>explained</i> when outside with a measured "
        "cause in the note, <i>outside</i> otherwise, <i>not_run</i> when we have no result (the note says why); "
        "<i>stand_in</i> rows are ours on a stand-in dataset, never compared. Numbers are rounded to the "
        "paper's precision.</p>",
        '<p>Whole report: <a href="../report.csv">report.csv</a> · <a href="../report.html">one-table '
        'HTML</a> · <a href="../report.md">Markdown</a></p>',
        "<h2>What is reproduced</h2>",
    ]
    if len(rep):
        index.append(f"<p><b>All papers:</b> {_e(paper_summary(rep))}</p>")
    pc = _counts(rep, ["paper"]) if len(rep) else pd.DataFrame(columns=["paper", *STATUSES])
    index.append(status_chart([(p, *map(int, pc.loc[pc["paper"] == p, list(STATUSES)].iloc[0])) for p in papers]))
    index.append(
        "<ul class='papers'>"
        + "".join(
            f'<li><a href="{_e(p)}/index.html"><b>{_e(p)}</b></a>{_paper_title(p, site)}: '
            f"{_e(paper_summary(rep[rep['paper'] == p]))}</li>"
            for p in papers
        )
        + "</ul>"
    )
    index.append("<h2>Course and comparison</h2>")
    for course in _course_series():
        series, title = course.name, course.title
        sources = sorted((ROOT / course.notebooks).glob("*.ipynb"))
        items = [f'<li><a href="{_e(_rel(nb, site))}">{_e(nb.stem)}</a></li>' for nb in sources]
        for name in ("accuracy_vs_epsilon", "best_method") if series == "compare" else ():
            fig = figures_root / profile / series / f"{name}.png"
            if fig.exists():
                items.append(f'<li><img class="figure" src="{_e(_rel(fig, site))}" alt="{_e(name)}"></li>')
        index.append(f"<h3>{_e(title)}</h3><ul>{''.join(items)}</ul>")
    index.append(_bench_section(profile, site, figures_root, results_root))
    index.append(
        "<p class='muted'>Notebook links open the notebooks of the repository. The executed notebooks of "
        "this profile, where they ran here, are rendered to <code>notebooks/&lt;series&gt;/</code> beside "
        "these pages (not part of the repository: they come from <code>papermill_runs/</code>, which git "
        "ignores).</p>"
    )
    index.append("<h2>Environment</h2>" + _environment(profile, results_root))
    return "".join(index)


def build_site(
    rep: pd.DataFrame,
    profile: str,
    *,
    results_root: Path,
    figures_root: Path | None = None,
    runs_root: Path | None = None,
) -> Path:
    """Write ``<results_root>/<profile>/site/`` from the report rows ``rep``; returns the site folder.

    ``figures_root`` defaults to ``<results_root>/../figures`` and ``runs_root`` to ``<results_root>/..``
    (which holds ``papermill_runs/``). Missing figures, CSVs or executed notebooks are stated on the page.
    """
    results_root = Path(results_root)
    figures_root = Path(figures_root or results_root.parent / "figures")
    runs = Path(runs_root or results_root.parent) / "papermill_runs"
    site = results_root / profile / "site"
    site.mkdir(parents=True, exist_ok=True)
    papers = list(dict.fromkeys(rep["paper"])) if len(rep) else []
    decimals = paper_decimals(rep)
    grids = _grids(papers, profile, results_root)
    for paper in papers:
        _notebook_pages(paper, profile, runs, site)
        _write_paper(
            paper,
            rep[rep["paper"] == paper],
            decimals,
            site=site,
            results=results_root / profile,
            profile=profile,
            figures_root=figures_root,
            grids=grids[grids["paper"] == paper],
        )
    for name in [c.name for c in _course_series()] + ["bench"]:
        _notebook_pages(name, profile, runs, site)
    body = _index_body(rep, papers, profile, site, figures_root, results_root)
    (site / "index.html").write_text(_page(f"dpgnn report — profile {profile}", body, 0), "utf-8")
    return site
