"""What a result row's ε means: the guarantee the code gives beside the statement the paper makes.

Every stored row's ``ledger`` carries three fields a reader can filter on:

- ``guarantee``: ``"sound"`` when the row's ``epsilon`` is a valid bound for the algorithm *as run*, under the
  stated neighbouring relation, with every data-dependent step accounted for (ε = ∞ for non-private rows is a sound
  statement); ``"as_published"`` when ``epsilon`` reproduces the paper's accounting (so the paper's tables still
  match) but the code's run is not covered by it -- an accounting argument that does not hold for the run
  (``issues``), or data-dependent steps outside ε (``not_covered``).
- ``neighbouring``: the neighbouring relation in words (e.g. ``"add/remove one directed edge"``).
- ``not_covered``: the data-dependent steps ε does not cover, from :data:`NOT_COVERED` (preprocessing statistics,
  clipping calibration, model selection on private validation data); empty when ``guarantee == "sound"``.

``accounted`` says in words what ε charges (the paper's statement); ``issues`` (optional) why that statement is not
the code's guarantee. The statements themselves are built per paper in ``dpgnn/privacy/<paper>.py`` (or the
method module) and the series copy them into the ``ledger`` column; :func:`check_ledger` is the contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "SOUND",
    "AS_PUBLISHED",
    "GUARANTEES",
    "PREPROCESSING",
    "CLIPPING",
    "MODEL_SELECTION",
    "NOT_COVERED",
    "LEDGER_FIELDS",
    "statement",
    "non_private",
    "check_ledger",
]

SOUND = "sound"
AS_PUBLISHED = "as_published"
GUARANTEES = (SOUND, AS_PUBLISHED)

#: data-dependent steps an ε may leave out (the values of ``not_covered``)
PREPROCESSING = "preprocessing statistics"
CLIPPING = "clipping calibration"
MODEL_SELECTION = "model selection on private validation data"
NOT_COVERED = (PREPROCESSING, CLIPPING, MODEL_SELECTION)

#: fields every stored row's ledger must carry
LEDGER_FIELDS = ("guarantee", "neighbouring", "not_covered", "accounted")


def statement(
    guarantee: str,
    neighbouring: str,
    *,
    accounted: str,
    not_covered: Iterable[str] = (),
    issues: Iterable[str] = (),
    **extra: Any,
) -> dict[str, Any]:
    """The guarantee fields of one ledger (a flat dict to merge into it).

    A ``sound`` statement has no ``not_covered`` step and no ``issues``; an ``as_published`` one names at least one
    of them (otherwise it would be sound).
    """
    if guarantee not in GUARANTEES:
        raise ValueError(f"guarantee must be one of {GUARANTEES}, got {guarantee!r}")
    if not isinstance(neighbouring, str) or not neighbouring.strip():
        raise ValueError("neighbouring must be a non-empty description of the neighbouring relation")
    if not isinstance(accounted, str) or not accounted.strip():
        raise ValueError("accounted must say what epsilon charges")
    nc = list(dict.fromkeys(not_covered))
    bad = [s for s in nc if s not in NOT_COVERED]
    if bad:
        raise ValueError(f"not_covered entries must be in {NOT_COVERED}, got {bad}")
    iss = [str(s) for s in issues]
    if guarantee == SOUND and (nc or iss):
        raise ValueError(f"a sound guarantee covers every data-dependent step; got not_covered={nc}, issues={iss}")
    if guarantee == AS_PUBLISHED and not (nc or iss):
        raise ValueError("an as_published guarantee must say what is not covered (not_covered or issues)")
    out: dict[str, Any] = {
        "guarantee": guarantee,
        "neighbouring": neighbouring,
        "not_covered": nc,
        "accounted": accounted,
    }
    if iss:
        out["issues"] = iss
    out.update(extra)
    return out


def non_private(accounted: str = "nothing (non-private: epsilon = inf)") -> dict[str, Any]:
    """The statement of a non-private row: ε = ∞ is true of any algorithm."""
    return statement(SOUND, "none (non-private)", accounted=accounted)


def check_ledger(ledger: Mapping[str, Any] | str) -> dict[str, Any]:
    """Validate a ledger (dict or its JSON) against the contract; returns it as a dict, raises ``ValueError``."""
    import json

    led = json.loads(ledger) if isinstance(ledger, str) else dict(ledger)
    missing = [f for f in LEDGER_FIELDS if f not in led]
    if missing:
        raise ValueError(f"ledger lacks {missing}: {sorted(led)}")
    statement(
        led["guarantee"],
        led["neighbouring"],
        accounted=led["accounted"],
        not_covered=led["not_covered"],
        issues=led.get("issues", ()),
    )
    return led
