"""dpgnn.fit on a user's graph: every front-door method, predict, save/load, ledger, the input checks."""

import math

import pytest
import torch
from helpers.own_graph import EPS, FAST, random_graph
from torch_geometric.data import Data

import dpgnn
from dpgnn.api import METHODS
from dpgnn.api.inputs import delta_rule


@pytest.fixture(scope="module")
def graph():
    return random_graph()


def test_every_method_is_fast_listed():
    assert set(FAST) == set(METHODS)


@pytest.mark.parametrize("name,level", [(m, lv) for m in METHODS for lv in METHODS[m].levels])
def test_fit_predict_save_load(graph, name, level, tmp_path):
    model = dpgnn.fit(graph, name, level=level, epsilon=EPS[level], device="cpu", **FAST[name])
    assert set(model.metrics) >= {"train", "val", "test"} and model.history
    assert "seeded" == model.notes["split"] and any("random 75/10/15" in c for c in model.notes["changes"])
    led = model.ledger
    assert led["neighbouring"] and led["delta_rule"] and led["guarantee"] in ("sound", "as_published")
    if level != "none":
        budget = EPS[level] + (model.config.label_epsilon if level == "feature+label" else 0.0)  # ε_x + ε_y
        # the guarantee meets the budget: the sound ε where the ledger is sound (PATE: the paper's looser
        # data-independent bound may lie above it), else the accounted one
        stated = led.get("epsilon_sound", led["epsilon"]) if led["guarantee"] == "sound" else led["epsilon"]
        assert 0 < stated <= budget * (1 + 1e-9) and led["epsilon"] > 0
    new = random_graph(n=23, seed=5)  # new nodes, a new graph, no labels needed
    del new.y
    logits = model.predict(new)
    assert logits.shape == (23, 3) and model.predict(new, labels=True).shape == (23,)
    path = model.save(tmp_path / "m.pt")
    again = dpgnn.load(path)
    assert torch.equal(again.predict(new), logits) and again.config == model.config
    assert again.ledger == model.ledger and again.metrics == pytest.approx(model.metrics, nan_ok=True)


@pytest.mark.parametrize(
    "name,level",
    [
        ("mlp", "none"),
        ("graphsage", "none"),
        ("progap", "none"),
        ("gap", "none"),
        ("dp-gnn", "node"),
        ("dp-mlp", "node"),
    ],
)
def test_predict_on_training_graph_reproduces_the_metrics(graph, name, level):
    """Where inference draws no noise, predict on the training graph scores exactly the reported accuracies
    (ProGAP: each stage's base as it was at its aggregation, not the later fine-tuned one)."""
    cfg = {**FAST[name], "epochs": 4}
    if name == "progap":
        cfg["depth"] = 2
    model = dpgnn.fit(graph, name, level=level, epsilon=EPS[level], device="cpu", **cfg)
    pred = model.predict(graph, labels=True)
    split = dpgnn.api.check_graph(graph, 0)[0]
    for s in ("train", "val", "test"):
        mask = split[f"{s}_mask"]
        acc = float((pred[mask] == graph.y[mask]).float().mean())
        assert acc == pytest.approx(model.metrics[s], abs=1e-6), s


def test_config_is_resolved_with_defaults(graph):
    model = dpgnn.fit(graph, "progap", level="edge", epsilon=1.0, device="cpu", epochs=1, depth=1)
    assert model.config.hidden == 16 and model.config.edge_relation == "undirected"
    assert model.ledger["edge_relation"] == "undirected" and "undirected" in model.ledger["neighbouring"]


def test_direction_is_detected():
    """A one-direction edge_index is refused at edge level (the relation is one undirected edge), accepted at node
    level (degrees are capped both ways) and with the non-private methods."""
    directed = random_graph(undirected=False)
    for name in ("progap", "gap", "edgerand"):
        _one_line_error(
            r"edge level needs an undirected graph but edge_index is not symmetric.*to_undirected",
            directed,
            name,
            level="edge",
            epsilon=1.0,
            device="cpu",
            epochs=1,
        )
    model = dpgnn.fit(directed, "progap", level="node", epsilon=8.0, device="cpu", epochs=1, depth=1)
    assert "not symmetric: directed" in " ".join(model.notes["changes"])
    model = dpgnn.fit(
        random_graph(), "progap", level="edge", epsilon=1.0, device="cpu", epochs=1, depth=1, edge_relation="directed"
    )
    assert model.ledger["edge_relation"] == "directed" and "undirected" not in model.ledger["neighbouring"]


@pytest.mark.parametrize("n", [9, 10, 99, 237, 1000, 2708, 169343])
def test_delta_rule_is_below_one_over_the_units(n):
    node, _ = delta_rule("node", n)
    edge, _ = delta_rule("edge", n)
    assert node < 1 / n and node >= 1 / (10 * n)  # 10^-digits(N): the largest power of ten below 1/N
    assert edge < 1 / (10 * n) and edge == node / 10


