"""Privacy series: what tight accounting buys at equal ε.

Not a paper's artifact but the project's own comparison. Two artifacts:

- ``sigma``: the noise multiplier calibrated to the same (ε, δ) by each accountant, for DP-SGD with Poisson sampling
  (add/remove one record) and for a ProGAP node-level run (K NAP Gaussians + K + 1 Poisson-sampled DP-SGD runs).
  Accountants: ``rdp`` (our RDP, tight conversion), ``autodp`` (the ProGAP/DRW authors' library) and ``pld``
  (Google's ``dp_accounting`` privacy loss distributions, pessimistic discretisation: an upper bound on the exact
  ε). Every calibration returns ``ε(σ) ≤ target`` (asserted in :func:`dpgnn.privacy.calibrate`).
- ``accuracy``: test accuracy (%) of ProGAP (node level) and of the DP-MLP baseline (DP-SGD) at the same ε, with the
  noise calibrated by the authors' accountant (``autodp``) and by ``pld``: the same guarantee, less noise.

DRW and FDP use fixed-size batches sampled without replacement (replace-one neighbouring), which
``dp_accounting``'s PLD accountant does not cover; for them the tight computation available is the RDP bound of
Wang, Balle & Kasiviswanathan (Theorem 27, as ``dp_accounting``), which equals autodp's improved bound the DRW
authors use, so their ε and accuracy do not move (shown in ``sigma`` with sampling ``uniform``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from dpgnn import plotting
from dpgnn.data import load_dataset
from dpgnn.privacy import calibrate_noise_multiplier, dpsgd_event, epsilon
from dpgnn.privacy.guarantee import SOUND, statement
from dpgnn.privacy.progap import calibrate_noise, default_delta, guarantee_statement
from dpgnn.profiles import Profile
from dpgnn.results import ResultStore
from dpgnn.series import Series, load_or_skip, register
from dpgnn.sweep import run_grid
from dpgnn.utils import config_hash

PAPER = "privacy"


@dataclass(frozen=True)
class PrivacyProfile(Profile):
    """The settings of the privacy notebook (``dpgnn.profiles.settings("privacy", profile)``)."""

    delta: float
    """δ of every calibration and run"""
    dpsgd: list[list[float]]
    """DP-SGD settings [sample rate q, steps T] with Poisson sampling (the sigma artifact)"""
    dpsgd_uniform: list[list[float]]
    """DP-SGD settings [sample rate q, steps T] sampled without replacement (DRW/FDP style)"""
    targets: list[float]
    """target ε of the sigma artifact's calibrations"""
    accountants: list[str]
    """accountants compared in the sigma artifact (rdp, autodp, pld)"""
    dataset: str
    """dataset of the accuracy artifact"""
    min_class_size: int
    """classes smaller than this are dropped from the dataset"""
    depth: int
    """ProGAP depth (stages) of the accuracy runs"""
    epochs: int
    """training epochs per stage"""
    batch_size: int
    """DP-SGD batch size B"""
    max_degree: int
    """node-level degree bound D"""
    lr: float
    """learning rate"""
    node_epsilons: list[float]
    """node-level ε of the accuracy runs"""
    train_accountants: list[str]
    """accountants whose noise calibration the accuracy runs compare"""
    methods: list[str]
    """methods of the accuracy runs (progap, dp-mlp)"""
    runs: int
    """runs per accuracy cell"""
    seed: int
    """base seed of every cell"""


