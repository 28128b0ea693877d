"""ProGAP findings from the committed paper profile (``results/paper/progap/``): the official code's edge-level
calibration beside ours, and what it does to accuracy on the ``fb100-wisconsin87`` stand-in."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpgnn.fidelity import Fidelity
from dpgnn.findings import Finding, md_table, missing, num, report, span, store
from dpgnn.utils import ROOT

__all__ = ["BLOCKS", "calibration", "fidelity_comparison", "fidelity_shift", "summary"]


def fidelity_comparison(root: Path = ROOT) -> pd.DataFrame:
    """:func:`dpgnn.series.progap.fidelity_comparison` on the paper profile's stored Table 2 runs."""
    from dpgnn.series import progap

    return progap.fidelity_comparison(store("progap", root))


def _mean(cell: str) -> float | None:
    return float(cell.split("±")[0]) if isinstance(cell, str) and "±" in cell else None


def fidelity_shift(root: Path = ROOT, depth: int = 3) -> Finding:
    """How far ours sits above the official code at depth ``depth``: with the paper's σ (measured side by side)
    and with the official σ (``fidelity="authors_code"``, the stored runs)."""
    table = fidelity_comparison(root)
    row = table.loc[depth]
    official = _mean(row["official code (measured)"])
    paper_sigma = _mean(row["ours, paper σ (measured)"])
    authors = _mean(row[f"ours, fidelity={Fidelity.AUTHORS_CODE} (stored)"])
    if official is None or paper_sigma is None or authors is None:
        return missing(
            f"ProGAP's edge-level runs at K = {depth} with the official calibration",
            f"dpgnn run progap --profile paper --set fidelity={Fidelity.AUTHORS_CODE}",
        )
    return Finding(
        f"At K = {depth} ours sits {num(paper_sigma - official, 1)} points above the official code with "
        f"the paper's σ and {num(authors - official, 1)} with the official σ "
        f"({int(row[f'runs {Fidelity.AUTHORS_CODE}'])} stored runs)."
    )


def calibration(root: Path = ROOT) -> Finding:
    """The edge-level σ of both calibrations at ε = 1, δ = 1e-7 (pure computation) and the noise they differ by."""
    from dpgnn.series import progap

    t = progap.calibration_fidelities(depths=(1, 2, 3), epsilon=1.0, delta=1e-7)
    ratio = t["noise ratio"]
    return Finding(
        "At ε = 1, δ = 1e-7 the official code's σ (autodp's RDP composition) is "
        f"{' / '.join(num(v, 3) for v in t['sigma_authors_code (autodp RDP)'])} for K = "
        f"{' / '.join(str(k) for k in t['K'])}, ours (exact Gaussian composition) "
        f"{' / '.join(num(v, 3) for v in t['sigma_paper (exact)'])}: ours adds "
        f"{span(100 * (1 - 1 / ratio), 0)} % less noise for the same ε."
    )


def summary(root: Path = ROOT) -> Finding:
    """The paper profile's report counts for ProGAP, the calibration and fidelity findings and the fidelity table
    (:func:`fidelity_comparison`), for the docs."""
    rep = report("progap", root)
    if rep.empty:
        return missing("the paper profile's report", "dpgnn report --profile paper")
    counts = rep["status"].value_counts()
    calib = rep[rep["artifact"] == "calibration"]
    within = int((calib["status"] == "within").sum())
    return Finding(
        f"σ calibration: {within}/{len(calib)} reference values within half a unit of their 3rd "
        f"significant digit; {int(counts.get('stand_in', 0))} stand-in rows (Facebook100 universities, "
        f"never compared with FB-100). {calibration(root)} {fidelity_shift(root)}\n\n"
        + md_table(fidelity_comparison(root), index=True)
    )


#: the docs blocks of ``docs/papers/progap.md``
BLOCKS = {"progap_summary": lambda root: str(summary(root)) + "\n"}
