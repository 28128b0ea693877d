"""The privacy statement of each PrivGNN row: PrivGNN's accounting (paper Sec. 5.5) and the sound ε beside it,
PATE's moments accountant, the non-private baselines, and the ledgers of the authors'-code noise and split."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpgnn.privacy.guarantee import AS_PUBLISHED, PREPROCESSING, SOUND, non_private, statement
from dpgnn.privacy.pate import PRIVGNN_ACCOUNTANT, pate_epsilon, privgnn_epsilon, privgnn_event
from dpgnn.privacy.privgnn import statement_as_published as privgnn_statement


def pate_statement(queries: int, *, data_dependent: bool, not_covered: Sequence[str] = ()) -> dict[str, Any]:
    """Guarantee fields of a PATE-G/PATE-M row (noisy argmax over vote counts; see :func:`privacy_ledger`)."""
    nc = list(not_covered)
    return statement(
        AS_PUBLISHED if data_dependent or nc else SOUND,
        "replace one private node (changes one teacher's vote)",
        not_covered=nc,
        accounted=f"{queries} noisy-argmax answers over teacher vote counts, Laplace(1/lambda)"
        " per count (PATE moments accountant, Papernot et al. 2017"
        + (", data-dependent)" if data_dependent else ", data-independent)"),
        issues=[
            "the data-dependent epsilon is computed from the private vote counts and is "
            "itself not released privately (epsilon_data_independent is the sound bound)"
        ]
        if data_dependent
        else (),
    )


#: how each teacher-student variant subsamples the private nodes (:func:`dpgnn.privacy.privgnn.sound_epsilon`)
SUBSAMPLING_OF = {"privgnn": "per_query", "knnrem": "per_query", "singlegnn": "once"}


def privacy_ledger(
    method: str,
    *,
    lam: float | None = None,
    queries: int | None = None,
    gamma: float | None = None,
    delta: float | None = None,
    counts: np.ndarray | None = None,
    num_classes: int | None = None,
    delta_sound: float | None = None,
    standardized: bool = False,
) -> dict[str, Any]:
    """The privacy statement of one run (flat, for a tidy row). PrivGNN/KNNRem/SingleGNN share PrivGNN's
    accounting (paper Sec. 5.5): ``epsilon`` is the paper's (``guarantee = as_published``), ``epsilon_sound`` the
    algorithm's (:mod:`dpgnn.privacy.privgnn`, exact per-query ε₀ for ``num_classes``, at ``delta_sound``,
    default ``delta``), amplified as the variant samples (:data:`SUBSAMPLING_OF`: SingleGNN's one subsample
    serves every query). PATE-M/G use the moments accountant (data-dependent when ``counts`` are given; noisy argmax
    of vote counts, whose sensitivity argument holds: sound). B1/B2/B3 are non-private; B4 touches the public
    labels (not a private mechanism of G†: ε = ∞ w.r.t. the ground truth it reads). ``standardized``: the
    features were z-scored with statistics that include the private nodes (Credit): not covered."""
    nc = [PREPROCESSING] if standardized else []
    if method in ("privgnn", "knnrem", "singlegnn"):
        eps = privgnn_epsilon(lam, queries, gamma, delta)
        return {
            "level": "node",
            "mechanism": "laplace",
            "noise_scale": 1.0 / lam,
            "sample_rate": gamma,
            "steps": queries,
            "epsilon": eps,
            "delta": delta,
            "accountant": PRIVGNN_ACCOUNTANT,
            "event": privgnn_event(lam, queries, gamma).to_dict(),
            **privgnn_statement(
                lam,
                queries,
                gamma,
                delta,
                num_classes,
                delta_sound=delta_sound,
                not_covered=nc,
                subsampling=SUBSAMPLING_OF[method],
            ),
        }
    if method in ("pate_g", "pate_m"):
        res = pate_epsilon(lam, queries, delta, counts)
        return {
            "level": "node",
            "mechanism": "laplace on vote counts",
            "noise_scale": 1.0 / lam,
            "sample_rate": 1.0,
            "steps": queries,
            "epsilon": res.epsilon,
            "epsilon_data_independent": res.epsilon_data_independent,
            "epsilon_sound": res.epsilon_sound,
            "delta": delta,
            "accountant": "pate_moments" + ("_data_dependent" if res.data_dependent else ""),
            **pate_statement(queries, data_dependent=res.data_dependent, not_covered=nc),
        }
    if method in ("b1", "b2", "b3", "mlp", "b4"):
        return {
            "level": "none",
            "mechanism": "none",
            "epsilon": math.inf,
            "delta": 0.0,
            "accountant": "none",
            **non_private(),
        }
    raise ValueError(f"unknown method {method!r}")


def log_softmax_ledger(led: dict[str, Any]) -> dict[str, Any]:
    """The ledger of a ``privgnn_code`` run (noise on log-softmax, the authors' code) from PrivGNN's ledger ``led``:
    unbounded sensitivity, so ε = ∞ (a sound statement unless ``led`` names uncovered steps)."""
    return {
        **led,
        "epsilon": math.inf,
        "epsilon_sound": math.inf,
        "issues": [],
        "guarantee": "as_published" if led["not_covered"] else "sound",
        "accounted": "nothing: noise on log-softmax (authors' code) has unbounded sensitivity, epsilon = inf",
        "note": "noise on log-softmax (authors' code): unbounded sensitivity, the accountant's epsilon does not apply",
    }


def authors_split_ledger(led: dict[str, Any]) -> dict[str, Any]:
    """The ledger of a PrivGNN run on the official code's split (:func:`authors_code_split`) from its ledger
    ``led``: the accounting assumes public and private nodes are disjoint, but there the queries and the public
    test are drawn from all nodes, so private nodes enter the public graph with their features and edges outside
    any ε. A finite ε is then the paper's statement, not the run's guarantee; ε = ∞ stays a sound statement."""
    out = {**led, "split": "authors_code"}
    if math.isinf(led["epsilon"]):
        return out
    return {
        **out,
        "guarantee": AS_PUBLISHED,
        "issues": [
            *led.get("issues", []),
            "official split: public nodes are drawn from all nodes, so private "
            "nodes are queried and tested as public ones; epsilon assumes disjoint sets and does not "
            "cover them",
        ],
    }
