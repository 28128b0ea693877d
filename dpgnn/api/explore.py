"""Comparing front-door methods on a user's graph (``notebooks/learn/07_your_own_graph.ipynb``): a tidy table of
accuracies over methods × ε (:func:`accuracy_table`) and its figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from dpgnn.api import fit


def accuracy_table(
    data: Any,
    methods: Sequence[str],
    epsilons: Sequence[float],
    *,
    level: str = "edge",
    seed: int = 0,
    device: str = "auto",
    **settings: Any,
) -> pd.DataFrame:
    """One :func:`dpgnn.fit` per (method, ε) at ``level``; ``settings`` (e.g. ``epochs``) go to every method.

    Args:
        data: the graph (a :class:`torch_geometric.data.Data`).
        methods: front-door names with ``level`` among their levels.
        epsilons: the budgets.
        level: the privacy level of every run.
        seed: the seed of every run (the same split for all).
        device: ``auto``, ``cpu`` or ``cuda``.

    Returns:
        one row per run: ``method``, ``epsilon`` (accounted), ``epsilon_sound`` (the algorithm's sound ε where the
        ledger has one, else ``epsilon``), ``delta``, ``delta_rule``, ``val``, ``test``,
        ``guarantee``, ``neighbouring``, ``seconds``.
    """
    rows = []
    for method in methods:
        for eps in epsilons:
            model = fit(data, method, level=level, epsilon=float(eps), seed=seed, device=device, **settings)
            led = model.ledger
            rows.append(
                {
                    "method": method,
                    "target_epsilon": float(eps),
                    "epsilon": float(led["epsilon"]),
                    "epsilon_sound": float(led.get("epsilon_sound", led["epsilon"])),
                    "delta": float(led.get("delta") or 0.0),
                    "delta_rule": led["delta_rule"],
                    "val": model.metrics["val"],
                    "test": model.metrics["test"],
                    "guarantee": led["guarantee"],
                    "neighbouring": led["neighbouring"],
                    "seconds": round(model.seconds, 2),
                }
            )
    return pd.DataFrame(rows)


def draw_accuracy(table: pd.DataFrame, reference: Mapping[str, float] | None = None) -> plt.Figure:
    """Test accuracy against ε, one line per method; ``reference`` (name → accuracy, e.g. the non-private MLP)
    as dashed horizontal lines."""
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    for method, part in table.groupby("method", sort=False):
        part = part.sort_values("target_epsilon")
        ax.plot(part["target_epsilon"], part["test"], marker="o", label=method)
    for name, acc in (reference or {}).items():
        ax.axhline(acc, linestyle="--", color="grey", linewidth=1)
        ax.annotate(
            name,
            (table["target_epsilon"].min(), acc),
            textcoords="offset points",
            xytext=(2, 3),
            fontsize=8,
            color="grey",
        )
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def accuracy_at(data: Any, epsilon: float, methods: Sequence[str], **kwargs: Any) -> dict[str, Any]:
    """The explorer's data: :func:`accuracy_table` at one ε."""
    return {"epsilon": float(epsilon), "table": accuracy_table(data, methods, [epsilon], **kwargs)}


def draw_accuracy_at(data: Mapping[str, Any]) -> plt.Figure:
    """Bars: each method's test accuracy at the explorer's ε."""
    table = data["table"]
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(table["method"], table["test"], color="tab:blue")
    for i, acc in enumerate(table["test"]):
        ax.annotate(f"{acc:.2f}", (i, acc), ha="center", xytext=(0, 2), textcoords="offset points", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("test accuracy")
    ax.set_title(f"ε = {data['epsilon']:.3g}")
    fig.tight_layout()
    return fig