def test_delta_given_is_used_and_stated(graph):
    model = dpgnn.fit(graph, "progap", level="edge", epsilon=1.0, delta=1e-6, device="cpu", epochs=1, depth=1)
    assert model.ledger["delta"] == 1e-6 and model.ledger["delta_rule"] == "given by the user"
    model = dpgnn.fit(graph, "progap", level="edge", epsilon=1.0, device="cpu", epochs=1, depth=1)
    assert model.ledger["delta"] == delta_rule("edge", 60)[0] == 1e-3
    assert "digits of N=60" in model.ledger["delta_rule"]


def test_self_loops_and_duplicates_are_handled(graph):
    g = graph.clone()
    g.edge_index = torch.cat([g.edge_index, g.edge_index[:, :5], torch.tensor([[0, 1], [0, 1]])], 1)
    model = dpgnn.fit(g, "mlp", level="none", device="cpu", epochs=1)
    changes = " | ".join(model.notes["changes"])
    assert "2 self-loop(s) dropped" in changes and "5 duplicate edge(s) merged" in changes


def test_labels_of_shape_n_by_1_are_squeezed(graph):
    g = graph.clone()
    g.y = g.y.view(-1, 1)
    model = dpgnn.fit(g, "mlp", level="none", device="cpu", epochs=1)
    assert "y of shape [N, 1] squeezed to [N]" in model.notes["changes"]


def _bad(graph, **changes):
    g = graph.clone()
    for k, v in changes.items():
        if v is None:
            del g[k]
        else:
            g[k] = v
    return g


def _one_line_error(match, *args, **kwargs):
    with pytest.raises(ValueError, match=match) as err:
        dpgnn.fit(*args, **kwargs)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "change,match",
    [
        ({"x": "nan"}, r"data.x holds NaN or infinite values in 1 of 60 rows \(first: row 3\): impute"),
        ({"x": "wide"}, r"the LDP feature mechanisms need data.x in \[0, 1\], got \[-0\.9.*minmax_normalize"),
        ({"y": "2d"}, r"data.y must be 1-D class labels of shape \[N\]"),
        ({"y": "float"}, r"integer class labels 0..C-1, got non-integer floats"),
        ({"y": "gap"}, r"class\(es\) \[1\] of 0..2 have no node: relabel"),
        ({"y": "short"}, r"data.y has 59 labels but data.x has 60 rows"),
        ({"edge_index": "out"}, r"node ids outside \[0, 60\)"),
        ({"edge_index": "empty"}, r"no edges: use method 'mlp' or 'dp-mlp'"),
        ({"train_mask": "only"}, r"give all three masks or none"),
        ({"x": "1d"}, r"data.x must have shape \[N, F\]"),
    ],
)
def test_bad_inputs_are_one_line_errors(graph, change, match):
    ((key, kind),) = change.items()
    n = graph.num_nodes
    value = {
        "nan": lambda: graph.x.clone().index_put_((torch.tensor([3]), torch.tensor([1])), torch.tensor(math.nan)),
        "2d": lambda: torch.stack([graph.y, graph.y], 1),
        "float": lambda: graph.y.float() + 0.5,
        "gap": lambda: torch.where(graph.y == 1, 2, graph.y),
        "short": lambda: graph.y[:-1],
        "out": lambda: torch.cat([graph.edge_index, torch.tensor([[0], [n]])], 1),
        "empty": lambda: torch.empty(2, 0, dtype=torch.long),
        "only": lambda: torch.ones(n, dtype=torch.bool),
        "1d": lambda: graph.x[:, 0],
        "wide": lambda: graph.x * 2 - 1,
    }[kind]()
    args = ("pm", "feature") if kind == "wide" else ("progap", "edge")
    _one_line_error(match, _bad(graph, **{key: value}), args[0], level=args[1], epsilon=1.0, device="cpu")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"method": "nope", "level": "edge", "epsilon": 1.0}, r"unknown method 'nope'; valid: progap, gap"),
        ({"method": "dp-gnn", "level": "edge", "epsilon": 1.0}, r"level must be one of \['node'\] for dp-gnn"),
        ({"method": "progap", "level": "edge"}, r"epsilon must be a finite number > 0 at level 'edge'"),
        ({"method": "progap", "level": "edge", "epsilon": math.inf}, r"epsilon must be a finite number > 0"),
        ({"method": "progap", "level": "none", "epsilon": 1.0}, r"epsilon must be omitted \(or inf\) at level 'none'"),
        ({"method": "progap", "level": "edge", "epsilon": 1.0, "delta": 1.5}, r"delta must be a number in \(0, 1\)"),
        ({"method": "edgerand", "level": "edge", "epsilon": 1.0, "delta": 1e-5}, r"pure ε-DP \(δ = 0\): omit delta"),
        (
            {"method": "progap", "level": "edge", "epsilon": 1.0, "epoch": 3},
            r"unknown setting\(s\) \['epoch'\] for ProGAPConfig; valid: depth, hidden",
        ),
        (
            {"method": "progap", "level": "edge", "epsilon": 1.0, "depth": 0},
            r"ProGAPConfig.depth must be an integer in \[1, 10\], got 0",
        ),
        (
            {"method": "gap", "level": "edge", "epsilon": 1.0, "activation": "gelu"},
            r"GAPConfig.activation must be one of 'selu', 'relu', 'tanh', got 'gelu'",
        ),
        (
            {"method": "progap", "level": "edge", "epsilon": 1.0, "lr": -1},
            r"ProGAPConfig.lr must be a number in \[1e-06, 10\], got -1",
        ),
        ({"method": "progap", "level": "edge", "epsilon": 1.0, "seed": -1}, r"seed must be an integer >= 0"),
    ],
)
def test_bad_options_are_one_line_errors(graph, kwargs, match):
    _one_line_error(match, graph, **kwargs)


