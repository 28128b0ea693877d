"""PrivGNN method pieces: subsampling, KNN, induced subgraphs, batched teachers == sequential SAGE, labels, errors."""

from __future__ import annotations

import math

import pytest
import torch
from helpers.privgnn_toy import toy_privgnn

from dpgnn.methods import privgnn as P
from dpgnn.methods.privgnn import official_split
from dpgnn.methods.privgnn import teachers as privgnn_teachers
from dpgnn.nn.privgnn import SAGE, BatchedSAGETeachers, train_batched_teachers
from dpgnn.utils import make_generator


def _toy(n_priv=60, n_pub=50, d=6, c=3, seed=0) -> P.PrivGNNData:
    return toy_privgnn(n_priv, n_pub, d, c, seed, name="toy")


def test_split_graphs_share_no_edges_and_queries_are_a_prefix():
    graphs = _toy()
    assert graphs.num_private == 60 and graphs.x_pub.size(0) == 50
    assert int(graphs.edge_priv.max()) < 60 and int(graphs.edge_pub.max()) < 50
    q10, q20 = P.query_nodes(graphs, 10), P.query_nodes(graphs, 20)
    assert torch.equal(q20[:10], q10)
    assert set(q20.tolist()) <= set(graphs.pub_train.tolist())
    with pytest.raises(ValueError, match=r"larger than the public train set \(25 nodes\)"):
        P.query_nodes(graphs, 26)


def test_poisson_and_fixed_subsample():
    g = make_generator(0)
    sizes = torch.tensor([P.poisson_subsample(1000, 0.3, g).numel() for _ in range(200)], dtype=torch.float)
    assert abs(sizes.mean().item() - 300) < 5 and sizes.std().item() > 5  # Binomial(1000, 0.3): sd ≈ 14.5
    fixed = P.poisson_subsample(1000, 0.3, g, "fixed")
    assert fixed.numel() == 300 and fixed.unique().numel() == 300
    with pytest.raises(ValueError, match=r"gamma .* must lie in \(0, 1\]"):
        P.poisson_subsample(10, 1.5, g)
    with pytest.raises(ValueError, match=r"gamma"):
        P.poisson_subsample(10, 0.0, g)
    with pytest.raises(ValueError, match="sampling"):
        P.poisson_subsample(10, 0.5, g, "bernoulli")


def test_knn_selects_nearest_by_euclidean_distance():
    xq = torch.zeros(2)
    cand = torch.tensor([3, 5, 8, 9])
    xc = torch.tensor([[3.0, 0.0], [0.5, 0.5], [0.0, -1.0], [10.0, 10.0]])
    assert P.knn_select(xq, xc, cand, 2).tolist() == [5, 8]
    assert P.knn_select(xq, xc, cand, 10).tolist() == [3, 5, 8, 9]  # fewer candidates than K: all of them
    # brute force on random data
    g = torch.Generator().manual_seed(3)
    xc = torch.randn(50, 4, generator=g)
    xq = torch.randn(4, generator=g)
    cand = torch.arange(100, 150)
    got = P.knn_select(xq, xc, cand, 7)
    dist = ((xc - xq) ** 2).sum(1)
    expected = cand[dist.argsort()[:7]].sort().values
    assert torch.equal(got, expected)


def test_induced_subgraph_relabels_to_positions():
    ei = torch.tensor([[0, 1, 2, 3, 4, 2], [1, 0, 3, 2, 0, 4]])
    nodes = torch.tensor([4, 2, 0])  # positions: 4->0, 2->1, 0->2
    sub = P.induced_subgraph(ei, nodes, 5)
    pairs = {tuple(p) for p in sub.t().tolist()}
    assert pairs == {(0, 2), (1, 0)}  # edges 4->0 and 2->4 survive; 0-1, 2-3 do not


