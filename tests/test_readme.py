"""The README a newcomer reads first: short, the quick start on the first screen, its numbers generated
(:mod:`dpgnn.readme`) from the stored report and measurements, its links alive."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from dpgnn.readme import all_blocks, pages, refresh, series_block, timings_block

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_short_with_the_quick_start_first():
    assert len(README) <= 10_000, f"README.md has {len(README):,} characters (at most 10,000)"
    assert README.index("## Quick start") < 1_500  # on the first screen, before any table
    assert "bash scripts/smoke.sh" in README and "bash scripts/test.sh" in README


def test_generated_blocks_are_current():
    """Stale after a report or a measurement changed: run `python -m dpgnn.readme`."""
    assert refresh(README) == README, "README.md's generated blocks are stale: run python -m dpgnn.readme"
    for name in ("series", "timings", "bench"):
        assert f"<!-- begin {name} -->" in README


@pytest.mark.parametrize("page", [p for p in pages() if p != "README.md"])
def test_docs_findings_are_current(page):
    """A docs page's findings of the paper profile are generated: stale after the stored rows, the report or
    ``explanations.csv`` changed (run `python -m dpgnn.readme`)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "<!-- begin " in text, f"{page} has no generated block"
    assert refresh(text) == text, f"{page}'s generated blocks are stale: run python -m dpgnn.readme"


def test_every_block_is_on_a_page():
    used = set()
    for page in pages():
        used |= set(re.findall(r"<!-- begin ([a-z_]+) -->", (ROOT / page).read_text(encoding="utf-8")))
    assert set(all_blocks()) <= used, f"blocks no page shows: {sorted(set(all_blocks()) - used)}"


def test_refresh_rejects_an_unknown_block():
    with pytest.raises(ValueError, match="unknown generated block"):
        refresh("<!-- begin nonsense -->\nx\n<!-- end nonsense -->\n")


def test_relative_links_resolve():
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", README)
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert not missing, missing


def test_series_block_counts_the_report(tmp_path):
    (tmp_path / "results" / "paper").mkdir(parents=True)
    (tmp_path / "docs" / "papers").mkdir(parents=True)
    (tmp_path / "docs" / "papers" / "lpgcn.md").write_text("# LPGCN: a page\n\ntext\n")
    rows = [("lpgcn", "within")] * 3 + [("lpgcn", "not_run"), ("progap", "outside"), ("progap", "stand_in")]
    pd.DataFrame(rows, columns=["paper", "status"]).to_csv(tmp_path / "results" / "paper" / "report.csv", index=False)
    block = series_block(tmp_path)
    title = 'LPGCN: "When Differential Privacy Meets Graph Neural Networks"'  # the registry's title
    assert f"| `lpgcn` | [{title}](docs/papers/lpgcn.md) | 3 / 0 / 0 / 1 (of 4) |" in block
    assert "| `progap` | progap | 0 / 0 / 1 / 0 (of 1), plus 1 stand-in rows |" in block  # no page: the name
    assert "Of the 4 reported cells we ran, 3 (75 %) agree" in block


def test_timings_block_quotes_the_newest_successful_run(tmp_path):
    assert "not measured yet" in timings_block(tmp_path)
    (tmp_path / "benchmarks" / "results").mkdir(parents=True)
    pd.DataFrame(
        [
            {
                "date": "2026-01-01T10:00:00",
                "command": "bash scripts/smoke.sh",
                "seconds": 500.0,
                "status": 0,
                "commit": "a",
                "machine": "2 cores",
                "note": "set-up included",
            },
            {
                "date": "2026-01-02T10:00:00",
                "command": "bash scripts/smoke.sh",
                "seconds": 400.0,
                "status": 0,
                "commit": "b",
                "machine": "2 cores",
                "note": "set-up included",
            },
            {
                "date": "2026-01-03T10:00:00",
                "command": "bash scripts/smoke.sh",
                "seconds": 9.0,
                "status": 1,
                "commit": "c",
                "machine": "2 cores",
                "note": "",
            },
        ]
    ).to_csv(tmp_path / "benchmarks" / "results" / "quickstart.csv", index=False)
    text = timings_block(tmp_path)
    assert "`bash scripts/smoke.sh` 6 min 40 s (set-up included)" in text and "2026-01-02" in text
