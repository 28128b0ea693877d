"""The report site (dpgnn/site.py, dpgnn/notebook_html.py): pages written, links resolve, numbers at the paper's
precision, misses first, and, in a real headless Chromium, every page loads without console errors, without a
single network request and within :data:`MAX_PAGE_HEIGHT` (a screenshot per page is kept under pytest's tmp dir).

The browser test needs Playwright's Python package and a Chromium binary (``apt-get install -y chromium`` on
Debian; ``DPGNN_CHROMIUM`` overrides the path); without them it is skipped with the reason.
"""

import html
import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import numpy as np
import pandas as pd
import pytest

from dpgnn.report import REPORT_COLUMNS, build_report, format_value
from dpgnn.site import LONG_TABLE, build_site, paper_summary
from dpgnn.utils import ROOT

CHROMIUM = os.environ.get("DPGNN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
#: the tallest a page of the site may be at 1200 px width, its <details> closed (rendered notebooks are as long as
#: the notebook and are not held to it)
MAX_PAGE_HEIGHT = 8000
_WIDGET = "application/vnd.jupyter.widget-view+json"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.links.append(v)


def _is_relative(link: str) -> bool:
    u = urlparse(link)
    return not (u.scheme or u.netloc or link.startswith("#"))


def _target(page: Path, link: str) -> Path:
    return (page.parent / unquote(urlparse(link).path)).resolve()


def _local_links(page: Path) -> list[Path]:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    return [_target(page, link) for link in p.links if _is_relative(link)]


def _executed_like(series: str, name: str, dest: Path, *, widget: bool = False) -> None:
    """A repository notebook copied as if executed (rendering needs no outputs); ``widget`` adds an explorer's
    widget output and the widget state an executed course notebook carries."""
    nb = nbformat.read(ROOT / "notebooks" / series / name, as_version=4)
    if widget:
        code = next(c for c in nb.cells if c.cell_type == "code")
        code.outputs = [
            nbformat.v4.new_output(
                "display_data",
                data={
                    _WIDGET: {"model_id": "abc", "version_major": 2, "version_minor": 0},
                    "text/plain": "HBox(children=(FloatLogSlider(value=1.0),))",
                },
            )
        ]
        nb.metadata["widgets"] = {
            "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2, "version_minor": 0}
        }
    dest.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest / name)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The paper-profile site built from the committed results into a tmp tree (results linked; executed notebooks
    stood in for by the repository's: a paper's with math, one linking docs/papers/, a course notebook with a
    widget output)."""
    tmp = tmp_path_factory.mktemp("site")
    results = tmp / "results" / "paper"
    results.mkdir(parents=True)
    for paper_dir in (ROOT / "results" / "paper").iterdir():
        if paper_dir.is_dir() and paper_dir.name != "site":
            (results / paper_dir.name).symlink_to(paper_dir, target_is_directory=True)
    for name in ("report.csv", "report.md", "report.html"):
        shutil.copy2(ROOT / "results" / "paper" / name, results / name)
    runs = tmp / "papermill_runs" / "paper"
    for series, nb in (("lpgcn", "01_variance.ipynb"), ("lpgcn", "03_node_link_prediction.ipynb")):
        _executed_like(series, nb, runs / series)
    _executed_like("learn", "01_ldp_features.ipynb", runs / "learn", widget=True)
    rep = build_report("paper", root=ROOT / "results", write=False)
    out = build_site(rep, "paper", results_root=tmp / "results", figures_root=ROOT / "figures", runs_root=tmp)
    return out, rep


def test_site_pages_and_links(site):
    out, rep = site
    pages = sorted(out.rglob("*.html"))
    for paper, g in rep.groupby("paper"):
        assert (out / paper / "index.html").exists()
        for art in g["artifact"].unique():
            assert (out / paper / f"{art}.html").exists()
    assert (out / "notebooks" / "lpgcn" / "01_variance.html").exists()
    assert (out / "notebooks" / "learn" / "01_ldp_features.html").exists()
    broken = [(p.relative_to(out), str(t)) for p in pages for t in _local_links(p) if not t.exists()]
    assert not broken, broken[:5]
    index = (out / "index.html").read_text()
    assert "Environment" in index and "torch=" in index and "<svg" in index
    assert 'notebooks/learn/01_ldp_features.ipynb"' in index  # the repository's notebook, which always exists
    assert "notebooks/learn/01_ldp_features.html" not in index  # the rendered one is not in the repository
    # the per-paper chart carries the report's counts
    lpgcn = rep[rep["paper"] == "lpgcn"]["status"].value_counts()
    assert f"<title>within: {lpgcn['within']}</title>" in index
    art = (out / "lpgcn" / "table2.html").read_text()
    assert "figures/paper/lpgcn/table2.png" in art and "result CSV table2.csv" in art
    table3 = (out / "lpgcn" / "table3.html").read_text()
    assert 'notebooks/lpgcn/01_variance.ipynb"' in table3  # the notebook behind Table 3
    assert "device of the stored rows" in index and "rows" in index


def test_the_bench_page_says_what_its_stored_rows_conclude(site):
    from dpgnn.bench import get_profile
    from dpgnn.bench.report import rows, stored_conclusion, which_method

    out, _ = site
    sentence = stored_conclusion(get_profile("bench"), out.parent.parent).strip()
    index, page = (out / "index.html").read_text(), (out / "bench" / "index.html").read_text()
    assert html.escape(sentence) in index and html.escape(sentence) in page and "bench/index.html" in index
    assert "What is still missing, and why" in page and "notebooks/bench/01_which_method.ipynb" in page
    grid = which_method(rows(get_profile("bench"), root=out.parent.parent))
    for budget in grid["budget"].unique():  # a column each, as stored: an LDP grid's ε = 0.01 is not rounded to 0.0
        assert f"<th>{budget:g}</th>" in page
    for _, r in grid.iterrows():  # each (unit, dataset, budget)'s best method, with its score
        assert f"<td>{r['method']} ({r['score']:.1f})</td>" in page


def test_index_says_per_paper_what_is_reproduced(site):
    """Each paper's sentence on the index comes from its report rows, with its counts and the reasons not run."""
    out, rep = site
    index = (out / "index.html").read_text()
    for paper, g in rep.groupby("paper"):
        sentence = paper_summary(g).replace("'", "&#x27;")
        assert sentence in index, paper
        c = g["status"].value_counts()
        ran = int(c.get("within", 0) + c.get("explained", 0) + c.get("outside", 0))
        assert sentence.startswith(f"{int(c.get('within', 0)):,} of {ran:,} cells run within")
    assert ROOT / "docs" / "papers" / "progap.md" in _local_links(out / "index.html")  # the paper's title, linked


