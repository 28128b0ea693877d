"""How far an LPGNN 10-run mean moves with the seed: reported points retrained with more seeds
(:func:`run_seeds`, :func:`seed_spread`) and the spread expected from sampling alone (:func:`sampling_check`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

from dpgnn.report import paper_vs_ours
from dpgnn.results import ResultStore
from dpgnn.series.lpgnn.cells import _entries, run_cell
from dpgnn.series.lpgnn.profiles import ARTIFACTS, PAPER, LPGNNProfile
from dpgnn.sweep import check_train, run_grid
from dpgnn.utils import config_hash, resolve_device


def parse_point(point: str) -> tuple[str, str, str, str]:
    """``"artifact/dataset/method/setting"`` (a reported point, as in the report) as a tuple; ``ValueError`` names
    what is wrong."""
    parts = str(point).split("/")
    if len(parts) != 4 or not all(parts):
        raise ValueError(
            f"a seed point is 'artifact/dataset/method/setting', e.g. 'fig_a/cora/sage/eps_x=1,eps_y=1'; got {point!r}"
        )
    if parts[0] not in ARTIFACTS:
        raise ValueError(f"seed point {point!r}: unknown artifact {parts[0]!r}; valid: {list(ARTIFACTS)}")
    return parts[0], parts[1], parts[2], parts[3]


def point_cell(cfg: LPGNNProfile, point: str) -> dict[str, Any]:
    """The training cell behind one reported point (with the profile's seed)."""
    artifact, dataset, method, sett = parse_point(point)
    for cell, m, s in _entries(cfg, artifact, dataset):
        if m == method and s == sett:
            return cell
    valid = sorted({f"{m} {s}" for _, m, s in _entries(cfg, artifact, dataset)})
    raise ValueError(f"seed point {point!r} is not a point of {artifact} in this profile; its points: {valid}")


def seed_cells(cfg: LPGNNProfile) -> list[dict[str, Any]]:
    """The cells of ``cfg.seed_points`` with each seed of ``cfg.extra_seeds`` in place of the profile's seed (a
    point shared by two artifacts, e.g. Fig. E's K_y = 8 and Table F's Drop, is one cell)."""
    seeds = [int(s) for s in cfg.extra_seeds]
    if int(cfg.seed) in seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"extra_seeds must be distinct and exclude the profile's seed {cfg.seed}; got {seeds}")
    out, seen = [], set()
    for point in cfg.seed_points:
        base = point_cell(cfg, point)
        for s in seeds:
            cell = {**base, "seed": s}
            h = config_hash(cell)
            if h not in seen:
                seen.add(h)
                out.append(cell)
    return out


def run_seeds(
    cfg: LPGNNProfile, store: ResultStore, *, device: str = "auto", force: bool = False, train: bool = True
) -> pd.DataFrame:
    """Train the missing cells of :func:`seed_cells` (resumable, artifact ``seeds``; ``train=False``: none) and
    return :func:`seed_spread`. A point is shown once its own artifact's rows are stored."""
    check_train(force, train)
    cells = seed_cells(cfg)
    if train and cells:
        run_grid(
            store,
            "seeds",
            cells,
            functools.partial(run_cell, cfg, device=device),
            desc="LPGNN seed spread",
            force=force,
            device=str(resolve_device(device)),
        )
    return seed_spread(cfg, store)


def _share_within(mean: float, se: float, paper: float, tol: float) -> float:
    """P(|M − paper| <= tol) for M ~ N(mean, se²)."""
    if not se > 0:
        return float(abs(mean - paper) <= tol)
    return float(stats.norm.cdf((paper + tol - mean) / se) - stats.norm.cdf((paper - tol - mean) / se))


