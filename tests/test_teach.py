"""The course's explorer callbacks: a slider value in, the expected figure data out (dpgnn/teach/)."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import torch

from dpgnn import teach
from dpgnn.data.synthetic import csbm


@pytest.fixture(scope="module")
def graph():
    data = csbm(num_nodes=300, num_classes=3, num_features=4, avg_degree=6.0, seed=0)
    data.train_mask = torch.zeros(data.num_nodes, dtype=torch.bool)
    data.train_mask[::5] = True
    return data


@pytest.mark.parametrize("mechanism", teach.FEATURE_MECHANISMS)
def test_ldp_draws_unbiased_with_the_analytic_variance(mechanism):
    d = teach.ldp_draws(mechanism, epsilon=2.0, x=0.3, n=20000, seed=0)
    se = math.sqrt(d["variance_theory"] / 20000)
    assert abs(d["mean"] - 0.3) < 5 * se
    assert d["variance"] == pytest.approx(d["variance_theory"], rel=0.08)
    assert (
        teach.ldp_draws(mechanism, epsilon=2.0, x=0.3, n=50, seed=0)["mean"]
        == teach.ldp_draws(mechanism, epsilon=2.0, x=0.3, n=50, seed=0)["mean"]
    )


def test_ldp_variance_slider_values():
    d = teach.ldp_variance(epsilon=1.0, x=0.5, mechanisms=("laplace", "pgc"))
    assert np.allclose(d["var_vs_x"]["laplace"], 2.0)  # LM: 2/ε², independent of x
    e = d["eps_grid"]
    assert np.allclose(d["var_vs_eps"]["laplace"], 2 / e**2)
    assert np.allclose(d["var_vs_eps"]["pgc"], np.exp(e) / np.expm1(e) ** 2 + 0.25)
    assert np.all(np.diff(d["var_vs_eps"]["pgc"]) < 0)


def test_aggregation_error_falls_like_one_over_sqrt_degree():
    d = teach.aggregation_error("laplace", epsilon=1.0, num_features=1, degrees=(1, 4, 16), trials=4000, seed=0)
    assert np.allclose(d["rmse_theory"], np.sqrt(2.0 / np.array([1, 4, 16])))
    assert np.allclose(d["rmse"], d["rmse_theory"], rtol=0.05)
    d2 = teach.aggregation_error("laplace", epsilon=1.0, num_features=2, degrees=(1,), trials=10, seed=0)
    assert d2["rmse_theory"][0] == pytest.approx(math.sqrt(2 / 0.5**2))  # whole-vector ε split over 2 features
    with pytest.raises(ValueError, match="mechanism"):
        teach.aggregation_error("gaussian")


def test_rr_labels_matrix_and_measurement():
    d = teach.rr_labels(epsilon=math.log(6), num_classes=7, n=20000, seed=0)
    assert d["keep"] == pytest.approx(0.5)
    assert np.allclose(d["T"].sum(axis=1), 1.0) and np.allclose(np.diag(d["T"]), 0.5)
    assert d["label_accuracy"] == pytest.approx(0.5, abs=0.015)
    assert np.allclose(d["T_empirical"], d["T"], atol=0.03)
    assert d["corrected_argmax_ok"]


def test_drop_accuracy_helps_only_with_homophily():
    hi = teach.drop_accuracy(epsilon=1.0, homophily=0.9, avg_degree=10.0, max_steps=2, num_nodes=600, seed=0)
    lo = teach.drop_accuracy(epsilon=1.0, homophily=0.1, avg_degree=10.0, max_steps=2, num_nodes=600, seed=0)
    assert list(hi["steps"]) == [0, 1, 2]
    assert hi["accuracy"][2] > hi["accuracy"][0] + 0.2
    assert lo["accuracy"][2] < lo["accuracy"][0]


def test_epsilon_vs_steps_matches_the_cli_accountant_and_pld_is_tighter():
    from dpgnn.privacy import dpsgd_event, get_accountant

    d = teach.epsilon_vs_steps(noise_multiplier=1.1, sample_rate=0.01, max_steps=300, delta=1e-5, points=3)
    assert list(d["steps"]) == [1, 17, 300]
    assert d["rdp"][-1] == pytest.approx(get_accountant("rdp").compose(dpsgd_event(1.1, 0.01, 300)).get_epsilon(1e-5))
    assert np.all(np.diff(d["rdp"]) > 0) and np.all(d["no_sampling"] > d["rdp"])
    assert np.all(d["pld"] <= d["rdp"] + 1e-6)
    assert d["naive"][0] == pytest.approx(d["rdp"][0])


def test_epsilon_vs_delta():
    d = teach.epsilon_vs_delta(noise_multiplier=1.0, sample_rate=0.01, steps=100, num_nodes=1000)
    assert np.all(np.diff(d["epsilon"]) < 0)  # a larger δ buys a smaller ε
    assert d["delta_one_over_n"] == pytest.approx(1e-3)


def test_node_influence_bounds(graph):
    d = teach.node_influence(graph, depth=2, max_degree=3, walk_length=2, seed=0)
    assert d["fdp_bound"] == 1 + 3 + 9
    assert d["fdp"].max() <= d["fdp_bound"]
    assert d["drw"].max() <= 1  # disjoint subgraphs
    assert d["plain"].max() > d["fdp"].max()
    train = graph.train_mask.numpy()
    assert np.all(d["plain"][train] >= 1)  # a training node reaches at least itself
    deeper = teach.node_influence(graph, depth=3, max_degree=3, walk_length=2, seed=0)
    assert np.all(deeper["plain"] >= d["plain"])


def test_aggregation_noise_and_progap_budget(graph):
    d = teach.aggregation_noise(graph, noise_std=1.0, max_degree=4, dim=8, seed=0)
    assert d["degree"].max() <= 4 and d["node_sensitivity"] == 2.0
    quieter = teach.aggregation_noise(graph, noise_std=4.0, max_degree=4, dim=8, seed=0)
    assert quieter["snr"].mean() < d["snr"].mean()
    b = teach.progap_budget(noise_std=5.0, max_stages=4, delta=1e-5, max_degree=25)
    assert list(b["stages"]) == [1, 2, 3, 4]
    assert np.all(np.diff(b["edge"]) > 0) and np.all(b["node"] > b["edge"])
    assert np.all(b["edge"] <= b["theorem41"] + 1e-9)  # the RDP accountant is never looser than Theorem 4.1


def test_teacher_votes_and_query_cost():
    v = teach.teacher_votes(lam=0.1, num_teachers=100, agreement=0.7, num_classes=4, queries=100, seed=0)
    assert v["pate_accuracy"] > 0.95
    assert v["pate_epsilon"] < v["pate_epsilon_data_independent"]
    v1 = teach.teacher_votes(lam=5.0, num_teachers=100, agreement=0.9, num_classes=4, queries=100, seed=0)
    assert v1["privgnn_accuracy"] > 0.9 > v["privgnn_accuracy"]  # little noise: the argmax of the vote share
    q = teach.query_cost(lam=0.1, max_queries=100, gamma=0.3, delta=1e-4, points=2)
    assert list(q["queries"]) == [1, 100]
    assert np.all(np.diff(q["privgnn_rdp"]) > 0)
    assert np.all(q["privgnn_rdp"] <= q["privgnn_authors"] + 1e-9)


@pytest.mark.parametrize(
    "data_fn,draw_fn,kwargs",
    [
        (teach.ldp_draws, teach.draw_ldp_draws, {"n": 100}),
        (teach.ldp_variance, teach.draw_ldp_variance, {"num": 5}),
        (teach.rr_labels, teach.draw_rr_labels, {"n": 100}),
        (teach.epsilon_vs_delta, teach.draw_epsilon_vs_delta, {"steps": 10}),
        (teach.progap_budget, teach.draw_progap_budget, {"max_stages": 2}),
    ],
)
def test_explore_shows_the_default_figure_and_redraws_on_a_slider(data_fn, draw_fn, kwargs, monkeypatch):
    shown = []

    class Handle:
        def update(self, obj):
            shown.append(("update", obj))

    def fake_display(obj, display_id=None):
        shown.append(("display", obj))
        return Handle() if display_id else None

    monkeypatch.setattr("IPython.display.display", fake_display)
    controls = {"epsilon": (0.1, 5.0, 0.1)} if "epsilon" in data_fn.__code__.co_varnames else {}
    defaults = dict(kwargs, **({"epsilon": 1.0} if controls else {}))
    data = teach.explore(data_fn, draw_fn, controls, **defaults)
    assert isinstance(data, dict)
    assert shown[0][0] == "display" and shown[0][1].format == "png"
    if controls:
        box = shown[1][1]
        box.children[0].value = 2.0  # move the slider
        assert shown[-1][0] == "update" and shown[-1][1].data != shown[0][1].data


def test_explore_needs_defaults():
    with pytest.raises(ValueError, match="default"):
        teach.explore(teach.ldp_draws, teach.draw_ldp_draws, {"epsilon": (0.1, 5.0, 0.1)})
