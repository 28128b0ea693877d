import math

import numpy as np
import pandas as pd
import pytest
import torch
from torch_geometric.data import Data

from dpgnn.data import DatasetUnavailable, csbm, minmax_normalize
from dpgnn.methods import lpgcn as L
from dpgnn.methods.lpgcn.features import _mae_seed


@pytest.fixture(scope="module")
def graph():
    data = csbm(
        num_nodes=300, num_classes=3, num_features=24, avg_degree=6, homophily=0.9, feature_sparsity=0.6, seed=0
    )
    return minmax_normalize(data)


def _tiny():
    # 5 nodes: a triangle 0-1-2, an edge 2-3, isolated node 4; column 2 constant, column 1 in [0.2, 0.6]
    und = torch.tensor([[0, 1, 0, 2], [1, 2, 2, 3]])
    ei = torch.cat([und, und.flip(0)], dim=1)
    x = torch.tensor(
        [[0.0, 0.2, 0.5, 1.0], [1.0, 0.6, 0.5, 0.0], [0.3, 0.4, 0.5, 0.0], [0.7, 0.2, 0.5, 1.0], [0.0, 0.3, 0.5, 0.5]]
    )
    return Data(x=x, edge_index=ei, num_nodes=5)


# --------------------------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------------------------
def test_bad_inputs_give_clear_errors(graph):
    x = graph.x
    with pytest.raises(ValueError, match="valid methods"):
        L.perturb_features(x, "gaussian", 1.0, 0)
    for eps in (0.0, -1.0, math.inf, math.nan, None):
        with pytest.raises(ValueError, match="epsilon"):
            L.perturb_features(x, "pgc", eps, 0)
    with pytest.raises(ValueError, match="raw"):
        L.perturb_features(x, "raw", 1.0, 0)
    with pytest.raises(ValueError, match="outside"):
        L.perturb_features(x * 3, "lm", 1.0, 0)
    with pytest.raises(ValueError, match="valid methods"):
        L.run_node_classification(graph, "cora", "nope", 1.0, run=0)
    with pytest.raises(ValueError, match="hyper-parameters"):
        L.run_node_classification(graph, "my-synthetic", "raw", None, run=0)
    with pytest.raises(ValueError, match="unknown LPGCN dataset"):
        L.prepare("pubmed")
    with pytest.raises(ValueError, match="raw"):
        L.gc_mae(graph, "raw", 2.0, 0)


def test_raw_is_identity_and_mechanisms_are_unbiased(graph):
    assert L.perturb_features(graph.x, "raw", None, 0) is graph.x
    assert L.perturb_features(graph.x, "RAW", math.inf, 0) is graph.x
    x = torch.full((20000, 3), 0.0)
    x[:, 1], x[:, 2] = 0.3, 1.0
    for method in ("lm", "pm", "pgc"):
        y = L.perturb_features(x, method, 2.0, 7)
        assert y.shape == x.shape
        assert torch.allclose(y.mean(0), x[0], atol=0.05), method
    # PGC sends one bit: the server's estimate takes only the two de-biased values (eq. 5)
    e = math.exp(2.0)
    vals = torch.unique(L.perturb_features(x, "pgc", 2.0, 7))
    assert torch.allclose(vals, torch.tensor([-1 / (e - 1), e / (e - 1)]), atol=1e-5)


def test_perturbation_reproducible_from_seed_including_zero(graph):
    a = L.perturb_features(graph.x, "pm", 1.0, 0)
    assert torch.equal(a, L.perturb_features(graph.x, "pm", 1.0, 0))
    assert not torch.equal(a, L.perturb_features(graph.x, "pm", 1.0, 1))


# --------------------------------------------------------------------------------------------------------------
# MAE of the graph convolution (Fig. 2, 3)
# --------------------------------------------------------------------------------------------------------------
def test_gc_mae_matches_dense_reference_on_tiny_graph():
    data = _tiny()
    n = 5
    for method in ("lm", "pm", "pgc"):
        mae = L.gc_mae(data, method, 1.5, 3)
        y = L.perturb_features(data.x, method, 1.5, 3)  # same seed -> same draw
        a = torch.zeros(n, n)
        a[data.edge_index[0], data.edge_index[1]] = 1.0
        a += torch.eye(n)
        deg = a.sum(1)
        a_hat = a / torch.sqrt(deg[:, None] * deg[None, :])
        gc, gc_hat = a_hat @ data.x, a_hat @ y
        rng = torch.tensor([1.0, 0.4, 0.0, 1.0])
        per = torch.zeros(n, 4)
        for i in range(4):
            if rng[i] > 0:
                per[:, i] = (gc[:, i] - gc_hat[:, i]).abs() / rng[i]
        assert torch.allclose(mae, per.mean(1), atol=1e-5), method
        assert mae[4] > 0  # isolated node: its own self-loop only