def test_not_data_is_refused():
    _one_line_error(r"data must be a torch_geometric.data.Data, got dict", {"x": 1}, "mlp", level="none")


def test_describe_lists_every_method_and_field():
    text = dpgnn.describe()
    assert all(name in text for name in METHODS)
    detail = dpgnn.describe("progap")
    for field in ("depth = 3", "edge_relation = 'auto'", "ProGAP §5.3", "an integer in [1, 10]"):
        assert field in detail


def test_predict_refuses_another_feature_space(graph):
    model = dpgnn.fit(graph, "mlp", level="none", device="cpu", epochs=1)
    with pytest.raises(ValueError, match="data.x has 4 features but the model was trained on 5"):
        model.predict(Data(x=torch.randn(3, 4), edge_index=torch.empty(2, 0, dtype=torch.long)))


def test_drw_runs_in_the_sound_mode_with_the_public_batch_rule(graph):
    model = dpgnn.fit(graph, "drw", level="feature", epsilon=8.0, device="cpu", max_steps=2, hidden=8)
    assert model.config.batch == 8 and model.ledger["guarantee"] == "sound" and model.ledger["steps"] == 2
    assert model.ledger["delta"] == 1e-2 and model.ledger["epsilon"] <= 8.0


@pytest.mark.parametrize("method", ["drw", "fdp"])
def test_drw_evaluates_every_tenth_step_and_releases_the_same_model(graph, method, monkeypatch):
    kw = dict(level="feature", epsilon=8.0, device="cpu", max_steps=25, hidden=8, seed=3)
    sparse = dpgnn.fit(graph, method, **kw)
    monkeypatch.setattr("dpgnn.api.drw.EVAL_EVERY", 1)
    every = dpgnn.fit(graph, method, **kw)
    assert sparse.metrics == every.metrics
    assert torch.equal(sparse.predict(graph), every.predict(graph))
    steps = [h["step"] for h in sparse.history]
    assert [h["step"] for h in every.history][-25:] == list(range(1, 26))
    assert {10, 20, 25} <= set(steps) and len(steps) < 25
    assert all(h in every.history for h in sparse.history)


def test_gap_exposes_the_authors_dropout(graph):
    model = dpgnn.fit(graph, "gap", level="edge", epsilon=2.0, device="cpu", epochs=1, hops=1, dropout=0.5)
    drops = [m.p for part in model.parts.values() for m in part.modules() if isinstance(m, torch.nn.Dropout)]
    assert model.config.dropout == 0.5 and drops and set(drops) <= {0.5, 0.0} and 0.5 in drops


def test_privgnn_meets_the_target_with_the_sound_and_the_papers_epsilon():
    from dpgnn.api.privgnn import calibrate_lam
    from dpgnn.methods.privgnn import privacy_ledger

    lam, led = calibrate_lam(2.0, queries=50, gamma=0.3, delta=1e-4, num_classes=4)
    assert max(led["epsilon"], led["epsilon_sound"]) <= 2.0
    above = privacy_ledger("privgnn", lam=lam * 10 ** (1 / 40), queries=50, gamma=0.3, delta=1e-4, num_classes=4)
    assert max(above["epsilon"], above["epsilon_sound"]) > 2.0  # the next λ on the grid misses the target


def test_privgnn_uses_given_public_masks_and_refuses_partial_ones(graph):
    g = graph.clone()
    n = g.num_nodes
    g.private_mask = torch.arange(n) < 30
    g.public_train_mask = (torch.arange(n) >= 30) & (torch.arange(n) < 50)
    g.public_test_mask = torch.arange(n) >= 50
    model = dpgnn.fit(g, "privgnn", level="node", epsilon=8.0, device="cpu", **FAST["privgnn"])
    assert model.ledger["split"] == ["masks given"] and model.config.k == 4  # ⌊0.3 · 30⌋ // 2
    del g.public_test_mask
    _one_line_error(r"give all three or none", g, "privgnn", level="node", epsilon=8.0, device="cpu")