PROFILES: dict[str, PrivacyProfile] = {
    "smoke": PrivacyProfile(
        delta=1e-5,
        dpsgd=[[0.001, 10]],  # [sample rate q, steps T] (Poisson)
        dpsgd_uniform=[[0.01, 100]],  # sampling without replacement (DRW/FDP style)
        targets=[1.0],
        accountants=["rdp", "autodp", "pld"],
        dataset="fb100-caltech36",
        min_class_size=50,
        depth=1,
        epochs=2,
        batch_size=64,
        max_degree=20,
        lr=0.01,
        node_epsilons=[8.0],
        train_accountants=["autodp", "pld"],
        methods=["progap", "dp-mlp"],
        runs=1,
        seed=12345,
    ),
    "test": PrivacyProfile(
        delta=1e-5,
        dpsgd=[[0.001, 10]],
        dpsgd_uniform=[[0.01, 100]],
        targets=[1.0],
        accountants=["rdp", "pld"],
        dataset="fb100-caltech36",
        min_class_size=50,
        depth=1,
        epochs=1,
        batch_size=64,
        max_degree=20,
        lr=0.01,
        node_epsilons=[8.0],
        train_accountants=["autodp", "pld"],
        methods=["progap"],
        runs=1,
        seed=0,
    ),
    "paper": PrivacyProfile(
        delta=1e-5,
        dpsgd=[[0.001, 10], [0.001, 100], [0.01, 100], [0.01, 1000], [0.004, 10_000]],
        dpsgd_uniform=[[0.01, 100], [0.01, 1000]],
        targets=[0.5, 1.0, 2.0, 4.0, 8.0],
        accountants=["rdp", "autodp", "pld"],
        dataset="fb100-caltech36",
        min_class_size=50,
        depth=2,
        epochs=5,
        batch_size=64,
        max_degree=20,
        lr=0.01,
        node_epsilons=[1.0, 2.0, 4.0, 8.0],
        train_accountants=["autodp", "rdp", "pld"],
        methods=["progap", "dp-mlp"],
        runs=5,
        seed=12345,
    ),
}

#: the motivating example, as stated ("dpsgd up to 6× at few steps (z = 0.6, q = 0.001, T = 10: 2.04 vs 0.33)")
STATED_EXAMPLE = {
    "noise_multiplier": 0.6,
    "sample_rate": 0.001,
    "steps": 10,
    "delta": 1e-5,
    "epsilon_rdp": 2.04,
    "epsilon_tight": 0.33,
}


# ---------------------------------------------------------------------------------------------------------------
# σ at equal ε
# ---------------------------------------------------------------------------------------------------------------
def _dpsgd_statement(sampling: str, q: float, steps: int) -> dict[str, Any]:
    """Guarantee fields of a pure DP-SGD accounting row (sensitivity-1 steps: clipping at a fixed norm assumed)."""
    neighbouring = "add/remove one record" if sampling == "poisson" else "replace one record"
    how = "Poisson" if sampling == "poisson" else "without replacement (fixed batch size)"
    return statement(
        SOUND,
        neighbouring,
        accounted=f"{steps} Gaussian steps of L2 sensitivity 1 (per-example clipping "
        f"at a fixed norm) on a subsample at rate {q:g}, {how}",
    )


def _sigma_row(
    setting: str,
    method: str,
    accountant: str,
    target: float,
    delta: float,
    value: float,
    eps: float,
    ledger: dict[str, Any],
) -> dict[str, Any]:
    return {
        "dataset": "analytic",
        "method": method,
        "setting": setting,
        "metric": "noise_multiplier",
        "value": value,
        "run": 0,
        "seed": 0,
        "level": "record" if method.startswith("dp-sgd") else "node",
        "epsilon": eps,
        "delta": delta,
        "accountant": accountant,
        "target": target,
        "ledger": ledger,
        "config_hash": config_hash({"setting": setting, "method": method, "accountant": accountant, "target": target}),
    }


def _node_counts(cfg: PrivacyProfile, train_nodes: int) -> dict[str, int]:
    return {
        "aggregations": int(cfg.depth),
        "dpsgd_runs": int(cfg.depth) + 1,
        "train_nodes": train_nodes,
        "batch_size": int(cfg.batch_size),
        "epochs": int(cfg.epochs),
    }


