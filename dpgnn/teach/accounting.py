"""Accounting: DP-SGD's epsilon against steps and delta, RDP next to the PLD reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from dpgnn.privacy import dpsgd_event, get_accountant
from dpgnn.privacy.validation import check_delta, check_positive_finite, check_sample_rate
from dpgnn.teach.explorer import _int


def _pld_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
    """Tight ε of Poisson-subsampled Gaussian DP-SGD with ``dp_accounting``'s PLD accountant (add/remove)."""
    import dp_accounting

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(noise_multiplier)), steps
    )
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3)
    return float(acc.compose(event).get_epsilon(delta))


def epsilon_vs_steps(
    noise_multiplier: float = 1.0,
    sample_rate: float = 0.01,
    max_steps: int = 2000,
    delta: float = 1e-5,
    points: int = 8,
    pld: bool = True,
) -> dict[str, Any]:
    """ε after T DP-SGD steps, T on a log grid up to ``max_steps``: with and without subsampling, RDP vs PLD.

    ``rdp`` and ``no_sampling`` use :func:`dpgnn.privacy.dpsgd_event` with the ``rdp`` accountant (the numbers
    ``dpgnn epsilon dpsgd`` prints); ``pld`` is dp_accounting's tight PLD accountant (never above the RDP bound up
    to its discretisation). ``naive`` is basic composition of the per-step (ε₁, δ/T) guarantee, T·ε₁.
    """
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    q = check_sample_rate(sample_rate)
    d = check_delta(delta)
    steps = np.unique(np.geomspace(1, _int(max_steps, "max_steps", 1), _int(points, "points", 2)).round().astype(int))
    acc = get_accountant("rdp")
    rdp = np.array([acc.compose(dpsgd_event(z, q, int(t))).get_epsilon(d) for t in steps])
    full = np.array([acc.compose(dpsgd_event(z, 1.0, int(t))).get_epsilon(d) for t in steps])
    naive = np.array([int(t) * acc.compose(dpsgd_event(z, q, 1)).get_epsilon(d / int(t)) for t in steps])
    out = {
        "noise_multiplier": z,
        "sample_rate": q,
        "delta": d,
        "steps": steps,
        "rdp": rdp,
        "no_sampling": full,
        "naive": naive,
    }
    if pld:
        out["pld"] = np.array([_pld_epsilon(z, q, int(t), d) for t in steps])
    return out


def epsilon_vs_delta(
    noise_multiplier: float = 1.0, sample_rate: float = 0.01, steps: int = 1000, num_nodes: int = 2708
) -> dict[str, Any]:
    """ε as a function of δ for one DP-SGD run; marks δ = 1/N (for N = ``num_nodes``), the largest sane choice.

    δ is the probability mass on which the ε bound may fail; a δ ≥ 1/N permits mechanisms that publish one
    person's record outright, so papers pick δ < 1/N (e.g. ProGAP's 10^-(digits of N)).
    """
    z = check_positive_finite(noise_multiplier, "noise_multiplier")
    q = check_sample_rate(sample_rate)
    t = _int(steps, "steps", 1)
    n = _int(num_nodes, "num_nodes", 2)
    deltas = np.geomspace(1e-10, 1e-1, 19)
    acc = get_accountant("rdp").compose(dpsgd_event(z, q, t))
    eps = np.array([acc.get_epsilon(float(dd)) for dd in deltas])
    return {
        "noise_multiplier": z,
        "sample_rate": q,
        "steps": t,
        "deltas": deltas,
        "epsilon": eps,
        "delta_one_over_n": 1.0 / n,
        "epsilon_at_one_over_n": float(acc.get_epsilon(1.0 / n)),
    }


def draw_epsilon_vs_steps(data: Mapping[str, Any]) -> plt.Figure:
    """Log-log plot of :func:`epsilon_vs_steps`'s ``data``: ε against steps T for basic composition, no
    subsampling, Poisson subsampling with RDP and (when computed) the tight PLD."""
    fig, ax = plt.subplots(figsize=(5.8, 3.4))
    ax.plot(data["steps"], data["naive"], ":", color="grey", label="basic composition T·ε₁")
    ax.plot(data["steps"], data["no_sampling"], "s-", label="no subsampling (q = 1), RDP")
    ax.plot(data["steps"], data["rdp"], "o-", label=f"Poisson q = {data['sample_rate']:g}, RDP")
    if "pld" in data:
        ax.plot(data["steps"], data["pld"], "x--", label=f"Poisson q = {data['sample_rate']:g}, PLD (tight)")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="steps T",
        ylabel=f"ε at δ = {data['delta']:g}",
        title=f"DP-SGD, noise multiplier {data['noise_multiplier']:g}",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def draw_epsilon_vs_delta(data: Mapping[str, Any]) -> plt.Figure:
    """Plot of :func:`epsilon_vs_delta`'s ``data``: ε against δ (log δ), with δ = 1/N marked."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["deltas"], data["epsilon"], "o-")
    ax.axvline(
        data["delta_one_over_n"], color="#c44e52", ls="--", label=f"δ = 1/N: ε = {data['epsilon_at_one_over_n']:.2f}"
    )
    ax.set(
        xscale="log",
        xlabel="δ",
        ylabel="ε",
        title=f"z = {data['noise_multiplier']:g}, q = {data['sample_rate']:g}, T = {data['steps']}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
