"""PrivGNN's membership-inference attacks (dpgnn.audit.mia): reproducible rows, targets that do not disturb each
other, and the authors'-code student with its label diagnostics."""

from __future__ import annotations

import pytest
import torch
from helpers.privgnn_toy import toy_privgnn

from dpgnn.audit import mia

ARGS = dict(
    queries=20, k=10, gamma=0.5, lam=1.0, seed=3, teacher_epochs=2, student_epochs=5, shadow_epochs=5, device="cpu"
)


@pytest.fixture(scope="module")
def data():
    return toy_privgnn(n_priv=60, n_pub=80)


def _by_key(rows):
    return {(r["attack"], r["method"]): r for r in rows}


@pytest.fixture(scope="module")
def both(data):
    return _by_key(mia.run_attacks(data, **ARGS))


@pytest.fixture(scope="module")
def student_only(data):
    torch.rand(1000)  # move torch's global RNG: dropout masks must not depend on it
    return _by_key(mia.run_attacks(data, targets=("privgnn",), **ARGS))


def test_rows_are_reproducible_whatever_ran_before(data, both, student_only):
    assert set(both) == {("attack1", "b1"), ("attack1", "privgnn"), ("attack2", "b1"), ("attack2", "privgnn")}
    torch.rand(1000)
    again = _by_key(mia.run_attacks(data, **ARGS))
    assert {k: r["value"] for k, r in both.items()} == {k: r["value"] for k, r in again.items()}
    assert set(student_only) == {("attack1", "privgnn"), ("attack2", "privgnn")}
    for key, row in student_only.items():  # the student does not depend on whether B1 was trained first
        assert row["value"] == both[key]["value"]
        assert row["label_accuracy"] == both[key]["label_accuracy"]
    for row in both.values():
        assert 0.0 <= row["value"] <= 1.0 and 0.0 <= row["test_accuracy"] <= 1.0
        assert 0.0 < row["non_member_confidence"] <= 1.0 and 0.0 < row["member_confidence"] <= 1.0


def test_authors_code_student_rows_and_the_paper_noise_label_accuracy(data, student_only):
    code = _by_key(mia.run_attacks(data, targets=("privgnn",), noise_on="log_softmax", **ARGS))
    assert set(code) == {("attack1", "privgnn_code"), ("attack2", "privgnn_code")}
    row = code["attack2", "privgnn_code"]
    # the same teachers and noise draws: the paper-noise label accuracy is the one the paper-noise student saw
    assert row["label_accuracy_posterior"] == student_only["attack2", "privgnn"]["label_accuracy"]
    assert "label_accuracy_posterior" not in student_only["attack2", "privgnn"]
    assert 0.0 <= row["label_accuracy"] <= 1.0


def test_targets_are_checked(data):
    with pytest.raises(ValueError, match="targets"):
        mia.run_attacks(data, targets=("b2",), **ARGS)
    with pytest.raises(ValueError, match="targets"):
        mia.run_attacks(data, targets=(), **ARGS)


class _Fixed(torch.nn.Module):
    """An "attack" whose member probability is the first feature."""

    def forward(self, x):
        return x[:, :1]


@pytest.mark.parametrize(
    "mem, non, hard, score",
    [
        (1.0, 0.0, 1.0, 1.0),  # perfect
        (0.0, 1.0, 0.0, 0.0),  # inverted
        (0.3, 0.3, 0.5, 0.5),  # constant
        (0.6, 0.55, 0.5, 1.0),  # ranks perfectly, but every node is called a member: balanced accuracy 1/2
    ],
)
def test_batched_hard_auroc_is_the_balanced_accuracy_of_the_hard_calls(mem, non, hard, score):
    m, n = torch.full((200, 2), mem), torch.full((150, 2), non)
    got_hard, got_score = mia.batched_hard_auroc(_Fixed(), m, n, seed=0)
    assert got_hard == pytest.approx(hard) and got_score == pytest.approx(score)


def test_batched_hard_auroc_averages_per_batch_balanced_accuracy():
    # members called right 3 times in 4, non-members always: each batch's balanced accuracy is near 7/8
    m = torch.tensor([[1.0], [1.0], [1.0], [0.0]]).repeat(64, 1)
    n = torch.zeros(256, 1)
    got, _ = mia.batched_hard_auroc(_Fixed(), m, n, seed=1)
    assert got == pytest.approx(0.875, abs=0.02)
    with pytest.raises(ValueError, match="both"):
        mia.batched_hard_auroc(_Fixed(), m[:1], n[:1], seed=1, batch=1)


def test_rebmigraph_attack_outputs_a_member_probability_and_learns_a_separable_case():
    gen = torch.Generator().manual_seed(0)
    mem = torch.softmax(torch.randn(300, 4, generator=gen) * 4, 1)  # confident posteriors
    non = torch.full((300, 4), 0.25) + 0.01 * torch.randn(300, 4, generator=gen)  # flat ones
    atk = mia.train_rebmigraph_attack(mem, non, seed=0)
    with torch.no_grad():
        p = atk(torch.cat([mem, non]))
    assert p.shape == (600, 1) and bool(((p >= 0) & (p <= 1)).all())
    hard, score = mia.batched_hard_auroc(atk, mem, non, seed=0)
    assert hard > 0.8 and score > 0.8


