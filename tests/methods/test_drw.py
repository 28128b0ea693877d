"""DRW method: exact per-subgraph gradients, clipping/noise variance, accountant, schedules, training, errors."""

import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from dpgnn.data import csbm
from dpgnn.data.random_walks import disjoint_random_walks
from dpgnn.methods import drw as D
from dpgnn.methods.fdp import bound_degree, neighbourhoods
from dpgnn.nn.drw import DRWGCN, DRWMLP, SplitFeatures, build_model
from dpgnn.privacy import epsilon
from dpgnn.privacy.fdp import max_affected


@pytest.fixture(scope="module")
def data():
    g = csbm(num_nodes=240, num_classes=3, num_features=12, avg_degree=4, homophily=0.9, feature_sparsity=0.3, seed=1)
    return D.prepare("toy", g)


def _gaussian_eps(mu_sigma: float, delta: float) -> float:
    """Independent exact Gaussian profile (Balle & Wang 2018), solved for epsilon by bisection."""
    s = mu_sigma

    def dlt(e):
        return norm.cdf(1 / (2 * s) - e * s) - math.exp(e) * norm.cdf(-1 / (2 * s) - e * s)

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if dlt(mid) <= delta else (mid, hi)
    return hi


# ---------------------------------------------------------------------------------------------------------------
# per-subgraph gradients
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("layers,restarts", [(1, 1), (2, 1), (2, 2), (3, 1)])
def test_per_subgraph_grads_equal_autograd_on_each_subgraph(data, layers, restarts):
    torch.manual_seed(0)
    subs = disjoint_random_walks(data.train_edge_index, data.num_nodes, data.train, layers, restarts, seed=2)
    model = DRWGCN(data.x.shape[1], data.num_classes, layers, hidden=8).double()
    x = data.x.double()
    idx = torch.arange(min(12, subs.num_subgraphs))
    xb, ab = D.dense_subgraph_inputs(x, subs, idx)
    yb = data.y[subs.roots[idx]]
    g = D.per_subgraph_grads(model, xb, ab, yb)
    for j, i in enumerate(idx.tolist()):
        ns = subs.nodes[i][subs.mask[i]]
        a = subs.adj[i][: len(ns), : len(ns)].double() + torch.eye(len(ns), dtype=torch.float64)
        dinv = a.sum(1).pow(-0.5)
        a = dinv[:, None] * a * dinv[None, :]
        model.zero_grad()
        out = model(x[ns], a)
        torch.nn.functional.cross_entropy(out[0:1], data.y[ns[0]].view(1)).backward()
        for name, p in model.named_parameters():
            torch.testing.assert_close(g[name][j], p.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "kind,layers,restarts,multilabel",
    [
        ("gcn", 1, 1, False),
        ("gcn", 2, 1, False),
        ("gcn", 2, 2, False),
        ("gcn", 3, 1, False),
        ("mlp", 2, 1, False),
        ("gcn", 2, 1, True),
    ],
)
def test_ghost_clipped_sum_equals_clipping_the_per_subgraph_grads(data, kind, layers, restarts, multilabel):
    torch.manual_seed(1)
    subs = disjoint_random_walks(data.train_edge_index, data.num_nodes, data.train, layers, restarts, seed=3)
    model = build_model(kind, data.x.shape[1], data.num_classes, layers, hidden=8).double()
    idx = torch.arange(min(12, subs.num_subgraphs))
    xb, ab = D.dense_subgraph_inputs(data.x.double(), subs, idx)
    yb = data.y[subs.roots[idx]]
    if multilabel:
        yb = torch.nn.functional.one_hot(yb, data.num_classes).double()
    g = D.per_subgraph_grads(model, xb, ab, yb, multilabel)
    # thresholds at the median per-subgraph norm: about half of the subgraphs are clipped in every tensor
    thr = {k: float(v.flatten(1).norm(dim=1).median()) for k, v in g.items()}
    assert all(0 < int((v.flatten(1).norm(dim=1) > thr[k]).sum()) < len(idx) for k, v in g.items())
    want = D.clip_and_noise(g, thr, 0.0)
    got = D.clipped_grad_sum(model, xb, ab, yb, thr, multilabel)
    assert list(got) == list(want)
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=1e-9, atol=1e-12)
    # first layer over split features (x Wᵀ gathered, Gram matrices from the sparse rest, xᵀ V for the weight sum;
    # the dense rows are not read)
    sp = D.clipped_grad_sum(
        model, None, ab, yb, thr, multilabel, split=SplitFeatures(data.x.double()), nodes=subs.nodes[idx]
    )
    for k in want:
        torch.testing.assert_close(sp[k], want[k], rtol=1e-9, atol=1e-12)
    # the same noise on top of the same sums
    a = D.add_noise(got, 2.0, torch.Generator().manual_seed(5))
    b = D.clip_and_noise(g, thr, 2.0, torch.Generator().manual_seed(5))
    for k in want:
        torch.testing.assert_close(a[k], b[k], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("features", ["words", "standardised words", "continuous"])
def test_split_features_gram_equals_the_gram_of_the_gathered_rows(features):
    """Padding rows and columns are zero, a node twice in a subgraph counts twice, and the column modes (nonzero
    for standardised words) enter every valid pair."""
    gen = torch.Generator().manual_seed(0)
    words = (torch.rand(200, 30, generator=gen) < 0.1).double()
    x = {
        "words": words,
        "standardised words": (words - words.mean(0)) / words.std(0),
        "continuous": torch.randn(200, 30, generator=gen, dtype=torch.float64),
    }[features]
    nodes = torch.randint(-1, 200, (25, 6), generator=gen)
    nodes[:, 0] = torch.randint(0, 200, (25,), generator=gen)
    nodes[0, 3] = nodes[0, 1]
    nodes[1] = -1
    rows = x[nodes.clamp(min=0)] * (nodes >= 0).unsqueeze(-1)
    got = SplitFeatures(x).gram(nodes)
    torch.testing.assert_close(got, torch.bmm(rows, rows.transpose(1, 2)), rtol=1e-12, atol=1e-10)
    assert not got[1].any() and got[0, 1, 1] == got[0, 3, 3] == got[0, 1, 3] > 0


def test_split_features_take_each_columns_mode_with_or_without_sorting():
    """One-hot columns (zeros a strict majority) skip the sort; a column of half zeros, standardised words and
    continuous features take ``Tensor.mode``; either way ``base`` and ``rest`` are those of the mode, and the
    products over some rows are those of the matrix."""
    gen = torch.Generator().manual_seed(0)
    words = (torch.rand(40, 12, generator=gen) < 0.2).double()
    half = words.clone()
    half[:20, 3] = 1.0
    half[20:, 3] = 0.0
    twos = words.clone()
    twos[:30, 5] = 2.0  # a majority of one nonzero value
    cases = {
        "words": words,
        "a column of half zeros": half,
        "a majority of twos": twos,
        "standardised words": (words - words.mean(0)) / words.std(0),
        "continuous": torch.randn(40, 12, generator=gen, dtype=torch.float64).round(),
    }
    for name, x in cases.items():
        s = SplitFeatures(x)
        base = x.mode(dim=0).values
        assert torch.equal(s.base, base), name
        assert torch.equal(s.rest.to_dense(), x - base) and torch.equal(s.rest_t.to_dense(), (x - base).t()), name
        assert s.density == int(((x - base) != 0).sum()) / x.numel(), name
        rows, w, v = torch.tensor([0, 3, 7, 39]), torch.randn(12, 5, dtype=x.dtype), torch.randn(4, 5, dtype=x.dtype)
        torch.testing.assert_close(s.rows_matmul(rows, w), (x @ w)[rows])
        torch.testing.assert_close(
            s.rows_tmatmul(rows, v), x.T @ torch.zeros(40, 5, dtype=x.dtype).index_add_(0, rows, v)
        )


@pytest.mark.parametrize("bag_of_words", [False, True])
def test_train_dp_ghost_and_vmap_paths_agree(data, bag_of_words):
    if bag_of_words:  # standardised sparse words: evaluation and the first layer go through SplitFeatures
        words = (torch.rand(data.num_nodes, 40, generator=torch.Generator().manual_seed(0)) < 0.05).float()
        data = dataclasses.replace(data, x=(words - words.mean(0)) / words.std(0).clamp(min=1e-3))
        assert isinstance(D.eval_features(data.x), SplitFeatures)
    kw = dict(
        num_layers=2,
        hidden=16,
        batch=10,
        lr=0.1,
        clip_fraction=0.1,
        noise_multiplier=4.0,
        seed=7,
        max_steps=15,
        device="cpu",
    )
    ghost = D.train_dp(data, "drw", **kw)
    vm = D.train_dp(data, "drw", per_sample="vmap", **kw)
    assert ghost["steps"] == vm["steps"] == 15 and ghost["epsilon"] == vm["epsilon"]
    assert ghost["best_step"] == vm["best_step"] and ghost["test_f1"] == pytest.approx(vm["test_f1"], abs=1e-9)
    with pytest.raises(ValueError, match="per_sample"):
        D.train_dp(data, "drw", per_sample="loop", **kw)


@pytest.mark.parametrize("kind,layers", [("gcn", 1), ("gcn", 2), ("mlp", 2)])
def test_split_features_give_the_same_full_graph_outputs(data, kind, layers):
    # standardised bag-of-words: dense, but "word absent" is one value per column
    words = (torch.rand(data.num_nodes, 40, generator=torch.Generator().manual_seed(0)) < 0.05).double()
    x = (words - words.mean(0)) / words.std(0).clamp(min=1e-3)
    split = SplitFeatures(x)
    assert 0 < split.density < 0.1 and float((x != 0).double().mean()) > 0.9
    torch.testing.assert_close(split.matmul(torch.eye(x.shape[1], dtype=x.dtype)), x)
    model = build_model(kind, x.shape[1], data.num_classes, layers, hidden=8).double()
    adj = data.adj_full.double() if kind == "gcn" else None
    torch.testing.assert_close(model(split, adj), model(x, adj), rtol=1e-10, atol=1e-12)
    assert isinstance(D.eval_features(x), SplitFeatures)
    assert D.eval_features(data.x) is data.x
    # the last product is reused only while the weights are unchanged
    w = torch.randn(x.shape[1], 3, dtype=x.dtype)
    first = split.matmul(w)
    assert split.matmul(w) is first
    w.add_(1.0)
    torch.testing.assert_close(split.matmul(w), x @ w)  # continuous features: 70% of entries off the column mode


def test_models_and_multilabel_grads():
    torch.manual_seed(0)  # with 4 hidden ReLUs an input can switch them all off (zero logits stay zero)
    m = build_model("mlp", 5, 3, 2, 4)
    assert isinstance(m, DRWMLP)
    # the DRW code normalises its GCN's logits to unit L2 norm but not its MLP's
    out = m(torch.randn(7, 5))
    assert not torch.allclose(out.norm(dim=1), torch.ones(7))
    assert build_model("mlp", 5, 3, 2, 4, normalize_logits=True)(torch.randn(7, 5)).norm(dim=1).allclose(torch.ones(7))
    g = build_model("gcn", 5, 3, 2, 4)
    torch.testing.assert_close(g(torch.randn(7, 5), torch.eye(7)).norm(dim=1), torch.ones(7))
    gcn = DRWGCN(5, 4, 2, 6)
    xb, ab = torch.randn(3, 4, 5), torch.eye(4).expand(3, 4, 4).clone()
    yb = torch.randint(0, 2, (3, 4)).float()
    g = D.per_subgraph_grads(gcn, xb, ab, yb, multilabel=True)
    assert g["lins.0.weight"].shape == (3, 6, 5)
    with pytest.raises(ValueError, match="num_layers"):
        DRWGCN(5, 3, 0)
    with pytest.raises(ValueError, match="kind"):
        build_model("gat", 5, 3)


# ---------------------------------------------------------------------------------------------------------------
# clipping and noise
# ---------------------------------------------------------------------------------------------------------------
def test_clipping_bounds_every_tensor_and_thresholds_sum_to_c():
    torch.manual_seed(0)
    grads = {"w": 5 * torch.randn(6, 4, 3), "b": 0.01 * torch.randn(6, 3)}
    thr = D.clip_thresholds(grads, clip_fraction=0.1)
    g0 = torch.tensor([grads[k].flatten(1).norm(dim=1).mean() for k in grads])
    assert math.sqrt(sum(c * c for c in thr.values())) == pytest.approx(0.1 * float(g0.norm()), rel=1e-6)
    out = D.clip_and_noise(grads, thr, 0.0)
    for k, g in grads.items():
        norms = g.flatten(1).norm(dim=1)
        clipped = g * (thr[k] / norms).clamp(max=1).view(-1, *[1] * (g.dim() - 1))
        torch.testing.assert_close(out[k], clipped.sum(0))
        assert float(clipped.flatten(1).norm(dim=1).max()) <= thr[k] * (1 + 1e-6)
    even = D.clip_thresholds(None, clip_norm=2.0, names=["a", "b", "c", "d"])
    assert all(v == pytest.approx(1.0) for v in even.values())


def test_noised_update_has_the_specified_variance():
    sigma = 3.0
    grads = {"w": torch.zeros(5, 200, 100), "b": torch.ones(5, 100) * 1e6}
    thr = {"w": 1.0, "b": 0.5}
    out = D.clip_and_noise(grads, thr, sigma, torch.Generator().manual_seed(0))
    w = out["w"].flatten()
    assert abs(float(w.mean())) < 0.1 and float(w.var()) == pytest.approx(sigma**2, rel=0.03)
    # b: every sample clipped to norm 0.5 along the all-ones direction -> mean 5 * 0.5 / sqrt(100) per coordinate
    assert float(out["b"].mean()) == pytest.approx(0.25, abs=3 * sigma / 10)
    with pytest.raises(ValueError, match="noise_std"):
        D.clip_and_noise(grads, thr, -1.0)


# ---------------------------------------------------------------------------------------------------------------
# accounting
# ---------------------------------------------------------------------------------------------------------------
def test_full_batch_epsilon_equals_independent_gaussian_profile():
    for z, t in [(4.0, 44), (1.0, 3), (8.0, 200)]:
        ours = D.drw_epsilon(z, 1.0, t, 1e-5)
        assert ours == pytest.approx(_gaussian_eps(z / math.sqrt(t), 1e-5), rel=1e-4)


def test_sampled_epsilon_agrees_with_second_accountant_and_is_monotone():
    q = 2000 / 3239
    for z, t in [(2.0, 50), (4.0, 400), (8.0, 2000)]:
        a = D.drw_epsilon(z, q, t, 1e-5, "autodp")
        r = D.drw_epsilon(z, q, t, 1e-5, "rdp")
        assert a == pytest.approx(r, rel=0.2)
    eps_t = [D.drw_epsilon(2.0, q, t, 1e-5) for t in (1, 10, 100, 1000)]
    assert all(x < y for x, y in zip(eps_t, eps_t[1:]))
    eps_z = [D.drw_epsilon(z, q, 100, 1e-5) for z in (1.0, 2.0, 4.0, 8.0)]
    assert all(x > y for x, y in zip(eps_z, eps_z[1:]))


def test_schedule_stops_before_the_target_and_checkpoints_are_exact():
    s = D.epsilon_schedule(4.0, 1.0, 1e-5, 8.0)
    assert s.epsilon <= 8.0 < D.drw_epsilon(4.0, 1.0, s.steps + 1, 1e-5)
    for k, t, e in s.checkpoints:
        assert e <= k and (t == s.steps or D.drw_epsilon(4.0, 1.0, t + 1, 1e-5) > k)
    assert [c[0] for c in s.checkpoints] == list(range(1, 9))
    f = D.fdp_schedule(4.0, 140, 70, 5, 1e-5, 8.0)
    assert f.steps > 0 and f.epsilon <= 8.0


def test_event_and_zero_noise_errors():
    ev = D.drw_event(2.0, 0.5, 10)
    assert epsilon(ev, 1e-5, "autodp") == D.drw_epsilon(2.0, 0.5, 10, 1e-5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        D.drw_event(0.0, 0.5, 10)


# ---------------------------------------------------------------------------------------------------------------
# FDP graph side
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("deg,depth", [(2, 1), (4, 2)])
def test_fdp_degree_bound_and_neighbourhoods(data, deg, depth):
    b = bound_degree(data.train_edge_index, data.num_nodes, deg, seed=0)
    counts = np.bincount(b[0], minlength=data.num_nodes)
    assert counts.max() <= deg
    pairs = {(int(u), int(v)) for u, v in b.T}
    assert all((v, u) in pairs for u, v in pairs)
    orig = {(int(u), int(v)) for u, v in data.train_edge_index.t()}
    assert pairs <= orig
    subs = neighbourhoods(b, data.num_nodes, data.train, depth, deg)
    k = max_affected(deg, depth)
    assert subs.max_size == k
    # a node lies in at most K neighbourhoods: the sensitivity bound of FDP
    occ = np.bincount(subs.nodes[subs.mask].numpy(), minlength=data.num_nodes)
    assert occ.max() <= k
    path = neighbourhoods(b, data.num_nodes, data.train, depth, deg, variant="authors")
    assert path.max_size == depth + 1


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method,z", [("drw", 2.0), ("drw-d", 2.0), ("drw-r", 2.0), ("fdp", 1.0)])
def test_dp_training_runs_to_the_target(data, method, z):
    r = D.train_dp(
        data,
        method,
        num_layers=2,
        hidden=8,
        batch=10,
        noise_multiplier=z,
        lr=0.1,
        clip_fraction=0.1,
        delta=1e-5,
        target_epsilon=3.0,
        seed=0,
        resample_every=2,
        device="cpu",
        fdp_degree=2,
        max_steps=None,
    )
    assert 0 < r["epsilon"] <= 3.0 and r["steps"] > 0
    assert 0.0 <= r["test_f1"] <= 1.0
    led = r["ledger"]
    assert led["sigma"] > 0 and led["steps"] == r["steps"] and led["epsilon"] == r["epsilon"]
    assert [c["checkpoint"] for c in r["checkpoints"]] == [1, 2, 3]
    again = D.train_dp(
        data,
        method,
        num_layers=2,
        hidden=8,
        batch=10,
        noise_multiplier=z,
        lr=0.1,
        clip_fraction=0.1,
        delta=1e-5,
        target_epsilon=3.0,
        seed=0,
        resample_every=2,
        device="cpu",
        fdp_degree=2,
    )
    assert again["test_f1"] == r["test_f1"], "seeded runs repeat"


def test_nondp_training_learns(data):
    for m in ("gcn", "mlp"):
        r = D.train_nondp(data, m, num_layers=1, batch=30, max_steps=30, patience=20, seed=0, device="cpu")
        assert r["test_f1"] > 0.5 and r["epsilon"] == math.inf and r["level"] == "none"


def test_bad_inputs_give_clear_errors(data):
    with pytest.raises(ValueError, match="valid methods"):
        D.run(data, "gap")
    with pytest.raises(ValueError, match="noise_multiplier"):
        D.train_dp(data, "drw", noise_multiplier=0.0, batch=5)
    with pytest.raises(ValueError, match="batch_size must be in"):
        D.train_dp(data, "drw", batch=10_000)
    with pytest.raises(ValueError, match="train_nondp"):
        D.train_dp(data, "gcn")
    with pytest.raises(ValueError, match="exactly one"):
        D.clip_thresholds(None)
    with pytest.raises(ValueError, match="valid names"):
        D.batch_size("karate", "drw", 1)
    with pytest.raises(ValueError, match="fdp_variant"):
        D.train_dp(data, "fdp", batch=5, fdp_variant="x")
    assert D.batch_size("cora", "drw-r", 2) == 28 and D.batch_size("reddit", "drw", 1) == 30000


# ---------------------------------------------------------------------------------------------------------------
# fidelity: step-0 exclusion (a fix) and the authors_code mode
# ---------------------------------------------------------------------------------------------------------------
def test_authors_code_accountant_at_rate_one_gives_the_official_step_counts():
    # facts from the official NodeDP code on Cora (1-layer, 70 of 70 subgraphs): eps 8.02 after 157 (0-based) =
    # 158 steps at z 8 and 40 steps at z 4, one step past the target; we stop at the last step within it
    paper8 = D.epsilon_schedule(8.0, 1.0, 1e-5, 8.0)
    auth8 = D.epsilon_schedule(8.0, 1.0, 1e-5, 8.0, fidelity="authors_code")
    assert (paper8.steps, auth8.steps) == (177, 157)
    assert auth8.epsilon <= 8.0 < D.drw_epsilon(8.0, 1.0, 158, 1e-5, fidelity="authors_code")
    assert D.epsilon_schedule(4.0, 1.0, 1e-5, 8.0).steps == 44
    auth4 = D.epsilon_schedule(4.0, 1.0, 1e-5, 8.0, fidelity="authors_code")
    assert auth4.steps == 39 and D.drw_epsilon(4.0, 1.0, 40, 1e-5, fidelity="authors_code") > 8.0
    assert D.drw_epsilon(8.0, 1.0, 158, 1e-5, fidelity="authors_code") == pytest.approx(8.02, abs=0.005)
    # below rate 1 both fidelities are the same event
    q = 2000 / 3239
    assert D.drw_epsilon(4.0, q, 40, 1e-5, fidelity="authors_code") == D.drw_epsilon(4.0, q, 40, 1e-5)
    with pytest.raises(ValueError, match="fidelity"):
        D.epsilon_schedule(4.0, 1.0, 1e-5, 8.0, fidelity="official")


def test_untrained_step_zero_model_is_never_selected(data):
    # noise far above the signal: validation F1 of the trained steps rarely beats step 0, which used to win
    for seed in (0, 1, 2):
        r = D.train_dp(
            data,
            "drw",
            num_layers=1,
            hidden=8,
            batch=10,
            noise_multiplier=4.0,
            lr=0.2,
            clip_fraction=0.001,
            delta=1e-5,
            target_epsilon=2.0,
            seed=seed,
            device="cpu",
        )
        assert r["best_step"] >= 1 and r["steps"] >= 1
        assert r["ledger"]["fidelity"] == "paper" and r["ledger"]["early_stopped_at"] is None
    # no trained step fits under the target: no model is selected (NaN), never the untrained one
    r = D.train_dp(
        data,
        "drw",
        num_layers=1,
        hidden=8,
        batch=10,
        noise_multiplier=1.0,
        lr=0.2,
        clip_fraction=0.001,
        delta=1e-5,
        target_epsilon=2.0,
        seed=0,
        device="cpu",
    )
    assert r["steps"] == 0 and math.isnan(r["test_f1"]) and math.isnan(r["val_f1"])


def test_authors_code_stops_early_and_records_it(data):
    kw = dict(
        num_layers=1,
        hidden=8,
        batch=10,
        noise_multiplier=8.0,
        lr=0.2,
        clip_fraction=0.001,
        delta=1e-5,
        target_epsilon=8.0,
        seed=0,
        device="cpu",
    )
    full = D.train_dp(data, "drw", **kw)
    r = D.train_dp(data, "drw", fidelity="authors_code", patience=3, **kw)
    led = r["ledger"]
    assert led["fidelity"] == "authors_code" and led["early_stopped_at"] == r["steps"] < full["steps"]
    assert r["epsilon"] == D.drw_epsilon(8.0, r["sampling_rate"], r["steps"], 1e-5, fidelity="authors_code")
    assert r["epsilon"] < full["epsilon"] and 1 <= r["best_step"] <= r["steps"] - 3
    assert [c["checkpoint"] for c in r["checkpoints"]] == list(range(1, 9))


def test_prediction_spread_measures_how_concentrated_predictions_are():
    one = D.prediction_spread(torch.full((10,), 2), 4)
    assert one == {"top_class_share": 1.0, "class_entropy": 0.0}
    uniform = D.prediction_spread(torch.arange(8) % 4, 4)
    assert uniform["top_class_share"] == 0.25 and abs(uniform["class_entropy"] - 1.0) < 1e-12
    assert math.isnan(D.prediction_spread(None, 4)["class_entropy"])


def test_dp_train_config_checks_every_mode_once_and_train_dp_is_its_call_path(data):
    cfg = D.DPTrainConfig(method="DRW", noise_multiplier=2, num_layers=1, batch=5, max_steps=3, hidden=8)
    assert cfg.method == "drw" and isinstance(cfg.noise_multiplier, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lr = 1.0
    for bad, match in [
        ({"select": "best"}, "select"),
        ({"method": "gcn"}, "train_nondp"),
        ({"per_sample": "loop"}, "per_sample"),
        ({"fidelity": "x"}, "fidelity"),
        ({"fdp_variant": "x"}, "fdp_variant"),
        ({"eval_every": 0}, "eval_every"),
    ]:
        with pytest.raises(ValueError, match=match):
            D.DPTrainConfig(**bad)
    with pytest.raises(TypeError):
        D.train_dp(data, "drw", no_such_option=1)
    a = D.run_dp(data, cfg, seed=3, device="cpu")
    b = D.train_dp(data, "drw", noise_multiplier=2, batch=5, max_steps=3, hidden=8, seed=3, device="cpu")
    assert a["history"] == b["history"] and a["ledger"] == b["ledger"] and a["checkpoints"] == b["checkpoints"]
    assert set(D.DP_OPTIONS) >= {"clip_norm", "select", "fidelity", "on_model", "canary"}
    assert "seed" not in D.DP_OPTIONS and "method" not in D.DP_OPTIONS