def test_check_k_and_bad_inputs():
    graphs = _toy()
    with pytest.raises(ValueError, match=r"K=19 is larger than the subsample: .* K must lie in \[1, 18\]"):
        P.teacher_subgraphs(graphs, P.query_nodes(graphs, 2), k=19, gamma=0.3, seed=0)
    with pytest.raises(ValueError, match="K must be an integer"):
        P.check_k(0, 100, 0.5)
    with pytest.raises(ValueError, match="lam"):
        P.noisy_argmax(torch.ones(2, 3) / 3, 0.0, make_generator(0))
    with pytest.raises(ValueError, match="lam"):
        P.noisy_argmax(torch.ones(2, 3) / 3, -0.5, make_generator(0))
    with pytest.raises(ValueError, match="num_queries"):
        P.teacher_posteriors(graphs, 0, k=5, gamma=0.3, seed=0, device="cpu")
    with pytest.raises(ValueError, match="kind"):
        P.pate_votes(graphs, 5, kind="knn", num_teachers=3, seed=0, device="cpu")


def test_teacher_node_sets_use_knn_within_their_subsample():
    graphs = _toy()
    q = P.query_nodes(graphs, 4)
    sets = P.teacher_subgraphs(graphs, q, k=5, gamma=0.5, seed=7)
    again = P.teacher_subgraphs(graphs, q[:2], k=5, gamma=0.5, seed=7)
    assert all(torch.equal(a, b) for a, b in zip(sets[:2], again))  # prefix property
    for i, (v, s) in enumerate(zip(q.tolist(), sets)):
        cand = P.poisson_subsample(
            graphs.num_private, 0.5, make_generator(__import__("dpgnn.utils").utils.stable_seed(7, "subsample", i))
        )
        assert set(s.tolist()) <= set(cand.tolist()) and s.numel() == min(5, cand.numel())
        d_in = ((graphs.x_priv[s] - graphs.x_pub[v]) ** 2).sum(1).max()
        rest = torch.tensor(sorted(set(cand.tolist()) - set(s.tolist())))
        if rest.numel():
            assert d_in <= ((graphs.x_priv[rest] - graphs.x_pub[v]) ** 2).sum(1).min() + 1e-9
    knnrem = P.teacher_subgraphs(graphs, q, k=None, gamma=0.5, seed=7, knn=False)
    assert all(r.numel() >= s.numel() for r, s in zip(knnrem, sets))


def test_batched_teachers_equal_sequential_sage_without_dropout():
    """Stacked training (padding, masked BatchNorm, one Adam) == each teacher trained alone as a PyG SAGE.

    The first layer's bias sits right before BatchNorm, so its exact gradient is 0 and its float gradient is
    rounding noise that Adam magnifies to ±lr steps of arbitrary sign in *any* implementation; it is frozen in both
    models here so the comparison tests the algorithm, not the rounding."""
    torch.manual_seed(0)
    graphs = _toy()
    sets = [torch.arange(0, 12), torch.arange(20, 29), torch.tensor([1, 5, 40, 41, 42, 50, 55])]
    seeds = [11, 12, 13]
    batched = BatchedSAGETeachers(
        3, graphs.num_features, 8, graphs.num_classes, dropout=0.0, generators=[make_generator(s) for s in seeds]
    )
    init = {k: v.clone() for k, v in batched.state_dict().items()}
    batched.b1.requires_grad_(False)
    xx, mask, y, src, dst, inv = privgnn_teachers._stack(graphs, sets, torch.device("cpu"))
    train_batched_teachers(batched, xx, mask, y, src, dst, inv, epochs=15, lr=0.01)
    q = P.query_nodes(graphs, 3)
    got = batched.predict_nodes(graphs.x_pub, graphs.agg_pub, q, graphs.csr_ptr, graphs.csr_idx)
    for b, nodes in enumerate(sets):
        m = SAGE(graphs.num_features, 8, graphs.num_classes, dropout=0.0)
        single = BatchedSAGETeachers(1, graphs.num_features, 8, graphs.num_classes, dropout=0.0)
        single.load_state_dict({k: v[b : b + 1].clone() for k, v in init.items()})
        with torch.no_grad():  # copy the initial weights into the PyG model
            m.conv1.lin_r.weight.copy_(single.w1[0, : graphs.num_features].t())
            m.conv1.lin_l.weight.copy_(single.w1[0, graphs.num_features :].t())
            m.conv1.lin_l.bias.copy_(single.b1[0])
            m.conv2.lin_r.weight.copy_(single.w2[0, :8].t())
            m.conv2.lin_l.weight.copy_(single.w2[0, 8:].t())
            m.conv2.lin_l.bias.copy_(single.b2[0])
        ei = P.induced_subgraph(graphs.edge_priv, nodes, graphs.num_private)
        m.conv1.lin_l.bias.requires_grad_(False)
        opt = torch.optim.Adam([p for p in m.parameters() if p.requires_grad], lr=0.01)
        m.train()
        for _ in range(15):
            opt.zero_grad()
            loss = torch.nn.functional.nll_loss(m(graphs.x_priv[nodes], ei), graphs.y_priv[nodes])
            loss.backward()
            opt.step()
        m.eval()
        with torch.no_grad():
            ref = m(graphs.x_pub, graphs.edge_pub)[q[b]]
        assert torch.allclose(got[b], ref, atol=1e-4), (b, got[b], ref)


