"""Graph transforms and splits. None of them mutates its input: each returns a new :class:`Data`.

Randomness always comes from an explicit ``torch.Generator`` seeded with the given seed (0 is a seed).
"""

from __future__ import annotations

import copy
import operator
import random
import threading
from dataclasses import dataclass

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, negative_sampling, remove_self_loops, to_undirected

from dpgnn.utils import make_generator, seed_from_name

__all__ = [
    "seed_from_name",
    "minmax_normalize",
    "random_node_split",
    "split_edges",
    "undirected_edges",
    "EdgeCleaning",
    "clean_edges",
    "increasing",
    "with_clean_edges",
    "SELF_LOOP_RULES",
    "subgraph_nodes",
    "filter_classes",
    "remove_isolated_nodes",
    "drop_self_loops",
    "relabel_classes",
    "per_class_split",
    "private_public_split",
    "index_to_mask",
]


def _copy(data: Data) -> Data:
    """Shallow copy with fresh attribute storage (tensors are shared but never modified in place here)."""
    return copy.copy(data)


def index_to_mask(index: Tensor, size: int) -> Tensor:
    """``[size]`` bool mask, True at ``index`` (node ids, repeats allowed)."""
    mask = torch.zeros(size, dtype=torch.bool)
    mask[index] = True
    return mask


def undirected_edges(edge_index: Tensor, num_nodes: int, self_loops: bool = False) -> Tensor:
    """Both directions of every edge, sorted, without duplicates (and without self-loops unless asked)."""
    ei = edge_index.to(torch.long)
    if not self_loops:
        ei, _ = remove_self_loops(ei)
    return to_undirected(ei, num_nodes=num_nodes)


#: what :func:`clean_edges` does with self-loops ``(u, u)``: keep them or remove them
SELF_LOOP_RULES = ("keep", "remove")


@dataclass(frozen=True)
class EdgeCleaning:
    """What :func:`clean_edges` did to a user's ``edge_index``.

    Attributes:
        entries: columns of the ``edge_index`` given.
        duplicates: columns dropped because they repeat an earlier ``(u, v)`` (the edge list was coalesced).
        self_loops: self-loops ``(u, u)`` removed (0 when the method keeps them).
    """

    entries: int
    duplicates: int = 0
    self_loops: int = 0

    @property
    def changed(self) -> bool:
        """Whether the cleaned edge list differs from the given one (else it is the given tensor itself)."""
        return bool(self.duplicates or self.self_loops)

    def describe(self) -> str:
        """One line for a ledger, e.g. ``"edge_index: 3 repeated entries merged (of 40 entries)"``."""
        done = [f"{self.duplicates} repeated entries merged"] if self.duplicates else []
        done += [f"{self.self_loops} self-loops removed"] if self.self_loops else []
        return f"edge_index: {', '.join(done)} (of {self.entries} entries)" if done else "edge_index as given"


def increasing(key: Tensor) -> bool:
    """Whether the 1-D ``key`` is strictly increasing (one pass, no sort): the edge keys ``source · N + target`` of a
    coalesced edge list, sorted with no pair twice, which sorting or merging would give back unchanged."""
    return key.numel() < 2 or bool((key[1:] > key[:-1]).all())


