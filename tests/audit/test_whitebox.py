"""White-box Dirac-canary audits: the hook in each method's DP-SGD step, the statistic, flags and non-flags."""

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from dpgnn.audit.canary import audit_edge_aggregation
from dpgnn.audit.whitebox import (
    ADD_REMOVE,
    REPLACE,
    CanaryRelation,
    DiracCanaries,
    audit_white_box,
    llr_scores,
    matching_graph,
    unit_law,
)
from dpgnn.data.synthetic import csbm
from dpgnn.methods.hooks import DPStepInfo


class Recorder:
    """Wraps a :class:`DiracCanaries`: snapshots the sums before and after its insertion, counts the calls."""

    def __init__(self, inner):
        self.inner, self.deltas, self.calls, self.after = inner, [], 0, 0

    def before_noise(self, sums, info):
        before = {k: v.detach().clone() for k, v in sums.items()}
        self.inner.before_noise(sums, info)
        self.deltas.append({k: sums[k].detach() - before[k] for k in sums})
        self.calls += 1

    def after_noise(self, noisy, info):
        self.inner.after_noise(noisy, info)
        self.after += 1


def _dead_graph(n=100, features=64, dead=8, seed=0):
    """A CSBM graph whose first ``dead`` feature columns are zero: no real gradient touches the first ``dead``
    coordinates of the first layer's weight (row 0, columns 0..dead-1)."""
    g = csbm(num_nodes=n, num_features=features, seed=seed)
    g.x[:, :dead] = 0.0
    return g