def test_teacher_posteriors_prefix_and_probabilities():
    graphs = _toy()
    a = P.teacher_posteriors(graphs, 6, k=8, gamma=0.5, seed=3, epochs=5, device="cpu", batch_size=4)
    b = P.teacher_posteriors(graphs, 3, k=8, gamma=0.5, seed=3, epochs=5, device="cpu", batch_size=4)
    assert a.posteriors.shape == (6, graphs.num_classes)
    assert torch.allclose(a.posteriors.sum(1), torch.ones(6), atol=1e-5)
    assert (a.sizes <= 8).all()
    # dropout masks differ between batchings, so only the shapes/ranges are compared for the prefix
    assert b.posteriors.shape == (3, graphs.num_classes) and (b.posteriors >= 0).all()


def test_noisy_argmax_limits_and_b4():
    post = torch.tensor([[0.7, 0.2, 0.1]] * 2000)
    quiet = P.noisy_argmax(post, 1e4, make_generator(0))
    assert (quiet == 0).all()
    loud = P.noisy_argmax(post, 1e-3, make_generator(0))
    frac = torch.bincount(loud, minlength=3).float() / 2000
    assert (frac - 1 / 3).abs().max() < 0.05  # noise dominates: nearly uniform
    code = P.noisy_argmax(post, 1.0, make_generator(0), noise_on="log_softmax")
    paper = P.noisy_argmax(post, 1.0, make_generator(0))
    assert (code == 0).float().mean() > (paper == 0).float().mean()
    soft = P.b4_soft_labels(torch.tensor([0, 2, 1]), 3, 0.5, make_generator(1))
    assert torch.allclose(soft.sum(1), torch.ones(3)) and (soft >= 0).all()


def test_b4_soft_and_hard_labels_come_from_one_noisy_vector():
    """B4's soft labels are the clamped, renormalised noisy one-hot; the hard reading is its argmax, right with
    probability P(1 + L0 > max_j L_j) for i.i.d. Lap(1/λ) (computed independently by quadrature; at λ = 1 it is
    0.257 for 10 classes and 0.724 for 2, the numbers docs/papers/privgnn.md#baselines quotes)."""
    from scipy import integrate, stats

    y = torch.randint(0, 10, (20000,), generator=make_generator(0))
    z = P.b4_noisy_onehot(y, 10, 1.0, make_generator(5))
    soft = P.b4_soft_labels(y, 10, 1.0, make_generator(5))
    v = z.clamp_min(0)
    assert torch.allclose(soft[v.sum(1) > 0], (v / v.sum(1, keepdim=True))[v.sum(1) > 0].float())
    exact = {}
    for c, lam in [(10, 1.0), (2, 1.0), (10, 0.25), (2, 4.0)]:
        y = torch.randint(0, c, (20000,), generator=make_generator(c))
        right = (P.b4_noisy_onehot(y, c, lam, make_generator(7)).argmax(1) == y).float().mean().item()
        lap = stats.laplace(scale=1 / lam)
        exact[c, lam] = integrate.quad(
            lambda x, lap=lap, c=c: lap.pdf(x) * lap.cdf(x + 1) ** (c - 1),
            -60 / lam,
            60 / lam,
            points=[-1, 0],
            limit=400,
        )[0]
        assert right == pytest.approx(exact[c, lam], abs=0.012), (c, lam)
    assert exact[10, 1.0] == pytest.approx(0.257, abs=5e-4) and exact[2, 1.0] == pytest.approx(0.724, abs=5e-4)
    assert exact[2, 4.0] > 0.9 and exact[10, 0.25] < 0.15  # little noise vs noise that swamps the margin of 1
    graphs = _toy()
    hard = P.run_b4(graphs, {"queries": 10, "lam": 1.0, "student_epochs": 3, "labels": "hard"}, seed=0, device="cpu")
    assert 0.0 <= hard.metrics["test"] <= 1.0
    with pytest.raises(ValueError, match="soft' or 'hard"):
        P.run_b4(graphs, {"queries": 10, "lam": 1.0, "labels": "argmax"}, seed=0, device="cpu")


