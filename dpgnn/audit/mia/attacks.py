"""PrivGNN's membership-inference attacks run end to end (:mod:`dpgnn.audit.mia`): Attack-1 and Attack-2 with
the default shadow design (:func:`run_attacks`), and every shadow design against the same targets
(:func:`shadow_sensitivity`)."""

from __future__ import annotations

from typing import Any

import torch

from dpgnn.audit.catalog import PROTOCOLS, SHADOW_SIZES
from dpgnn.audit.mia.models import _features, _fit_attack, _fit_on, _score, auroc
from dpgnn.audit.mia.shadows import _shadow_posteriors
from dpgnn.audit.mia.targets import _check_targets, build_targets
from dpgnn.methods import privgnn as P
from dpgnn.utils import make_generator, resolve_device, stable_seed


def run_attacks(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    shadow_epochs: int,
    max_nodes: int | None = None,
    noise_on: str | tuple[str, ...] = "posterior",
    targets: tuple[str, ...] = ("b1", "privgnn"),
    protocol: str = "score",
    device: str = "auto",
) -> list[dict[str, Any]]:
    """Attack-1 and Attack-2 against the ``targets`` of one (dataset, run); one row per AUROC.

    ``targets``: ``"b1"`` (B1 for Attack-1, the student trained on B1's labels for Attack-2) and ``"privgnn"`` (the
    student). ``noise_on="log_softmax"`` trains the student on the authors'-code labels (Laplace noise on
    log-probabilities) and names its rows ``privgnn_code``; those rows also carry ``label_accuracy_posterior``, the
    accuracy of the paper-noise labels drawn from the same teachers and the same noise (the teachers, the query
    nodes and the noise draws do not depend on ``noise_on``). Every student row carries ``label_accuracy`` (its
    pseudo-labels against the query nodes' true labels), and every row the target's mean top probability on the
    attack's members and non-members (``member_confidence``, ``non_member_confidence``) and its public test
    accuracy (``test_accuracy``). Each training draws its dropout masks from torch's global RNG seeded from
    ``seed`` and its role, so a call gives the same rows whatever ran before it and whichever ``targets`` it has.

    ``noise_on`` may name both placements (a tuple): one student per placement, all from the same teachers and
    noise draws (the teachers are trained once). ``protocol`` (:data:`PROTOCOLS`, module docstring) picks the attack
    model, its features and the metric; with ``"rebmigraph"`` the value is the published batched hard-label AUROC
    and ``score_auroc`` the same attack's usual AUROC; every row names its ``protocol``."""
    _check_targets(targets, noise_on)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    device = str(resolve_device(device))  # once: "auto" would be resolved (and logged) by every training below
    attacked = build_targets(
        graphs,
        queries=queries,
        k=k,
        gamma=gamma,
        lam=lam,
        seed=seed,
        teacher_epochs=teacher_epochs,
        student_epochs=student_epochs,
        noise_on=noise_on,
        targets=targets,
        device=device,
    )
    atk = {}
    for attack, epochs in (
        ("attack1", student_epochs if shadow_epochs is None else shadow_epochs),
        ("attack2", shadow_epochs),
    ):
        lp_mem, lp_non = _shadow_posteriors(graphs, attack, seed=seed, epochs=epochs, device=device)[protocol]
        atk[attack] = _fit_on(lp_mem, lp_non, stable_seed(seed, attack), protocol)
    feats = _features(protocol)
    rows = []
    for t in attacked:
        mem, non = feats(t["member"]), feats(t["non_member"])
        rows.append(
            {
                "attack": t["attack"],
                "method": t["method"],
                **_score(atk[t["attack"]], mem, non, protocol=protocol, seed=seed, max_nodes=max_nodes),
                "protocol": protocol,
                **_diagnostics(mem, non, t["public"], graphs),
                **t["extra"],
            }
        )
    return rows


def shadow_sensitivity(
    graphs: P.PrivGNNData,
    *,
    queries: int,
    k: int,
    gamma: float,
    lam: float,
    seed: int,
    teacher_epochs: int,
    student_epochs: int,
    shadow_sizes: tuple[str, ...] = SHADOW_SIZES,
    shadow_epochs: tuple[int, ...] = (50, 200, 500),
    protocols: tuple[str, ...] = PROTOCOLS,
    noise_on: str | tuple[str, ...] = ("posterior", "log_softmax"),
    targets: tuple[str, ...] = ("b1", "privgnn"),
    max_nodes: int | None = None,
    device: str = "auto",
) -> list[dict[str, Any]]:
    """How much the attacker's choices the paper leaves open move Attack-1 / Attack-2 against fixed targets.

    The targets of one (dataset, run) are trained once (:func:`build_targets`, the same models as
    :func:`run_attacks` with the same arguments), then attacked by every shadow design: each size of
    :data:`SHADOW_SIZES` (members / non-members drawn from the public nodes; ``"target"`` sizes the shadow's members
    like the target's: the private nodes for Attack-1, the queries for Attack-2) × each shadow training length ×
    each protocol. Two references need no shadow: ``design="oracle"``, an attack model of the protocol trained on a
    random half of the target's *own* members and non-members and scored on the other half (what an attacker who
    could label the target's nodes would reach: for the score AUROC the reference a shadow design approaches; the
    published attack model's hard calls may still fall on one side of its threshold, 0.5), and
    ``design="confidence"``, the AUROC of the target's top probability alone (a threshold attack, no model).

    One row per (attack, target, design): ``attack``, ``method``, ``design`` (``shadow`` / ``oracle`` /
    ``confidence``), ``shadow`` (size, or ``""``), ``shadow_epochs`` (0 without a shadow), ``protocol``, ``value``
    (the protocol's metric) and, for ``"rebmigraph"``, ``score_auroc``; the target's ``extra`` diagnostics."""
    _check_designs(protocols, shadow_sizes, shadow_epochs)
    device = str(resolve_device(device))
    attacked = build_targets(
        graphs,
        queries=queries,
        k=k,
        gamma=gamma,
        lam=lam,
        seed=seed,
        teacher_epochs=teacher_epochs,
        student_epochs=student_epochs,
        noise_on=noise_on,
        targets=targets,
        device=device,
    )
    rows: list[dict[str, Any]] = []
    for t in attacked:  # the references without a shadow
        rows += _reference_rows(t, protocols, seed=seed, max_nodes=max_nodes)
    n_members = {t["attack"]: t["member"].size(0) for t in attacked}
    for attack in ("attack1", "attack2"):
        if attack not in n_members:
            continue
        for size in shadow_sizes:
            for epochs in shadow_epochs:
                lps = _shadow_posteriors(
                    graphs, attack, seed=seed, epochs=epochs, device=device, size=size, n_target=n_members[attack]
                )
                rows += _shadow_rows(attacked, attack, lps, size, epochs, protocols, seed=seed, max_nodes=max_nodes)
    return rows