def test_paper_summary_in_words_and_numbers():
    rows = pd.DataFrame(
        {
            "status": ["within"] * 3 + ["explained", "outside", "not_run", "not_run", "not_run", "stand_in"],
            "dataset": ["cora"] * 5 + ["reddit", "amazon", "cora", "fb100-x"],
            "note": [""] * 5
            + [
                "dataset not available here ('reddit': raw files missing)",
                "dataset not available here ('amazon': raw files missing)",
                "the paper prints no value for this cell (figure only)",
                "stand-in",
            ],
        }
    )
    assert paper_summary(rows) == (
        "3 of 5 cells run within the paper's tolerance, 1 explained, 1 outside; not run: 3 of 8 reported cells, "
        "2 dataset not available here (amazon, reddit), 1 the paper prints no value for this cell; 1 stand-in rows "
        "(ours on a stand-in graph, never compared)."
    )


def _rows(n: int, status: str, **kw) -> list[dict]:
    base = dict(
        paper="lpgcn",
        artifact="tableX",
        method="gcn",
        metric="accuracy",
        paper_value=61.5,
        paper_spread=0.31,
        ours_value=60.0 + 1 / 7,
        ours_spread=1.0123,
        n_runs=3,
        profile="t",
        status=status,
        tolerance=2.0,
        diff=-1.357,
        approx=False,
        note="",
    )
    return [
        dict(base, dataset=f"d{i}", setting=f"{status} {i}", source=f"Paper, Table X, row gcn, column d{i}", **kw)
        for i in range(n)
    ]