def test_pate_is_calibrated_on_its_sound_epsilon(graph):
    """The exact composition of PATE's 2λ-DP answers meets the target; the paper's data-independent moments bound
    (looser, ≥ log(1/δ) over its largest moment order) stays in the ledger and does not block small ε."""
    from dpgnn.api.privgnn import calibrate_lam
    from dpgnn.methods.privgnn import privacy_ledger

    lam, led = calibrate_lam(2.0, queries=50, gamma=1.0, delta=1e-4, num_classes=4, method="pate_m")
    assert led["epsilon_sound"] <= 2.0 <= led["epsilon_data_independent"] + 1.0
    above = privacy_ledger("pate_m", lam=lam * 10 ** (1 / 40), queries=50, delta=1e-4)
    assert above["epsilon_sound"] > 2.0
    # ε 1 at 474 queries: the data-independent bound is above 1 at every λ, the sound ε is not
    lam1, led1 = calibrate_lam(1.0, queries=474, gamma=1.0, delta=1e-4, num_classes=7, method="pate_g")
    assert led1["epsilon_sound"] <= 1.0 < privacy_ledger("pate_g", lam=1e-4, queries=474, delta=1e-4)["epsilon"]
    model = dpgnn.fit(graph, "pate", level="node", epsilon=1.0, device="cpu", teachers="mlp", **FAST["pate"])
    assert model.ledger["guarantee"] == "sound" and model.ledger["epsilon_sound"] <= 1.0
    assert "sound; the paper's accounting" in model.summary()
    assert model.predict(graph).shape == (60, 3)


def test_edgerand_meets_the_target_with_its_sound_epsilon(graph):
    """One undirected edge costs EdgeRand 1.1 of its ε argument (the density counts both directions): fit passes
    target / 1.1, so the sound ε is the target and the paper's accounting is below it."""
    model = dpgnn.fit(graph, "edgerand", level="edge", epsilon=2.2, device="cpu", **FAST["edgerand"])
    assert model.ledger["epsilon_sound"] == pytest.approx(2.2) and model.ledger["epsilon"] == pytest.approx(2.0)
    assert "ε = 2.2 (sound; the paper's accounting: 2)" in model.summary()


@pytest.mark.parametrize(
    "name,level,backbone",
    [
        ("mbm", "feature", "sage"),
        ("mbm", "feature+label", "gcn"),
        ("rr", "label", "gat"),
        ("mbm", "feature", "gat"),
    ],
)
def test_lpgnn_fit_equals_the_straightforward_run(graph, name, level, backbone):
    """fit trains MBM/RR as one repeat of the batched trainer: the straightforward loop (train_reference) on the
    same release, labels and seed selects the same epoch with the same scores and weights."""
    from dpgnn.api.lpgnn import _budgets, _features
    from dpgnn.methods.lpgnn import perturb_labels, train_reference
    from dpgnn.utils import stable_seed

    cfg = {"epochs": 30, "k_x": 2, "k_y": 2, "backbone": backbone, "dropout": 0.5}
    model = dpgnn.fit(graph, name, level=level, epsilon=EPS[level], seed=4, device="cpu", **cfg)
    split = dpgnn.api.check_graph(graph, 4)[0]
    split.num_classes = int(split.y.max()) + 1
    meth, eps_x, eps_y = _budgets(name, level, EPS[level], model.config)
    noisy = perturb_labels(
        split.y, eps_y, split.num_classes, split.train_mask | split.val_mask, stable_seed("fit-lpgnn-labels", 4)
    )
    drop = math.isfinite(eps_y)
    ref = train_reference(
        split,
        _features(split.x, meth, eps_x, 4, "train"),
        noisy,
        backbone=backbone,
        seed=stable_seed("fit-lpgnn-model", 4),
        lr=model.config.lr,
        weight_decay=model.config.weight_decay,
        dropout=0.5,
        k_x=2,
        k_y=2 if drop else 0,
        label_method="drop" if drop else "ce",
        eps_y=eps_y,
        epochs=30,
        device="cpu",
    )
    assert model.history[0]["epoch"] == int(ref["epoch"])
    assert model.metrics == pytest.approx({"train": ref["train_acc"], "val": ref["val_acc"], "test": ref["test_acc"]})
    ours, theirs = dict(model.parts.named_parameters()), dict(ref["model"].named_parameters())
    assert list(ours) == list(theirs)
    assert all(torch.allclose(ours[k], theirs[k], atol=1e-5, rtol=0) for k in ours)
