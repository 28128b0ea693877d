"""LPGCN findings from the committed paper profile: the report's counts per artifact (``results/paper/report.csv``)."""

from __future__ import annotations

from pathlib import Path

from dpgnn.findings import Finding, missing, report, status_counts
from dpgnn.utils import ROOT

__all__ = ["BLOCKS", "summary"]


def summary(root: Path = ROOT) -> Finding:
    """Per artifact, the reported cells run and their status in the paper profile."""
    rep = report("lpgcn", root)
    if rep.empty:
        return missing("the paper profile's report", "dpgnn report --profile paper")
    run = rep[rep["status"] != "not_run"]
    datasets = ", ".join(sorted(run["dataset"].unique()))
    return Finding(f"Reported cells run ({datasets}): {status_counts(rep, by='artifact')}.")


#: the docs block of ``docs/papers/lpgcn.md``
BLOCKS = {"lpgcn_summary": lambda root: str(summary(root)) + "\n"}