def test_gc_mae_zero_for_raw_and_decreasing_in_epsilon(graph):
    assert torch.equal(L.gc_mae(graph, "raw", None, 0), torch.zeros(graph.num_nodes))
    for method in ("lm", "pm", "pgc"):
        means = [float(L.gc_mae(graph, method, eps, 11).mean()) for eps in (1, 3, 5, 9)]
        assert all(b < a for a, b in zip(means, means[1:])), (method, means)


def test_mae_tables(graph):
    df = L.mae_vs_epsilon(graph, "synthetic", [1, 5], seed=0)
    assert len(df) == 6 and set(df["method"]) == {"lm", "pm", "pgc"}
    assert set(df["metric"]) == {"mae"} and (df["spread"] > 0).all()
    assert (df["epsilon_node_total"] == df["epsilon"] * graph.num_features).all()
    pd.testing.assert_frame_equal(df, L.mae_vs_epsilon(graph, "synthetic", [1, 5], seed=0))
    raw = L.mae_vs_epsilon(graph, "synthetic", [1, 5], methods=("raw",), seed=0)
    assert len(raw) == 1 and raw["value"].item() == 0.0 and raw["epsilon"].item() == math.inf
    assert raw["level"].item() == "none"
    # Fig. 3 uses the same draw at that epsilon: the node-weighted mean over degrees equals the nodes' mean
    deg_df = L.mae_vs_degree(graph, "synthetic", epsilon=1.0, seed=0, quantile=1.0)
    deg = torch.bincount(graph.edge_index[0], minlength=graph.num_nodes)
    for method in ("lm", "pgc"):
        sub = deg_df[deg_df.method == method]
        assert sub["count"].sum() == int((deg >= 1).sum())
        row = df[(df.method == method) & (df.epsilon == 1.0)]
        mae = L.gc_mae(graph, method, 1.0, _mae_seed(0, "synthetic", method, 1.0))
        assert math.isclose(row["value"].item(), float(mae.mean()), rel_tol=1e-6)
        assert math.isclose(
            (sub["value"] * sub["count"]).sum() / sub["count"].sum(), float(mae[deg >= 1].mean()), rel_tol=1e-5
        )
    cut = L.mae_vs_degree(graph, "synthetic", epsilon=1.0, seed=0, quantile=0.5)
    assert cut["degree"].max() <= np.quantile(deg.numpy(), 0.5) and cut["degree"].min() >= 1


# --------------------------------------------------------------------------------------------------------------
# analytic variances (Fig. 1, 4, 5) and x̄ (Table 3)
# --------------------------------------------------------------------------------------------------------------
def test_variance_table_matches_paper_formulas():
    df = L.variance_table([1.0, 3.0], "range").set_index(["method", "epsilon", "stat"])
    # hand-computed from eq. (7), (10), (27) with α=0, β=1
    assert math.isclose(df.loc[("pgc", 1.0, "min"), "value"], 0.9206735942, rel_tol=1e-6)
    assert math.isclose(df.loc[("pgc", 1.0, "max"), "value"], 1.1706735942, rel_tol=1e-6)
    assert df.loc[("pgc", 1.0, "max"), "x"] == 0.5 and df.loc[("pgc", 1.0, "min"), "x"] in (0.0, 1.0)
    assert math.isclose(df.loc[("pm", 3.0, "max"), "value"], 0.1232368247, rel_tol=1e-6)
    assert df.loc[("pm", 3.0, "min"), "x"] == 0.5 and df.loc[("pm", 3.0, "max"), "x"] in (0.0, 1.0)
    assert df.loc[("lm", 3.0, "min"), "value"] == df.loc[("lm", 3.0, "max"), "value"]
    assert math.isclose(df.loc[("lm", 3.0, "max"), "value"], 2 / 9, rel_tol=1e-9)
    at = L.variance_table([3.0], {"a": 0.25, "b": 0.0}).set_index(["method", "label"])
    assert math.isclose(at.loc[("pm", "a"), "value"], 0.0693836528, rel_tol=1e-6)
    assert math.isclose(at.loc[("pgc", "a"), "value"], 0.2426410055, rel_tol=1e-6)
    fig4 = L.variance_table([1.0], 0.0).set_index("method")  # x = α: PGC lowest (paper App. B)
    assert fig4.loc["pgc", "value"] < fig4.loc["pm", "value"] < fig4.loc["lm", "value"]
    with pytest.raises(ValueError):
        L.variance_table([1.0], 1.5)
    with pytest.raises(ValueError):
        L.variance_table([0.0])


def test_mean_feature():
    data = Data(x=torch.tensor([[0.0, 1.0], [0.5, 0.5]]))
    assert L.mean_feature(data) == 0.5


@pytest.mark.parametrize("name", ["cora", "citeseer", "twitch"])
def test_real_datasets_match_tables_1_and_3(name):
    try:
        data = L.prepare(name)
    except DatasetUnavailable:
        pytest.skip(f"{name} files not available")
    assert data.num_features == L.TABLE1_NUM_FEATURES[name]
    assert round(L.mean_feature(data), 3) == L.TABLE3_MEAN_FEATURE[name]
    assert float(data.x.min()) == 0.0 and float(data.x.max()) == 1.0


