"""TensorAccounting's live bytes between operations."""

import torch

from autograder.memory import TensorAccounting


def test_live_bytes_drops_a_tensor_freed_since_the_last_op():
    """Is a tensor deleted after the last operation left out of live_bytes(), though `now`
    (swept only inside operations) still counts it?"""
    with TensorAccounting() as books:
        kept = torch.ones(256)
        dropped = torch.ones(1024)
        del dropped
        assert books.now == (256 + 1024) * 4
        assert books.live_bytes() == 256 * 4
    del kept
