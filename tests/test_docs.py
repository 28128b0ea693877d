"""Our reproduction documentation (docs/papers/) is what code, notebooks and tests cite.

* No tracked source cites the external reproduction notes by section number any more (they are not in this
  repository); every such citation points to a heading of a page under ``docs/papers/`` instead.
* Every ``docs/papers/<page>.md#<anchor>`` cited anywhere in the repository, and every relative link between the
  docs pages, resolves to an existing page and heading (GitHub's heading slugs).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "docs" / "papers"
SOURCE_ROOTS = ("dpgnn", "notebooks", "tests", "benchmarks", "scripts", "docs", "README.md", "CONTRIBUTING.md")

# "spec N.M", "Spec N.M", "spec §N.M", "specs N.M / N.P", "spec section N.M", "spec (N.M)" with N, M digits (the
# rewrite tool's forms); the pattern is written in two pieces so that this file does not match itself
OLD_CITATION = re.compile(r"\b[Ss]pe" r"cs?(?:\s+sections?)?\s+\(?§?\s?\d")
CITED = re.compile(r"docs/papers/([A-Za-z0-9_-]+)\.md(?:#([A-Za-z0-9_-]+))?")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^(```|~~~)")


def github_slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped (letters, digits, ``_``, ``-`` and
    spaces kept), spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = text.lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """All heading anchors of a markdown page, with GitHub's ``-1``, ``-2`` suffixes for repeated headings."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    in_fence = False
    for line in markdown.splitlines():
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        m = HEADING.match(line)
        if in_fence or not m:
            continue
        slug = github_slug(m.group(2))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _tracked(*paths: str) -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths],
            check=True,
            capture_output=True,
        ).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file under the paths
        names = [
            str(p.relative_to(ROOT))
            for r in paths
            for p in ([ROOT / r] if (ROOT / r).is_file() else (ROOT / r).rglob("*"))
            if p.is_file()
        ]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def _text(path: Path) -> str | None:
    if path.stat().st_size > 20_000_000:
        return None
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    if path.suffix == ".ipynb":  # cell sources only (outputs may quote anything)
        cells = json.loads(raw).get("cells", [])
        return "\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells)
    return raw


def test_slug_matches_github():
    assert github_slug("Drop, training and model selection") == "drop-training-and-model-selection"
    assert github_slug("Hyper-parameters and grids") == "hyper-parameters-and-grids"
    assert github_slug("`KProp` (feature propagation)") == "kprop-feature-propagation"
    assert github_slug("What the authors' code does") == "what-the-authors-code-does"
    assert anchors("# A\n## Open questions\n```\n# not a heading\n```\n## Open questions\n") == {
        "a",
        "open-questions",
        "open-questions-1",
    }


def test_every_paper_has_a_page_listed_in_the_index():
    from dpgnn import series

    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in [Path(s.docs).stem for s in series.all_series("paper")] + ["cross-paper"]:
        assert (PAPERS / f"{page}.md").is_file(), page
        assert f"papers/{page}.md" in index, f"docs/README.md does not list papers/{page}.md"


def test_no_citation_of_the_external_notes_by_section_number():
    hits = []
    for path in _tracked(*SOURCE_ROOTS):
        text = _text(path)
        if text is None:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            if OLD_CITATION.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()[:120]}")
    assert not hits, (
        "cite docs/papers/<paper>.md#<anchor> instead (run the rewrite tool, see docs/README.md):\n" + "\n".join(hits)
    )


def test_every_cited_docs_anchor_exists():
    page_anchors = {p.stem: anchors(p.read_text(encoding="utf-8")) for p in PAPERS.glob("*.md")}
    missing = []
    for path in _tracked("."):
        if path.suffix in {".png", ".pdf", ".pt", ".npz", ".npy", ".gz", ".zip", ".jpg"}:
            continue
        text = _text(path)
        if text is None or "docs/papers/" not in text:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for page, anchor in CITED.findall(line):
                if page not in page_anchors:
                    missing.append(f"{path.relative_to(ROOT)}:{lineno}: no page docs/papers/{page}.md")
                elif anchor and anchor not in page_anchors[page]:
                    missing.append(f"{path.relative_to(ROOT)}:{lineno}: no heading #{anchor} in docs/papers/{page}.md")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("page", sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")))
def test_relative_links_between_docs_pages_resolve(page):
    path = ROOT / "docs" / page
    bad = []
    for target in MD_LINK.findall(path.read_text(encoding="utf-8")):
        file, _, anchor = target.partition("#")
        if re.match(r"^[a-z]+:", target) or (file and not file.endswith(".md")):  # web links, figures, results
            continue
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: {dest} does not exist")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not bad, f"{path.relative_to(ROOT)}:\n" + "\n".join(bad)
