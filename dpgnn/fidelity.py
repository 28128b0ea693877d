"""Which version of a paper's computation a cell reproduces: the paper's statement or the authors' code.

Three series run some cells twice: as the paper states them (``paper``) and as the official code computes them
(``authors_code``: its accountant, its calibration, its early stopping or its teachers). The choice travels through
profiles, cells, configs and ledgers as a :class:`Fidelity`; :func:`parse` is the one place a string becomes one.

A :class:`Fidelity` is a ``str``: it compares, hashes, formats and serialises as its value (``"paper"``), so stored
configuration hashes and CSV columns are those of the plain string.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Fidelity", "FIDELITIES", "parse"]


class Fidelity(str, Enum):
    """The paper's statement (``PAPER``) or the authors' code (``AUTHORS_CODE``)."""

    PAPER = "paper"
    AUTHORS_CODE = "authors_code"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __repr__(self) -> str:
        return repr(self.value)


#: the values, in order: ``("paper", "authors_code")``
FIDELITIES: tuple[str, ...] = tuple(f.value for f in Fidelity)


def parse(value: str | Fidelity, what: str = "fidelity") -> Fidelity:
    """``value`` as a :class:`Fidelity`; ``ValueError`` naming ``what`` and the valid values otherwise."""
    try:
        return Fidelity(value)
    except ValueError:
        raise ValueError(f"{what} must be one of {FIDELITIES}, got {value!r}") from None
