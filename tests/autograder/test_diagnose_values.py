"""autograder.diagnose_values: a forward's output against the reference, named."""

import torch

from autograder.diagnose import diagnose_values


def values(*shape, seed=0, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


class TestDiagnoseValues:
    """diagnose_values: a forward result against the reference."""

    def test_equal_values_pass(self):
        """Does a matching output pass?"""
        expected = values(2, 3)
        diagnose_values("f's output", expected.clone(), expected)

    def test_not_a_tensor(self, raises_hint):
        """Is a forward that returns a list named?"""
        with raises_hint("f's output returned a list: return a tensor"):
            diagnose_values("f's output", [1.0], values(1))

    def test_wrong_shape(self, raises_hint):
        """Is a wrong output shape given with both shapes?"""
        with raises_hint("f's output has shape (3,) but should have shape (3, 1)"):
            diagnose_values("f's output", values(3), values(3, 1))

    def test_wrong_dtype(self, raises_hint):
        """Is a forward that changed dtype named?"""
        with raises_hint("f's output has dtype torch.float32 but should have dtype torch.float64"):
            diagnose_values("f's output", values(3).float(), values(3))

    def test_overflow(self, raises_hint):
        """Is inf where the true value is finite called numerically unstable?"""
        got = values(3)
        got[0] = float("inf")
        with raises_hint("f's output contains inf or nan where the true value is finite"):
            diagnose_values("f's output", got, values(3))

    def test_wrong_values(self, raises_hint):
        """Is a wrong value reported with its index and both values?"""
        expected = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
        with raises_hint("f's output is wrong: largest error 2 at index (2,) (got 5, expected 3)"):
            diagnose_values("f's output", torch.tensor([1.0, 2.0, 5.0], dtype=torch.float64),
                            expected)

    def test_empty_tensors_pass(self):
        """Do empty outputs of the right shape pass?"""
        diagnose_values("f's output", values(0, 3), values(0, 3))
