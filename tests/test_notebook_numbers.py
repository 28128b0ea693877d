"""Numbers about our results in a notebook's prose are printed by its code, never typed.

A typed finding ("ours 0.71 against the paper's 0.74") drifts as soon as the stored results change, so the
markdown cells of every notebook under ``notebooks/`` may hold no typed number except a constant cited from the paper.
Our numbers come from code cells that read stored results through the package (``dpgnn.findings``, the series'
``side_by_side``/``paper_vs_ours``), or the prose says the finding in words.

What counts as a typed number (:func:`typed_numbers`):

- a decimal: ``0.71``, ``.5``, ``12.25`` (a version such as ``2.13.0`` is not one);
- a percentage, with or without a decimal point: ``18 %``, ``12.3%``.

What is left out:

- LaTeX math (``$…$``, ``$$…$$``), code spans and fenced code, link targets (``](…)``) and HTML comments. Math is
  for formulas, settings and definitions (``$\\lambda = 0.4$``, ``$e^{0.5}/(e^{0.5}+6)$``), code for configuration
  values and identifiers (```lr=0.01```); neither is a place for results;
- section numbers: a number right after ``Sec.``, ``Section``, ``§``, ``Table``, ``Fig.``, ``Eq.``, ``App.``,
  ``Theorem``, ``arXiv`` and the like, or in a list after one (``Sec. 5.5``, ``Theorems 4.1, 4.2``);
- paper constants: a value listed for its notebook in ``notebooks/paper_constants.csv``, columns ``notebook``
  (the path under ``notebooks/``, e.g. ``privgnn/04_authors_code.ipynb``), ``value`` (as typed, spaces dropped:
  ``0.31``, ``18%``) and ``source`` (where the paper states it, naming its table, figure, section, equation,
  appendix or algorithm: "Table 6", "Sec. 6.1"). A listed value is allowed everywhere in that notebook's markdown,
  so list only values the paper prints; a row whose value no longer appears in its notebook fails the test, so the
  list cannot outgrow the notebooks.

``python tests/test_notebook_numbers.py`` prints every typed number left, with its notebook, cell and context.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CONSTANTS = NOTEBOOKS / "paper_constants.csv"

#: spans whose numbers are not prose: fenced code, math, code spans, link targets, HTML comments (in this order,
#: so that a ``$`` inside a code span or a backtick inside math does not open anything)
_SKIP = [
    re.compile(p, re.S)
    for p in (
        r"```.*?```|~~~.*?~~~",
        r"<!--.*?-->",
        r"`[^`\n]*`",
        r"\$\$.*?\$\$",
        r"(?<!\\)\$[^$\n]+?(?<!\\)\$",
        r"\]\([^)\s]*\)",
    )
]
#: a decimal or a percentage; not part of a longer dotted token (a version, a file name) or of a word
_NUMBER = re.compile(r"(?<![\w.])(?:\d+\.\d+|\.\d+|\d+(?=\s?%))(?:\s?%)?(?![\w%]|\.\d)")
#: a number right after one of these words is a section, table or figure number of the paper
_SECTION = re.compile(
    r"(?:Sec|Sect|Section|§|Table|Tab|Fig|Figure|Eq|Equation|App|Appendix|Theorem|Thm|Lemma|"
    r"Corollary|Definition|Def|Prop|Proposition|Algorithm|Alg|Remark|Example|arXiv)s?\.?\s*~?"
    r"(?:[A-Z]?[1-9]\d*(?:\.\d+)?\s*(?:,|and|–)\s*)*$"
)
#: what a section number looks like (never a percentage, never below 1)
_SECTION_NUMBER = re.compile(r"[1-9]\d*(?:\.\d+)*")
#: a source must name where in the paper the value is printed
_CITATION = re.compile(
    r"\b(?:Sec\.|Sections?|§|Tables?|Tab\.|Figs?\.|Figures?|Eqs?\.|Equations?|App\.|Appendix|"
    r"Algorithms?|Theorems?|Lemmas?|Definitions?)\s*(?:[A-Z]?\d|[A-Z]\b)"
)


def prose(markdown: str) -> str:
    """``markdown`` with math, code, link targets and comments blanked out (same length, so offsets still hold)."""
    for pattern in _SKIP:
        markdown = pattern.sub(lambda m: " " * len(m.group(0)), markdown)
    return markdown


def typed_numbers(markdown: str) -> list[tuple[str, str]]:
    """The typed numbers of one markdown text as ``(value, context)``: value with spaces dropped (``18%``)."""
    text = prose(markdown)
    out = []
    for m in _NUMBER.finditer(text):
        if _SECTION_NUMBER.fullmatch(m.group(0)) and _SECTION.search(text[max(0, m.start() - 40) : m.start()]):
            continue
        context = " ".join(markdown[max(0, m.start() - 50) : m.end() + 30].split())
        out.append((m.group(0).replace(" ", ""), context))
    return out


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*/*.ipynb"))


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        (i, "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
    ]


def constants(path: Path = CONSTANTS) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def unmarked(path: Path, allowed: set[tuple[str, str]]) -> list[tuple[int, str, str]]:
    """``(cell, value, context)`` of every typed number of ``path`` that is not a listed paper constant."""
    name = path.relative_to(NOTEBOOKS).as_posix()
    return [
        (i, value, ctx)
        for i, md in markdown_cells(path)
        for value, ctx in typed_numbers(md)
        if (name, value) not in allowed
    ]


def _allowed() -> set[tuple[str, str]]:
    return {(r["notebook"], r["value"].replace(" ", "")) for r in constants()}


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_no_typed_number_in_notebook_prose(path: Path):
    left = unmarked(path, _allowed())
    assert not left, (
        f"{len(left)} typed number(s) in the markdown of {path.relative_to(ROOT)}: print them from "
        "stored results in a code cell, say the finding in words, or list a paper constant in "
        "notebooks/paper_constants.csv\n" + "\n".join(f"  cell {i}: {v}  …{c}…" for i, v, c in left)
    )


def test_paper_constants_cite_the_paper_and_are_used():
    rows = constants()
    assert rows and list(rows[0]) == ["notebook", "value", "source"]
    typed = {
        p.relative_to(NOTEBOOKS).as_posix(): {v for _, md in markdown_cells(p) for v, _ in typed_numbers(md)}
        for p in notebooks()
    }
    bad = [r for r in rows if not _CITATION.search(r["source"])]
    assert not bad, f"a paper constant's source must name the paper's table, figure or section: {bad[:5]}"
    stale = [r for r in rows if r["value"].replace(" ", "") not in typed.get(r["notebook"], set())]
    assert not stale, f"paper constants no longer typed in their notebook (remove the rows): {stale[:5]}"
    seen = [(r["notebook"], r["value"]) for r in rows]
    assert len(seen) == len(set(seen)), "a (notebook, value) pair is listed twice"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ours 0.71 vs the paper's .74, 18 % and 12.3%", ["0.71", ".74", "18%", "12.3%"]),
        (
            "Sec. 5.5, Table 2.1, App. D.5, Theorems 4.1, 4.2, arXiv 2006.05535, torch 2.13.0, v1.2, 1e-5, `lam=0.4`, "
            "$\\epsilon = 0.5$",
            [],
        ),
        ("$$\\sigma = 1.2$$ and a [link](docs/a.md#sec-4.2) and <!-- 0.3 --> but 3.5 points", ["3.5"]),
        ("(Table 5, 0.71 against 0.74)", ["0.71", "0.74"]),
        ("```\nx = 0.5\n```\nends with 0.25.", ["0.25"]),
    ],
)
def test_what_counts_as_a_typed_number(text, expected):
    assert [v for v, _ in typed_numbers(text)] == expected


def main() -> int:
    allowed, total = _allowed(), 0
    for path in notebooks():
        left = unmarked(path, allowed)
        total += len(left)
        for i, v, ctx in left:
            print(f"{path.relative_to(NOTEBOOKS)}  cell {i}: {v}  …{ctx}…")
    print(f"{total} typed number(s) in notebook prose", file=sys.stderr)
    return int(bool(total))


if __name__ == "__main__":
    raise SystemExit(main())
