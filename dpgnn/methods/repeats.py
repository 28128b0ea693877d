"""ProGAP, GAP and DP-MLP repeats in one batched run: :func:`train_progap_repeats`, :func:`train_gap_repeats` and
:func:`train_mlp_repeats` train ``R`` seeds together (:mod:`dpgnn.methods.batched`) and return, per seed, the
:class:`ProGAPResult` that :func:`~dpgnn.methods.progap.train_progap` / :func:`~dpgnn.methods.gap.train_gap` /
:func:`~dpgnn.methods.progap_baselines.train_mlp` return for that seed, equal up to float rounding
(accuracies, stage accuracies, histories with their Poisson batch sizes, the ledger, the trained models; tested).

Each seed's randomness is drawn exactly as in its sequential run: the global stream seeded with the run's init seed
initialises its modules (all of them, in the sequential order: no other draw from that stream happens in a run
without dropout), and its own generator gives its degree bounding, Poisson batches, DP-Adam noise and NAP noise in
the sequential order. Runs with dropout (whose masks come from the global stream between stages) and audits
(``canary``, ``on_stage``, ``per_sample="opacus"``) train one seed at a time (:func:`repeats_supported` says
which). ``seconds`` of each result is the batched wall time divided by ``R``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from dpgnn.methods import progap as pg
from dpgnn.methods.batched import StackedMLP, StackedNAP, StackedStage, split_accuracies, train_stage_repeats
from dpgnn.utils import make_generator, resolve_device, stable_seed

__all__ = ["train_progap_repeats", "train_gap_repeats", "train_mlp_repeats", "repeats_supported", "stacked_nap"]


def repeats_supported(cfg: Any) -> bool:
    """Whether :func:`train_progap_repeats` / :func:`train_gap_repeats` can train ``cfg``'s seeds together (a
    run with dropout trains one seed at a time)."""
    return not getattr(cfg, "dropout", 0.0) > 0


def _check_seeds(seeds: Sequence[int], cfg: Any) -> list[int]:
    seeds = list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of ints, got {seeds!r}")
    if not repeats_supported(cfg):
        raise ValueError("dropout draws its masks from the global random stream: train the seeds one at a time")
    return seeds


def stacked_nap(
    edge_index: Tensor,
    num_nodes: int,
    sigma: float,
    gens: list[torch.Generator],
    dev: torch.device,
    degree_seeds: list[int] | None,
    max_degree: int,
) -> StackedNAP:
    """One NAP per seed with the seed's generator: one adjacency shared by all (edge level, non-private) or each
    seed's own degree-bounded graph (``degree_seeds``: node level)."""
    if degree_seeds is None:
        first = pg.NAP(edge_index, num_nodes, sigma, generator=gens[0], device=dev)
        naps = [first] + [copy.copy(first) for _ in gens[1:]]
        for nap, gen in zip(naps, gens):
            nap.generator = gen
    else:
        naps = [
            pg.NAP(pg.bound_degree(edge_index, num_nodes, max_degree, ds), num_nodes, sigma, generator=gen, device=dev)
            for ds, gen in zip(degree_seeds, gens)
        ]
    return StackedNAP(naps)


def _result(
    acc: dict[str, Tensor], r: int, ledger: dict, nap: StackedNAP, cleaning, seconds: float, **kw
) -> pg.ProGAPResult:
    led = copy.deepcopy(ledger)
    led["queries"] = nap.queries
    pg.note_edges(led, cleaning)
    return pg.ProGAPResult(
        train_acc=float(acc["train"][r]),
        val_acc=float(acc["val"][r]),
        test_acc=float(acc["test"][r]),
        ledger=led,
        queries=nap.queries,
        seconds=seconds,
        **kw,
    )