def test_end_to_end_student_and_baselines_run():
    graphs = _toy()
    out = P.teacher_posteriors(graphs, 10, k=10, gamma=0.5, seed=0, epochs=10, device="cpu")
    labels = P.noisy_argmax(out.posteriors, 1.0, make_generator(0))
    res = P.train_student(graphs, P.query_nodes(graphs, 10), labels, seed=0, epochs=5, device="cpu")
    assert 0.0 <= res["accuracy"] <= 1.0
    for fn in (P.baseline_b1, P.baseline_b2, P.baseline_b3):
        assert 0.0 <= fn(graphs, seed=0, epochs=5, device="cpu")["accuracy"] <= 1.0
    counts = P.pate_votes(graphs, 10, kind="gnn", num_teachers=4, seed=0, epochs=5, device="cpu")
    assert counts.shape == (10, graphs.num_classes) and (counts.sum(1) == 4).all()
    counts_m = P.pate_votes(graphs, 10, kind="mlp", num_teachers=4, seed=0, epochs=5, device="cpu")
    assert (counts_m.sum(1) == 4).all()
    led = P.privacy_ledger("privgnn", lam=0.4, queries=1000, gamma=0.3, delta=1e-3)
    assert abs(led["epsilon"] - 19.81) <= 0.01 and led["noise_scale"] == 2.5
    assert math.isinf(P.privacy_ledger("b1")["epsilon"])


# --- fidelity="authors_code": the official code's teachers (unsound replication) ------------------------------
def test_authors_code_teachers_run_and_use_the_official_shape():
    from dpgnn.nn.privgnn_authors import AuthorsCodeSAGE

    graphs = _toy()
    out = P.authors_code_teacher_posteriors(graphs, 3, k=8, gamma=0.5, seed=0, epochs=4, device="cpu")
    assert out.posteriors.shape == (3, 3)
    assert torch.allclose(out.posteriors.sum(1), torch.ones(3, dtype=out.posteriors.dtype), atol=1e-5)
    # fixed-size subsample of floor(0.5 * 60) = 30 nodes, then the 8 nearest
    assert out.sizes.tolist() == [8, 8, 8]
    m = AuthorsCodeSAGE(6, 64, 3)
    shapes = [tuple(p.shape) for p in m.parameters()]
    # d->64, 64->64 (lin_l weight+bias, lin_r weight) with two BatchNorms, 64->c, and the unused 64->d head
    assert (64, 6) in shapes and (64, 64) in shapes and (3, 64) in shapes and (6, 64) in shapes
    assert len(m.convs) == 2 and len(m.bns) == 2
    # the seed is a seed (0 included) and the caller's global RNG is left alone
    state = torch.random.get_rng_state()
    again = P.authors_code_teacher_posteriors(graphs, 3, k=8, gamma=0.5, seed=0, epochs=4, device="cpu")
    assert torch.equal(torch.random.get_rng_state(), state)
    assert torch.equal(again.posteriors, out.posteriors)


def test_authors_code_baselines_train_the_official_network():
    from dpgnn.nn.privgnn_authors import AuthorsCodeSAGE

    graphs = _toy()
    accs = {}
    for which in ("b1", "b2", "b3"):
        out = P.authors_code_baseline(graphs, which, seed=0, epochs=3, device="cpu")
        assert isinstance(out["model"], AuthorsCodeSAGE) and not out["model"].training
        assert 0.0 <= out["accuracy"] <= 1.0
        accs[which] = out["accuracy"]
    assert P.authors_code_baseline(graphs, "b2", seed=0, epochs=3, device="cpu")["accuracy"] == accs["b2"]
    with pytest.raises(ValueError, match="which must be"):
        P.authors_code_baseline(graphs, "b4", seed=0, epochs=3, device="cpu")


