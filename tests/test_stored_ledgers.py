"""Every committed paper-profile row carries the guarantee fields: ``check_ledger`` on each ledger."""

import csv
import gzip
import io
from pathlib import Path

import pytest

from dpgnn.privacy.guarantee import check_ledger

ROOT = Path(__file__).resolve().parents[1] / "results" / "paper"
#: files that are not result rows, so have no ledger by design: the paper-vs-ours report and the skip lists
NO_LEDGER = {"report.csv", "skipped.csv"}
FILES = sorted(p for p in ROOT.rglob("*") if p.name.endswith((".csv", ".csv.gz")))


def _rows(path: Path) -> list[dict[str, str]]:
    text = gzip.open(path, "rt", newline="").read() if path.suffix == ".gz" else path.read_text()
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_the_paper_results_are_there():
    assert len(FILES) > 20
    assert any(p.name == "grid.csv.gz" for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_stored_row_has_a_valid_ledger(path):
    rows = _rows(path)
    if path.name in NO_LEDGER:
        assert not rows or "ledger" not in rows[0]
        return
    assert rows, f"{path} is empty"
    assert "ledger" in rows[0], f"{path} has no ledger column"
    for text in {r["ledger"] for r in rows}:  # many rows share a ledger: check each distinct one once
        try:
            check_ledger(text)
        except ValueError as e:
            raise AssertionError(f"{path}: {e}") from None
