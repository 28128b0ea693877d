"""dpgnn.utils.torch_global_seed: a seeded block draws the same numbers whatever ran before, and leaves the
caller's RNG where it was."""

from __future__ import annotations

import torch

from dpgnn.utils import torch_global_seed


def test_block_is_seeded_and_caller_state_restored():
    torch.manual_seed(1)
    with torch_global_seed(7, "cpu"):
        first = torch.rand(5)
    after_first = torch.rand(3)
    torch.manual_seed(2)
    torch.rand(100)  # a different history before the block
    with torch_global_seed(7, "cpu"):
        second = torch.rand(5)
    assert torch.equal(first, second)
    torch.manual_seed(1)
    assert torch.equal(torch.rand(3), after_first)  # the block did not consume the caller's stream
    with torch_global_seed(8, "cpu"):
        other = torch.rand(5)
    assert not torch.equal(first, other)