def test_hook_receives_each_canary_once_per_sampled_step_clipped_to_c():
    from dpgnn.methods.progap_baselines import train_mlp

    g = _dead_graph()
    m = 8
    inc = np.array([True, False] * (m // 2))
    rec = Recorder(DiracCanaries(inc, ADD_REMOVE, seed=3))
    res = train_mlp(
        g, level="node", noise=2.0, layers=2, hidden=16, epochs=4, batch_size=25, seed=0, device="cpu", canary=rec
    )
    steps = res.ledger["steps"] if "steps" in res.ledger else 4 * (int(g.train_mask.sum()) // 25)
    assert rec.calls == rec.after == steps == len(rec.inner.observations)
    sampled = np.zeros(m)
    for delta, contrib in zip(rec.deltas, rec.inner.inserted):
        name = max(delta, key=lambda k: delta[k].numel())
        flat = delta[name].view(-1)
        # only the canary coordinates move, by C (= 1) times the units sampled; excluded canaries add nothing
        assert torch.count_nonzero(flat[m:]) == 0 and all(
            torch.count_nonzero(d) == 0 for k, d in delta.items() if k != name
        )
        assert np.allclose(flat[:m].numpy(), contrib) and set(np.unique(contrib)) <= {0.0, 1.0}
        assert np.all(contrib[~inc] == 0)
        sampled += contrib
    # each included canary was sampled by the step's Poisson law (rate 25/N_train), once per step at most
    rate = 25 / int(g.train_mask.sum())
    assert 0 < sampled[inc].mean() / steps < 3 * rate
    assert rec.inner.norms and set(rec.inner.norms) == {1.0}


def test_secret_batch_with_live_coordinates_is_refused():
    from dpgnn.methods.progap_baselines import train_mlp

    g = csbm(num_nodes=100, num_features=64, seed=0)  # no dead columns
    hook = DiracCanaries(np.array([True, False, True, False]), ADD_REMOVE, seed=0)
    with pytest.raises(ValueError, match="batch is secret"):
        train_mlp(g, level="node", noise=2.0, hidden=16, epochs=1, batch_size=25, seed=0, device="cpu", canary=hook)


def test_dp_gnn_and_drw_call_the_hook_every_step_with_the_relations_worst_case():
    from dpgnn.audit.whitebox import METHODS

    g = csbm(num_nodes=60, num_features=32, seed=2)
    inc = np.array([True, False] * 50)
    rel = CanaryRelation(own_in=1.0, own_out=0.0, others=3)
    rec = Recorder(DiracCanaries(inc, rel, seed=0))
    kw = dict(hidden=16, lr=0.01, epochs=3, batch_size=60, max_degree=3)
    led = METHODS["dp-gnn"][1](g, 1.0, 0, rec, kw)
    assert rec.calls == led["steps_trained"] == 3
    for contrib in rec.inner.inserted:  # full batch: own root and all 3 neighbour roots every step
        assert np.all(contrib[inc] == 4.0) and np.all(contrib[~inc] == -3.0)
    d = matching_graph(40, num_features=4, num_classes=10, seed=0)
    inc = np.array([True, False] * 5)
    rec = Recorder(DiracCanaries(inc, REPLACE, seed=0))
    led = METHODS["drw"][1](d, 2.0, 0, rec, dict(steps=3, batch=20, delta=1e-3, num_layers=1, lr=0.1, fdp_degree=1))
    assert rec.calls == led["steps"] == 3 and led["sampling_rate"] == 1.0
    delta = rec.deltas[0]
    # per-tensor clipping: canary j moves coordinate j of every tensor by +-C_j, total norm C = 1
    norm = math.sqrt(sum(float(delta[k].view(-1)[0]) ** 2 for k in delta))
    assert norm == pytest.approx(1.0) and np.all(rec.inner.inserted[0] == np.where(inc, 1.0, -1.0))


def test_unit_law_is_the_samplers_law():
    info = DPStepInfo(population=10, batch=4, poisson=False, std=1.0, clip=1.0)
    own, nb, p = unit_law(CanaryRelation(others=2), info)
    assert p.sum() == pytest.approx(1.0)
    # P(own unit in batch) = 4/10, expected units = 3 * 4/10
    assert float(p[own == 1].sum()) == pytest.approx(0.4)
    assert float((p * (own + nb)).sum()) == pytest.approx(1.2)
    own, nb, p = unit_law(ADD_REMOVE, DPStepInfo(population=10, batch=10, poisson=True, std=1.0, clip=1.0))
    assert list(own) == [1] and p[0] == 1.0


def test_llr_of_a_full_batch_is_the_gaussian_likelihood_ratio():
    rng = np.random.default_rng(0)
    obs = [rng.normal(size=5) for _ in range(3)]
    law = (np.array([1]), np.array([0]), np.array([1.0]), 2.0, 1.0)
    s = llr_scores(obs, [law] * 3, REPLACE)
    # N(+1, 4) vs N(-1, 4): log ratio = 2·o/σ² per step
    assert np.allclose(s, sum(2 * o / 4.0 for o in obs))


@pytest.fixture(scope="module")
def mlp_graph():
    return csbm(num_nodes=100, num_features=64, seed=5)


_MLP = dict(epochs=5, batch_size=100, hidden=64, lr=0.01)


def test_halved_noise_is_flagged_and_the_correct_run_is_not(mlp_graph):
    ok = audit_white_box("dp-mlp", mlp_graph, epsilon=2.0, runs=3, canaries=4000, seed=0, **_MLP)
    bad = audit_white_box("dp-mlp", mlp_graph, epsilon=2.0, runs=3, canaries=4000, seed=0, noise_factor=0.5, **_MLP)
    assert ok["epsilon_claimed"] == bad["epsilon_claimed"] <= 2.0
    assert ok["epsilon_lb"] <= ok["epsilon_claimed"]
    assert bad["epsilon_lb"] > bad["epsilon_claimed"] and bad["epsilon_run"] > 4.0
    assert bad["ledger"]["guarantee"] == "as_published"


def test_edge_audit_flags_halved_sigma():
    ok = audit_edge_aggregation(2.0, hops=1, trials=20_000, seed=0, copies=2000)
    bad = audit_edge_aggregation(2.0, hops=1, trials=20_000, seed=0, copies=2000, noise_factor=0.5)
    assert ok["epsilon_lb"] <= ok["epsilon_claimed"] < bad["epsilon_lb"]
    assert bad["epsilon_accounted"] > 4.0


def test_copies_draw_the_same_trials_as_the_loop():
    a = audit_edge_aggregation(4.0, hops=1, trials=300, seed=1)
    b = audit_edge_aggregation(4.0, hops=1, trials=300, seed=1, copies=64)
    assert a["epsilon_lb"] == pytest.approx(b["epsilon_lb"]) and a["tpr"] == b["tpr"] and a["fpr"] == b["fpr"]


def test_bad_options_name_the_option(mlp_graph):
    with pytest.raises(ValueError, match="noise_factor"):
        audit_white_box("dp-mlp", mlp_graph, epsilon=1.0, runs=1, canaries=10, seed=0, noise_factor=0.0, **_MLP)
    with pytest.raises(ValueError, match="unknown method"):
        audit_white_box("gcn", mlp_graph, epsilon=1.0, runs=1, canaries=10, seed=0)
    with pytest.raises(ValueError, match="canaries"):
        audit_white_box("dp-mlp", mlp_graph, epsilon=1.0, runs=1, canaries=1, seed=0, **_MLP)


def test_test_profile_never_flags_a_correct_run():
    from dpgnn.profiles import settings
    from dpgnn.results import ResultStore
    from dpgnn.series import audit_white_box as W

    store = ResultStore("audit", "test", root=Path(tempfile.mkdtemp()))
    W.run_white_box(settings("audit", "test"), store)
    t = W.white_box_table(store, 4.0)
    assert len(t) == 6 and not t.loc[t["noise_factor"] == 1.0, "flagged"].any()
    df = store.load(W.ARTIFACT)
    assert df["ledger"].notna().all() and set(df["privacy_unit"]) == {"node", "feature", "edge"}