def train_progap_repeats(
    data: Data, cfg: pg.ProGAPConfig, seeds: Sequence[int], *, device: str = "auto"
) -> list[pg.ProGAPResult]:
    """:func:`~dpgnn.methods.progap.train_progap` for each of ``seeds`` (ghost clipping at node level), trained
    together; one result per seed, in order."""
    t0 = time.perf_counter()
    seeds = _check_seeds(seeds, cfg)
    dev = resolve_device(device)
    masks, edge_index, cleaning, ledger = pg.run_setup(data, cfg, dev)
    k, node = cfg.depth, cfg.level == "node"
    x, y = data.x.to(dev).float(), data.y.to(dev)
    num_classes = int(data.y.max()) + 1
    dp = pg.DPSettings(ledger["noise_multiplier"], cfg.batch_size, cfg.clip) if node else None
    norm = "group" if node else "batch"
    gens, bases, heads = [], [], []  # per seed; bases[r][s], heads[r][s]
    for seed in seeds:  # each seed's modules from its own init stream, in the sequential order
        torch.manual_seed(stable_seed("progap-init", seed))
        gens.append(make_generator(stable_seed("progap-noise", seed), dev if dev.type == "cuda" else "cpu"))
        b, h = [], []
        for s in range(k + 1):
            b.append(pg.stage_base(cfg, x.size(1) if s == 0 else cfg.hidden, norm, dev))
            h.append(pg.stage_head(cfg, s, num_classes, norm, dev))
        bases.append(b)
        heads.append(h)
    nap = stacked_nap(
        edge_index,
        data.num_nodes,
        ledger["sigma_nap"],
        gens,
        dev,
        [stable_seed("progap-degree", s) for s in seeds] if node else None,
        cfg.max_degree,
    )
    xs: list[Tensor] = [x]
    stacked: list[StackedMLP] = []
    histories: list[list[dict[str, Any]]] = [[] for _ in seeds]
    stage_val: list[list[float]] = [[] for _ in seeds]
    stage_test: list[list[float]] = [[] for _ in seeds]
    encoders: list[list[Any]] = [[] for _ in seeds]
    for s in range(k + 1):
        if s > 0:
            for r, enc in enumerate(stacked[-1].write_back()):
                encoders[r].append(copy.deepcopy(enc).eval())
            with torch.no_grad():
                xs.append(nap(stacked[-1](xs[-1], training=False)))  # the only use of the graph in stage s
        if cfg.layerwise:  # earlier bases frozen, stacked and per seed (the returned models say so too)
            for i, done in enumerate(stacked):
                done.requires_grad_(False)
                for b in bases:
                    b[i].requires_grad_(False)
        stacked.append(StackedMLP([b[s] for b in bases]))
        model = StackedStage(stacked, StackedMLP([h[s] for h in heads]))
        hist = train_stage_repeats(model, xs, y, masks, epochs=cfg.epochs, lr=cfg.lr, generators=gens, dp=dp, stage=s)
        with torch.no_grad():
            acc = split_accuracies(model(xs, training=False), y, masks)
        for r in range(len(seeds)):
            histories[r] += hist[r]
            stage_val[r].append(float(acc["val"][r]))
            stage_test[r].append(float(acc["test"][r]))
    models = [m.eval() for m in model.write_back()]
    seconds = (time.perf_counter() - t0) / len(seeds)
    return [
        _result(
            acc,
            r,
            ledger,
            nap,
            cleaning,
            seconds,
            history=histories[r],
            stage_val_acc=stage_val[r],
            stage_test_acc=stage_test[r],
            model={"stages": models[r], "encoders": encoders[r]},
        )
        for r in range(len(seeds))
    ]