def run_sigma(cfg: PrivacyProfile, store: ResultStore, *, train_nodes: int = 500) -> pd.DataFrame:
    """Calibrate the noise multiplier for every (setting, target ε, accountant); rows in artifact ``sigma``.

    The ProGAP rows use the authors' δ rule for ``train_nodes`` (as the training runs of :func:`run_accuracy`, so
    their calibrations are shared)."""
    rows = []
    d = float(cfg.delta)
    for sampling, settings_ in (("poisson", cfg.dpsgd), ("uniform", cfg.dpsgd_uniform)):
        for q, t in settings_:
            setting = f"q={q:g},T={int(t)}"
            for target in cfg.targets:
                for acc in cfg.accountants:
                    if acc == "pld" and sampling == "uniform":
                        continue  # dp_accounting's PLD has no sampling without replacement
                    cal = calibrate_noise_multiplier(
                        target, d, sample_rate=q, steps=int(t), sampling=sampling, accountant=acc
                    )
                    rows.append(
                        _sigma_row(
                            setting,
                            f"dp-sgd ({sampling})",
                            acc,
                            target,
                            d,
                            cal.value,
                            cal.epsilon,
                            {**cal.ledger(), **_dpsgd_statement(sampling, q, int(t))},
                        )
                    )
    counts = _node_counts(cfg, train_nodes)
    setting = f"ProGAP node K={cfg.depth},E={cfg.epochs},N={train_nodes},B={cfg.batch_size}"
    d_node = default_delta(train_nodes)
    for target in cfg.node_epsilons:
        for acc in cfg.accountants:
            cal = calibrate_noise("node", target, d_node, accountant=acc, **counts)
            led = {
                **cal.ledger(),
                **guarantee_statement("node", aggregations=counts["aggregations"], dpsgd_runs=counts["dpsgd_runs"]),
            }
            rows.append(_sigma_row(setting, "progap", acc, target, d_node, cal.value, cal.epsilon, led))
    store.clear("sigma")
    store.append("sigma", rows)
    return store.load("sigma")


def sigma_table(store: ResultStore) -> pd.DataFrame:
    """Noise multiplier per accountant (columns) for each (method, setting, target), and PLD's saving vs RDP."""
    df = store.load("sigma")
    wide = df.pivot_table(index=["method", "setting", "target"], columns="accountant", values="value", aggfunc="first")
    if "pld" in wide and "rdp" in wide:
        wide["pld / rdp"] = wide["pld"] / wide["rdp"]
    if "pld" in wide and "autodp" in wide:
        wide["pld / autodp"] = wide["pld"] / wide["autodp"]
    return wide


def plot_sigma(store: ResultStore):
    """DP-SGD's noise multiplier against the target ε per accountant and setting, from the stored ``sigma`` rows."""
    df = store.load("sigma")
    df = df[df["method"] == "dp-sgd (poisson)"].copy()
    df["accountant / setting"] = df["accountant"] + " " + df["setting"]
    return plotting.lines(
        df,
        x="target",
        y="value",
        hue="accountant / setting",
        xlabel="target ε (δ = 1e-5)",
        ylabel="noise multiplier z",
        logx=True,
        title="DP-SGD: noise needed for the same (ε, δ), by accountant",
    )


def stated_example() -> pd.DataFrame:
    """The stated example (z = 0.6, q = 0.001, T = 10, δ = 1e-5) beside our accountants."""
    ex = STATED_EXAMPLE
    ev = dpsgd_event(ex["noise_multiplier"], ex["sample_rate"], ex["steps"])
    rows = [
        {"accountant": "rdp", "stated": ex["epsilon_rdp"]},
        {"accountant": "pld", "stated": ex["epsilon_tight"]},
    ]
    for r in rows:
        r["ours"] = epsilon(ev, ex["delta"], r["accountant"])
        r["diff"] = r["ours"] - r["stated"]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------------
# accuracy at equal ε
# ---------------------------------------------------------------------------------------------------------------
def _cells(cfg: PrivacyProfile) -> list[dict[str, Any]]:
    cells = []
    for eps in cfg.node_epsilons:
        for acc in cfg.train_accountants:
            for method in cfg.methods:
                for run in range(int(cfg.runs)):
                    cells.append(
                        {
                            "dataset": cfg.dataset,
                            "method": method,
                            "accountant": acc,
                            "target_epsilon": float(eps),
                            "setting": f"node eps={eps:g}",
                            "run": run,
                            "seed": int(cfg.seed),
                            "depth": int(cfg.depth),
                            "epochs": int(cfg.epochs),
                            "batch_size": int(cfg.batch_size),
                            "max_degree": int(cfg.max_degree),
                            "lr": float(cfg.lr),
                        }
                    )
    return cells


