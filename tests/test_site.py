"""The report site (dpgnn/site.py): pages written, links resolve, and, in a real headless Chromium, every page loads
without console errors (a screenshot per page is kept under pytest's tmp dir).

The browser test needs Playwright's Python package and a Chromium binary (``apt-get install -y chromium`` on
Debian; ``DPGNN_CHROMIUM`` overrides the path); without them it is skipped with the reason.
"""

import os
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pandas as pd
import pytest

from dpgnn.report import build_report
from dpgnn.site import build_site
from dpgnn.utils import ROOT

CHROMIUM = os.environ.get("DPGNN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("href", "src") and v:
                self.links.append(v)


def _local_links(page: Path) -> list[Path]:
    p = _Links()
    p.feed(page.read_text(encoding="utf-8"))
    out = []
    for link in p.links:
        u = urlparse(link)
        if u.scheme or link.startswith("#") or link.startswith("data:"):
            continue
        out.append((page.parent / unquote(u.path)).resolve())
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The paper-profile site built from the committed results into a tmp tree (results linked, one executed
    notebook per kind: a paper's and a course notebook, copied unexecuted -- rendering does not need outputs)."""
    tmp = tmp_path_factory.mktemp("site")
    results = tmp / "results" / "paper"
    results.mkdir(parents=True)
    for paper_dir in (ROOT / "results" / "paper").iterdir():
        if paper_dir.is_dir() and paper_dir.name != "site":
            (results / paper_dir.name).symlink_to(paper_dir, target_is_directory=True)
    for name in ("report.csv", "report.md", "report.html"):
        shutil.copy2(ROOT / "results" / "paper" / name, results / name)
    runs = tmp / "papermill_runs" / "paper"
    for series, nb in (("lpgcn", "01_variance.ipynb"), ("learn", "01_ldp_features.ipynb")):
        (runs / series).mkdir(parents=True)
        shutil.copy2(ROOT / "notebooks" / series / nb, runs / series / nb)
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
    broken = [(p.relative_to(out), str(t)) for p in pages if "notebooks" not in p.parts for t in _local_links(p)
              if not t.exists()]
    assert not broken, broken[:5]
    index = (out / "index.html").read_text()
    assert "Environment" in index and "torch=" in index and "<svg" in index
    assert 'notebooks/learn/01_ldp_features.ipynb"' in index  # the repository's notebook, which always exists
    assert "notebooks/learn/01_ldp_features.html" not in index  # the rendered one is not in the repository
    # the per-paper chart carries the report's counts
    lpgcn = rep[rep["paper"] == "lpgcn"]["status"].value_counts()
    assert f"<title>within: {lpgcn['within']}</title>" in index
    art = (out / "lpgcn" / "table2.html").read_text()
    assert "figures/paper/lpgcn/table2.png" in art and "result CSV table2.csv" in art and "Paper beside ours" in art
    table3 = (out / "lpgcn" / "table3.html").read_text()
    assert 'notebooks/lpgcn/01_variance.ipynb"' in table3  # the notebook behind Table 3
    assert "device of the stored rows" in index and "rows" in index


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
    miss = rep[rep["status"] != "within"].iloc[0]
    page = (out / miss["paper"] / f"{miss['artifact']}.html").read_text()
    assert "Misses and their explanation" in page
    assert str(miss["note"])[:30].replace("&", "&amp;").replace("<", "&lt;") in page or not miss["note"]


@pytest.mark.slow
def test_site_in_headless_chromium(site, tmp_path_factory):
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed "
                                   "(pip install playwright==1.65.2)")
    if not CHROMIUM or not Path(CHROMIUM).exists():
        pytest.skip("no Chromium binary (apt-get install -y chromium, or set DPGNN_CHROMIUM)")
    out, _ = site
    shots = tmp_path_factory.mktemp("screenshots")
    pages = sorted(out.rglob("*.html"))
    problems = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking", "--no-first-run",
            "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        # rendered notebooks load MathJax from its CDN; there is no network here, so answer with an empty script
        page.route(re.compile(r"^https?://"), lambda route: route.fulfill(status=200, body="",
                                                                          content_type="application/javascript"))
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
            broken = page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                                   ".map(i => i.src)")
            errors += [f"image: {b}" for b in broken]
            page.screenshot(path=str(shots / (str(p.relative_to(out)).replace(os.sep, "__") + ".png")),
                            full_page=False)
            if errors:
                problems.append((str(p.relative_to(out)), list(errors[:3])))
        browser.close()
    print(f"screenshots: {shots}")
    assert len(list(shots.glob("*.png"))) == len(pages)
    assert not problems, problems[:5]