def train_gap_repeats(data: Data, cfg: Any, seeds: Sequence[int], *, device: str = "auto") -> list[pg.ProGAPResult]:
    """:func:`~dpgnn.methods.gap.train_gap` for each of ``seeds``, trained together; one result per seed."""
    from dpgnn.methods import gap

    t0 = time.perf_counter()
    seeds = _check_seeds(seeds, cfg)
    dev = resolve_device(device)
    masks, edge_index, cleaning, ledger = gap.run_setup(data, cfg, dev)
    node = cfg.level == "node"
    x, y = data.x.to(dev).float(), data.y.to(dev)
    c = int(data.y.max()) + 1
    dp = pg.DPSettings(ledger["noise_multiplier"], cfg.batch_size, cfg.clip) if node else None
    norm = "none" if node else "batch"
    gens, encs, clfs = [], [], []
    for seed in seeds:
        torch.manual_seed(stable_seed("gap-init", seed))
        gens.append(make_generator(stable_seed("gap-noise", seed), dev if dev.type == "cuda" else "cpu"))
        encs.append(gap.encoder(cfg, x.size(1), c, norm, dev))
        clfs.append(gap.classifier(cfg, c, norm, dev))
    enc = StackedStage([StackedMLP([e.bases[0] for e in encs])], StackedMLP([e.head for e in encs]))
    hist = train_stage_repeats(enc, [x], y, masks, epochs=cfg.epochs, lr=cfg.lr, generators=gens, dp=dp, stage=0)
    with torch.no_grad():
        xs = [F.normalize(enc.bases[0](x, training=False), dim=-1)]
    nap = stacked_nap(
        edge_index,
        data.num_nodes,
        ledger["sigma_nap"],
        gens,
        dev,
        [stable_seed("gap-degree", s) for s in seeds] if node else None,
        cfg.max_degree,
    )
    with torch.no_grad():
        for _ in range(cfg.hops):
            xs.append(F.normalize(nap(xs[-1]), dim=-1))
    clf = StackedStage(
        [StackedMLP([m.bases[i] for m in clfs]) for i in range(len(xs))],
        StackedMLP([m.head for m in clfs]),
        normalize_jk=False,
    )
    hist2 = train_stage_repeats(clf, xs, y, masks, epochs=cfg.epochs, lr=cfg.lr, generators=gens, dp=dp, stage=1)
    with torch.no_grad():
        acc = split_accuracies(clf(xs, training=False), y, masks)
    enc_models, clf_models = enc.write_back(), clf.write_back()
    seconds = (time.perf_counter() - t0) / len(seeds)
    return [
        _result(
            acc,
            r,
            ledger,
            nap,
            cleaning,
            seconds,
            history=hist[r] + hist2[r],
            model={"encoder": enc_models[r].eval(), "classifier": clf_models[r].eval()},
        )
        for r in range(len(seeds))
    ]


def train_mlp_repeats(
    data: Data,
    seeds: Sequence[int],
    *,
    level: str = "node",
    epsilon: float | None = None,
    delta: float | None = None,
    layers: int = 3,
    hidden: int = 16,
    lr: float = 0.01,
    epochs: int = 100,
    batch_size: int = 256,
    clip: float = 1.0,
    accountant: str | None = None,
    noise: float | None = None,
    device: str = "auto",
) -> list[pg.ProGAPResult]:
    """:func:`~dpgnn.methods.progap_baselines.train_mlp` (its arguments but ``seed`` and ``canary``) for each of
    ``seeds``, trained together; one result per seed, in order."""
    from dpgnn.methods import progap_baselines as pb

    t0 = time.perf_counter()
    seeds = _check_seeds(seeds, None)
    pb._int(layers, "layers", 2)
    dev = resolve_device(device)
    masks = pg._masks(data, dev)
    pb.check_features(data.x, "data.x (node features)")
    ledger = pb.mlp_ledger(data, level, epsilon, delta, noise, batch_size, epochs, clip, accountant)
    dp = pg.DPSettings(ledger["noise_multiplier"], batch_size, clip) if level == "node" else None
    x, y = data.x.to(dev).float(), data.y.to(dev)
    gens, models = [], []
    for seed in seeds:  # each seed's model from its own init stream, its own generator
        torch.manual_seed(stable_seed("mlp-init", seed))
        gens.append(make_generator(stable_seed("mlp-noise", seed), dev if dev.type == "cuda" else "cpu"))
        models.append(pb.mlp_model(x.size(1), hidden, layers, int(data.y.max()) + 1, dp is not None, dev))
    model = StackedStage(
        [StackedMLP([m.bases[0] for m in models])], StackedMLP([m.head for m in models]), normalize_jk=False
    )
    hist = train_stage_repeats(model, [x], y, masks, epochs=epochs, lr=lr, generators=gens, dp=dp)
    with torch.no_grad():
        acc = split_accuracies(model([x], training=False), y, masks)
    trained = [m.eval() for m in model.write_back()]
    seconds = (time.perf_counter() - t0) / len(seeds)
    return [
        pg.ProGAPResult(
            train_acc=float(acc["train"][r]),
            val_acc=float(acc["val"][r]),
            test_acc=float(acc["test"][r]),
            ledger=copy.deepcopy(ledger),
            history=hist[r],
            seconds=seconds,
            model=trained[r],
        )
        for r in range(len(seeds))
    ]