def clean_edges(
    edge_index: Tensor, num_nodes: int, *, self_loops: str = "keep", undirected: bool = False, owner: str = "edge_index"
) -> tuple[Tensor, EdgeCleaning]:
    """The edge list a method may use: each directed pair ``(u, v)`` at most once, self-loops as the method needs.

    Every method that reads a user's ``edge_index`` goes through here. A repeated column would count one edge
    several times: NAP (GAP/ProGAP) would sum its unit row twice and removing one undirected edge would move the
    aggregates by ``2√2`` instead of the ``√2`` (``1`` per direction) the edge-level ledger assumes; degree bounds
    would spend several slots on one neighbour. Repeated columns are therefore merged (coalesced): the cleaned
    graph is the simple graph of the pairs given, so the sensitivity arguments hold for it unchanged.

    Args:
        edge_index: ``[2, E]`` integer tensor, ``edge_index[0]`` → ``edge_index[1]``.
        num_nodes: number of nodes; ids must lie in ``[0, num_nodes)``.
        self_loops: ``"keep"`` or ``"remove"`` (:data:`SELF_LOOP_RULES`).
        undirected: require the reverse of every pair (an undirected graph in both directions, as every loader
            gives it). A one-direction pair is refused with a one-line error naming the fix
            (:func:`undirected_edges`): the edge-level guarantees of GAP/ProGAP/EdgeRand protect one undirected
            edge, i.e. both of its directions, and EdgeRand reads the upper triangle only.
        owner: the method's name for the error messages.

    Returns:
        The cleaned ``edge_index`` -- the given tensor itself when nothing changed (paper datasets: their loaders
        give coalesced, undirected, loop-free graphs, so their runs are unchanged), else the coalesced pairs sorted
        by ``(source, target)`` on the same device -- and the :class:`EdgeCleaning` report.
    """
    if self_loops not in SELF_LOOP_RULES:
        raise ValueError(f"self_loops must be one of {SELF_LOOP_RULES}, got {self_loops!r}")
    try:
        n = operator.index(num_nodes)
    except TypeError:
        n = 0
    if isinstance(num_nodes, bool) or n < 1:
        raise ValueError(f"{owner}: num_nodes must be an integer >= 1, got {num_nodes!r}")
    num_nodes = n
    if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(
            f"{owner}: edge_index must be a tensor of shape [2, E], got "
            f"{tuple(getattr(edge_index, 'shape', ())) or type(edge_index).__name__}"
        )
    if edge_index.dtype.is_floating_point or edge_index.dtype.is_complex or edge_index.dtype == torch.bool:
        raise ValueError(f"{owner}: edge_index must hold integer node ids, got dtype {edge_index.dtype}")
    e = edge_index.size(1)
    if e == 0:
        return edge_index, EdgeCleaning(0)
    ei = edge_index.to(torch.long)
    if int(ei.min()) < 0 or int(ei.max()) >= num_nodes:
        raise ValueError(f"{owner}: edge_index has node ids outside [0, num_nodes={num_nodes})")
    loops = 0
    if self_loops == "remove":
        keep = ei[0] != ei[1]
        loops = e - int(keep.sum())
        if loops:
            ei = ei[:, keep]
    key = ei[0] * num_nodes + ei[1]
    # sorted: (source, target) order, as torch_geometric's coalesce; a coalesced list (every loader's) is its own
    pairs = key if increasing(key) else torch.unique(key)
    report = EdgeCleaning(e, duplicates=key.numel() - pairs.numel(), self_loops=loops)
    if undirected:
        rev = (pairs % num_nodes) * num_nodes + pairs // num_nodes
        # the reversal is one-to-one, so every pair has its reverse iff the reversed keys, sorted, are the pairs:
        # one sort (the search below, E random lookups, is ~10x slower on large graphs; kept to count the misses)
        if not torch.equal(torch.sort(rev).values, pairs):
            pos = torch.searchsorted(pairs, rev).clamp(max=pairs.numel() - 1)
            one_way = int((pairs[pos] != rev).sum())
            raise ValueError(
                f"{owner}: edge_index is not undirected ({one_way} of {pairs.numel()} pairs lack their "
                f"reverse) but its edge-level guarantee is for one undirected edge (both directions); "
                f"pass dpgnn.data.transforms.undirected_edges(edge_index, num_nodes)"
            )
    if not report.changed:
        return edge_index, report
    return torch.stack([pairs // num_nodes, pairs % num_nodes]), report


def with_clean_edges(
    data: Data, *, self_loops: str = "keep", undirected: bool = False, owner: str = "edge_index"
) -> tuple[Data, EdgeCleaning]:
    """:func:`clean_edges` on ``data.edge_index``: ``data`` itself when nothing changed, else a shallow copy with the
    cleaned edge list (the input is never modified)."""
    ei, report = clean_edges(data.edge_index, data.num_nodes, self_loops=self_loops, undirected=undirected, owner=owner)
    if not report.changed:
        return data, report
    out = _copy(data)
    out.edge_index = ei
    return out, report


def minmax_normalize(data: Data, drop_constant: bool = False) -> Data:
    """Scale every feature column to [0, 1] with its min and max over all nodes.

    Zero-range (constant) columns become 0, or are removed when ``drop_constant`` (LPGNN,
    docs/papers/lpgnn.md#data-pipeline step 2).
    """
    x = data.x.to(torch.float32)
    lo, hi = torch.aminmax(x, dim=0)
    rng = hi - lo
    const = rng == 0
    if drop_constant and bool(const.any()):
        keep = ~const
        out_x = x[:, keep]  # a new tensor: the input is never written
        out_x.sub_(lo[keep]).div_(rng[keep])
    else:
        out_x = x - lo  # a new tensor
        out_x.div_(torch.where(const, torch.ones_like(rng), rng))  # constant columns are exactly 0 here
    out = _copy(data)
    out.x = out_x.contiguous()
    return out


def random_node_split(
    data: Data,
    train: float = 0.5,
    val: float = 0.25,
    test: float = 0.25,
    *,
    seed: int | torch.Generator,
    among: Tensor | None = None,
) -> Data:
    """Random train/val/test masks over the nodes (or over the nodes with ``among[i]`` True).

    Sizes: ``n_val = round(val * n)``, ``n_test = round(test * n)`` and the training set gets the rest when
    ``train + val + test == 1`` (PyG's ``"train_rest"``), else ``round(train * n)``. Nodes outside ``among``
    are in no mask. A permutation is drawn with ``torch.Generator(seed)``: deterministic given the seed.
    """
    if min(train, val, test) < 0 or train + val + test > 1 + 1e-9:
        raise ValueError(f"fractions must be >= 0 and sum to <= 1, got {train}, {val}, {test}")
    n = data.num_nodes
    pool = torch.arange(n) if among is None else among.to(torch.bool).nonzero().view(-1)
    gen = make_generator(seed)
    perm = pool[torch.randperm(pool.numel(), generator=gen)]
    m = pool.numel()
    n_val, n_test = int(round(val * m)), int(round(test * m))
    n_train = m - n_val - n_test if abs(train + val + test - 1) < 1e-9 else int(round(train * m))
    out = _copy(data)
    out.train_mask = index_to_mask(perm[:n_train], n)
    out.val_mask = index_to_mask(perm[n_train : n_train + n_val], n)
    out.test_mask = index_to_mask(perm[n_train + n_val : n_train + n_val + n_test], n)
    return out


#: one split at a time swaps PyG's `random` for a private generator (see :func:`split_edges`)
_NEGATIVE_SAMPLING_LOCK = threading.Lock()


def split_edges(data: Data, val: float = 0.05, test: float = 0.10, *, seed: int | torch.Generator) -> Data:
    """LPGCN link-prediction split (docs/papers/lpgcn.md#data-and-splits): upper-triangle undirected edges split
    train/val/test.

    The ``m`` undirected edges are the distinct pairs ``(min(u, v), max(u, v))``, ``u != v``, of ``data.edge_index``
    (one direction or both, repeated entries counted once: the same pairs as the upper triangle of an undirected
    graph). ``n_val = floor(val * m)``, ``n_test = floor(test * m)`` of them (after a permutation
    drawn with ``torch.Generator(seed)``); the training edges are re-symmetrised into ``train_pos_edge_index``;
    ``val/test_pos_edge_index`` hold one direction per edge; ``val/test_neg_edge_index`` are as many negatives
    from :func:`torch_geometric.utils.negative_sampling` on the full graph, drawn after seeding torch's and Python's
    global RNGs from the same generator (and restoring them), so the whole split is deterministic given ``seed``.
    """
    gen = make_generator(seed)
    n = data.num_nodes
    row, col = data.edge_index
    keep = row != col
    row, col = row[keep], col[keep]
    # each undirected pair once as (min, max), whichever direction(s) the edge list holds and however often
    ei = coalesce(torch.stack([torch.minimum(row, col), torch.maximum(row, col)]), num_nodes=n)
    row, col = ei
    m = row.numel()
    n_val, n_test = int(val * m), int(test * m)
    perm = torch.randperm(m, generator=gen)
    row, col = row[perm], col[perm]
    out = _copy(data)
    out.val_pos_edge_index = torch.stack([row[:n_val], col[:n_val]])
    out.test_pos_edge_index = torch.stack([row[n_val : n_val + n_test], col[n_val : n_val + n_test]])
    train = torch.stack([row[n_val + n_test :], col[n_val + n_test :]])
    out.train_pos_edge_index = to_undirected(train, num_nodes=n)
    neg_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=gen))
    # PyG's negative_sampling draws from Python's `random` module (and torch's global RNG). Other threads of the
    # process may draw from the global `random` meanwhile (a Dask worker's event loop does), so the call gets a
    # private `random.Random(neg_seed)` -- the same sequence the global generator gives after `seed(neg_seed)`,
    # which nothing else can advance -- and torch's global RNG seeded for the call and restored after it.
    import torch_geometric.utils._negative_sampling as pyg_negative

    t_state = torch.random.get_rng_state()
    with _NEGATIVE_SAMPLING_LOCK:
        shared = pyg_negative.random
        try:
            torch.manual_seed(neg_seed)
            pyg_negative.random = random.Random(neg_seed)
            neg = negative_sampling(
                undirected_edges(data.edge_index, n, self_loops=True),
                num_nodes=n,
                num_neg_samples=n_val + n_test,
                force_undirected=False,
            )
        finally:
            pyg_negative.random = shared
            torch.random.set_rng_state(t_state)
    if neg.size(1) < n_val + n_test:
        raise RuntimeError(f"negative_sampling returned {neg.size(1)} < {n_val + n_test} negatives (graph too dense)")
    out.val_neg_edge_index = neg[:, :n_val]
    out.test_neg_edge_index = neg[:, n_val : n_val + n_test]
    return out