def test_authors_code_optimizer_is_shared_and_never_reset():
    """Teacher 0 is the same with or without a shared optimizer; every later teacher differs, because Adam's moments
    and step count carry over (this fails if the implementation resets the optimizer per teacher)."""
    graphs = _toy()
    kw = dict(k=10, gamma=0.5, seed=3, epochs=5, dropout=0.0, device="cpu")
    shared = P.authors_code_teacher_posteriors(graphs, 3, **kw)
    fresh = P.authors_code_teacher_posteriors(graphs, 3, share_optimizer=False, **kw)
    assert shared.optimizer_steps == 3 * 5 and fresh.optimizer_steps == 5
    assert torch.allclose(shared.posteriors[0], fresh.posteriors[0], atol=1e-6)
    assert not torch.allclose(shared.posteriors[1], fresh.posteriors[1], atol=1e-4)
    assert not torch.allclose(shared.posteriors[2], fresh.posteriors[2], atol=1e-4)


def test_authors_code_ledger_is_flagged_unsound():
    led = P.privacy_ledger("privgnn", lam=0.4, queries=100, gamma=0.3, delta=1e-3, num_classes=3)
    a = P.authors_code_ledger(led, lam=0.4, queries=100, num_classes=3)
    assert a["fidelity"] == "authors_code" and a["guarantee"] == "as_published"
    assert any("NOT sound" in s and "never reset" in s for s in a["issues"])
    assert any("fixed-size subsample" in s for s in a["issues"])
    # no amplification: basic composition of the exact per-query epsilon, larger than the subsampled sound value
    from dpgnn.privacy.privgnn import query_epsilon

    assert a["epsilon_sound"] == pytest.approx(100 * query_epsilon(0.4, 3))
    assert a["epsilon_sound"] > led["epsilon_sound"]
    assert a["epsilon"] == led["epsilon"]  # the paper's accounting, as the authors report it
    b = P.authors_code_ledger(led, lam=0.4, queries=100, num_classes=3, noise_on="log_softmax")
    assert math.isinf(b["epsilon_sound"])
    with pytest.raises(ValueError, match="noise_on"):
        P.authors_code_ledger(led, lam=0.4, queries=100, num_classes=3, noise_on="logits")


def test_authors_code_student_continues_the_teachers_optimizer():
    """The official student is trained by the teachers' Adam: its step count goes on from the teachers' (|Q| x
    epochs) and the result differs from a fresh Adam's; without a shared optimizer there is no state to hand on."""
    graphs = _toy()
    kw = dict(k=10, gamma=0.5, seed=3, epochs=5, dropout=0.0, device="cpu")
    teachers = P.authors_code_teacher_posteriors(graphs, 3, **kw)
    assert teachers.optimizer_state is not None
    assert P.authors_code_teacher_posteriors(graphs, 3, share_optimizer=False, **kw).optimizer_state is None
    nodes, labels = P.query_nodes(graphs, 3), teachers.posteriors.argmax(1)
    skw = dict(seed=1, epochs=4, dropout=0.0, device="cpu")
    cont = P.authors_code_student(graphs, nodes, labels, optimizer_state=teachers.optimizer_state, **skw)
    fresh = P.authors_code_student(graphs, nodes, labels, **skw)
    assert cont["optimizer_steps"] == 3 * 5 + 4 and fresh["optimizer_steps"] == 4
    assert 0.0 <= cont["accuracy"] <= 1.0
    w_cont, w_fresh = (next(r["model"].out.parameters()).detach() for r in (cont, fresh))
    assert not torch.allclose(w_cont, w_fresh, atol=1e-5)
    # the handed-on state is copied, not consumed: the same call gives the same model again
    again = P.authors_code_student(graphs, nodes, labels, optimizer_state=teachers.optimizer_state, **skw)
    assert torch.equal(next(again["model"].out.parameters()).detach(), w_cont)


def test_the_official_students_ledger_has_no_finite_epsilon():
    led = P.privacy_ledger("privgnn", lam=0.4, queries=100, gamma=0.3, delta=1e-3, num_classes=3)
    a = P.authors_code_ledger(led, lam=0.4, queries=100, num_classes=3, student="authors_code")
    assert math.isinf(a["epsilon_sound"]) and a["epsilon"] == led["epsilon"]
    assert any("teachers' Adam" in s for s in a["issues"]) and "student" in a["note"]
    with pytest.raises(ValueError, match="student"):
        P.authors_code_ledger(led, lam=0.4, queries=100, num_classes=3, student="official")


