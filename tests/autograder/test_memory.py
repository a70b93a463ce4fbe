"""TensorAccounting's live bytes between operations; kept_bytes, what autograd keeps."""

import torch

from autograder.memory import TensorAccounting, kept_bytes


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


def test_kept_bytes_counts_each_memory_once_and_leaves_the_arguments_out():
    """Does kept_bytes count sigmoid's saved output (4 bytes an entry), once though two ops keep
    it, and nothing for x * x, which keeps only its argument?"""
    x = torch.randn(100, requires_grad=True)

    def sigmoid_twice_saved(x):
        y = torch.sigmoid(x)
        return y * y  # keeps y, which sigmoid's backward keeps too

    assert kept_bytes(sigmoid_twice_saved, x) == 400
    assert kept_bytes(lambda t: t * t, x) == 0
