"""The course's explorers (``notebooks/learn/``): each returns figure data from a few slider values.

Every explorer is a pair: a *data* function (plain arguments in, a dict of numbers/arrays out -- what the tests
check) and a *draw* function (that dict in, a matplotlib figure out). :func:`explore` shows the default figure as a
normal output (so papermill, nbconvert and CI see a static figure) and, where ipywidgets is available, adds
sliders/dropdowns that redraw that same output in place in JupyterLab.

The numbers come from the package, never from the notebook: mechanisms (:mod:`dpgnn.privacy.mechanisms`,
:mod:`dpgnn.privacy.multibit`), accountants (:func:`dpgnn.privacy.get_accountant`, the ones behind
``dpgnn epsilon``), the PATE/PrivGNN accounting (:mod:`dpgnn.privacy.pate`), FDP's bound
(:mod:`dpgnn.privacy.fdp`), DRW's sampler (:mod:`dpgnn.data.random_walks`) and ProGAP's events
(:mod:`dpgnn.privacy.progap`). The one outside library is ``dp_accounting``'s PLD accountant (the tight
reference next to our RDP accountant).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
import torch

from dpgnn.privacy import dpsgd_event, get_accountant, get_mechanism
from dpgnn.privacy.validation import check_delta, check_positive_finite, check_sample_rate

__all__ = [
    "FEATURE_MECHANISMS",
    "explore",
    "course_graph",
    "ldp_draws",
    "ldp_variance",
    "aggregation_error",
    "draw_ldp_draws",
    "draw_ldp_variance",
    "draw_aggregation_error",
    "rr_labels",
    "drop_accuracy",
    "draw_rr_labels",
    "draw_drop_accuracy",
    "epsilon_vs_steps",
    "epsilon_vs_delta",
    "draw_epsilon_vs_steps",
    "draw_epsilon_vs_delta",
    "node_influence",
    "draw_node_influence",
    "aggregation_noise",
    "progap_budget",
    "draw_aggregation_noise",
    "draw_progap_budget",
    "teacher_votes",
    "query_cost",
    "draw_teacher_votes",
    "draw_query_cost",
]

#: LDP feature mechanisms of LPGCN/LPGNN, as named in :func:`dpgnn.privacy.get_mechanism`.
FEATURE_MECHANISMS = ("laplace", "piecewise", "pgc", "multibit")
_LABELS = {"laplace": "LM (Laplace)", "piecewise": "PM (piecewise)", "pgc": "PGC (LPGCN)", "multibit": "MBM (LPGNN)"}


def _mech(name: str, epsilon: float, d: int = 1):
    if name not in FEATURE_MECHANISMS:
        raise ValueError(f"mechanism must be one of {FEATURE_MECHANISMS}, got {name!r}")
    return get_mechanism(name, epsilon=epsilon, low=0.0, high=1.0)


def _int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------------------------------------------
# explorer plumbing
# ------------------------------------------------------------------------------------------------------------
def _widget(name: str, spec: Any, value: Any):
    import ipywidgets as w

    style = {"description_width": "initial"}
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        return w.Dropdown(options=list(spec), value=value, description=name, style=style)
    if isinstance(spec, tuple) and len(spec) == 4 and spec[3] == "log":
        lo, hi, step, _ = spec
        return w.FloatLogSlider(
            value=value, min=lo, max=hi, step=step, base=10, description=name, continuous_update=False, style=style
        )
    lo, hi, step = spec
    cls = w.IntSlider if all(isinstance(s, int) for s in spec) and isinstance(value, int) else w.FloatSlider
    return cls(value=value, min=lo, max=hi, step=step, description=name, continuous_update=False, style=style)


def _png(fig: plt.Figure) -> Any:
    """A figure as an IPython PNG image (shown the same whatever matplotlib backend the kernel runs)."""
    import io

    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return Image(data=buf.getvalue(), format="png")


def explore(
    data_fn: Callable[..., Mapping[str, Any]],
    draw_fn: Callable[[Mapping[str, Any]], plt.Figure],
    controls: Mapping[str, Any],
    **defaults: Any,
) -> Mapping[str, Any]:
    """Show ``draw_fn(data_fn(**defaults))`` and, where ipywidgets exists, controls that redraw it in place.

    ``controls`` maps an argument of ``data_fn`` to a widget spec: ``(low, high, step)`` (a slider; ints give an
    integer slider), ``(low_exp, high_exp, step, "log")`` (a log10 slider), or a list of strings (a dropdown).
    Every controlled argument needs its default in ``defaults``. Returns the default figure's data. Under
    papermill/nbconvert the figure is an ordinary output (the static fallback); the controls need a live kernel.
    """
    from IPython.display import display

    missing = sorted(set(controls) - set(defaults))
    if missing:
        raise ValueError(f"controls {missing} need a default value")
    data = data_fn(**defaults)
    handle = display(_png(draw_fn(data)), display_id=True)
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a dependency; this keeps a bare kernel working
        return data
    widgets = {k: _widget(k, spec, defaults[k]) for k, spec in controls.items()}

    def redraw(_change: Any = None) -> None:
        args = dict(defaults, **{k: wd.value for k, wd in widgets.items()})
        handle.update(_png(draw_fn(data_fn(**args))))

    for wd in widgets.values():
        wd.observe(redraw, names="value")
    display(w.HBox(list(widgets.values()), layout=w.Layout(flex_flow="row wrap")))
    return data


def course_graph(name: str = "cora", seed: int = 0) -> Any:
    """A real graph for the course (``dpgnn.data.load_dataset(name)``); where its files are neither mirrored nor
    downloadable, a contextual SBM stand-in of Cora's size (printed, never silent)."""
    from dpgnn.data import DatasetUnavailable, load_dataset
    from dpgnn.data.synthetic import csbm

    try:
        return load_dataset(name)
    except DatasetUnavailable as err:
        print(f"not_run: {name} is unavailable ({str(err).splitlines()[0]}); using a CSBM stand-in of 2,708 nodes")
        data = csbm(num_nodes=2708, num_classes=7, num_features=16, avg_degree=3.9, seed=seed)
        gen = torch.Generator().manual_seed(seed)
        data.train_mask = torch.zeros(data.num_nodes, dtype=torch.bool)
        data.train_mask[torch.randperm(data.num_nodes, generator=gen)[:140]] = True
        return data