def run_cell(data, cell: dict[str, Any], *, device: str = "auto") -> list[dict[str, Any]]:
    """One node-level run with the noise calibrated by ``cell['accountant']`` -> val/test accuracy rows (%)."""
    # the methods (torch) only when a cell computes: notebooks that read stored rows start fast
    from dpgnn.methods import progap as pg
    from dpgnn.methods import progap_baselines as bl

    seed = int(cell["seed"]) * 1000 + int(cell["run"])
    if cell["method"] == "progap":
        res = pg.train_progap(
            data,
            pg.ProGAPConfig(
                level="node",
                depth=cell["depth"],
                epsilon=cell["target_epsilon"],
                lr=cell["lr"],
                epochs=cell["epochs"],
                batch_size=cell["batch_size"],
                max_degree=cell["max_degree"],
                accountant=cell["accountant"],
            ),
            seed=seed,
            device=device,
        )
    else:
        res = bl.train_mlp(
            data,
            level="node",
            epsilon=cell["target_epsilon"],
            lr=cell["lr"],
            epochs=cell["epochs"],
            batch_size=cell["batch_size"],
            accountant=cell["accountant"],
            seed=seed,
            device=device,
        )
    led = dict(res.ledger)
    common = {
        "level": "node",
        "epsilon": led.get("epsilon"),
        "delta": led.get("delta"),
        "ledger": led,
        "noise_multiplier": led.get("noise_multiplier"),
    }
    return [
        {**common, "metric": "val_acc", "value": 100 * res.val_acc},
        {**common, "metric": "accuracy", "value": 100 * res.test_acc},
    ]


def run_accuracy(cfg: PrivacyProfile, store: ResultStore, *, device: str = "auto", force: bool = False) -> pd.DataFrame:
    """ProGAP and DP-MLP (node level) at each ε with σ from each training accountant; artifact ``accuracy``."""
    cache: dict[str, Any] = {}

    def load(name: str):
        if name not in cache:
            cache[name] = load_dataset(name, variant="progap", min_class_size=int(cfg.min_class_size))
        return cache[name]

    data = load_or_skip(store, cfg.dataset, load, artifact="accuracy")
    if data is None:
        return store.load("accuracy")
    return run_grid(store, "accuracy", _cells(cfg), lambda c: run_cell(data, c, device=device), force=force)


def train_nodes(cfg: PrivacyProfile) -> int:
    """Training nodes of the profile's dataset (the N of the node-level σ table)."""
    data = load_dataset(cfg.dataset, variant="progap", min_class_size=int(cfg.min_class_size))
    return int(data.train_mask.sum())


def accuracy_table(store: ResultStore) -> pd.DataFrame:
    """Mean test accuracy (%) and noise multiplier per (method, ε, accountant), and the gain of PLD."""
    df = store.load("accuracy")
    acc = df[df["metric"] == "accuracy"]
    out = (
        acc.groupby(["method", "setting", "accountant"])
        .agg(
            accuracy=("value", "mean"),
            noise_multiplier=("noise_multiplier", "first"),
            epsilon=("epsilon", "max"),
            runs=("value", "size"),
        )
        .reset_index()
    )
    return out


def plot_accuracy(store: ResultStore):
    """Test accuracy against node-level ε per method and accountant, from the stored ``accuracy`` rows."""
    df = store.load("accuracy")
    df = df[df["metric"] == "accuracy"].copy()
    df["ε"] = df["setting"].str.replace("node eps=", "").astype(float)
    df["method / accountant"] = df["method"] + " / " + df["accountant"]
    return plotting.lines(
        df,
        x="ε",
        y="value",
        hue="method / accountant",
        xlabel="ε (node level)",
        ylabel="test accuracy (%)",
        logx=True,
        title="Same ε, noise from the authors' accountant vs PLD",
    )


def side_by_side(store: ResultStore) -> pd.DataFrame:
    """The stated ε of :data:`STATED_EXAMPLE` (what RDP gives and the tight value) beside ours."""
    return stated_example()


__all__ = [
    "PROFILES",
    "STATED_EXAMPLE",
    "run_sigma",
    "sigma_table",
    "plot_sigma",
    "stated_example",
    "run_cell",
    "run_accuracy",
    "train_nodes",
    "accuracy_table",
    "plot_accuracy",
    "side_by_side",
]


#: this series in the registry (:mod:`dpgnn.series`)
SERIES = register(
    Series(
        PAPER,
        title="Privacy: what tight accounting buys at equal ε",
        kind="study",
        order=7,
        profiles=PROFILES,
        artifacts=("sigma", "accuracy"),
        side_by_side=side_by_side,
    )
)
