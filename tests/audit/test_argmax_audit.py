"""PrivGNN's per-query noisy argmax: the authors'-code log-softmax noise is caught; the posterior noise is audited
against the accountant's per-query λ (L1 sensitivity 1) and against 2λ (L1 sensitivity 2 of a probability vector)."""

import pytest

from dpgnn.audit.argmax import audit_noisy_argmax, exact_epsilon, exact_label_probabilities


def test_log_softmax_noise_is_flagged():
    r = audit_noisy_argmax(1.0, num_classes=10, trials=50_000, seed=0, noise_on="log_softmax")
    assert r["violation"] and r["epsilon_lb"] > 5.0
    assert r["tpr"] == 1.0 and r["fpr"] == 0.0  # the pseudo-label is deterministic


def test_posterior_noise_exceeds_lambda_but_not_two_lambda():
    """c = 10, λ = 1 (Monte Carlo, 4e5 draws): P(label 0 | e0) ≈ 0.2564, P(label 0 | e1) ≈ 0.0829, ln ratio ≈ 1.13 >
    λ."""
    r = audit_noisy_argmax(1.0, num_classes=10, trials=400_000, seed=0)
    assert r["tpr"] == pytest.approx(0.2564, abs=0.004) and r["fpr"] == pytest.approx(0.0829, abs=0.003)
    assert r["epsilon_lb"] > 1.0 and r["violation"]
    assert r["epsilon_lb"] <= r["epsilon_if_l1_sensitivity_2"]


def test_two_classes_stay_within_lambda():
    r = audit_noisy_argmax(1.0, num_classes=2, trials=200_000, seed=0)
    assert not r["violation"] and r["epsilon_lb"] > 0.9


def test_input_checks():
    with pytest.raises(ValueError):
        audit_noisy_argmax(1.0, num_classes=1, trials=10, seed=0)
    with pytest.raises(ValueError):
        audit_noisy_argmax(1.0, num_classes=3, trials=0, seed=0)


def test_exact_values_confirm_the_finding():
    """Numerical integration: at 10 classes the per-query ε of the pair (e0, e1) exceeds λ (≈ 1.137 at λ = 1,
    ≈ 0.111 at λ = 0.1); at 2 classes it stays below λ; the audit's bound never exceeds the exact value."""
    a, b = exact_label_probabilities(1.0, 10)
    assert a == pytest.approx(0.25734, abs=1e-4) and b == pytest.approx(0.08252, abs=1e-4)
    assert exact_epsilon(1.0, 10) == pytest.approx(1.1374, abs=1e-3)
    assert exact_epsilon(0.1, 10) > 0.1 and exact_epsilon(1.0, 2) < 1.0
    r = audit_noisy_argmax(1.0, num_classes=10, trials=100_000, seed=1)
    assert r["epsilon_lb"] <= exact_epsilon(1.0, 10)
