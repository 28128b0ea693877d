"""Your own graph: train any front-door method at a chosen ε and get the trained model back.

::

    import dpgnn
    model = dpgnn.fit(data, "progap", level="edge", epsilon=1.0)   # data: a torch_geometric Data
    model.metrics, model.ledger["epsilon"], model.ledger["delta_rule"]
    model.predict(new_data, labels=True)
    model.save("model.pt"); dpgnn.load("model.pt")

:func:`describe` lists the methods, their levels and typed config fields; :mod:`dpgnn.api.io` reads a graph from
a ``.pt``, an ``.npz`` or a folder of CSV files.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from dpgnn.api.configs import field_rows, make_config
from dpgnn.api.inputs import check_graph, delta_rule
from dpgnn.api.methods import METHODS, front_door
from dpgnn.api.model import TrainedModel, load, write_result

__all__ = ["fit", "describe", "load", "TrainedModel", "METHODS", "write_result"]


def _budget(level: str, epsilon: Any, delta: Any, pure: bool) -> tuple[float | None, float | None]:
    if level == "none":
        if epsilon is not None and not (isinstance(epsilon, (int, float)) and math.isinf(epsilon)):
            raise ValueError(f"epsilon must be omitted (or inf) at level 'none' (non-private), got {epsilon!r}")
        return None, None
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < math.inf:
        raise ValueError(f"epsilon must be a finite number > 0 at level {level!r}, got {epsilon!r}")
    if delta is not None:
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise ValueError(f"delta must be a number in (0, 1) (or omitted: the documented rule), got {delta!r}")
        if pure and delta != 0:
            raise ValueError(f"this method is pure ε-DP (δ = 0): omit delta, got {delta!r}")
        if not pure and delta == 0:
            raise ValueError("delta must be in (0, 1) for an (ε, δ) method (or omitted: the documented rule)")
    return float(epsilon), (None if delta is None else float(delta))


def fit(
    data: Any,
    method: str,
    *,
    level: str,
    epsilon: float | None = None,
    delta: float | None = None,
    seed: int = 0,
    device: str = "auto",
    **config: Any,
) -> TrainedModel:
    """Train ``method`` on a user's graph at privacy ``level`` and budget ``(epsilon, delta)``.

    The graph is checked first (:func:`dpgnn.api.inputs.check_graph`): NaN/inf features, labels that are not
    1-D integers 0..C-1 with every class present, mismatched sizes, node ids out of range, a graph without edges
    or partial masks raise one line naming the fix; self-loops are dropped, duplicate edges merged, a missing
    split drawn with the seed (all stated in ``model.notes``). Edge level needs an undirected graph (a symmetric
    ``edge_index``; a one-direction one is refused with the fix): the neighbouring relation is then one undirected
    edge (both directions, L2 sensitivity √2), or one directed edge with ``edge_relation='directed'`` (the ProGAP
    authors' relation, stated in the ledger).

    Args:
        data: a :class:`torch_geometric.data.Data` with ``x`` ``[N, F]``, ``y`` ``[N]``, ``edge_index`` ``[2, E]``
            and optional ``train_mask``/``val_mask``/``test_mask``.
        method: a front-door name (:func:`describe` lists them): ``progap``, ``gap``, ``dp-gnn``, ``dp-mlp``,
            ``mlp``, ``graphsage``, ``edgerand``, ``lm``/``pm``/``pgc`` (LDP features + GCN), ``mbm``/``rr``
            (LDP features and/or labels + KProp), ``drw``/``fdp`` (DP-SGD on subgraphs, node features private),
            ``privgnn``/``pate`` (teachers and a public student; a public part given, else a seeded split).
        level: ``none`` (non-private), ``edge`` (neighbouring graphs differ in one edge), ``node`` (one node
            with its edges added/removed), or local DP of each node's ``feature`` vector, ``label`` or both
            (``feature+label``), as the method supports.
        epsilon: the privacy budget ε (finite, > 0); omitted at ``none``. For ``lm``/``pm``/``pgc`` it is per
            feature (LPGCN's convention; the ledger's ``epsilon_node_total`` = ε·d); for ``mbm`` at
            ``feature+label`` it is ε_x (the config's ``label_epsilon`` is ε_y).
        delta: δ; ``None`` applies :func:`dpgnn.api.inputs.delta_rule` (from the public node count, recorded in
            ``ledger["delta_rule"]``); pure-DP methods (EdgeRand) have δ = 0.
        seed: seeds everything random (split, initialisation, noise); 0 is a seed.
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda``.
        **config: the method's typed config fields (:func:`describe`); an unknown key lists the valid ones.

    Returns:
        the :class:`TrainedModel` (``predict``, ``save``, ``metrics``, ``history``, ``ledger``, ``config``).
    """
    from dpgnn.utils import resolve_device

    door = front_door(method)
    level = str(level).strip().lower()
    if level not in door.levels:
        raise ValueError(f"level must be one of {list(door.levels)} for {door.name}, got {level!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    cfg = make_config(door.config, config)
    epsilon, delta = _budget(level, epsilon, delta, door.pure)
    graph, notes = check_graph(data, seed)  # every refusal happens before training
    cfg, relation = _edge_relation(cfg, level, notes)
    reg, delta, rule = _method_config(door, cfg, level, relation, epsilon, delta, notes["num_nodes"])
    dev = resolve_device(device)
    t0 = time.perf_counter()
    res, cfg = _train(door, graph, cfg, reg, level, epsilon, delta, seed, str(dev))
    ledger = {**res.ledger, "delta_rule": rule}
    return TrainedModel(
        method=door.name,
        level=level,
        config=cfg,
        metrics=dict(res.metrics),
        history=list(res.history),
        ledger=ledger,
        notes=notes,
        parts=res.extra["model"],
        num_features=graph.x.size(1),
        num_classes=notes["num_classes"],
        seed=seed,
        seconds=time.perf_counter() - t0,
        device=str(dev),
    )


def _edge_relation(cfg: Any, level: str, notes: dict[str, Any]) -> tuple[Any, str | None]:
    """``cfg`` with ``edge_relation='auto'`` resolved from the graph (undirected when ``edge_index`` is symmetric),
    and the relation; edge level on a graph that is not undirected is refused with the fix."""
    relation = getattr(cfg, "edge_relation", None)
    if relation == "auto":
        relation = "undirected" if notes["undirected"] else "directed"
        cfg = replace(cfg, edge_relation=relation)
    if level == "edge" and not notes["undirected"]:
        raise ValueError(
            "edge level needs an undirected graph but edge_index is not symmetric (an edge without its "
            "reverse): symmetrise it with torch_geometric.utils.to_undirected"
        )
    return cfg, relation


def _method_config(
    door: Any, cfg: Any, level: str, relation: str | None, epsilon: float | None, delta: float | None, num_nodes: int
) -> tuple[dict[str, Any], float | None, str]:
    """The registered method's config with the budget, the δ it runs at and the rule that gave that δ (the
    user's, pure DP's 0, or :func:`dpgnn.api.inputs.delta_rule` from the node count)."""
    rule = "non-private" if level == "none" else ("pure ε-DP: δ = 0" if door.pure else "given by the user")
    reg = door.to_registry(cfg, level, relation)
    if level != "none":
        reg["epsilon"] = door.method_epsilon(epsilon) if door.method_epsilon else epsilon
        if not door.pure:
            if delta is None:
                delta, rule = delta_rule(level, num_nodes)
            reg["delta"] = delta
    return reg, delta, rule


def _train(door: Any, graph: Any, cfg: Any, reg: dict[str, Any], level: str, epsilon, delta, seed: int, dev: str):
    """Run the front door's method (its own runner, else the registered method): ``(result, config)``, the config
    with any value a public rule resolved (e.g. DRW's batch)."""
    import dpgnn.methods as registry

    paper, name, lv = door.levels[level]
    if getattr(cfg, "layerwise", False):
        name += "-layerwise"
    if door.runner is not None:
        registry.get(paper, name, lv)  # the paper's method is registered (provenance)
        res = door.runner(graph, cfg, level, epsilon, seed, dev, **({} if door.pure else {"delta": delta}))
        cfg = res.extra.get("config", cfg)  # a value resolved by a public rule (e.g. DRW's batch)
    else:
        res = registry.get(paper, name, lv).run(graph, reg, seed=seed, device=dev)
    return res, cfg


def describe(method: str | None = None) -> str:
    """The methods of :func:`fit` (``method=None``: one line each, with levels and paper), or one method's levels,
    paper and config fields (name, default, valid range, meaning, paper section).

    Args:
        method: a front-door name, or ``None`` for the list.

    Returns:
        the text (also what ``dpgnn methods [METHOD]`` prints).
    """
    if method is None:
        width = max(len(n) for n in METHODS)
        return "\n".join(
            f"{m.name:<{width}}  levels: {', '.join(m.levels):<16} {m.summary}  [{m.provenance}]"
            for m in METHODS.values()
        )
    door = front_door(method)
    lines = [
        f"{door.name}: {door.summary}",
        f"  paper: {door.provenance}",
        f"  levels: {', '.join(door.levels)}" + ("  (pure ε-DP, δ = 0)" if door.pure else ""),
        f"  config ({door.config.__name__}):",
    ]
    for row in field_rows(door.config):
        lines.append(f"    {row['name']} = {row['default']!r}  ({row['range']}) {row['doc']} [{row['paper']}]")
    return "\n".join(lines)
