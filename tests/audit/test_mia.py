"""PrivGNN's membership-inference attacks (dpgnn.audit.mia): reproducible rows, targets that do not disturb each
other, and the authors'-code student with its label diagnostics."""

from __future__ import annotations

import pytest
import torch

from dpgnn.audit import mia
from helpers.privgnn_toy import toy_privgnn

ARGS = dict(queries=20, k=10, gamma=0.5, lam=1.0, seed=3, teacher_epochs=2, student_epochs=5, shadow_epochs=5,
            device="cpu")


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