def _check_designs(protocols: tuple[str, ...], shadow_sizes: tuple[str, ...], shadow_epochs: tuple[int, ...]) -> None:
    """A one-line ``ValueError`` for an empty or unknown choice of :func:`shadow_sensitivity`'s designs."""
    if not protocols or set(protocols) - set(PROTOCOLS):
        raise ValueError(f"protocols must be a non-empty subset of {PROTOCOLS}, got {protocols!r}")
    if not shadow_sizes or set(shadow_sizes) - set(SHADOW_SIZES):
        raise ValueError(f"shadow_sizes must be a non-empty subset of {SHADOW_SIZES}, got {shadow_sizes!r}")
    if not shadow_epochs or min(shadow_epochs) < 1:
        raise ValueError(f"shadow_epochs must be positive training lengths, got {shadow_epochs!r}")


def _design_row(
    t: dict[str, Any], design: str, size: str, epochs: int, protocol: str, scored: dict[str, float]
) -> dict[str, Any]:
    """One row of :func:`shadow_sensitivity`: the target ``t`` attacked by one design."""
    return {
        "attack": t["attack"],
        "method": t["method"],
        "design": design,
        "shadow": size,
        "shadow_epochs": epochs,
        "protocol": protocol,
        **scored,
        **t["extra"],
    }


def _reference_rows(
    t: dict[str, Any], protocols: tuple[str, ...], *, seed: int, max_nodes: int | None
) -> list[dict[str, Any]]:
    """The references of target ``t`` that need no shadow: the confidence threshold, then per protocol the oracle
    attack trained on a random half of the target's own members and non-members and scored on the other half."""
    top_mem, top_non = t["member"].exp().max(1).values, t["non_member"].exp().max(1).values
    confidence = {"value": auroc(top_mem.cpu().numpy(), top_non.cpu().numpy())}
    rows = [_design_row(t, "confidence", "", 0, "score", confidence)]
    gen = make_generator(stable_seed("oracle-split", seed, t["attack"], t["method"]))
    pm, pn = (
        torch.randperm(t["member"].size(0), generator=gen),
        torch.randperm(t["non_member"].size(0), generator=gen),
    )
    hm, hn = pm.numel() // 2, pn.numel() // 2
    for protocol in protocols:
        feats = _features(protocol)
        fm, fn = feats(t["member"]).cpu(), feats(t["non_member"]).cpu()
        atk = _fit_attack(fm[pm[:hm]], fn[pn[:hn]], stable_seed(seed, "oracle", t["attack"]), protocol)
        scored = _score(atk, fm[pm[hm:]], fn[pn[hn:]], protocol=protocol, seed=seed, max_nodes=max_nodes)
        rows.append(_design_row(t, "oracle", "", 0, protocol, scored))
    return rows


def _shadow_rows(
    attacked: list[dict[str, Any]],
    attack: str,
    lps: dict[str, tuple[torch.Tensor, torch.Tensor]],
    size: str,
    epochs: int,
    protocols: tuple[str, ...],
    *,
    seed: int,
    max_nodes: int | None,
) -> list[dict[str, Any]]:
    """Per protocol, the attack model fitted on one shadow's log-posteriors ``lps`` scored on every target of
    ``attack``."""
    rows = []
    for protocol in protocols:
        atk = _fit_on(*lps[protocol], stable_seed(seed, attack), protocol)
        feats = _features(protocol)
        for t in attacked:
            if t["attack"] == attack:
                scored = _score(
                    atk, feats(t["member"]), feats(t["non_member"]), protocol=protocol, seed=seed, max_nodes=max_nodes
                )
                rows.append(_design_row(t, "shadow", size, epochs, protocol, scored))
    return rows


def _diagnostics(
    mem: torch.Tensor, non: torch.Tensor, pub_logp: torch.Tensor, graphs: P.PrivGNNData
) -> dict[str, float]:
    """The target's mean top probability on members and non-members, and its public test accuracy (``mem`` and
    ``non``: attack features of either protocol)."""
    test = graphs.pub_test
    return {
        "member_confidence": float(mem.max(1).values.mean()),
        "non_member_confidence": float(non.max(1).values.mean()),
        "test_accuracy": float((pub_logp[test].argmax(1).cpu() == graphs.y_pub[test]).double().mean()),
    }
