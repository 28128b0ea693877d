"""Layers and models (GCN, VGAE encoder; later SAGE/GAT/MLP) with a name registry.

The names are imported from :mod:`dpgnn.nn.models` on first use (PEP 562): importing a torch-free module of this
package (:mod:`dpgnn.nn.backbones`) does not load torch.
"""

import importlib as _importlib

__all__ = ["GCN", "VGAEEncoder", "MODELS", "register_model", "get_model", "count_parameters"]


def __getattr__(name: str):
    """The public name ``name`` of :mod:`dpgnn.nn.models`, imported on first use."""
    if name in __all__:
        value = getattr(_importlib.import_module("dpgnn.nn.models"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpgnn.nn' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, the lazily imported public ones included."""
    return sorted({*globals(), *__all__})
