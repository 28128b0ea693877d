"""``dpgnn epsilon privgnn`` and ``dpgnn epsilon pate``: the PrivGNN paper's two calculators.

::

    dpgnn epsilon privgnn --lam 0.4 --queries 1000 --gamma 0.3 --delta 1e-3 [--num-classes 10] --json
    dpgnn epsilon pate    --lam 0.4 --queries 1000 --delta 4e-4 [--votes counts.csv] --json

``privgnn`` prints the accountant's ε (default: the authors' autodp ``anaRDPacct``), with the paper's Theorem 7
closed form and the valid order-2 bound beside it, and ``epsilon_sound``: the guarantee of the algorithm as run
(noisy argmax on a probability vector has L1 sensitivity 2, not the paper's 1; per-query ε₀ exact for
``--num-classes C``, else ``2λ``; :mod:`dpgnn.privacy.privgnn`). ``pate`` prints the moments accountant's ε:
data-dependent when ``--votes`` gives the teachers' vote counts (a ``.npy`` or ``.csv`` matrix, one row per
answered query, one column per class), always with the data-independent bound.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import typer

from dpgnn.cli.options import CliInputError, option_check, option_errors, relation_text
from dpgnn.privacy.pate import (
    PRIVGNN_ACCOUNTANT,
    order2_epsilon,
    pate_epsilon,
    privgnn_epsilon,
    privgnn_event,
    theorem7_epsilon,
)
from dpgnn.privacy.pld_limits import TooLargeToAccount
from dpgnn.privacy.privgnn import SOUND_ACCOUNTANT, check_num_classes, query_epsilon, sound_epsilon
from dpgnn.privacy.validation import check_count, check_delta, check_positive_finite, check_sample_rate

__all__ = ["register", "read_votes", "MAX_EXACT_QUERIES", "MAX_MOMENTS"]

#: most answered queries whose sound ε is computed: the exact composition of the pure-DP answers
#: (:mod:`dpgnn.privacy.pure_composition`) sums over queries + 1 outcomes (about 40 s and 0.6 GB at 10^7)
MAX_EXACT_QUERIES = 10**7
#: highest moment order of ``pate`` (Papernot et al. use l ≤ 100; 10^6 orders take seconds, 10^8 would not fit)
MAX_MOMENTS = 10**6


def _check_exact_queries(n: int) -> int:
    if n > MAX_EXACT_QUERIES:
        raise TooLargeToAccount(
            f"--queries {n:,} is above {MAX_EXACT_QUERIES:,}: the sound epsilon composes the "
            "answers exactly over every count of answered queries, which cannot be computed "
            "that large"
        )
    return n


def _emit(payload: dict[str, Any], as_json: bool, text: str) -> None:
    if as_json:
        typer.echo(json.dumps(payload))
    else:
        typer.echo(text)


def read_votes(path: str) -> np.ndarray:
    """A vote-count matrix ``[queries, classes]`` from a ``.npy`` file or a comma-separated text file."""
    p = Path(path)
    if not p.is_file():
        raise CliInputError(f"--votes: no such file {path!r}")
    try:
        arr = np.load(p) if p.suffix == ".npy" else np.loadtxt(p, delimiter=",", ndmin=2)
    except Exception as err:  # noqa: BLE001 - any parse failure is a user input error
        raise CliInputError(f"--votes: cannot read {path!r} as a vote-count matrix ({err})") from None
    arr = np.asarray(arr, dtype=float)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise CliInputError(f"--votes: expected a [queries, classes >= 2] matrix, got shape {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any() or not np.equal(np.round(arr), arr).all():
        raise CliInputError("--votes: counts must be non-negative integers")
    return arr


def register(app: typer.Typer) -> None:
    """Add the ``privgnn`` and ``pate`` subcommands to ``dpgnn epsilon``."""
    app.command("privgnn")(privgnn)
    app.command("pate")(pate)


def privgnn(
    lam: float = typer.Option(..., "--lam", help="lambda = 1/b, inverse Laplace scale on the posterior, > 0."),
    queries: int = typer.Option(..., "--queries", help="Answered queries |Q|, an integer >= 1."),
    gamma: float = typer.Option(..., "--gamma", help="Poisson sampling rate of the private nodes, in (0, 1]."),
    delta: float = typer.Option(..., "--delta", help="Target delta, in (0, 1)."),
    accountant: str = typer.Option(
        PRIVGNN_ACCOUNTANT,
        "--accountant",
        help="autodp_rdp_acct (the authors', default), rdp (exact RDP, tight conversion) or autodp.",
    ),
    num_classes: int | None = typer.Option(
        None,
        "--num-classes",
        help="Classes C >= 2 of the posterior: the sound per-query epsilon is exact for C (else the bound 2*lambda).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
) -> None:
    """Epsilon of PrivGNN: |Q| Poisson(gamma)-subsampled Laplace(1/lambda) label queries (add/remove one node)."""
    with option_errors():
        lam_ = option_check("--lam", check_positive_finite, lam)
        n = _check_exact_queries(option_check("--queries", check_count, queries))
        g = option_check("--gamma", check_sample_rate, gamma)
        d = option_check("--delta", check_delta, delta)
        c = None if num_classes is None else option_check("--num-classes", check_num_classes, num_classes)
        try:
            eps = privgnn_epsilon(lam_, n, g, d, accountant)
        except TooLargeToAccount:
            raise
        except ValueError as err:
            raise CliInputError(f"--accountant: {err}") from None
        payload = {
            "command": "privgnn",
            "epsilon": eps,
            "delta": d,
            "lam": lam_,
            "queries": n,
            "gamma": g,
            "accountant": accountant,
            "epsilon_theorem7": theorem7_epsilon(lam_, n, g, d),
            "epsilon_order2_bound": order2_epsilon(lam_, n, g, d),
            "neighbouring": "add/remove one private node",
            "event": privgnn_event(lam_, n, g).to_dict(),
            "sensitivity": "L1 1 per query as published (Laplace scale 1/lambda); the sound epsilon uses "
            "2 (noisy argmax on a probability vector)",
            "guarantee": "as_published",
            "num_classes": c,
            "epsilon_sound": sound_epsilon(lam_, n, g, d, c),
            "epsilon_per_query_sound": query_epsilon(lam_, c),
            "sound_accounting": "noisy argmax, pure eps0 per query (exact for num_classes, else "
            f"2*lambda), each on its own Poisson subsample; {SOUND_ACCOUNTANT}",
        }
        _emit(
            payload,
            as_json,
            f"privgnn: epsilon = {eps:.6g} at delta = {d:g} [lam={lam_:g}, queries={n}, gamma={g:g}; "
            f"accountant={accountant}] (paper Theorem 7 closed form: {payload['epsilon_theorem7']:.6g}; "
            f"order-2 bound: {payload['epsilon_order2_bound']:.6g}); as published "
            f"({relation_text(payload['neighbouring'], 'L1 1')})\n"
            f"sound: epsilon = {payload['epsilon_sound']:.6g} (per-query eps0 = "
            f"{payload['epsilon_per_query_sound']:.6g}, "
            + (f"exact for {c} classes)" if c else "2*lambda; give --num-classes for the exact value)"),
        )


def pate(
    lam: float = typer.Option(..., "--lam", help="lambda = 1/b, inverse Laplace scale on each vote count, > 0."),
    queries: int = typer.Option(..., "--queries", help="Answered queries |Q|, an integer >= 1."),
    delta: float = typer.Option(..., "--delta", help="Target delta, in (0, 1)."),
    votes: str | None = typer.Option(
        None, "--votes", help="Vote counts [queries, classes] (.npy or .csv) for the data-dependent epsilon."
    ),
    moments: int = typer.Option(8, "--moments", help="Highest moment order l, an integer in [1, 10^6]."),
    as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
) -> None:
    """Epsilon of PATE (moments accountant, Papernot et al. 2017): |Q| noisy-argmax answers over teacher votes."""
    with option_errors():
        lam_ = option_check("--lam", check_positive_finite, lam)
        n = _check_exact_queries(option_check("--queries", check_count, queries))
        d = option_check("--delta", check_delta, delta)
        m = option_check("--moments", check_count, moments)
        if m > MAX_MOMENTS:
            raise CliInputError(f"--moments must be an integer in [1, {MAX_MOMENTS:,}], got {m:,}")
        counts = None
        if votes is not None:
            counts = read_votes(votes)
            if counts.shape[0] != n:
                raise CliInputError(
                    f"--votes has {counts.shape[0]} rows but --queries is {n}; one row per answered query"
                )
            if n * m > MAX_EXACT_QUERIES:
                raise TooLargeToAccount(
                    f"--votes with {n:,} queries and --moments {m:,}: the data-dependent "
                    f"moments are a {n:,} x {m:,} table, above {MAX_EXACT_QUERIES:,} "
                    "entries; give fewer --moments"
                )
        res = pate_epsilon(lam_, n, d, counts, moments=m)
        payload = {
            "command": "pate",
            "epsilon": res.epsilon,
            "delta": d,
            "lam": lam_,
            "queries": n,
            "moments": m,
            "data_dependent": res.data_dependent,
            "epsilon_data_independent": res.epsilon_data_independent,
            "epsilon_sound": res.epsilon_sound,
            "order": res.order,
            "order_data_independent": res.order_data_independent,
            "votes": votes,
            "accountant": "pate_moments (Papernot et al. 2017)",
            "neighbouring": "replace one private record (changes one teacher's vote)",
            "sensitivity": "one teacher's vote: two vote counts move by 1 (Laplace scale 1/lambda each)",
        }
        kind = "data-dependent" if res.data_dependent else "data-independent"
        _emit(
            payload,
            as_json,
            f"pate: epsilon = {res.epsilon:.6g} ({kind}, moment order {res.order}) at delta = {d:g} "
            f"[lam={lam_:g}, queries={n}]; data-independent bound {res.epsilon_data_independent:.6g}; "
            f"sound: epsilon = {res.epsilon_sound:.6g} (exact composition of {n} (2*lambda)-DP answers); "
            f"{relation_text(payload['neighbouring'], payload['sensitivity'])}",
        )
        if not math.isfinite(res.epsilon):  # pragma: no cover - defensive
            raise CliInputError("epsilon is not finite")
