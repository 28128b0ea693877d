import math

import pytest
import torch

from dpgnn.metrics import accuracy, accuracy_tensor, f1_micro, split_accuracy


def test_accuracy_counts_argmax_hits_and_is_nan_when_empty():
    out = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    y = torch.tensor([1, 1, 1])
    assert accuracy(out, y) == pytest.approx(2 / 3)
    assert float(accuracy_tensor(out, y)) == pytest.approx(2 / 3)
    assert math.isnan(accuracy(out[:0], y[:0]))
    assert math.isnan(float(accuracy_tensor(out[:0], y[:0])))


def test_f1_micro_multilabel_thresholds_logits_at_zero():
    out = torch.tensor([[2.0, -1.0, 0.5], [-3.0, 1.0, -0.1]])
    y = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    # predictions: [1,0,1] and [0,1,0] -> TP 2, FP 1, FN 1 -> 4 / 6
    assert f1_micro(out, y, multilabel=True) == 4 / 6
    assert f1_micro(out, torch.tensor([0, 1]), multilabel=False) == 1.0
    assert f1_micro(torch.zeros(1, 2) - 1, torch.zeros(1, 2), multilabel=True) == 0.0


def test_split_accuracy_per_mask():
    out = torch.eye(3)
    y = torch.tensor([0, 2, 2])
    masks = {"train": torch.tensor([True, True, False]), "test": torch.tensor([False, False, True])}
    assert split_accuracy(out, y, masks) == {"train": 0.5, "test": 1.0}
