"""Audit findings from the committed paper profile (``results/paper/audit/``): audited ε beside the accounted ε for
every privacy unit (:func:`dpgnn.series.audit.audit_table`), PrivGNN's per-query noisy argmax (exact, computed), and
the membership-inference attacks of PrivGNN's Fig. 4 (:func:`mia`). AUROC spreads are the standard deviation over
runs (ddof 0, as in the report)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpgnn.findings import Finding, md_table, missing, num, pct, span, store
from dpgnn.utils import ROOT

__all__ = ["BLOCKS", "argmax_epsilon", "audits", "mia", "mia_published", "white_box"]

_TARGETS = {"b1": "B1", "privgnn": "PrivGNN", "privgnn_code": "authors'-code student"}
#: the pure ε-LDP mechanisms of the LDP audit (``agm`` is (ε, δ); ``broken_laplace`` the negative control)
_PURE_LDP = ("laplace", "piecewise", "pgc", "mbm", "1bm", "lpm", "rr")


def argmax_epsilon(lams=(0.1, 1.0), num_classes: int = 10) -> Finding:
    """The exact ε of one PrivGNN pseudo-label (argmax of a posterior plus Laplace(1/λ) noise, the worst-case pair
    of one-hot posteriors; :func:`dpgnn.audit.argmax.exact_epsilon`) beside λ, the ε the paper charges."""
    from dpgnn.audit.argmax import exact_epsilon

    parts = [f"{num(exact_epsilon(float(lam), num_classes), 3)} at λ = {lam:g}" for lam in lams]
    return Finding(f"Exact ε of one noisy argmax at {num_classes} classes: {', '.join(parts)}.")


def _ms(values: pd.Series, nd: int = 3) -> str:
    return f"{num(values.mean(), nd)} ± {num(values.std(ddof=0), nd)}"


def _fig4(root: Path) -> pd.DataFrame:
    return store("audit", root).load("fig4")


def _auroc(df: pd.DataFrame, dataset: str, method: str, attack: str, metric: str = "auroc") -> pd.Series:
    return df[
        (df["dataset"] == dataset) & (df["method"] == method) & (df["setting"] == attack) & (df["metric"] == metric)
    ]["value"].astype(float)


def mia(root: Path = ROOT) -> Finding:
    """Fig. 4 in the paper profile: Amazon's attacks on the three targets with the diagnostics that explain them
    (the targets' confidence on members and non-members, how many pseudo-labels are right), the attacker's open
    choices (shadow designs, oracle) and Credit."""
    from dpgnn.series import audit

    df = _fig4(root)
    if df.empty:
        return missing("PrivGNN's membership-inference attacks", "dpgnn run audit --profile paper --artifact fig4")
    a = lambda m, s, d="amazon": _auroc(df, d, m, s)  # noqa: E731
    code1 = df[(df["dataset"] == "amazon") & (df["method"] == "privgnn_code") & (df["setting"] == "attack1")]
    labels = df[(df["dataset"] == "amazon") & (df["setting"] == "attack2") & (df["metric"] == "auroc")]
    right = labels.groupby("method")["label_accuracy"].mean()
    lines = [
        f"- **Amazon, Attack-1** ({a('b1', 'attack1').size} runs): B1 {_ms(a('b1', 'attack1'))}, the paper's student "
        f"{_ms(a('privgnn', 'attack1'))}, the authors'-code student {_ms(a('privgnn_code', 'attack1'))} (flipped: "
        f"{num(1 - a('privgnn_code', 'attack1').mean(), 2)}); that student's mean top probability is "
        f"{num(code1['non_member_confidence'].mean(), 3)} on the public test nodes (non-members) and "
        f"{num(code1['member_confidence'].mean(), 3)} on the private nodes (members).",
        f"- **Amazon, Attack-2:** the B1-labelled student {_ms(a('b1', 'attack2'))}; the paper's student "
        f"{_ms(a('privgnn', 'attack2'))}, trained on pseudo-labels of which {pct(right.get('privgnn'), 1)} are right; "
        f"with the authors'-code noise {pct(right.get('privgnn_code'), 1)} are right and Attack-2 gives "
        f"{_ms(a('privgnn_code', 'attack2'))}.",
    ]
    shadows = audit.mia_shadow_range(store("audit", root))
    if len(shadows):
        score = shadows[shadows["metric"] == "auroc"].set_index(["method", "setting"])
        pub = shadows[shadows["metric"] == "auroc_published"].set_index(["method", "setting"])
        designs = store("audit", root).load("fig4_shadows")
        n_designs = designs[designs["design"] == "shadow"].groupby(["shadow", "shadow_epochs"]).ngroups
        lines.append(
            f"- **Over the attacker's open choices** ({n_designs} shadow designs): the score AUROC of a cell moves by "
            f"at most {num((score['shadow max'] - score['shadow min']).max(), 3)}; the oracle gives B1 "
            f"{num(score.loc[('b1', 'attack1'), 'oracle'], 3)} / {num(score.loc[('b1', 'attack2'), 'oracle'], 3)} "
            f"(Attack-1 / Attack-2), the paper's student {num(score.loc[('privgnn', 'attack2'), 'oracle'], 3)} on "
            f"Attack-2 and the authors'-code student {num(score.loc[('privgnn_code', 'attack1'), 'oracle'], 2)} on "
            f"Attack-1; the published metric spans B1 "
            f"{span(pub.loc[('b1', 'attack1'), ['shadow min', 'shadow max']])} / "
            f"{span(pub.loc[('b1', 'attack2'), ['shadow min', 'shadow max']])}, the paper's student "
            f"{span(pub.loc[('privgnn', 'attack1'), ['shadow min', 'shadow max']])} / "
            f"{span(pub.loc[('privgnn', 'attack2'), ['shadow min', 'shadow max']])}."
        )
    credit = df[(df["dataset"] == "credit") & (df["metric"] == "auroc")]
    if len(credit):
        per = "; ".join(
            f"{attack.replace('attack', 'Attack-')}: "
            + ", ".join(f"{_TARGETS[m]} {_ms(a(m, attack, 'credit'))}" for m in _TARGETS)
            for attack in ("attack1", "attack2")
        )
        lines.append(f"- **Credit** ({credit['run'].nunique()} runs): every AUROC {span(credit['value'])} ({per}).")
    return Finding("\n".join(lines))


def mia_published(root: Path = ROOT) -> Finding:
    """Amazon's targets under the published attack's metric (``auroc_published``), mean ± std over runs, and the
    usual AUROC of that same attack model (``score_auroc``)."""
    df = _fig4(root)
    pub = df[(df["dataset"] == "amazon") & (df["metric"] == "auroc_published")]
    if pub.empty:
        return missing("the published attack protocol", "dpgnn run audit --profile paper --artifact fig4")
    rows = [
        {"target": _TARGETS[m]}
        | {
            f"{s.replace('attack', 'Attack-')}": _ms(_auroc(df, "amazon", m, s, "auroc_published"))
            for s in ("attack1", "attack2")
        }
        | {
            "its score AUROC (Attack-1 / Attack-2)": " / ".join(
                num(pub[(pub["method"] == m) & (pub["setting"] == s)]["score_auroc"].mean(), 3)
                for s in ("attack1", "attack2")
            )
        }
        for m in _TARGETS
    ]
    return Finding(md_table(pd.DataFrame(rows)))


def audits(root: Path = ROOT) -> Finding:
    """Every stored audit of the paper profile in one list: audited lower bounds against the accounted ε per privacy
    unit, the controls, PrivGNN's noisy argmax and Fig. 4."""
    from dpgnn.series import audit

    t = audit.audit_table(store("audit", root), ("ldp", "edge", "node", "query", "central"))
    if t.empty:
        return missing("the audits", "dpgnn reproduce audit --profile paper")
    ldp = t[t["unit"] == "ldp"]
    pure = ldp[ldp["method"].isin(_PURE_LDP)]
    broken = ldp[ldp["broken"]]
    correct = t[~t["broken"] & (t["accounted"] != float("inf")) & (t["unit"] != "query")]
    edge = t[t["unit"] == "edge"]
    node = t[t["unit"] == "node"]
    central = t[t["unit"].isin(["node", "feature"]) & ~t["method"].str.startswith(("dp-mlp", "mlp"))]
    trained = central[~central["broken"] & (central["accounted"] != float("inf"))]
    controls = central[central["accounted"] == float("inf")]
    broken_c = central[central["broken"]]
    query = t[(t["unit"] == "query") & ~t["method"].str.contains("log-softmax")]
    lines = [
        f"- Audited lower bound above the accounted ε: {int(correct['flagged'].sum())} of the {len(correct)} cells of "
        "correct mechanisms and training runs (PrivGNN's per-query accounting below is another matter).",
        f"- **LDP** ({ldp['method'].nunique() - broken['method'].nunique()} mechanisms × "
        f"{ldp['claimed'].nunique()} ε): "
        f"the pure ε-LDP ones at {span(pure['ratio'])} × ε; the halved-noise Laplace at "
        f"{span(broken['ratio'])} × ε (flagged: {int(broken['flagged'].sum())} of {len(broken)}).",
        f"- **Edge level, NAP:** {span(edge['ratio'])} of ε.",
        "- **One-run DP-SGD** (the DP-Adam stage): audited "
        f"{span(node[node['method'].str.startswith('dp-mlp')]['audited_lb'])}; its no-noise control "
        f"{num(node[node['method'].str.startswith('mlp')]['audited_lb'].max())}.",
        f"- **Central training** ({', '.join(dict.fromkeys(trained['method']))} at ε "
        f"{span(trained['accounted'], 1)}): audited at most {num(trained['audited_lb'].max(), 3)}; the non-private "
        "controls "
        + ", ".join(f"{r.method} {num(r.audited_lb)}" for r in controls.itertuples(index=False))
        + "; the broken variants "
        + ", ".join(
            f"{r.method} {num(r.audited_lb)} under a claimed ε of {num(r.accounted, 1)}"
            for r in broken_c.itertuples(index=False)
        )
        + ".",
        "- **PrivGNN's noisy argmax** (noise on posteriors): audited up to "
        f"{num((query['audited_lb'] / query['accounted']).max())} × λ. {argmax_epsilon()}",
        str(mia(root)),
    ]
    return Finding("\n".join(lines))


def white_box(root: Path = ROOT) -> Finding:
    """The white-box audits (:func:`dpgnn.series.audit_white_box.white_box_table`): flagged correct runs and
    halved-σ variants, the audited lower bounds at ε = 4, the range over ε, and the halved-σ variants per claim."""
    from dpgnn.series import audit_white_box

    t = audit_white_box.white_box_table(store("audit", root))
    if t.empty:
        return missing("the white-box audits", "dpgnn run audit --profile paper --artifact white_box")
    t = t.assign(claim=t["claimed"].round().astype(int), name=t["method"].str.replace(r" \(.*\)$", "", regex=True))
    ok, halved = t[t["noise_factor"] == 1.0], t[t["noise_factor"] < 1.0]
    at4 = ok[ok["claim"] == 4].sort_values("audited_lb")
    lo, hi = ok.loc[ok["ratio"].idxmin()], ok.loc[ok["ratio"].idxmax()]
    parts = []
    for claim, g in halved.groupby("claim"):
        g = g.sort_values("audited_lb")
        parts.append(
            f"at claim {claim} (true ε {span(g['epsilon_run'], 1)}) "
            + ", ".join(f"{r.name} {num(r.audited_lb)}" for r in g.itertuples(index=False))
        )
    return Finding(
        f"Correct runs flagged: {int(ok['flagged'].sum())} of {len(ok)}; halved-σ variants flagged: "
        f"{int(halved['flagged'].sum())} of {len(halved)}. At ε = 4 the audited lower bounds reach "
        + ", ".join(f"{r.name} {num(r.audited_lb)}" for r in at4.itertuples(index=False))
        + f" ({span(at4['ratio'])} of ε); over ε {span(ok['claim'], 0)} the correct runs reach {span(ok['ratio'])} "
        f"of ε (the most, {hi['name']} {num(hi['ratio'])} at ε {hi['claim']}; the least, {lo['name']} "
        f"{num(lo['ratio'])} at ε {lo['claim']}). The halved-σ variants are audited " + "; ".join(parts) + "."
    )


#: the docs blocks of ``docs/audits.md`` and of the white-box section of ``docs/papers/cross-paper.md``
BLOCKS = {
    "audit_summary": lambda root: str(audits(root)) + "\n",
    "audit_white_box": lambda root: str(white_box(root)) + "\n",
    "audit_mia_published": lambda root: str(mia_published(root)) + "\n",
}
