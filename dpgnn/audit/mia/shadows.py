"""The shadow models of PrivGNN's membership inference (:mod:`dpgnn.audit.mia`): which public nodes a shadow
trains on and is queried on, per attack and shadow size, and its log-posteriors on its members and non-members."""

from __future__ import annotations

import torch

from dpgnn.audit.catalog import SHADOW_SIZES
from dpgnn.methods import privgnn as P
from dpgnn.utils import make_generator, stable_seed, torch_global_seed


def _shadow_split(
    graphs: P.PrivGNNData, seed: int, size: str = "quarter", n_target: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(shadow members, shadow non-members), disjoint random sets of public nodes.

    ``"quarter"``: a random half of the public nodes, halved (the default design); ``"half"``: all of them, halved;
    ``"target"``: as many members as the target has (``n_target``, at most half the public nodes) and as many
    non-members."""
    if size not in SHADOW_SIZES:
        raise ValueError(f"shadow size must be one of {SHADOW_SIZES}, got {size!r}")
    gen = make_generator(stable_seed("shadow-split", seed))
    n = graphs.x_pub.size(0)
    perm = torch.randperm(n, generator=gen)
    if size == "quarter":
        mem, non = perm[: (n // 2) // 2], perm[(n // 2) // 2 : n // 2]
    else:
        if size == "target" and (n_target is None or n_target < 1):
            raise ValueError("shadow size 'target' needs the target's member count n_target >= 1")
        m = n // 2 if size == "half" else min(int(n_target), n // 2)
        mem, non = perm[:m], perm[m : 2 * m]
    return torch.sort(mem).values, torch.sort(non).values


def _shadow1_posteriors(
    graphs: P.PrivGNNData, *, seed: int, epochs: int, device: str, size: str = "quarter", n_target: int | None = None
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Attack-1's shadow (inductive, like B1): trained on its members' induced subgraph. Its log-posteriors on
    (members, non-members) per protocol: members on their own subgraph; non-members on theirs (``"score"``) or, as
    published, on the whole public graph (``"rebmigraph"``)."""
    mem, non = _shadow_split(graphs, seed, size, n_target)
    n = graphs.x_pub.size(0)
    e_mem = P.induced_subgraph(graphs.edge_pub, mem, n)
    shadow = P.fit_sage(
        graphs.x_pub[mem],
        e_mem,
        torch.arange(mem.numel()),
        graphs.y_pub[mem],
        seed=stable_seed(seed, "shadow1"),
        epochs=epochs,
        num_classes=graphs.num_classes,
        device=device,
    )
    lp_mem = P.log_posteriors(shadow, graphs.x_pub[mem], e_mem, device)
    lp_own = P.log_posteriors(shadow, graphs.x_pub[non], P.induced_subgraph(graphs.edge_pub, non, n), device)
    lp_whole = P.log_posteriors(shadow, graphs.x_pub, graphs.edge_pub, device)[non]
    return {"score": (lp_mem, lp_own), "rebmigraph": (lp_mem, lp_whole)}


def _shadow2_posteriors(
    graphs: P.PrivGNNData, *, seed: int, epochs: int, device: str, size: str = "quarter", n_target: int | None = None
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Attack-2's shadow (transductive, like the student): trained on its members' labels within the induced
    subgraph of its members and non-members, or, with ``size="target"`` (as many members as the student's queries),
    within the whole public graph as the student is. Its log-posteriors on (members, non-members), any protocol."""
    mem, non = _shadow_split(graphs, seed, size, n_target)
    n = graphs.x_pub.size(0)
    nodes = torch.arange(n) if size == "target" else torch.sort(torch.cat([mem, non])).values
    edges = graphs.edge_pub if size == "target" else P.induced_subgraph(graphs.edge_pub, nodes, n)
    pos = torch.full((n,), -1, dtype=torch.long)
    pos[nodes] = torch.arange(nodes.numel())
    shadow = P.fit_sage(
        graphs.x_pub[nodes],
        edges,
        pos[mem],
        graphs.y_pub[mem],
        seed=stable_seed(seed, "shadow2"),
        epochs=epochs,
        num_classes=graphs.num_classes,
        device=device,
    )
    logp = P.log_posteriors(shadow, graphs.x_pub[nodes], edges, device)
    pair = (logp[pos[mem]], logp[pos[non]])
    return {"score": pair, "rebmigraph": pair}


def _shadow_posteriors(
    graphs: P.PrivGNNData,
    attack: str,
    *,
    seed: int,
    epochs: int,
    device: str,
    size: str = "quarter",
    n_target: int | None = None,
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """``attack``'s shadow, trained with dropout masks seeded from ``seed`` and its role."""
    shadow = _shadow1_posteriors if attack == "attack1" else _shadow2_posteriors
    with torch_global_seed(stable_seed(seed, "dropout", "shadow" + attack[-1]), device):
        return shadow(graphs, seed=seed, epochs=epochs, device=device, size=size, n_target=n_target)
