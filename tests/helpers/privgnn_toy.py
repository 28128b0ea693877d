"""A small PrivGNN split (private graph, public train/test nodes) for fast tests of the method and its series."""

from __future__ import annotations

import torch
from torch_geometric.data import Data

from dpgnn.methods import privgnn as P


def toy_privgnn(
    n_priv: int = 60, n_pub: int = 50, d: int = 6, c: int = 3, seed: int = 0, name: str = "toy"
) -> P.PrivGNNData:
    """``n_priv`` private and ``n_pub`` public nodes (half of them public train), features ``one_hot(y)·2 + noise``
    and 400 random undirected edges; the query order is seeded (``order_seed=1``)."""
    g = torch.Generator().manual_seed(seed)
    n = n_priv + n_pub
    y = torch.randint(0, c, (n,), generator=g)
    x = torch.randn(n, d, generator=g) + 2.0 * torch.nn.functional.one_hot(y, d).float()
    src, dst = torch.randint(0, n, (400,), generator=g), torch.randint(0, n, (400,), generator=g)
    keep = src != dst
    ei = torch.stack([torch.cat([src[keep], dst[keep]]), torch.cat([dst[keep], src[keep]])])
    priv = torch.zeros(n, dtype=torch.bool)
    priv[:n_priv] = True
    tr = torch.zeros(n, dtype=torch.bool)
    tr[n_priv : n_priv + n_pub // 2] = True
    data = Data(
        x=x, y=y, edge_index=ei, num_nodes=n, private_mask=priv, public_train_mask=tr, public_test_mask=~priv & ~tr
    )
    return P.prepare_from_data(data, name, order_seed=1)