# --- the official code's split and PATE-G teachers --------------------------------------------------------
def test_authors_code_split_draws_both_public_sets_from_all_nodes():
    y = torch.arange(20000) % 10
    priv, tr, te = P.authors_code_split_nodes("amazon", y, seed=0)
    assert priv.numel() == 2500 and torch.bincount(y[priv]).tolist() == [250] * 10
    assert tr.numel() == 3000 and te.numel() == 3000
    assert tr.unique().numel() == 3000 and te.unique().numel() == 3000
    ov = P.split_overlap(priv, tr, te)
    # independent uniform samples: overlaps near |priv|/n = 0.125 and |tr|/n = 0.15, never 0
    assert 0.09 < ov["test_in_private"] < 0.16 and 0.12 < ov["test_in_train"] < 0.18
    assert 0.09 < ov["train_in_private"] < 0.16
    assert P.split_overlap(torch.tensor([0, 1]), torch.tensor([2, 3]), torch.tensor([4, 5])) == {
        "test_in_private": 0.0,
        "test_in_train": 0.0,
        "train_in_private": 0.0,
    }
    again = P.authors_code_split_nodes("amazon", y, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(again, (priv, tr, te)))
    with pytest.raises(ValueError, match="known for"):
        P.authors_code_split_nodes("credit", y, seed=0)


def test_authors_split_ledger_keeps_only_infinite_epsilon_sound():
    from dpgnn.privacy.guarantee import check_ledger

    led = P.privacy_ledger("privgnn", lam=0.4, queries=100, gamma=0.3, delta=1e-3, num_classes=3)
    a = check_ledger(P.authors_split_ledger(led))
    assert a["split"] == "authors_code" and a["guarantee"] == "as_published"
    assert a["epsilon"] == led["epsilon"]  # the paper's statement, kept; the issue says why it is not the run's
    assert any("official split" in s for s in a["issues"])
    b = check_ledger(P.authors_split_ledger(P.log_softmax_ledger(led)))
    assert math.isinf(b["epsilon"]) and b["guarantee"] == "sound" and b["split"] == "authors_code"


def test_repeated_nodes_keep_their_edges_on_the_last_copy():
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])  # path 0-1-2-3
    out = official_split._relabel_onto(edge_index, torch.tensor([1, 2, 0, 1]), 4)  # node 1 listed at positions 0 and 3
    pairs = set(map(tuple, out.t().tolist()))
    assert pairs == {(2, 3), (3, 2), (3, 1), (1, 3)}  # 0-1 and 1-2 attach to position 3; position 0 is isolated
    assert 0 not in out


def test_authors_code_pate_g_teachers_vote_untrained():
    graphs = _toy()
    flipped = P.PrivGNNData(
        "toy",
        graphs.x_priv,
        (graphs.y_priv + 1) % graphs.num_classes,
        graphs.edge_priv,
        graphs.x_pub,
        graphs.y_pub,
        graphs.edge_pub,
        graphs.pub_train,
        graphs.pub_test,
        graphs.num_classes,
    )
    kw = dict(kind="gnn", num_teachers=4, seed=0, epochs=20, device="cpu")
    # the official code resets every SAGE teacher after training: its votes do not depend on the private labels
    a = P.pate_votes(graphs, 10, fidelity="authors_code", **kw)
    assert torch.equal(a, P.pate_votes(flipped, 10, fidelity="authors_code", **kw))
    assert not torch.equal(P.pate_votes(graphs, 10, **kw), P.pate_votes(flipped, 10, **kw))
    assert (a.sum(1) == 4).all()
    # its MLP teachers' reset is a no-op: PATE-M is the same in both modes
    m = dict(kw, kind="mlp")
    assert torch.equal(P.pate_votes(graphs, 10, fidelity="authors_code", **m), P.pate_votes(graphs, 10, **m))
    with pytest.raises(ValueError, match="fidelity must be one of"):
        P.pate_votes(graphs, 10, fidelity="official", **kw)