# ------------------------------------------------------------------------------------------------------------
# 1. local DP on node features (LPGCN Sec. 4, LPGNN Sec. 4.1)
# ------------------------------------------------------------------------------------------------------------
def ldp_draws(
    mechanism: str = "piecewise", epsilon: float = 1.0, x: float = 0.5, n: int = 4000, seed: int = 0
) -> dict[str, Any]:
    """``n`` server-side estimates ``m(x*)`` of one value ``x ∈ [0, 1]`` sent through ``mechanism`` at ``epsilon``.

    Returns the estimates, their empirical mean/variance and the mechanism's analytic variance (``multibit`` with
    one feature, i.e. the one-bit mechanism).
    """
    m = _mech(mechanism, epsilon)
    n = _int(n, "n", 1)
    xs = torch.full((n, 1), float(x), dtype=torch.float64)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    est = m.estimate(m.perturb(xs, gen)).ravel().numpy()
    return {
        "mechanism": mechanism,
        "epsilon": float(epsilon),
        "x": float(x),
        "estimates": est,
        "mean": float(est.mean()),
        "variance": float(est.var(ddof=1)) if n > 1 else float("nan"),
        "variance_theory": float(m.variance(xs[:1]).ravel()[0]),
    }


def ldp_variance(
    epsilon: float = 1.0, x: float = 0.5, mechanisms: Sequence[str] = FEATURE_MECHANISMS, num: int = 41
) -> dict[str, Any]:
    """Analytic variance of each mechanism's estimate: against ε at value ``x`` and against x at ``epsilon``."""
    eps_grid = np.geomspace(0.1, 8.0, num)
    x_grid = np.linspace(0.0, 1.0, num)
    by_eps, by_x = {}, {}
    for name in mechanisms:
        by_eps[name] = np.array(
            [
                float(_mech(name, e).variance(torch.tensor([[float(x)]], dtype=torch.float64)).ravel()[0])
                for e in eps_grid
            ]
        )
        by_x[name] = _mech(name, epsilon).variance(torch.tensor(x_grid, dtype=torch.float64)[:, None]).ravel().numpy()
    return {
        "epsilon": float(epsilon),
        "x": float(x),
        "eps_grid": eps_grid,
        "x_grid": x_grid,
        "var_vs_eps": by_eps,
        "var_vs_x": by_x,
    }