def seed_spread(cfg: LPGNNProfile, store: ResultStore) -> pd.DataFrame:
    """Per point of ``cfg.seed_points``: the paper's value, the report's tolerance and status, ours (the profile's
    seed), and the ``repeats``-run means of every seed trained (:func:`seed_cells`, artifact ``seeds``; count,
    min, max, share within the tolerance of the paper's value); ``pooled``: the mean over all their runs, ``se``:
    the standard error of one ``repeats``-run mean (std of the runs / √repeats), ``z`` = (paper − pooled) / se, and
    ``p within``: the share of ``repeats``-run means within the tolerance of the paper's value, P(|M − paper| <=
    tolerance) for M ~ N(pooled, se²) (the seeds' own share, ``within tolerance``, is coarse with few seeds). The
    criterion of DRW's seed spread (docs/papers/drw.md#reported-results) applies: ``p within`` >= 5 % means
    that another seed would read ``within`` at least that often, so the gap is the seed draw."""
    extra = store.load("seeds")
    by_hash = {h: g for h, g in extra.groupby(extra["config_hash"].astype(str))} if len(extra) else {}
    loaded: dict[str, tuple[pd.DataFrame, pd.DataFrame]] = {}  # per artifact: (report rows, stored rows), read once
    out = []
    for point in cfg.seed_points:
        artifact, dataset, method, sett = parse_point(point)
        if artifact not in loaded:
            loaded[artifact] = (
                paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent),
                store.load(artifact),
            )
        rep, own = loaded[artifact]
        ref = rep[(rep["dataset"] == dataset) & (rep["method"] == method) & (rep["setting"] == sett)]
        own = own[(own["dataset"] == dataset) & (own["method"] == method) & (own["setting"] == sett)]
        if ref.empty or own.empty:
            continue
        base = point_cell(cfg, point)
        runs = [own["value"].to_numpy(float)]
        for s in cfg.extra_seeds:
            g = by_hash.get(config_hash({**base, "seed": int(s)}))
            if g is not None and len(g) == int(base["repeats"]):
                runs.append(g["value"].to_numpy(float))
        paper, tol = float(ref["paper_value"].iloc[0]), float(ref["tolerance"].iloc[0])
        means = np.array([r.mean() for r in runs])
        pooled = np.concatenate(runs)
        se = float(pooled.std(ddof=1) / math.sqrt(int(base["repeats"])))
        out.append(
            {
                "point": point,
                "paper": paper,
                "tolerance": tol,
                "status": ref["status"].iloc[0],
                "ours": float(means[0]),
                "seeds": len(runs),
                "means": [round(float(m), 2) for m in means],
                "mean min": means.min(),
                "mean max": means.max(),
                "within tolerance": float(np.mean(np.abs(means - paper) <= tol)),
                "pooled": float(pooled.mean()),
                "se": se,
                "z": (paper - float(pooled.mean())) / se if se > 0 else math.nan,
                "p within": _share_within(float(pooled.mean()), se, paper, tol),
            }
        )
    return pd.DataFrame(out).round(3)


def sampling_check(store: ResultStore) -> pd.DataFrame:
    """Per dataset: the reported points run, how many are beyond the report's band (``outside`` or ``explained``),
    and how many would be expected beyond it if the paper's numbers were our computation with other seeds. A
    point whose runs have standard error ``se`` (std / √runs) and whose band is ``b``: two independent means of
    this kind differ by more than ``b`` with probability erfc(b / (2·se)) (their difference has standard
    deviation √2·se); the expectation is the sum over points (values read off a plot would only add error)."""
    out: dict[str, dict[str, float]] = {}
    for artifact in ARTIFACTS:
        rep = paper_vs_ours(PAPER, artifact, store.profile, root=store.dir.parent.parent)
        rep = rep[rep["status"] != "not_run"]
        if rep.empty:
            continue
        g = store.load(artifact).groupby(["dataset", "method", "setting"])["value"]
        se = (g.std(ddof=1) / np.sqrt(g.size())).rename("se")
        rep = rep.join(se, on=["dataset", "method", "setting"])
        for r in rep.itertuples(index=False):
            d = out.setdefault(r.dataset, {"points": 0, "beyond the band": 0, "expected by sampling": 0.0})
            d["points"] += 1
            d["beyond the band"] += int(r.status in ("outside", "explained"))
            d["expected by sampling"] += math.erfc(r.tolerance / (2 * r.se)) if r.se > 0 else 0.0
    table = pd.DataFrame.from_dict(out, orient="index").rename_axis("dataset").reset_index()
    return table.round({"expected by sampling": 1})


def plot_seed_spread(table: pd.DataFrame):
    """:func:`seed_spread` drawn: a row per point with every seed's mean (dots), the pooled mean (tick) ± 2 se of
    one run-mean (bar) and the paper's value (◇) inside the report's tolerance (grey band)."""
    fig, ax = plt.subplots(figsize=(8.5, 0.42 * max(len(table), 2) + 1.4))
    for i, r in enumerate(table.itertuples(index=False)):
        ax.fill_betweenx([i - 0.32, i + 0.32], r.paper - r.tolerance, r.paper + r.tolerance, color="0.87", lw=0)
        ax.errorbar(r.pooled, i, xerr=2 * r.se, fmt="|", color="C0", ms=14, mew=2.5, capsize=4, lw=1.5)
        ax.plot(r.means, [i] * len(r.means), "o", color="C0", ms=3.5, alpha=0.6)
        ax.plot(r.paper, i, "D", color="k", ms=6)
    ax.set_yticks(range(len(table)), list(table["point"]), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("test accuracy %")
    ax.set_title(
        "Seed spread: ● a seed's mean over its repeats, ├┼┤ pooled mean ± 2 se;\n◇ paper in its tolerance band",
        fontsize=9,
    )
    fig.tight_layout()
    return fig
