"""Tiny graphs and settings for the dpgnn.fit / dpgnn train tests (tests/api/)."""

import torch
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

#: tiny settings per method (a few epochs; one aggregation)
FAST = {
    "progap": {"epochs": 2, "depth": 1},
    "gap": {"epochs": 2, "hops": 1},
    "dp-gnn": {"epochs": 2},
    "dp-mlp": {"epochs": 2},
    "mlp": {"epochs": 2},
    "graphsage": {"epochs": 2, "depth": 1},
    "edgerand": {"epochs": 2, "depth": 1},
    **{m: {"max_epochs": 2, "min_epochs": 1} for m in ("lm", "pm", "pgc")},
    "mbm": {"epochs": 2, "k_x": 1, "k_y": 1},
    "rr": {"epochs": 2, "k_x": 1, "k_y": 1},
    "drw": {"max_steps": 3, "hidden": 8},
    "fdp": {"max_steps": 3, "hidden": 8},
    "privgnn": {"queries": 3, "teacher_epochs": 1, "student_epochs": 1, "hidden": 8},
    "pate": {"queries": 3, "teacher_epochs": 1, "student_epochs": 1, "hidden": 8, "num_teachers": 3},
}
EPS = {"none": None, "edge": 2.0, "node": 8.0, "feature": 4.0, "label": 2.0, "feature+label": 4.0}


def random_graph(n=60, f=5, c=3, seed=0, undirected=True):
    gen = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % c
    x = 0.6 * torch.rand(n, f, generator=gen)  # in [0, 1], as the LDP feature mechanisms need
    x[torch.arange(n), y % f] += 0.4
    ei = torch.randint(0, n, (2, 4 * n), generator=gen)
    ei = ei[:, ei[0] != ei[1]]
    if undirected:
        ei = to_undirected(ei, num_nodes=n)
    return Data(x=x, y=y, edge_index=ei)
