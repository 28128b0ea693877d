"""ProGAP's other Table 2 baselines (docs/papers/progap.md#baselines): MLP / DP-MLP, GraphSAGE (non-private), EdgeRand.

- **MLP** (edge level, costs ε = 0: it never reads the graph): 3 layers (2-layer base + 1-layer head), hidden 16,
  SELU, BatchNorm, full batch. **DP-MLP** (node level): the same with DP-Adam (GroupNorm, clip 1, Poisson
  sampling), one DP-SGD run accounted with the level's accountant.
- **GraphSAGE**: base MLP → SAGEConv layers (mean aggregation, root weight, L2-normalised) → JK → head, full batch.
- **EdgeRand** (Wu et al. 2022, as in the GAP repository): asymmetric randomized response on the adjacency
  (budget split 0.9 links / 0.1 density, rows processed in chunks), then GraphSAGE on the noisy graph. Edge-level
  ε-DP (pure): the density estimate costs ``0.1 ε`` (Laplace), the link flips ``0.9 ε`` (randomized response).
  It reads the upper triangle of an undirected graph: the edge list must hold both directions of every pair
  (a one-direction one is refused); repeated pairs are merged and self-loops removed first.

Every graph read here goes through :func:`dpgnn.data.transforms.clean_edges` (repeated pairs merged; the
ledger's ``edge_input`` says so when any were).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import to_torch_csr_tensor

from dpgnn.data.transforms import clean_edges
from dpgnn.methods import RunResult, register
from dpgnn.methods.hooks import DPStepHook
from dpgnn.methods.progap import (
    DPSettings,
    ProGAPResult,
    _masks,
    default_delta,
    method_config,
    note_edges,
    predict,
    privacy_ledger,
    train_stage,
)
from dpgnn.metrics import split_accuracy
from dpgnn.nn.progap import MLP, SAGEClassifier, StageModel, sparse_rows
from dpgnn.privacy.guarantee import AS_PUBLISHED, statement
from dpgnn.privacy.validation import check_int as _int
from dpgnn.privacy.validation import check_positive as _pos
from dpgnn.train import GradientStep, fit
from dpgnn.utils import check_features, make_generator, resolve_device, stable_seed

__all__ = [
    "mlp_ledger",
    "mlp_model",
    "train_mlp",
    "train_sage",
    "edgerand_perturb",
    "train_edgerand",
    "edgerand_density",
    "edgerand_epsilon_sound",
]

#: EdgeRand's budget split (GAP's code): links (randomized response) and the edge density (Laplace)
EDGERAND_LINK_SHARE, EDGERAND_DENSITY_SHARE = 0.9, 0.1


def mlp_ledger(
    data: Data,
    level: str,
    epsilon: float | None,
    delta: float | None,
    noise: float | None,
    batch_size: int,
    epochs: int,
    clip: float,
    accountant: str | None,
) -> dict[str, Any]:
    """The ledger of an MLP run (``level`` none/edge: ε = 0) or a DP-MLP run (``level='node'``: one DP-SGD run,
    ``noise`` or a σ calibrated to ``epsilon``)."""
    n_train = int(data.train_mask.sum())
    if level == "node":
        if (epsilon is None) == (noise is None):
            raise ValueError("the node-level DP-MLP needs exactly one of epsilon and noise")
        d = delta if delta is not None else default_delta(n_train)
        return privacy_ledger(
            "node",
            depth=0,
            aggregations=0,
            dpsgd_runs=1,
            delta=d,
            target_epsilon=epsilon,
            noise=noise,
            train_nodes=n_train,
            batch_size=batch_size,
            epochs=epochs,
            clip=clip,
            accountant=accountant,
            method="dp-mlp",
        )
    if level == "edge":
        return privacy_ledger(
            "edge", depth=0, delta=delta or default_delta(data.edge_index.size(1)), noise=1.0, method="mlp"
        )
    if level == "none":
        return privacy_ledger("none", depth=0, method="mlp")
    raise ValueError(f"level must be 'none', 'edge' or 'node', got {level!r}")


def mlp_model(in_dim: int, hidden: int, layers: int, num_classes: int, private: bool, dev) -> StageModel:
    """The (DP-)MLP of ``layers`` layers (a ``layers - 1``-layer base and a 1-layer head), built from the global
    stream; GroupNorm when ``private`` (per-sample clipping), BatchNorm otherwise."""
    norm = "group" if private else "batch"
    return StageModel(
        [MLP(in_dim, hidden, layers - 1, norm=norm)],
        MLP(hidden, hidden, 1, out_dim=num_classes, plain_last=True, norm=norm),
        normalize_jk=False,
    ).to(dev)


def train_mlp(
    data: Data,
    *,
    level: str = "none",
    epsilon: float | None = None,
    delta: float | None = None,
    layers: int = 3,
    hidden: int = 16,
    lr: float = 0.01,
    epochs: int = 100,
    batch_size: int = 256,
    clip: float = 1.0,
    accountant: str | None = None,
    seed: int = 0,
    device: str = "auto",
    noise: float | None = None,
    canary: DPStepHook | None = None,
) -> ProGAPResult:
    """MLP (``level`` none/edge: no private data used, ε = 0 at edge level) or DP-MLP (``level='node'``).

    ``noise`` (node level): the noise multiplier instead of calibrating it to ``epsilon`` (the ledger then reports
    the ε of that noise). ``canary`` (audits, :mod:`dpgnn.methods.hooks`): passed to the DP-SGD stage."""
    _int(layers, "layers", 2)
    dev = resolve_device(device)
    t0 = time.perf_counter()
    masks = _masks(data, dev)
    check_features(data.x, "data.x (node features)")
    ledger = mlp_ledger(data, level, epsilon, delta, noise, batch_size, epochs, clip, accountant)
    torch.manual_seed(stable_seed("mlp-init", seed))
    gen = make_generator(stable_seed("mlp-noise", seed), dev if dev.type == "cuda" else "cpu")
    dp = DPSettings(ledger["noise_multiplier"], batch_size, clip) if level == "node" else None
    x, y = data.x.to(dev).float(), data.y.to(dev)
    model = mlp_model(x.size(1), hidden, layers, int(data.y.max()) + 1, dp is not None, dev)
    x = sparse_rows(x)
    model, hist = train_stage(model, [x], y, masks, epochs=epochs, lr=lr, dp=dp, generator=gen, canary=canary)
    acc = split_accuracy(predict(model, x), y, masks)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=ledger,
        history=hist,
        seconds=time.perf_counter() - t0,
        model=model,
    )


def train_sage(
    data: Data,
    *,
    layers: int = 2,
    edge_index: Tensor | None = None,
    hidden: int = 16,
    base_layers: int = 2,
    lr: float = 0.01,
    epochs: int = 100,
    seed: int = 0,
    device: str = "auto",
    ledger: dict[str, Any] | None = None,
) -> ProGAPResult:
    """Non-private GraphSAGE (or on ``edge_index`` given, e.g. EdgeRand's noisy graph): full-batch Adam on
    :func:`dpgnn.train.fit`, the best validation epoch restored (strictly better than the earlier ones). The edge
    list is used in its direction(s) as given, repeated pairs merged (the ledger's ``edge_input`` says so)."""
    dev = resolve_device(device)
    t0 = time.perf_counter()
    masks = _masks(data, dev)
    check_features(data.x, "data.x (node features)")
    torch.manual_seed(stable_seed("sage-init", seed))
    x, y = data.x.to(dev).float(), data.y.to(dev)
    ei, cleaning = clean_edges(data.edge_index if edge_index is None else edge_index, data.num_nodes, owner="GraphSAGE")
    ei = ei.to(dev)
    # the adjacency as a CSR matrix (rows = targets): SAGEConv then aggregates with one sparse matmul instead of
    # a gather/scatter over the edge list (same result, ~2.5x faster on CPU for a 1M-edge graph)
    ei = to_torch_csr_tensor(ei.flip(0), size=(data.num_nodes, data.num_nodes))
    model = SAGEClassifier(
        x.size(1), hidden, int(data.y.max()) + 1, layers=layers, base_layers=_int(base_layers, "base_layers", 1)
    ).to(dev)
    x = sparse_rows(x)
    opt = torch.optim.Adam(model.parameters(), lr=_pos(lr, "lr"))
    tr = masks["train"]
    watched = {"train": tr, "val": masks["val"]}

    fitted = fit(
        model,
        GradientStep(opt, lambda epoch: F.cross_entropy(model(x, ei)[tr], y[tr])),
        lambda epoch: split_accuracy(predict(model, x, ei), y, watched),
        epochs=_int(epochs, "epochs", 1),
        monitor="val",
        mode="max",
    )
    hist = [{"stage": 0, "epoch": h["epoch"], "train_acc": h["train"], "val_acc": h["val"]} for h in fitted.history]
    acc = split_accuracy(predict(model, x, ei), y, masks)
    ledger = note_edges(dict(ledger) if ledger else privacy_ledger("none", depth=layers, method="sage"), cleaning)
    return ProGAPResult(
        train_acc=acc["train"],
        val_acc=acc["val"],
        test_acc=acc["test"],
        ledger=ledger,
        history=hist,
        seconds=time.perf_counter() - t0,
        model=model,
    )


def edgerand_density(num_entries: int, num_nodes: int, epsilon: float, generator: torch.Generator) -> float:
    """EdgeRand's density estimate ``d̂ = m/n² + Lap(1/(n² ε_d))``, ``ε_d = 0.1 ε``, clipped to [0, 1] (GAP's code).

    ``m`` = ``num_entries`` counts the entries of the symmetric adjacency, i.e. both directions of every
    undirected edge: one undirected edge moves ``m/n²`` by ``2/n²``, twice the ``1/n²`` the noise is calibrated
    for, so this step is ``2 ε_d``-DP for add/remove one undirected edge (``ε_d`` for one directed entry)."""
    lap = torch.distributions.Laplace(0.0, 1.0).icdf(
        torch.rand(1, generator=generator, dtype=torch.float64) * 0.999998 + 1e-6
    )
    density = num_entries / num_nodes**2 + float(lap) / (num_nodes**2 * EDGERAND_DENSITY_SHARE * epsilon)
    return min(max(density, 0.0), 1.0)


def edgerand_epsilon_sound(epsilon: float) -> float:
    """Pure ε of one EdgeRand run for add/remove one undirected edge: ``0.9 ε`` (randomized response on its one
    upper-triangle entry) + ``2 · 0.1 ε`` (the density counts both of its directions: :func:`edgerand_density`)
    = ``1.1 ε``, by basic composition."""
    eps = _pos(epsilon, "epsilon")
    return EDGERAND_LINK_SHARE * eps + 2.0 * EDGERAND_DENSITY_SHARE * eps


def edgerand_perturb(edge_index: Tensor, num_nodes: int, epsilon: float, *, seed: int = 0, chunk: int = 500) -> Tensor:
    """Asymmetric randomized response (EdgeRand) on the undirected graph's upper triangle, symmetrised.

    ``ε_d = 0.1 ε`` buys a density estimate ``d̂ = m/n² + Lap(1/(n² ε_d))`` (:func:`edgerand_density`: one
    directed entry changes ``m/n²`` by ``1/n²``, one undirected edge by ``2/n²``); with ``p = sigmoid(0.9 ε)`` and
    ``q = min(1, d̂/(2p d̂ − p − d̂ + 1))`` an existing edge is kept w.p.
    ``p q`` and a non-edge added w.p. ``(1 − p) q``. The link step is ``0.9 ε``-edge-DP because the likelihood
    ratio of an entry is at most ``p/(1 − p) = e^{0.9 ε}``. Rows are processed ``chunk`` at a time.

    ``edge_index`` must be undirected (both directions of every pair; a one-direction list is refused: its
    pairs below the diagonal would be read as non-edges); repeated pairs are merged and self-loops removed
    (:func:`dpgnn.data.transforms.clean_edges`), so ``m`` counts each directed pair of the simple graph once.
    """
    eps = _pos(epsilon, "epsilon")
    n = _int(num_nodes, "num_nodes", 2)
    c = _int(chunk, "chunk", 1)
    edge_index, _ = clean_edges(edge_index, n, self_loops="remove", undirected=True, owner="EdgeRand")
    gen = make_generator(stable_seed("edgerand", seed))
    density = edgerand_density(edge_index.size(1), n, eps, gen)
    p = 1.0 / (1.0 + math.exp(-EDGERAND_LINK_SHARE * eps))
    q = min(1.0, density / (2 * p * density - p - density + 1)) if density > 0 else 0.0
    src, dst = edge_index.cpu()
    upper = src < dst
    key = src[upper] * n + dst[upper]
    key = torch.sort(key).values
    rows_out, cols_out = [], []
    for start in range(0, n, c):
        stop = min(n, start + c)
        r = torch.arange(start, stop).view(-1, 1)
        cols = torch.arange(n).view(1, -1)
        flat = (r * n + cols).view(-1)
        pos = torch.searchsorted(key, flat).clamp(max=max(key.numel() - 1, 0))
        is_edge = (key[pos] == flat) if key.numel() else torch.zeros_like(flat, dtype=torch.bool)
        u = torch.rand(flat.numel(), generator=gen)
        keep = torch.where(is_edge, u < p * q, u < (1 - p) * q)
        keep &= (cols > r).view(-1)  # upper triangle only (each undirected pair once)
        sel = flat[keep]
        rows_out.append(sel // n)
        cols_out.append(sel % n)
    rows, cols = torch.cat(rows_out), torch.cat(cols_out)
    out = torch.stack([torch.cat([rows, cols]), torch.cat([cols, rows])])
    return out.to(edge_index.device)


def edgerand_statement() -> dict[str, Any]:
    """Guarantee fields of an EdgeRand run: pure edge-DP, training is post-processing. The ``epsilon`` of the
    ledger is the paper's (0.9 ε + 0.1 ε); one undirected edge enters the density twice, so the run's ε for it is
    ``epsilon_sound`` = 1.1 ε (:func:`edgerand_epsilon_sound`)."""
    return statement(
        AS_PUBLISHED,
        "add/remove one undirected edge (one upper-triangle entry)",
        accounted="randomized response on each upper-triangle entry + Laplace edge count, pure DP, basic composition",
        issues=[
            "the density counts both directions of an undirected edge (sensitivity 2/n^2, Laplace "
            "noise for 1/n^2, as GAP's code): the density step costs 0.2 eps and the run 1.1 eps "
            "(epsilon_sound)"
        ],
    )


def train_edgerand(
    data: Data, epsilon: float, *, layers: int = 2, seed: int = 0, device: str = "auto", **kw: Any
) -> ProGAPResult:
    """EdgeRand: perturb the graph once (ε-edge-DP, δ = 0), then GraphSAGE on it (post-processing)."""
    edges, cleaning = clean_edges(
        data.edge_index, data.num_nodes, self_loops="remove", undirected=True, owner="EdgeRand"
    )
    noisy = edgerand_perturb(edges, data.num_nodes, epsilon, seed=seed)
    ledger = {
        "level": "edge",
        "method": "edgerand",
        "mechanism": "asymmetric randomized response (0.9 eps) + Laplace density (0.1 eps)",
        "epsilon": float(epsilon),
        "epsilon_sound": edgerand_epsilon_sound(epsilon),
        "delta": 0.0,
        "accountant": "pure DP, basic composition",
        "noisy_edges": int(noisy.size(1)),
        **edgerand_statement(),
    }
    note_edges(ledger, cleaning)
    return train_sage(data, layers=layers, edge_index=noisy, seed=seed, device=device, ledger=ledger, **kw)


# ---------------------------------------------------------------------------------------------------------------
# the method contract (keys: :func:`dpgnn.methods.progap.method_config`)
# ---------------------------------------------------------------------------------------------------------------
def _mlp_runner(level: str):
    def arguments(config: Mapping[str, Any]) -> dict[str, Any]:
        cfg = method_config(
            config,
            level,
            ("epsilon", "delta", "base_layers", "hidden", "lr", "epochs", "batch_size", "clip", "accountant"),
            fixed={"depth": 0},
            unused=("max_degree",),
        )
        layers = int(cfg.pop("base_layers", 2)) + 1
        eps = cfg.pop("epsilon", None)
        return {"level": level, "epsilon": eps if level == "node" else None, "layers": layers, **cfg}

    def run(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
        """MLP / DP-MLP: ``base_layers`` (default 2) + a 1-layer head; no graph (``depth`` is fixed at 0)."""
        return train_mlp(data, seed=seed, device=device, **arguments(config)).to_run_result()

    def repeats(
        data: Data, config: Mapping[str, Any], *, seeds: Sequence[int], device: str = "auto"
    ) -> list[RunResult]:
        """``run`` for each of ``seeds``, trained together (:func:`dpgnn.methods.repeats.train_mlp_repeats`):
        one result per seed, each ``run``'s up to float rounding."""
        from dpgnn.methods.repeats import train_mlp_repeats

        return [r.to_run_result() for r in train_mlp_repeats(data, seeds, device=device, **arguments(config))]

    run.__name__ = run.__qualname__ = f"run_mlp_{level}"
    if level == "node":  # DP-MLP; the non-private MLP's runs train one at a time
        run.repeats = repeats  # type: ignore[attr-defined]  (the series trains a cell's runs together through it)
    return run


register("progap", "mlp", "none", description="MLP on the node features (no graph)")(_mlp_runner("none"))
register("progap", "mlp", "edge", description="MLP (never reads the graph: edge-level ε = 0)")(_mlp_runner("edge"))
register("progap", "dp-mlp", "node", description="DP-MLP: DP-Adam on the node features")(_mlp_runner("node"))


@register("progap", "graphsage", "none", description="non-private GraphSAGE (depth = SAGE layers)")
def run_graphsage(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """Non-private GraphSAGE (:func:`train_sage`) under the method contract; ``depth`` is its SAGE layers."""
    cfg = method_config(config, "none", ("depth", "base_layers", "hidden", "lr", "epochs", "epsilon"))
    eps = cfg.pop("epsilon", math.inf)
    if not math.isinf(float(eps)):
        raise ValueError(f"graphsage is non-private: epsilon must be inf (or absent), got {eps!r}")
    if "depth" in cfg:
        cfg["layers"] = cfg.pop("depth")
    return train_sage(data, seed=seed, device=device, **cfg).to_run_result()


@register("progap", "edgerand", "edge", description="EdgeRand: randomized response on the graph, then GraphSAGE")
def run_edgerand(data: Data, config: Mapping[str, Any], *, seed: int, device: str = "auto") -> RunResult:
    """EdgeRand (:func:`train_edgerand`: randomized response on the graph at ``epsilon``, then GraphSAGE)."""
    cfg = method_config(config, "edge", ("epsilon", "depth", "base_layers", "hidden", "lr", "epochs"))
    if "epsilon" not in cfg:
        raise ValueError("edgerand needs an epsilon")
    if "depth" in cfg:
        cfg["layers"] = cfg.pop("depth")
    return train_edgerand(data, cfg.pop("epsilon"), seed=seed, device=device, **cfg).to_run_result()