def aggregation_error(
    mechanism: str = "multibit",
    epsilon: float = 1.0,
    num_features: int = 100,
    degrees: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
    trials: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Error of a mean-aggregated first layer under feature LDP, by node degree (LPGCN Sec. 4, LPGNN Sec. 4.2).

    A node with ``k`` neighbours averages ``k`` independent unbiased estimates, so the noise of the aggregate has
    variance ``Var/k``: its root-mean-square error per feature shrinks like ``1/√k``. Features are drawn uniformly
    in ``[0, 1]^d``; ``multibit`` uses the paper's ``m*`` for ``d = num_features`` (its variance grows with ``d``).
    Returns the measured RMSE and the analytic ``√(Var/k)`` (mean analytic variance over the drawn features).
    """
    d = _int(num_features, "num_features", 1)
    t = _int(trials, "trials", 1)
    ks = [_int(k, "degree", 1) for k in degrees]
    if mechanism not in FEATURE_MECHANISMS:
        raise ValueError(f"mechanism must be one of {FEATURE_MECHANISMS}, got {mechanism!r}")
    per_feature = epsilon if mechanism == "multibit" else check_positive_finite(epsilon, "epsilon") / d
    m = get_mechanism(mechanism, epsilon=per_feature, low=0.0, high=1.0)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    rmse, exact = [], []
    for k in ks:
        x = torch.rand((t * k, d), generator=gen, dtype=torch.float64)
        err = (m.estimate(m.perturb(x, gen)) - x).reshape(t, k, d).mean(dim=1)
        rmse.append(float(err.pow(2).mean().sqrt()))
        exact.append(math.sqrt(float(m.variance(x).mean()) / k))
    return {
        "mechanism": mechanism,
        "epsilon": float(epsilon),
        "num_features": d,
        "degrees": np.array(ks),
        "rmse": np.array(rmse),
        "rmse_theory": np.array(exact),
    }


def draw_ldp_draws(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist(data["estimates"], bins=60, color="#4c72b0", alpha=0.8)
    ax.axvline(data["x"], color="k", lw=1.5, label=f"true x = {data['x']:.2f}")
    ax.axvline(data["mean"], color="#dd8452", ls="--", label=f"mean of estimates = {data['mean']:.3f}")
    ax.set(
        xlabel="server-side estimate m(x*)",
        ylabel="count",
        title=f"{_LABELS[data['mechanism']]}, ε = {data['epsilon']:g}: var {data['variance']:.3g} "
        f"(theory {data['variance_theory']:.3g})",
    )
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_ldp_variance(data: Mapping[str, Any]) -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    for name, v in data["var_vs_eps"].items():
        axes[0].plot(data["eps_grid"], v, label=_LABELS[name])
        axes[1].plot(data["x_grid"], data["var_vs_x"][name], label=_LABELS[name])
    axes[0].set(xscale="log", yscale="log", xlabel="ε", ylabel="Var[m(x*)]", title=f"at x = {data['x']:.2f}")
    axes[1].set(yscale="log", xlabel="x", title=f"at ε = {data['epsilon']:g} (one feature)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_aggregation_error(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["degrees"], data["rmse"], "o-", label="measured")
    ax.plot(data["degrees"], data["rmse_theory"], "k--", label="√(Var/k)")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="node degree k",
        ylabel="RMSE of the mean-aggregated feature",
        title=f"{_LABELS[data['mechanism']]}, ε = {data['epsilon']:g}, d = {data['num_features']}",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# 2. noisy labels (LPGNN Sec. 4.3)
# ------------------------------------------------------------------------------------------------------------
def rr_labels(epsilon: float = 1.0, num_classes: int = 7, n: int = 5000, seed: int = 0) -> dict[str, Any]:
    """Randomized response on ``n`` labels: the transition matrix, the empirical one, and forward correction.

    Forward correction trains on ``P(ỹ|x) = P(y|x)·T``; for a perfect classifier (one-hot ``P(y|x)``) that is the
    true row of ``T``, so the corrected loss is minimised by the clean prediction. ``corrected_argmax_ok`` checks
    that ``argmax(e_y T) = y`` for every class (true whenever ``keep > (1 − keep)/(c − 1)``, i.e. every ε > 0).
    """
    c = _int(num_classes, "num_classes", 2)
    rr = get_mechanism("rr", epsilon=epsilon, num_classes=c)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    y = torch.randint(0, c, (_int(n, "n", 1),), generator=gen)
    noisy = rr.perturb(y, gen)
    T = rr.transition_matrix().numpy()
    emp = np.zeros((c, c))
    np.add.at(emp, (y.numpy(), noisy.numpy()), 1.0)
    emp = emp / np.maximum(emp.sum(axis=1, keepdims=True), 1)
    return {
        "epsilon": float(epsilon),
        "num_classes": c,
        "keep": rr.keep_probability,
        "T": T,
        "T_empirical": emp,
        "label_accuracy": float((noisy == y).double().mean()),
        "corrected_argmax_ok": bool((T.argmax(axis=1) == np.arange(c)).all()),
    }


def drop_accuracy(
    epsilon: float = 1.0,
    homophily: float = 0.8,
    avg_degree: float = 10.0,
    max_steps: int = 4,
    num_nodes: int = 1000,
    num_classes: int = 5,
    seed: int = 0,
) -> dict[str, Any]:
    """How often Drop's propagated targets ``argmax softmax(Â^K Ỹ)`` equal the true label, for K = 0..max_steps.

    On a contextual SBM (:func:`dpgnn.data.synthetic.csbm`) every node's label goes through RR at ``epsilon``
    (:func:`dpgnn.methods.lpgnn.perturb_labels`); Drop (:func:`dpgnn.methods.lpgnn.drop_targets`) then votes over
    K-hop neighbourhoods. K = 0 is the raw noisy label; with homophily, neighbours' noisy labels agree on the truth
    more often than one label alone.
    """
    from dpgnn.data.synthetic import csbm
    from dpgnn.methods.lpgnn import drop_targets, perturb_labels
    from dpgnn.nn.lpgnn import normalized_adjacency

    data = csbm(
        num_nodes=_int(num_nodes, "num_nodes", 10),
        num_classes=_int(num_classes, "num_classes", 2),
        num_features=4,
        avg_degree=avg_degree,
        homophily=homophily,
        seed=_int(seed, "seed", 0),
    )
    n, c = data.num_nodes, num_classes
    everyone = torch.ones(n, dtype=torch.bool)
    noisy = perturb_labels(data.y, epsilon, c, everyone, generator=seed)
    adj = normalized_adjacency(data.edge_index, n)
    idx = torch.arange(n)
    ks = list(range(_int(max_steps, "max_steps", 0) + 1))
    acc = [float((drop_targets(noisy, idx, adj, k, c) == data.y).double().mean()) for k in ks]
    return {"epsilon": float(epsilon), "homophily": float(homophily), "steps": np.array(ks), "accuracy": np.array(acc)}


def draw_rr_labels(data: Mapping[str, Any]) -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for ax, mat, title in (
        (axes[0], data["T"], "transition matrix T"),
        (axes[1], data["T_empirical"], "measured P(ỹ = j | y = i)"),
    ):
        im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
        ax.set(xlabel="noisy label j", ylabel="true label i", title=title)
    fig.colorbar(im, ax=axes, shrink=0.8)
    fig.suptitle(
        f"RR, ε = {data['epsilon']:g}, c = {data['num_classes']}: keep p = {data['keep']:.3f}, "
        f"measured {data['label_accuracy']:.3f}",
        fontsize=9,
    )
    return fig


def draw_drop_accuracy(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["steps"], 100 * data["accuracy"], "o-")
    ax.set(
        xlabel="Drop propagation steps K_y",
        ylabel="targets equal to the true label (%)",
        title=f"RR ε = {data['epsilon']:g}, homophily {data['homophily']:.2f}",
    )
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# 3. accounting
# ------------------------------------------------------------------------------------------------------------
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


# ------------------------------------------------------------------------------------------------------------
# 4. why DP-SGD breaks on graphs (DRW Sec. 3-4, FDP)
# ------------------------------------------------------------------------------------------------------------
def _adjacency(edge_index: torch.Tensor, n: int) -> sp.csr_matrix:
    e = edge_index.cpu().numpy()
    a = sp.coo_matrix((np.ones(e.shape[1]), (e[0], e[1])), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64)
    a.setdiag(0)
    a.eliminate_zeros()
    return a


def node_influence(
    data: Any, depth: int = 2, max_degree: int = 5, walk_length: int = 3, seed: int = 0
) -> dict[str, Any]:
    """For every node, how many training nodes' loss terms it can touch in one pass of a ``depth``-layer GNN.

    - ``plain``: training roots whose ``depth``-hop neighbourhood contains the node (the full graph);
    - ``fdp``: the same in FDP's degree-bounded graph (:func:`dpgnn.methods.fdp.bound_degree`, max degree
      ``max_degree``), never above the bound ``K = Σ_l D^l`` (:func:`dpgnn.privacy.fdp.max_affected`);
    - ``drw``: DRW's disjoint random-walk subgraphs (:func:`dpgnn.data.random_walks.disjoint_random_walks`,
      walk length ``walk_length``): every node lies in at most one subgraph, so it touches at most 1.

    DP-SGD's analysis assumes one record changes one gradient; on a graph ``plain.max()`` gradients can move.
    """
    from dpgnn.data.random_walks import disjoint_random_walks
    from dpgnn.methods.fdp import bound_degree
    from dpgnn.privacy.fdp import max_affected

    L = _int(depth, "depth", 1)
    D = _int(max_degree, "max_degree", 1)
    n = int(data.num_nodes)
    train = data.train_mask.cpu().numpy() if getattr(data, "train_mask", None) is not None else np.ones(n, bool)

    def counts(a: sp.csr_matrix) -> np.ndarray:
        reach = sp.identity(n, format="csr")
        hop = sp.identity(n, format="csr") + a
        for _ in range(L):
            reach = ((reach @ hop) > 0).astype(np.float64)
        return np.asarray(reach[:, np.flatnonzero(train)].sum(axis=1)).ravel()

    plain = counts(_adjacency(data.edge_index, n))
    bounded = bound_degree(data.edge_index, n, D, seed=_int(seed, "seed", 0))
    fdp = counts(_adjacency(torch.as_tensor(bounded), n))
    subs = disjoint_random_walks(
        data.edge_index, n, np.flatnonzero(train), _int(walk_length, "walk_length", 0), seed=seed
    )
    drw = np.zeros(n)
    for nodes in subs.nodes.cpu().numpy() if hasattr(subs.nodes, "cpu") else subs.nodes:
        nodes = np.asarray(nodes)
        drw[np.unique(nodes[nodes >= 0])] += 1
    return {
        "depth": L,
        "max_degree": D,
        "walk_length": int(walk_length),
        "num_train": int(train.sum()),
        "plain": plain,
        "fdp": fdp,
        "drw": drw,
        "fdp_bound": max_affected(D, L),
        "num_subgraphs": int(len(subs.nodes)),
    }


def draw_node_influence(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(6, 3.4))
    top = max(float(data["plain"].max()), 1.0)
    bins = np.unique(np.geomspace(1, top + 1, 30).astype(int))
    for key, label in (
        ("plain", f"full graph (max {int(data['plain'].max())})"),
        ("fdp", f"FDP, degree ≤ {data['max_degree']} (bound K = {data['fdp_bound']}, max {int(data['fdp'].max())})"),
        ("drw", f"DRW subgraphs (max {int(data['drw'].max())})"),
    ):
        ax.hist(np.maximum(data[key], 1), bins=bins, histtype="step", lw=1.5, label=label)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="training nodes one node's features reach",
        ylabel="number of nodes",
        title=f"{data['depth']}-layer GNN, {data['num_train']} training nodes",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# 5. aggregation perturbation (GAP / ProGAP)
# ------------------------------------------------------------------------------------------------------------
def aggregation_noise(
    data: Any, noise_std: float = 2.0, max_degree: int = 10, dim: int = 16, seed: int = 0
) -> dict[str, Any]:
    """Sum aggregation of unit-norm embeddings plus Gaussian noise, as GAP/ProGAP's aggregation module does.

    Each row of ``H`` has norm 1, so adding or removing one *edge* changes ``A H`` by one row: L2 sensitivity 1.
    Removing one *node* changes up to ``max_degree`` rows (after bounding in-degrees): sensitivity ``√D`` -- at
    node level the same noise buys a ``√D``-times weaker guarantee. Returns the signal-to-noise ratio
    ``‖(AH)_v‖ / ‖noise_v‖`` per node against its (bounded) degree.
    """
    from dpgnn.methods.fdp import bound_degree

    n = int(data.num_nodes)
    s = check_positive_finite(noise_std, "noise_std")
    D = _int(max_degree, "max_degree", 1)
    gen = torch.Generator().manual_seed(_int(seed, "seed", 0))
    h = torch.nn.functional.normalize(
        torch.randn((n, _int(dim, "dim", 1)), generator=gen, dtype=torch.float64).abs(), dim=1
    )
    a = _adjacency(torch.as_tensor(bound_degree(data.edge_index, n, D, seed=seed)), n)
    agg = torch.as_tensor(a @ h.numpy())
    noise = s * torch.randn(agg.shape, generator=gen, dtype=torch.float64)
    deg = np.asarray(a.sum(axis=1)).ravel()
    snr = (agg.norm(dim=1) / noise.norm(dim=1)).numpy()
    return {
        "noise_std": s,
        "max_degree": D,
        "degree": deg,
        "snr": snr,
        "edge_sensitivity": 1.0,
        "node_sensitivity": math.sqrt(D),
    }


def progap_budget(
    noise_std: float = 5.0, max_stages: int = 6, delta: float = 1e-5, max_degree: int = 50
) -> dict[str, Any]:
    """ε of ProGAP's aggregations against the number of stages K (edge level and node level).

    Stage k perturbs one aggregation and caches it; later stages and every training epoch reuse the cached noisy
    aggregate (post-processing), so the budget grows with K, not with epochs. Edge level: K Gaussian queries of
    sensitivity 1 (:func:`dpgnn.privacy.progap.privacy_event`, ``rdp`` accountant) next to the paper's
    Theorem 4.1 closed form; node level: the same noise against sensitivity ``√D`` (noise multiplier
    ``σ/√D``), aggregations only (ProGAP's node level adds DP-SGD stages on top, so this is a lower bound for it).
    """
    from dpgnn.privacy.progap import privacy_event, theorem41_epsilon

    s = check_positive_finite(noise_std, "noise_std")
    d = check_delta(delta)
    D = _int(max_degree, "max_degree", 1)
    ks = np.arange(1, _int(max_stages, "max_stages", 1) + 1)
    acc = get_accountant("rdp")
    edge = np.array([acc.compose(privacy_event("edge", s, aggregations=int(k))).get_epsilon(d) for k in ks])
    node = np.array(
        [acc.compose(privacy_event("node", s / math.sqrt(D), aggregations=int(k))).get_epsilon(d) for k in ks]
    )
    thm = np.array([theorem41_epsilon(s, int(k), d) for k in ks])
    return {"noise_std": s, "delta": d, "max_degree": D, "stages": ks, "edge": edge, "node": node, "theorem41": thm}


def draw_aggregation_noise(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.scatter(np.maximum(data["degree"], 0.5), data["snr"], s=4, alpha=0.4)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=f"degree (bounded at {data['max_degree']})",
        ylabel="‖signal‖ / ‖noise‖",
        title=f"noise σ = {data['noise_std']:g}: edge sensitivity 1, node "
        f"sensitivity √D = {data['node_sensitivity']:.2f}",
    )
    ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def draw_progap_budget(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["stages"], data["edge"], "o-", label="edge level (RDP accountant)")
    ax.plot(data["stages"], data["theorem41"], "k:", label="edge level, Theorem 4.1")
    ax.plot(data["stages"], data["node"], "s-", label=f"node level, aggregations only (D = {data['max_degree']})")
    ax.set(
        yscale="log",
        xlabel="stages K (noisy aggregations)",
        ylabel=f"ε at δ = {data['delta']:g}",
        title=f"aggregation noise σ = {data['noise_std']:g}",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------------------
# 6. teachers and students (PATE, PrivGNN)
# ------------------------------------------------------------------------------------------------------------
def teacher_votes(
    lam: float = 0.1,
    num_teachers: int = 250,
    agreement: float = 0.6,
    num_classes: int = 7,
    queries: int = 500,
    seed: int = 0,
) -> dict[str, Any]:
    """PATE's noisy vote against PrivGNN's noisy argmax on simulated answers, and PATE's data-dependent ε.

    Teachers vote for the true class with probability ``agreement`` (else uniformly among the others). PATE adds
    Laplace(1/λ) to each vote count; PrivGNN's one teacher (on a Poisson subsample) adds Laplace(1/λ) to its
    posterior, a vector of L1 norm 1 (:func:`dpgnn.methods.privgnn.noisy_argmax`). Large vote margins make PATE's
    data-dependent ε (:func:`dpgnn.privacy.pate.pate_epsilon`) far below the data-independent bound.
    """
    from dpgnn.methods.privgnn import noisy_argmax
    from dpgnn.privacy.pate import check_lam, pate_epsilon

    lam = check_lam(lam)
    c = _int(num_classes, "num_classes", 2)
    t = _int(num_teachers, "num_teachers", 1)
    nq = _int(queries, "queries", 1)
    if not 0.0 <= agreement <= 1.0:
        raise ValueError(f"agreement must lie in [0, 1], got {agreement}")
    rng = np.random.default_rng(_int(seed, "seed", 0))
    truth = rng.integers(0, c, nq)
    right = rng.random((nq, t)) < agreement
    other = (truth[:, None] + rng.integers(1, c, (nq, t))) % c
    votes = np.where(right, truth[:, None], other)
    counts = np.stack([np.bincount(v, minlength=c) for v in votes]).astype(float)
    pate = (counts + rng.laplace(0.0, 1.0 / lam, counts.shape)).argmax(axis=1)
    post = torch.as_tensor(counts / t)  # the vote share stands in for one teacher's posterior
    gen = torch.Generator().manual_seed(int(seed))
    priv = noisy_argmax(post, lam, gen).numpy()
    eps = pate_epsilon(lam, nq, 1e-5, counts=counts)
    return {
        "lam": lam,
        "agreement": float(agreement),
        "num_teachers": t,
        "queries": nq,
        "pate_accuracy": float((pate == truth).mean()),
        "privgnn_accuracy": float((priv == truth).mean()),
        "pate_epsilon": eps.epsilon,
        "pate_epsilon_data_independent": eps.epsilon_data_independent,
        "margin": (np.sort(counts, axis=1)[:, -1] - np.sort(counts, axis=1)[:, -2]),
    }


def query_cost(
    lam: float = 0.1, max_queries: int = 1000, gamma: float = 0.3, delta: float = 1e-4, points: int = 4
) -> dict[str, Any]:
    """ε against the number of answered queries |Q| for PrivGNN (Laplace on a Poisson(γ) subsample) and PATE.

    PrivGNN: :func:`dpgnn.privacy.pate.privgnn_epsilon` with the authors' accountant (autodp RDP, classic
    conversion) and with our ``rdp`` accountant (tight conversion); PATE: the data-independent moments bound of
    :func:`dpgnn.privacy.pate.pate_epsilon` (each answer is 2λ-DP).
    """
    from dpgnn.privacy.pate import pate_epsilon, privgnn_epsilon

    qs = np.unique(np.geomspace(1, _int(max_queries, "max_queries", 1), _int(points, "points", 2)).round().astype(int))
    authors = np.array([privgnn_epsilon(lam, int(q), gamma, delta) for q in qs])
    ours = np.array([privgnn_epsilon(lam, int(q), gamma, delta, accountant="rdp") for q in qs])
    pate = np.array([pate_epsilon(lam, int(q), delta).epsilon for q in qs])
    return {
        "lam": float(lam),
        "gamma": float(gamma),
        "delta": float(delta),
        "queries": qs,
        "privgnn_authors": authors,
        "privgnn_rdp": ours,
        "pate": pate,
    }


def draw_teacher_votes(data: Mapping[str, Any]) -> plt.Figure:
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.2))
    axes[0].hist(data["margin"], bins=30)
    axes[0].set(
        xlabel="vote margin (top − runner-up)",
        ylabel="queries",
        title=f"{data['num_teachers']} teachers, agreement {data['agreement']:.2f}",
    )
    axes[1].bar(
        ["PATE\nnoisy vote", "PrivGNN\nnoisy argmax"],
        [100 * data["pate_accuracy"], 100 * data["privgnn_accuracy"]],
        color=["#4c72b0", "#dd8452"],
    )
    axes[1].set(
        ylabel="labels correct (%)",
        ylim=(0, 100),
        title=f"λ = {data['lam']:g}; PATE ε = {data['pate_epsilon']:.2f} "
        f"(data-indep. {data['pate_epsilon_data_independent']:.1f})",
    )
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.tight_layout()
    return fig


def draw_query_cost(data: Mapping[str, Any]) -> plt.Figure:
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.plot(data["queries"], data["privgnn_authors"], "o-", label="PrivGNN, authors' accountant")
    ax.plot(data["queries"], data["privgnn_rdp"], "x--", label="PrivGNN, our RDP accountant")
    ax.plot(data["queries"], data["pate"], "s:", label="PATE, data-independent")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="answered queries |Q|",
        ylabel=f"ε at δ = {data['delta']:g}",
        title=f"λ = {data['lam']:g}, γ = {data['gamma']:g}",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
