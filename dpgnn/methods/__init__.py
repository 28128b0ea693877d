"""One module per paper method (``lpgcn``, ``lpgnn``, ``progap``, ``drw``, ``privgnn`` and their baselines).

Modules are imported lazily so that one paper's dependencies never break another's import::

    from dpgnn.methods import lpgcn          # explicit import, or
    lpgcn = dpgnn.methods.get_method("LPGCN")
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: paper name -> module under dpgnn.methods
METHOD_MODULES = {"lpgcn": "lpgcn", "pgc": "lpgcn", "lpgnn": "lpgnn", "progap": "progap", "drw": "drw",
                  "privgnn": "privgnn"}


def get_method(name: str) -> ModuleType:
    """The module implementing paper ``name`` (case-insensitive); lists the valid names when unknown."""
    key = str(name).strip().lower()
    if key not in METHOD_MODULES:
        raise ValueError(f"unknown method {name!r}; valid names: {sorted(METHOD_MODULES)}")
    return importlib.import_module(f"{__name__}.{METHOD_MODULES[key]}")


__all__ = ["METHOD_MODULES", "get_method"]