def subgraph_nodes(data: Data, keep: Tensor) -> Data:
    """Induced subgraph on the nodes where ``keep`` (bool mask) is True; node-level tensors are sliced.

    Node-level attributes are those whose first dimension equals ``num_nodes`` (x, y, masks, ...).
    """
    keep = keep.to(torch.bool)
    n = data.num_nodes
    new_id = torch.full((n,), -1, dtype=torch.long)
    new_id[keep] = torch.arange(int(keep.sum()))
    out = Data()
    for key, value in data.items():
        if key == "edge_index":
            r, c = value
            m = keep[r] & keep[c]
            out.edge_index = torch.stack([new_id[r[m]], new_id[c[m]]])
        elif key == "num_nodes":
            continue
        elif isinstance(value, Tensor) and value.dim() > 0 and value.size(0) == n:
            out[key] = value[keep]
        else:
            out[key] = value
    out.num_nodes = int(keep.sum())
    return out


def relabel_classes(data: Data) -> Data:
    """Map the labels present (``y >= 0``) to 0..C-1 in increasing order; negative labels stay -1."""
    y = data.y
    lab = y >= 0
    classes = torch.unique(y[lab])
    new = torch.full_like(y, -1)
    new[lab] = torch.searchsorted(classes, y[lab])
    out = _copy(data)
    out.y = new
    return out


