"""A user's graph checked and made explicit before any training (:func:`check_graph`), and the δ rule.

Every refusal is one ``ValueError`` line that names the field and the fix; nothing is trained or written before
the checks pass. What the checks change is returned as ``notes`` (and copied into the result): self-loops dropped,
duplicate edges merged, ``y`` of shape ``[N, 1]`` squeezed, a seeded split drawn when the graph has no masks, the
direction of ``edge_index`` (symmetric = undirected), isolated nodes counted.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.data.transforms import clean_edges, increasing, random_node_split
from dpgnn.utils import all_finite, stable_seed

MASKS = ("train_mask", "val_mask", "test_mask")
#: a private/public node split (PrivGNN), passed through to the method that checks it
PUBLIC_MASKS = ("private_mask", "public_train_mask", "public_test_mask")
#: the fractions of the seeded split drawn for a graph without masks (ProGAP §5.3 uses 75/10/15)
SPLIT = (0.75, 0.10, 0.15)


def check_features(x: Any, num_nodes: int | None = None) -> Tensor:
    """``x`` as a float tensor ``[N, F]``; NaN/inf, a wrong shape or a wrong number of rows is one line."""
    if not isinstance(x, Tensor):
        raise ValueError("data.x (node features) is missing or not a tensor: give a float tensor of shape [N, F]")
    if x.dim() != 2 or x.size(0) == 0 or x.size(1) == 0:
        raise ValueError(f"data.x must have shape [N, F] with N, F >= 1, got {list(x.shape)}: reshape it")
    if not (x.is_floating_point() or x.dtype in (torch.int32, torch.int64, torch.uint8, torch.bool)):
        raise ValueError(f"data.x must be numeric, got {x.dtype}")
    x = x.float()
    if not all_finite(x):
        bad = ~torch.isfinite(x).all(1)
        raise ValueError(
            f"data.x holds NaN or infinite values in {int(bad.sum())} of {x.size(0)} rows (first: "
            f"row {int(bad.nonzero()[0])}): impute or drop them before training"
        )
    if num_nodes is not None and x.size(0) != num_nodes:
        raise ValueError(f"data.x has {x.size(0)} rows but the graph has {num_nodes} nodes: one feature row per node")
    return x


def check_labels(y: Any, num_nodes: int) -> tuple[Tensor, list[str]]:
    """``y`` as 1-D int64 labels ``0..C-1`` with every class present; ``[N, 1]`` is squeezed (noted)."""
    notes: list[str] = []
    if not isinstance(y, Tensor):
        raise ValueError("data.y (labels) is missing or not a tensor: give integer class labels of shape [N]")
    if y.dim() == 2 and y.size(1) == 1:
        y = y.view(-1)
        notes.append("y of shape [N, 1] squeezed to [N]")
    if y.dim() != 1:
        raise ValueError(
            f"data.y must be 1-D class labels of shape [N], got shape {list(y.shape)} (multi-label "
            "targets are not supported: give one class per node)"
        )
    if y.numel() != num_nodes:
        raise ValueError(f"data.y has {y.numel()} labels but data.x has {num_nodes} rows: one label per node")
    if y.is_floating_point():
        if not bool(torch.isfinite(y).all()) or bool((y != y.round()).any()):
            raise ValueError(
                "data.y must hold integer class labels 0..C-1, got non-integer floats: map classes to integers"
            )
        notes.append("y converted from float to int64")
    y = y.long()
    if int(y.min()) < 0:
        raise ValueError(f"data.y holds a negative label ({int(y.min())}): labels must be 0..C-1")
    counts = torch.bincount(y)
    if counts.numel() < 2:
        raise ValueError("data.y has a single class: node classification needs at least 2 classes")
    empty = (counts == 0).nonzero().view(-1).tolist()
    if empty:
        raise ValueError(
            f"class(es) {empty[:5]} of 0..{counts.numel() - 1} have no node: relabel to consecutive "
            "classes, e.g. y = torch.unique(y, return_inverse=True)[1]"
        )
    return y, notes


def _symmetric(ei: Tensor, num_nodes: int) -> bool:
    """Whether every pair of the coalesced ``ei`` has its reverse: the reversal maps the set of pairs one-to-one, so
    it is closed iff the sorted reversed keys equal the sorted keys (one sort when ``ei`` is sorted, two otherwise; no
    search)."""
    key = ei[0] * num_nodes + ei[1]
    rev = ei[1] * num_nodes + ei[0]
    return torch.equal(key if increasing(key) else torch.sort(key).values, torch.sort(rev).values)


def check_edges(edge_index: Any, num_nodes: int) -> tuple[Tensor, list[str], bool]:
    """``edge_index`` as int64 ``[2, E]`` without self-loops or duplicates (both noted); returns whether it is
    symmetric (undirected). A graph without edges, or node ids outside ``[0, N)``, is refused."""
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(
            f"data.edge_index must be an integer tensor of shape [2, E], got "
            f"{list(getattr(edge_index, 'shape', [])) or type(edge_index).__name__}"
        )
    if edge_index.is_floating_point():
        raise ValueError("data.edge_index must hold integer node ids, got floats")
    if edge_index.size(1) == 0:
        raise ValueError("data.edge_index has no edges: use method 'mlp' or 'dp-mlp' for a graph without edges")
    ei = edge_index.long().cpu()
    if int(ei.min()) < 0 or int(ei.max()) >= num_nodes:
        raise ValueError(
            f"data.edge_index has node ids outside [0, {num_nodes}) (N = rows of data.x): renumber the "
            "nodes 0..N-1 or add their feature rows"
        )
    ei, cleaning = clean_edges(ei, num_nodes, self_loops="remove", owner="data.edge_index")
    notes = []
    if cleaning.self_loops:
        notes.append(f"{cleaning.self_loops} self-loop(s) dropped (the models add each node's own features)")
    if cleaning.duplicates:
        notes.append(f"{cleaning.duplicates} duplicate edge(s) merged")
    if ei.size(1) == 0:
        raise ValueError("data.edge_index has only self-loops: use method 'mlp' or 'dp-mlp' for a graph without edges")
    undirected = _symmetric(ei, num_nodes)
    touched = torch.zeros(num_nodes, dtype=torch.bool)
    touched[ei.reshape(-1)] = True
    isolated = num_nodes - int(touched.sum())
    notes.append(
        f"edge_index is {'symmetric: undirected' if undirected else 'not symmetric: directed'} "
        f"({ei.size(1)} directed edges)"
    )
    if isolated:
        notes.append(f"{isolated} isolated node(s) (no edge): classified from their features alone")
    return ei, notes, undirected


def check_masks(data: Data, num_nodes: int, seed: int) -> tuple[dict[str, Tensor], list[str]]:
    """The train/val/test masks: all three given (boolean ``[N]``, a non-empty training set), or none (a seeded
    75/10/15 split, :func:`dpgnn.data.transforms.random_node_split`, noted)."""
    given = [m for m in MASKS if getattr(data, m, None) is not None]
    if not given:
        split_seed = stable_seed("fit-split", seed)
        out = random_node_split(Data(num_nodes=num_nodes), *SPLIT, seed=split_seed)
        masks = {m: getattr(out, m) for m in MASKS}
        return masks, [
            f"no masks given: random 75/10/15 train/val/test split of the nodes drawn with seed "
            f"{split_seed} (stable_seed('fit-split', {seed}))"
        ]
    if len(given) < 3:
        missing = [m for m in MASKS if m not in given]
        raise ValueError(f"data has {given} but not {missing}: give all three masks or none (a seeded split)")
    masks = {}
    for m in MASKS:
        t = getattr(data, m)
        if not isinstance(t, Tensor) or t.dim() != 1 or t.numel() != num_nodes:
            raise ValueError(
                f"data.{m} must be a boolean tensor of shape [{num_nodes}], got {list(getattr(t, 'shape', []))}"
            )
        masks[m] = t.bool().cpu()
    if not bool(masks["train_mask"].any()):
        raise ValueError("data.train_mask selects no node: at least one training node is needed")
    return masks, []


def check_graph(data: Any, seed: int) -> tuple[Data, dict[str, Any]]:
    """The user's graph checked: a new :class:`Data` (``x`` float, ``y`` int64 ``[N]``, clean ``edge_index``,
    masks) and ``notes`` (``changes``: what was done to the input; ``undirected``; ``num_nodes``)."""
    if not isinstance(data, Data):
        raise ValueError(
            f"data must be a torch_geometric.data.Data, got {type(data).__name__} (see dpgnn.api.load_graph for files)"
        )
    x = check_features(getattr(data, "x", None))
    n = x.size(0)
    y, changes = check_labels(getattr(data, "y", None), n)
    ei, edge_notes, undirected = check_edges(getattr(data, "edge_index", None), n)
    masks, split_notes = check_masks(data, n, seed)
    public = {m: data[m] for m in PUBLIC_MASKS if getattr(data, m, None) is not None}  # PrivGNN's split, checked there
    public = {m: t.cpu() if isinstance(t, Tensor) else t for m, t in public.items()}  # on the CPU, as ei and masks
    clean = Data(x=x.cpu(), y=y.cpu(), edge_index=ei, num_nodes=n, **masks, **public)
    return clean, {
        "changes": changes + edge_notes + split_notes,
        "undirected": undirected,
        "num_nodes": n,
        "num_classes": int(y.max()) + 1,
        "split": "seeded" if split_notes else "given",
    }


def check_new_graph(data: Any, num_features: int) -> Data:
    """A graph to predict on: features checked (``y`` and masks not needed), edges cleaned, same feature space."""
    if not isinstance(data, Data):
        raise ValueError(f"data must be a torch_geometric.data.Data, got {type(data).__name__}")
    x = check_features(getattr(data, "x", None))
    if x.size(1) != num_features:
        raise ValueError(
            f"data.x has {x.size(1)} features but the model was trained on {num_features}: give "
            "features in the training graph's feature space"
        )
    ei = getattr(data, "edge_index", None)
    if ei is None or (isinstance(ei, Tensor) and ei.numel() == 0):
        ei = torch.empty(2, 0, dtype=torch.long)
    else:
        if not isinstance(ei, Tensor) or ei.dim() != 2 or ei.size(0) != 2:
            raise ValueError("data.edge_index must be an integer tensor of shape [2, E]")
        ei = ei.long().cpu()
        if int(ei.min()) < 0 or int(ei.max()) >= x.size(0):
            raise ValueError(f"data.edge_index has node ids outside [0, {x.size(0)}): renumber the nodes 0..N-1")
        ei = clean_edges(ei, x.size(0), self_loops="remove", owner="data.edge_index")[0]
    return Data(x=x, edge_index=ei, num_nodes=x.size(0))


def delta_rule(level: str, num_nodes: int) -> tuple[float, str]:
    """δ from the public node count ``N`` when the user gives none: ``10^-(digits of N + 1)`` (< 1/(10 N), below
    1/E for an average degree under 10) at edge level, ``10^-(digits of N)`` (< 1/N) at the node-unit levels
    (node, feature) -- the authors' rule of ProGAP §5.3 (δ < 1/#private units) with ``N`` in place of the private
    counts of edges and training nodes, which are not public."""
    digits = len(str(int(num_nodes)))
    if level != "edge":
        return 10.0**-digits, f"10^-(digits of N={num_nodes}) < 1/N (public node count; ProGAP §5.3's rule)"
    return 10.0 ** -(digits + 1), (
        f"10^-(digits of N={num_nodes} + 1) < 1/(10N) (public node count; ProGAP §5.3's "
        "rule δ < 1/#edges for average degree < 10)"
    )
