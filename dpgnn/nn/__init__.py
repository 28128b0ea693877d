"""Layers and models (GCN, VGAE encoder; later SAGE/GAT/MLP) with a name registry.

The names are imported from :mod:`dpgnn.nn.models` on first use (PEP 562): importing a torch-free module of this
package (:mod:`dpgnn.nn.backbones`) does not load torch.
"""

from dpgnn.utils import lazy_exports

__all__ = ["GCN", "VGAEEncoder", "MODELS", "register_model", "get_model", "count_parameters"]

__getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "models"))
