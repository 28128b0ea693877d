"""Layers and models (GCN, VGAE encoder; later SAGE/GAT/MLP) with a name registry."""

from dpgnn.nn.models import GCN, MODELS, VGAEEncoder, count_parameters, get_model, register_model

__all__ = ["GCN", "VGAEEncoder", "MODELS", "register_model", "get_model", "count_parameters"]
