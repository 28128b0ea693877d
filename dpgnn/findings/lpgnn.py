"""LPGNN findings from the committed paper profile (``results/paper/lpgnn/``): the points beyond the report's band,
how far a 10-run mean moves with the seed (:func:`dpgnn.series.lpgnn.seed_spread`), and how many misses sampling
alone predicts (:func:`dpgnn.series.lpgnn.sampling_check`). Accuracies are in % as in the paper."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpgnn.findings import Finding, md_table, missing, num, pct, report, span, status_counts, store
from dpgnn.utils import ROOT

__all__ = ["seed_spread", "beyond_band", "low_budget", "sampling", "status", "BLOCKS"]

_SEEDS_CMD = "dpgnn run lpgnn --profile paper --artifact seeds"


def seed_spread(root: Path = ROOT) -> pd.DataFrame:
    """The paper profile's seed spread, one row per point (:func:`dpgnn.series.lpgnn.seed_spread`)."""
    from dpgnn.profiles import settings
    from dpgnn.series import lpgnn

    return lpgnn.seed_spread(settings("lpgnn", "paper"), store("lpgnn", root))


def _point(r) -> str:
    return f"{r.artifact}/{r.dataset}/{r.method}/{r.setting}"


def beyond_band(artifacts: str | list[str], root: Path = ROOT) -> Finding:
    """Per dataset, the status counts of ``artifacts`` in the paper profile; then a table of every point beyond the
    band or in the seed spread: the paper's value, the band, ours (± CI of the 10 repeats), and the seed spread
    (every seed's 10-run mean, the pooled mean over all runs with the standard error of a 10-run mean, z and
    ``p within``)."""
    artifacts = [artifacts] if isinstance(artifacts, str) else list(artifacts)
    rep = report("lpgnn", root)
    rep = rep[rep["artifact"].isin(artifacts)]
    if rep.empty:
        return missing(f"the paper profile's report rows of {', '.join(artifacts)}", "dpgnn report --profile paper")
    spread = seed_spread(root).set_index("point")
    rep = rep.assign(point=[_point(r) for r in rep.itertuples(index=False)])
    shown = rep[rep["status"].isin(["outside", "explained"]) | rep["point"].isin(spread.index)]
    rows = []
    for r in shown.itertuples(index=False):
        s = spread.loc[r.point] if r.point in spread.index else None
        rows.append(
            {
                "point": r.point,
                "paper": num(r.paper_value, 1) + ("" if pd.isna(r.paper_spread) else f" ± {num(r.paper_spread, 1)}"),
                "band": f"±{num(r.tolerance, 1)}",
                "ours": f"{num(r.ours_value, 1)} ± {num(r.ours_spread, 1)}",
                "diff": f"{r.diff:+.1f}",
                "status": r.status,
                "seeds' means": "—" if s is None else f"{span([s['mean min'], s['mean max']], 1)} ({s['seeds']})",
                "pooled (se)": "—" if s is None else f"{num(s['pooled'], 1)} ({num(s['se'], 1)})",
                "z": "—" if s is None else f"{s['z']:+.1f}",
                "p within": "—" if s is None else pct(s["p within"]),
            }
        )
    text = f"Paper profile, {' / '.join(artifacts)}: {status_counts(rep)}."
    if rows:
        text += "\n\n" + md_table(pd.DataFrame(rows))
    return Finding(text)


def low_budget(root: Path = ROOT) -> Finding:
    """The seed-spread points at ε_x ≤ 0.1: how far above the paper their pooled means sit."""
    spread = seed_spread(root)
    if spread.empty:
        return missing("the seed spread", _SEEDS_CMD)
    eps_x = spread["point"].str.extract(r"eps_x=([0-9.]+|inf)")[0].astype(float)
    low = spread[eps_x <= 0.1]
    gap = low["pooled"] - low["paper"]
    side = "above" if (gap > 0).all() else ("below" if (gap < 0).all() else "on both sides of")
    return Finding(
        f"The {len(low)} seed-spread points at ε_x ≤ 0.1 have pooled means "
        f"{span(gap.abs(), 1)} points {side} the paper."
    )


def sampling(root: Path = ROOT) -> Finding:
    """Per dataset: the points beyond the band, and how many sampling two 10-run means alone predicts."""
    from dpgnn.series import lpgnn

    table = lpgnn.sampling_check(store("lpgnn", root))
    if table.empty:
        return missing("the paper profile's LPGNN rows", "dpgnn reproduce lpgnn --profile paper")
    expected = "; ".join(
        f"{num(r['expected by sampling'], 1)} of {r['dataset']}'s {int(r['points'])} points"
        for _, r in table.iterrows()
    )
    observed = " and ".join(str(int(v)) for v in table["beyond the band"])
    return Finding(f"Expected beyond the band by sampling alone: {expected}; observed: {observed}.")


def status(root: Path = ROOT) -> Finding:
    """The paper profile's status counts per dataset, the sampling check and the seed-spread criterion in one
    paragraph."""
    rep = report("lpgnn", root)
    if rep.empty:
        return missing("the paper profile's report", "dpgnn report --profile paper")
    spread = seed_spread(root)
    beyond = spread[spread["status"].isin(["outside", "explained"])]
    far = spread[spread["z"].abs() > 2]
    lines = [f"- Reported cells run: {status_counts(rep)}.", f"- {sampling(root)}"]
    if len(spread):
        lines.append(
            f"- Seed spread ({int(spread['seeds'].max())} seeds per point): the {len(beyond)} points beyond "
            f"the band have `p within` {span(beyond['p within'] * 100, 0)} %; "
            f"{int((beyond['p within'] >= 0.05).sum())} of them meet the 5 % criterion."
        )
        lines.append(
            "- Pooled mean more than 2 standard errors from the paper: "
            + (", ".join(f"{r.point} (z {r.z:+.1f}, {r.status})" for r in far.itertuples(index=False)) or "none")
            + "."
        )
        lines.append(f"- {low_budget(root)}")
    return Finding("\n".join(lines))


def _spread_table(root: Path) -> str:
    spread = seed_spread(root)
    if spread.empty:
        return str(missing("the seed spread", _SEEDS_CMD))
    rows = [
        {
            "point": r["point"],
            "paper": num(r["paper"], 1),
            "band": f"±{num(r['tolerance'], 1)}",
            "ours (profile seed)": num(r["ours"], 1),
            "seeds' 10-run means": f"{span([r['mean min'], r['mean max']], 1)} ({r['seeds']})",
            "pooled (se)": f"{num(r['pooled'], 1)} ({num(r['se'], 1)})",
            "z": f"{r['z']:+.1f}",
            "p within": pct(r["p within"]),
        }
        for _, r in spread.iterrows()
    ]
    return md_table(pd.DataFrame(rows))


#: the docs blocks of ``docs/papers/lpgnn.md``
BLOCKS = {
    "lpgnn_status": lambda root: str(status(root)) + "\n",
    "lpgnn_seed_spread": lambda root: _spread_table(root) + "\n",
}