def test_artifact_page_lists_misses_first_and_folds_long_and_not_run_tables(tmp_path):
    rows = (
        _rows(LONG_TABLE + 3, "within")
        + _rows(2, "explained", note="measured: the authors' code gives 60")
        + _rows(1, "outside", ours_value=50.0, diff=-11.5)
        + _rows(4, "not_run", ours_value=np.nan, note="dataset not available here (x)")
    )
    rep = pd.DataFrame(rows, columns=REPORT_COLUMNS)
    site = build_site(
        rep, "t", results_root=tmp_path / "results", figures_root=tmp_path / "figures", runs_root=tmp_path
    )
    page = (site / "lpgcn" / "tableX.html").read_text()
    order = [page.index(h) for h in ("Outside the paper", "Explained: outside", "Within the paper", "Not run (4")]
    assert order == sorted(order)  # outside, then explained, then within, then the cells not run
    assert page.count("measured: the authors&#x27; code gives 60") == 1  # a cause is stated once for its rows
    not_run = page[page.index('<details class="section">') :]
    assert not_run.startswith('<details class="section"><summary>Not run (4 cells: 4 dataset not available here)')
    assert not_run.count('class="not_run"') == 4 and "<details open" not in page
    within = page[page.index("Within the paper") : page.index("Not run (4")]
    assert within.count("<details>") == 1 and f"show the {LONG_TABLE + 3} rows" in within  # a long table folds
    explained = page[page.index("Explained: outside") : page.index("Within the paper")]
    assert "<details>" not in explained  # a short one does not
    # numbers at the paper's precision (61.5 prints one decimal): no 60.142857 or ± 1.0123
    assert "60.1 ± 1.0" in page and "61.5 ± 0.3" in page and "-1.4" in page and "60.14" not in page
    assert "Paper values: Paper, Table X, row gcn;" in page and '<td class="src">column d0</td>' in page


def test_site_numbers_keep_the_papers_precision(site):
    """In an artifact whose paper values print one decimal, no number of ours shows more."""
    out, rep = site
    page = (out / "lpgcn" / "table2.html").read_text()
    cells = re.findall(r'<td class="num">([^<]*)</td>', page)
    assert cells and all(len(x.split(".")[1]) <= 1 for c in cells for x in re.findall(r"\d+\.\d+", c))
    assert format_value(0.07578, None, spread=0.0102) == "0.0758 ± 0.0102"