# --------------------------------------------------------------------------------------------------------------
# Table 2 runs
# --------------------------------------------------------------------------------------------------------------
HP = {"lr": 0.01, "weight_decay": 5e-4, "dropout": 0.5}


def test_node_classification_raw_beats_chance_and_carries_ledger(graph):
    res = L.run_node_classification(
        graph, "synthetic", "raw", None, run=0, seed=0, hparams=HP, max_epochs=100, device="auto"
    )
    assert res["metric"] == "micro_f1" and res["value"] > 0.7  # chance 1/3
    assert res["level"] == "none" and res["epsilon"] == math.inf
    priv = L.run_node_classification(graph, "synthetic", "pgc", 2.0, run=0, seed=0, hparams=HP, max_epochs=30)
    assert priv["level"] == "feature-ldp" and priv["mechanism"] == "pgc" and priv["delta"] == 0.0
    assert priv["epsilon"] == 2.0 and priv["epsilon_node_total"] == 2.0 * graph.num_features
    assert priv["neighbouring"].startswith("one node's feature vector")
    assert priv["hidden"] == L.HIDDEN_CODE == 16 and priv["epochs"] >= 10
    wide = L.run_node_classification(
        graph, "synthetic", "raw", None, run=0, seed=0, hparams=HP, max_epochs=12, hidden=L.HIDDEN_PAPER
    )
    assert wide["hidden"] == 32


def test_node_classification_reproducible_and_runs_differ(graph):
    kw = dict(seed=0, hparams=HP, max_epochs=25, device="cpu")
    a = L.run_node_classification(graph, "synthetic", "lm", 1.0, run=0, **kw)
    b = L.run_node_classification(graph, "synthetic", "lm", 1.0, run=0, **kw)
    c = L.run_node_classification(graph, "synthetic", "lm", 1.0, run=1, **kw)
    d = L.run_node_classification(graph, "synthetic", "lm", 1, run=0, **kw)  # int epsilon: same cell
    assert a["run_seed"] == b["run_seed"] == d["run_seed"] != c["run_seed"]
    assert (a["value"], a["epochs"], a["val_micro_f1"]) == (b["value"], b["epochs"], b["val_micro_f1"])
    assert (a["value"], a["val_micro_f1"], a["epochs"]) != (c["value"], c["val_micro_f1"], c["epochs"])
    assert a["config_hash"] == c["config_hash"]


def test_table4_hyperparameters_used_by_default():
    assert L.HPARAMS["twitch"]["gcn"] == {"lr": 0.001, "weight_decay": 1e-4, "dropout": 0.0}
    assert L.HPARAMS["citeseer"]["vgae"] == {"lr": 0.01, "weight_decay": 0.01, "dropout": 0.0}
    assert set(L.HPARAMS) == set(L.DATASETS)
    assert L.METHODS == ("lm", "pm", "pgc", "raw")
    assert L.MECHANISMS == {"lm": "laplace", "pm": "piecewise", "pgc": "pgc", "raw": None}


def test_link_prediction_runs_with_fixed_split():
    data = minmax_normalize(
        csbm(num_nodes=200, num_classes=2, num_features=16, avg_degree=8, homophily=0.95, feature_sparsity=0.3, seed=1)
    )
    split = L.split_for_link_prediction(data, "synthetic")
    again = L.split_for_link_prediction(data, "synthetic")
    assert torch.equal(split.test_pos_edge_index, again.test_pos_edge_index)
    kw = dict(
        seed=0,
        hparams={"lr": 0.01, "weight_decay": 0.0, "dropout": 0.0},
        max_epochs=60,
        min_epochs=20,
        check_every=5,
        patience=3,
        split=split,
        device="cpu",
    )
    raw = L.run_link_prediction(data, "synthetic", "raw", None, run=0, **kw)
    assert raw["metric"] == "auc" and raw["value"] > 0.7 and raw["split_seed"] == sum(map(ord, "synthetic"))
    p0 = L.run_link_prediction(data, "synthetic", "pgc", 1.0, run=0, **kw)
    p0b = L.run_link_prediction(data, "synthetic", "pgc", 1.0, run=0, **kw)
    assert p0["value"] == p0b["value"] and p0["level"] == "feature-ldp"
    assert 0.0 <= p0["value"] <= 1.0 and p0["epochs"] >= 20


def test_summarize_runs_uses_population_std():
    rows = [
        {"task": "t", "dataset": "d", "method": "pgc", "epsilon": 1.0, "metric": "auc", "value": v} for v in (0.5, 0.7)
    ]
    out = L.summarize_runs(rows)
    assert math.isclose(out["mean"].item(), 60.0) and math.isclose(out["std"].item(), 10.0)
    assert out["runs"].item() == 2
