"""The names of LPGNN's GNN backbones (:mod:`dpgnn.nn.lpgnn` builds them), in the paper's order.

A module of its own, without torch: the series order their figures' panels by it without loading the models.
"""

#: the backbones :class:`dpgnn.nn.lpgnn.Backbone` and :class:`dpgnn.nn.lpgnn.BatchedBackbone` build
BACKBONES = ("gcn", "sage", "gat")