def test_rendered_notebooks_need_no_network(site):
    """Math is MathML (no MathJax), no script comes from outside, widgets and docs/papers links work offline."""
    out, _ = site
    for page in sorted((out / "notebooks").rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "mathjax" not in text.lower() and "require.js" not in text, page
        assert not re.search(r"<script[^>]*\bsrc=", text), page
        assert not re.search(r"""<(script|link|img|iframe)\b[^>]*\b(src|href)=["']?(https?:)?//""", text), page
    learn = (out / "notebooks" / "learn" / "01_ldp_features.html").read_text()
    assert learn.count("<math") > 10 and "$\\varepsilon" not in learn and "$$" not in learn
    assert "Interactive controls: open <code>notebooks/learn/01_ldp_features.ipynb</code>" in learn
    assert _WIDGET not in learn
    lpgcn = out / "notebooks" / "lpgcn" / "03_node_link_prediction.html"
    docs = [t for t in _local_links(lpgcn) if t.suffix == ".md"]
    assert docs and all(t == ROOT / "docs" / "papers" / "lpgcn.md" for t in docs)


def test_build_report_writes_the_site(tmp_path):
    rep = build_report("test", papers=["lpgcn"], root=tmp_path)
    index = (tmp_path / "test" / "site" / "index.html").read_text()
    assert "lpgcn/index.html" in index
    assert (tmp_path / "test" / "site" / "lpgcn" / f"{rep['artifact'].iloc[0]}.html").exists()


def test_rebuilding_the_site_of_unchanged_results_is_byte_identical(site, tmp_path):
    """No build time and no commit in the pages: a reviewer's rerun of `dpgnn report` leaves `git status` clean."""
    out, rep = site
    before = {p: p.read_bytes() for p in out.rglob("*.html") if "notebooks" not in p.parts}
    tmp = out.parent.parent.parent  # out = <tmp>/results/paper/site
    again = build_site(rep, "paper", results_root=tmp / "results", figures_root=ROOT / "figures", runs_root=tmp)
    assert again == out
    after = {p: p.read_bytes() for p in out.rglob("*.html") if "notebooks" not in p.parts}
    assert after == before
    assert "results computed" in (out / "index.html").read_text()


def test_artifact_page_lists_misses_with_notes(site):
    out, rep = site
    miss = rep[rep["status"].isin(["outside", "explained"])].iloc[0]
    page = (out / miss["paper"] / f"{miss['artifact']}.html").read_text()
    assert "Outside the paper" in page or "Explained: outside" in page
    assert str(miss["note"])[:30].replace("&", "&amp;").replace("<", "&lt;").replace("'", "&#x27;") in page


_STATUS_BACKGROUND = {
    "within": "rgb(238, 248, 234)",
    "outside": "rgb(251, 234, 234)",
    "not_run": "rgb(244, 244, 244)",
    "explained": "rgb(251, 241, 228)",
    "stand_in": "rgb(232, 238, 248)",
}


@pytest.mark.slow
def test_site_in_headless_chromium(site, tmp_path_factory):
    """Every page loads with no console error and no network request at all, every relative link and image
    resolves to a file, each status row has its colour, and each site page is at most MAX_PAGE_HEIGHT px tall."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is not installed (pip install playwright==1.65.2)"
    )
    if not CHROMIUM or not Path(CHROMIUM).exists():
        pytest.skip("no Chromium binary (apt-get install -y chromium, or set DPGNN_CHROMIUM)")
    out, _ = site
    shots = tmp_path_factory.mktemp("screenshots")
    pages = sorted(out.rglob("*.html"))
    problems, network, heights, colours = [], [], {}, {}
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--headless",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-dev-shm-usage",
            ],
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        # a page of the site may load nothing from the network: every such request is recorded and refused
        page.route(
            re.compile(r"^(https?|wss?|ftp)://"), lambda route: (network.append(route.request.url), route.abort())
        )
        page.on(
            "request",
            lambda r: network.append(r.url) if not r.url.startswith(("file:", "data:", "about:", "blob:")) else None,
        )
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: errors.append(f"failed: {r.url}"))
        for p in pages:
            errors.clear()
            resp = page.goto(p.as_uri(), wait_until="load")
            assert resp is None or resp.ok
            assert page.title()
            # every image on the page actually decoded
            broken = page.evaluate(
                "[...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
            )
            errors += [f"image: {b}" for b in broken]
            links = page.evaluate(
                "[...document.querySelectorAll('a[href], img[src]')]"
                ".map(e => e.getAttribute(e.tagName === 'A' ? 'href' : 'src'))"
            )
            errors += [f"link: {u}" for u in links if _is_relative(u) and not _target(p, u).exists()]
            if "notebooks" not in p.relative_to(out).parts:
                heights[str(p.relative_to(out))] = page.evaluate("document.documentElement.scrollHeight")
            for status in _STATUS_BACKGROUND:
                if not colours.get(status):
                    colours[status] = page.evaluate(
                        "s => { const r = document.querySelector('tr.' + s); "
                        "return r && getComputedStyle(r).backgroundColor; }",
                        status,
                    )
            page.screenshot(path=str(shots / (str(p.relative_to(out)).replace(os.sep, "__") + ".png")), full_page=False)
            if errors:
                problems.append((str(p.relative_to(out)), list(errors[:3])))
        browser.close()
    print(f"screenshots: {shots}; tallest page: {max(heights.values())} px")
    assert len(list(shots.glob("*.png"))) == len(pages)
    assert not network, sorted(set(network))[:5]
    assert not problems, problems[:5]
    tall = {k: v for k, v in heights.items() if v > MAX_PAGE_HEIGHT}
    assert not tall, tall
    assert colours == _STATUS_BACKGROUND


def test_paper_index_says_how_much_of_its_grids_is_stored(site):
    """ProGAP's page lists its paper grids; each row adds up, and Table 2's stored cells are among the distinct
    configurations of its stored runs."""
    out, _ = site
    page = (out / "progap" / "index.html").read_text()
    assert "The paper profile's grids" in page and "dpgnn run --profile paper --dry-run" in page
    table = page[page.index("The paper profile's grids") :]
    rows = {
        cells[0]: [float(c) for c in cells[1:]]
        for cells in (re.findall(r"<td>([^<]*)</td>", tr) for tr in re.findall(r"<tr>(.*?)</tr>", table, re.S))
        if cells
    }
    assert {"table2", "fig2", "fig4"} <= set(rows)
    for art, (cells, stored, missing, unavailable, hours) in rows.items():
        assert cells == stored + missing + unavailable, art
        assert (hours > 0) == (missing > 0 and stored > 0), art
    runs = pd.read_csv(ROOT / "results" / "paper" / "progap" / "table2_runs.csv", usecols=["config_hash"])
    assert 0 < rows["table2"][1] <= runs["config_hash"].nunique()