def filter_classes(data: Data, min_count: int = 0, top_k: int | None = None) -> Data:
    """Keep the nodes whose class has at least ``min_count`` nodes (and/or is among the ``top_k`` largest),
    drop unlabelled nodes (y < 0), take the induced subgraph and relabel the kept classes 0..C-1.
    """
    y = data.y
    lab = y >= 0
    counts = torch.bincount(y[lab])
    ok = counts >= max(min_count, 1)
    if top_k is not None:
        order = torch.argsort(counts, descending=True, stable=True)[:top_k]
        top = torch.zeros_like(ok)
        top[order] = True
        ok &= top
    keep = lab.clone()
    keep[lab] = ok[y[lab]]
    return relabel_classes(subgraph_nodes(data, keep))


def drop_self_loops(data: Data) -> Data:
    """A copy of ``data`` whose ``edge_index`` has no self-loops ``(u, u)`` (other edges and their order kept)."""
    out = _copy(data)
    out.edge_index, _ = remove_self_loops(data.edge_index)
    return out


def remove_isolated_nodes(data: Data) -> Data:
    """Drop nodes without any (non-self-loop) edge; induced subgraph of the rest."""
    ei, _ = remove_self_loops(data.edge_index)
    deg = torch.zeros(data.num_nodes, dtype=torch.long)
    deg.scatter_add_(0, ei.reshape(-1), torch.ones(ei.numel(), dtype=torch.long))
    return subgraph_nodes(data, deg > 0)


