"""Parsers of the datasets' real raw formats. Each takes ``{raw file name: path}`` and returns a PyG ``Data``
with float32 ``x``, long ``y`` and an undirected ``edge_index`` (both directions, no duplicates)."""