def test_published_protocol_rows_share_the_teachers_of_both_students(data, student_only):
    rows = _by_key(mia.run_attacks(data, noise_on=("posterior", "log_softmax"), protocol="rebmigraph", **ARGS))
    assert set(rows) == {(a, m) for a in ("attack1", "attack2") for m in ("b1", "privgnn", "privgnn_code")}
    code = _by_key(mia.run_attacks(data, targets=("privgnn",), noise_on="log_softmax", **ARGS))
    for attack in ("attack1", "attack2"):
        assert rows[attack, "privgnn"]["label_accuracy"] == student_only[attack, "privgnn"]["label_accuracy"]
        assert rows[attack, "privgnn_code"]["label_accuracy"] == code[attack, "privgnn_code"]["label_accuracy"]
        assert rows[attack, "privgnn"]["test_accuracy"] == student_only[attack, "privgnn"]["test_accuracy"]
    for row in rows.values():
        assert row["protocol"] == "rebmigraph"
        assert 0.0 <= row["value"] <= 1.0 and 0.0 <= row["score_auroc"] <= 1.0
    assert all(r["protocol"] == "score" and "score_auroc" not in r for r in student_only.values())


def test_protocol_and_noise_placements_are_checked(data):
    with pytest.raises(ValueError, match="protocol"):
        mia.run_attacks(data, protocol="tstf", **ARGS)
    with pytest.raises(ValueError, match="noise_on"):
        mia.run_attacks(data, noise_on=("posterior", "posterior"), **ARGS)
    with pytest.raises(ValueError, match="noise_on"):
        mia.run_attacks(data, noise_on="logits", **ARGS)


@pytest.mark.parametrize(
    "size, n_target, expect",
    [("quarter", None, (20, 20)), ("half", None, (40, 40)), ("target", 25, (25, 25)), ("target", 500, (40, 40))],
)
def test_shadow_splits_are_disjoint_public_nodes_of_the_named_size(data, size, n_target, expect):
    mem, non = mia._shadow_split(data, 7, size, n_target)
    assert (mem.numel(), non.numel()) == expect
    assert not set(mem.tolist()) & set(non.tolist())
    assert max(mem.max(), non.max()) < data.x_pub.size(0)
    with pytest.raises(ValueError, match="shadow size"):
        mia._shadow_split(data, 7, "third")
    with pytest.raises(ValueError, match="n_target"):
        mia._shadow_split(data, 7, "target")


@pytest.fixture(scope="module")
def designs(data):
    args = {k: v for k, v in ARGS.items() if k != "shadow_epochs"}
    return mia.shadow_sensitivity(data, shadow_sizes=("quarter", "target"), shadow_epochs=(5, 8), **args)


def test_shadow_sensitivity_default_design_is_run_attacks(data, designs, both):
    """The quarter-size shadow trained as long as run_attacks' shadow gives run_attacks' rows exactly, under
    both protocols; every (attack, target) has every design, the oracle per protocol and the confidence row."""
    published = _by_key(mia.run_attacks(data, noise_on=("posterior", "log_softmax"), protocol="rebmigraph", **ARGS))
    for r in designs:
        if r["design"] == "shadow" and r["shadow"] == "quarter" and r["shadow_epochs"] == 5:
            ref = both if r["protocol"] == "score" else published
            if (r["attack"], r["method"]) in ref:
                assert r["value"] == ref[r["attack"], r["method"]]["value"], r
    keys = {(r["attack"], r["method"]) for r in designs}
    assert keys == {(a, m) for a in ("attack1", "attack2") for m in ("b1", "privgnn", "privgnn_code")}
    for key in keys:
        mine = [r for r in designs if (r["attack"], r["method"]) == key]
        assert len(mine) == 2 * 2 * 2 + 2 + 1  # sizes x epochs x protocols, oracle per protocol, confidence
        assert {r["design"] for r in mine} == {"shadow", "oracle", "confidence"}
        assert all(0.0 <= r["value"] <= 1.0 for r in mine)
        assert all(("score_auroc" in r) == (r["protocol"] == "rebmigraph") for r in mine)


def test_confidence_reference_is_the_auroc_of_the_top_probability(data, designs):
    """The no-model reference recomputed from the targets' own posteriors."""
    args = {k: v for k, v in ARGS.items() if k != "shadow_epochs"}
    targets = mia.build_targets(data, noise_on=("posterior", "log_softmax"), **args)
    conf = {(r["attack"], r["method"]): r["value"] for r in designs if r["design"] == "confidence"}
    for t in targets:
        top = [t[k].exp().max(1).values.numpy() for k in ("member", "non_member")]
        assert conf[t["attack"], t["method"]] == pytest.approx(mia.auroc(*top))


def test_shadow_sensitivity_checks_its_grid(data):
    args = {k: v for k, v in ARGS.items() if k != "shadow_epochs"}
    with pytest.raises(ValueError, match="protocols"):
        mia.shadow_sensitivity(data, protocols=("tstf",), **args)
    with pytest.raises(ValueError, match="shadow_sizes"):
        mia.shadow_sensitivity(data, shadow_sizes=(), **args)
    with pytest.raises(ValueError, match="shadow_epochs"):
        mia.shadow_sensitivity(data, shadow_epochs=(0,), **args)