def per_class_split(y: Tensor, per_class: int, *, generator: torch.Generator, among: Tensor | None = None) -> Tensor:
    """Indices of ``per_class`` random nodes of each class (fewer when a class is smaller)."""
    pool = torch.ones_like(y, dtype=torch.bool) if among is None else among.clone()
    picked = []
    for c in torch.unique(y[pool & (y >= 0)]).tolist():
        idx = (pool & (y == c)).nonzero().view(-1)
        picked.append(idx[torch.randperm(idx.numel(), generator=generator)[:per_class]])
    return torch.cat(picked).sort().values if picked else torch.empty(0, dtype=torch.long)


def private_public_split(
    data: Data,
    *,
    seed: int | torch.Generator,
    private_per_class: int | None = None,
    num_private: int | None = None,
    num_public_train: int | None = None,
    num_public_test: int | None = None,
    public_test_share: float | None = None,
) -> Data:
    """PrivGNN's private/public node partition (docs/papers/privgnn.md#data-and-splits), as masks on one graph.

    Private nodes: ``private_per_class`` random nodes per class, or ``num_private`` random nodes. Public nodes:
    ``num_public_train`` + ``num_public_test`` random remaining nodes, or (when those are ``None``) all the
    remaining nodes with a ``public_test_share`` of them as public test. Sets ``private_mask``,
    ``public_train_mask`` and ``public_test_mask``; the private graph and the public graph are the induced
    subgraphs on ``private_mask`` and ``public_train_mask | public_test_mask`` (they share no edges).
    """
    gen = make_generator(seed)
    n = data.num_nodes
    labelled = data.y >= 0 if data.y.dim() == 1 else torch.ones(n, dtype=torch.bool)
    if private_per_class is not None:
        priv = per_class_split(data.y, private_per_class, generator=gen, among=labelled)
    elif num_private is not None:
        pool = labelled.nonzero().view(-1)
        priv = pool[torch.randperm(pool.numel(), generator=gen)[:num_private]]
    else:
        raise ValueError("give private_per_class or num_private")
    rest = labelled & ~index_to_mask(priv, n)
    pool = rest.nonzero().view(-1)
    pool = pool[torch.randperm(pool.numel(), generator=gen)]
    if num_public_train is not None and num_public_test is not None:
        if num_public_train + num_public_test > pool.numel():
            raise ValueError(f"asked for {num_public_train}+{num_public_test} public nodes, only {pool.numel()} left")
        tr, te = pool[:num_public_train], pool[num_public_train : num_public_train + num_public_test]
    else:
        share = 0.5 if public_test_share is None else public_test_share
        n_te = int(round(share * pool.numel()))
        tr, te = pool[n_te:], pool[:n_te]
    out = _copy(data)
    out.private_mask = index_to_mask(priv, n)
    out.public_train_mask = index_to_mask(tr, n)
    out.public_test_mask = index_to_mask(te, n)
    return out
