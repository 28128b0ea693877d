"""LPGCN's link prediction (Table 2, VGAE, AUC): negative sampling, the trainer, the fixed edge split and
one run.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.nn import VGAE

from dpgnn.data import seed_from_name, split_edges
from dpgnn.methods.lpgcn.common import GLOBAL_SEED, VGAE_HIDDEN, VGAE_OUT, _epsilon, _hparams, _label, _method_key
from dpgnn.methods.lpgcn.features import prepare
from dpgnn.methods.lpgcn.runs import _check_common, _fit_columns, _perturb_for_run, _result, _run_seed, _with_features
from dpgnn.nn import VGAEEncoder
from dpgnn.train import GradientStep, fit
from dpgnn.utils import (
    make_generator,
    resolve_device,
    stable_seed,
)


class NegativeSampler:
    """Uniform negative edges for a fixed positive edge set, drawn from an explicit ``torch.Generator``.

    Samples ordered pairs ``(i, j)``, ``i != j``, uniformly among those not in ``pos_edge_index`` -- the
    distribution of PyG's ``negative_sampling(pos_edge_index, num_nodes)`` used inside ``VGAE.recon_loss`` -- but
    vectorised on the device and with its own generator (PyG's uses Python's global ``random`` and costs ~60 ms
    per call on a Twitch-sized graph). Draws are with replacement; like PyG, after a few rounds of rejection it
    returns what it has (only relevant for nearly complete graphs).
    """

    def __init__(self, pos_edge_index: Tensor, num_nodes: int, generator: torch.Generator) -> None:
        if num_nodes < 2:
            raise ValueError("negative sampling needs at least 2 nodes")
        self.n = int(num_nodes)
        self.device = pos_edge_index.device
        self.generator = generator
        self.population = self.n * (self.n - 1)
        self.pos_keys = torch.unique(self._keys(pos_edge_index))
        self.p_valid = max(1.0 - self.pos_keys.numel() / self.population, 1e-12)

    def _keys(self, edge_index: Tensor) -> Tensor:
        row, col = edge_index
        keep = row != col
        row, col = row[keep], col[keep]
        return row * (self.n - 1) + col - (col > row).long()

    def _edges(self, keys: Tensor) -> Tensor:
        row = torch.div(keys, self.n - 1, rounding_mode="floor")
        col = keys - row * (self.n - 1)
        col = col + (col >= row).long()
        return torch.stack([row, col])

    def _is_positive(self, keys: Tensor) -> Tensor:
        # binary search in the sorted positive keys (cheaper and less thread-hungry than torch.isin's sort)
        if self.pos_keys.numel() == 0:
            return torch.zeros_like(keys, dtype=torch.bool)
        idx = torch.searchsorted(self.pos_keys, keys).clamp_(max=self.pos_keys.numel() - 1)
        return self.pos_keys[idx] == keys

    def __call__(self, num_samples: int) -> Tensor:
        """``[2, num_samples]`` ordered non-edge pairs drawn uniformly with replacement (fewer after three rejection
        rounds on a nearly complete graph; none when every pair is an edge)."""
        if self.pos_keys.numel() >= self.population:
            return torch.empty(2, 0, dtype=torch.long, device=self.device)
        out: list[Tensor] = []
        have = 0
        for _ in range(3):
            k = int(1.1 * (num_samples - have) / self.p_valid) + 8
            draw = torch.randint(self.population, (k,), generator=self.generator, device=self.device)
            draw = draw[~self._is_positive(draw)]
            out.append(draw)
            have += draw.numel()
            if have >= num_samples:
                break
        return self._edges(torch.cat(out)[:num_samples])


def _vgae_loss(model: nn.Module, x: Tensor, enc_edges: Tensor, pos: Tensor, neg: Tensor, n: int) -> Tensor:
    z = model.encode(x, enc_edges)
    return model.recon_loss(z, pos, neg) + (1.0 / n) * model.kl_loss()


def train_link_predictor(
    model: nn.Module,
    data: Any,
    *,
    lr: float,
    weight_decay: float,
    max_epochs: int = 500,
    min_epochs: int = 100,
    check_every: int = 10,
    patience: int = 10,
    min_delta: float = 0.0,
    device: str | torch.device = "auto",
    seed: int | None = None,
    restore_best: bool = False,
    progress: bool = False,
) -> dict[str, Any]:
    """Train a :class:`torch_geometric.nn.VGAE` for link prediction and report test AUC/AP (Table 2, VGAE).

    ``data`` needs ``x``, ``train_pos_edge_index``, ``val_pos_edge_index``, ``test_pos_edge_index`` and
    ``test_neg_edge_index`` (``val_neg_edge_index`` is used for the reported validation AUC if present). The
    encoder always sees ``train_pos_edge_index``. Loss = ``recon_loss(z, train_pos, sampled negatives) + KL/N``;
    every ``check_every`` epochs the same loss is computed in eval mode on the validation positives (with fresh
    negatives sampled against them, as PyG's ``recon_loss`` does). Early stopping counts *checks*: training ends at
    the first check at epoch ``>= min_epochs`` after ``patience`` checks without improvement, or at
    ``max_epochs``. Test on the weights at stopping time unless ``restore_best``.

    On the engine, one :func:`dpgnn.train.fit` epoch is a block of ``check_every`` training epochs followed by one
    check; the epochs after the last full block (``max_epochs % check_every``) train without a check, as before.

    ``seed`` seeds the negative-edge generator; ``None`` draws it from torch's global RNG (so
    :func:`dpgnn.utils.seed_everything` makes the whole run reproducible).
    """
    _check_common(lr, weight_decay, max_epochs, min_epochs)
    if check_every < 1:
        raise ValueError(f"check_every must be >= 1, got {check_every}")
    dev = resolve_device(device)
    x, train_pos, val_pos, train_neg, val_neg = _link_inputs(data, dev, seed)
    n = x.size(0)
    model = model.to(dev)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    train_losses: list[Tensor] = []
    val_losses: list[float] = []

    update = GradientStep(
        optimizer, lambda: _vgae_loss(model, x, train_pos, train_pos, train_neg(train_pos.size(1)), n)
    )

    def train_epochs(k: int) -> None:
        for _ in range(k):
            model.train()
            train_losses.append(update())

    def evaluate(block: int) -> dict[str, float]:
        model.eval()
        val_losses.append(_vgae_loss(model, x, train_pos, val_pos, val_neg(val_pos.size(1)), n).item())
        return {"val_loss": val_losses[-1]}

    t0 = time.perf_counter()
    res, restored = _fit_blocks(
        model, train_epochs, evaluate, max_epochs, min_epochs, check_every, patience, min_delta, restore_best, progress
    )
    train_time = time.perf_counter() - t0
    epochs = res.epochs * check_every if res is not None and res.stopped_early else int(max_epochs)
    return {
        **_link_scores(model, data, x, train_pos, val_pos, dev),
        "epochs": epochs,
        "stop_epoch": epochs if res is not None and res.stopped_early else None,
        "best_epoch": res.best_epoch * check_every if res is not None and res.best_epoch else None,
        "best_val_loss": res.best.get("val_loss", math.inf) if res is not None else math.inf,
        "restored_best": restored,
        "history": {"train_loss": torch.stack(train_losses).tolist(), "val_loss": val_losses},
        "train_time_s": train_time,
        "device": str(dev),
    }


def _link_inputs(
    data: Any, dev: torch.device, seed: int | None
) -> tuple[Tensor, Tensor, Tensor, NegativeSampler, NegativeSampler]:
    """``(x, train positives, validation positives, their negative samplers)`` on ``dev``; the samplers share one
    generator seeded with ``seed`` (``None``: a seed drawn from torch's global RNG)."""
    for name in ("train_pos_edge_index", "val_pos_edge_index", "test_pos_edge_index", "test_neg_edge_index"):
        if getattr(data, name, None) is None:
            raise ValueError(f"data has no {name!r}; split the edges first (dpgnn.data.split_edges)")
    x = data.x.to(dev, torch.float32)
    n = x.size(0)
    train_pos = data.train_pos_edge_index.to(dev)
    val_pos = data.val_pos_edge_index.to(dev)
    if seed is None:
        seed = int(torch.randint(0, 2**31 - 1, (1,)).item())
    gen = make_generator(seed, dev)
    return x, train_pos, val_pos, NegativeSampler(train_pos, n, gen), NegativeSampler(val_pos, n, gen)


def _fit_blocks(
    model: nn.Module,
    train_epochs: Callable[[int], None],
    evaluate: Callable[[int], dict[str, float]],
    max_epochs: int,
    min_epochs: int,
    check_every: int,
    patience: int,
    min_delta: float,
    restore_best: bool,
    progress: bool,
) -> tuple[Any, bool]:
    """``(fit's result or None, whether the best weights were restored)``: blocks of ``check_every`` epochs and a
    check on :func:`dpgnn.train.fit`, then the trailing ``max_epochs % check_every`` epochs without a check."""
    blocks, rest = divmod(int(max_epochs), int(check_every))
    res = None
    if blocks:
        res = fit(
            model,
            lambda block: train_epochs(check_every),
            evaluate,
            epochs=blocks,
            monitor="val_loss",
            mode="min",
            patience=patience,
            min_epochs=-(-int(min_epochs) // int(check_every)),
            min_delta=min_delta,
            restore_best=restore_best,
            progress=progress,
        )
    restored = bool(restore_best and res is not None and res.best_epoch)
    if rest and not (res is not None and res.stopped_early):
        kept = copy.deepcopy(model.state_dict()) if restored else None
        train_epochs(rest)  # trailing epochs without a check; a restored best stays the tested model
        if kept is not None:
            model.load_state_dict(kept)
    return res, restored


def _link_scores(
    model: nn.Module, data: Any, x: Tensor, train_pos: Tensor, val_pos: Tensor, dev: torch.device
) -> dict[str, float]:
    """Test AUC/AP of the trained VGAE (encoder on the training positives), and validation AUC/AP when ``data`` has
    validation negatives (else NaN)."""
    model.eval()
    with torch.no_grad():
        z = model.encode(x, train_pos)
        test_auc, test_ap = model.test(z, data.test_pos_edge_index.to(dev), data.test_neg_edge_index.to(dev))
        val_auc = val_ap = float("nan")
        if getattr(data, "val_neg_edge_index", None) is not None:
            val_auc, val_ap = model.test(z, val_pos, data.val_neg_edge_index.to(dev))
    return {"test_auc": float(test_auc), "test_ap": float(test_ap), "val_auc": float(val_auc), "val_ap": float(val_ap)}


def split_for_link_prediction(data: Data, dataset_name: str) -> Data:
    """The fixed 85/5/10 edge split of docs/papers/lpgcn.md#data-and-splits (torch.Generator seed = Σord(dataset name)),
    same for all runs."""
    return split_edges(data, val=0.05, test=0.10, seed=seed_from_name(_label(dataset_name)))


def run_link_prediction(
    data: Data,
    dataset_name: str,
    method: str,
    epsilon: float | None,
    *,
    run: int,
    seed: int = GLOBAL_SEED,
    device: str = "auto",
    max_epochs: int = 500,
    min_epochs: int = 100,
    check_every: int = 10,
    patience: int = 10,
    hidden: int = VGAE_HIDDEN,
    out: int = VGAE_OUT,
    hparams: Mapping[str, float] | None = None,
    split: Data | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """One Table-2 link-prediction run: fresh perturbation of all nodes' features + fresh VGAE; metric test AUC.

    ``split`` is :func:`split_for_link_prediction` of ``data`` (computed when omitted; pass it to reuse it across
    runs -- it is fixed across runs, only the perturbation and the model are redrawn). Returns a flat dict like
    :func:`run_node_classification`'s (metric ``auc``).
    """
    key, m = _label(dataset_name), _method_key(method)
    eps = _epsilon(m, epsilon)
    hp = _hparams(key, "vgae", hparams)
    run_seed = _run_seed(seed, key, m, eps, run, "link")
    t0 = time.perf_counter()
    if split is None:
        split = split_for_link_prediction(data, key)
    elif split.num_nodes != data.num_nodes or getattr(split, "train_pos_edge_index", None) is None:
        raise ValueError("split must be split_for_link_prediction(data, dataset_name) of the same graph")
    x_hat, t_perturb = _perturb_for_run(data.x, m, eps, run_seed, t0)
    model = VGAE(VGAEEncoder(data.num_features, hidden, out, dropout=hp["dropout"], cached=True))
    res = train_link_predictor(
        model,
        _with_features(split, x_hat),
        lr=hp["lr"],
        weight_decay=hp["weight_decay"],
        max_epochs=max_epochs,
        min_epochs=min_epochs,
        check_every=check_every,
        patience=patience,
        device=device,
        seed=stable_seed(run_seed, "negatives"),
        progress=progress,
    )
    config = {
        "model": "vgae",
        "hidden": hidden,
        "out": out,
        "lr": hp["lr"],
        "weight_decay": hp["weight_decay"],
        "dropout": hp["dropout"],
        "max_epochs": max_epochs,
        "min_epochs": min_epochs,
        "check_every": check_every,
        "patience": patience,
        "split_seed": seed_from_name(key),
    }
    extra = {"test_ap": res["test_ap"], "val_auc": res["val_auc"], **_fit_columns(res, t_perturb, t0)}
    return _result(
        "link_prediction", key, m, eps, run, seed, run_seed, data.num_features, config, "auc", res["test_auc"], extra
    )


def prepare_link_prediction(dataset_name: str, **options: Any) -> Data:
    """The link-prediction view of a dataset: :func:`prepare` then the fixed edge split
    (:func:`split_for_link_prediction`); ``options`` go to :func:`prepare`."""
    return split_for_link_prediction(prepare(dataset_name, **options), dataset_name)
