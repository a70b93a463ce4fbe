"""Lesson 01: a saved tensor holding the output's values, or its derivative, is named as such
only where y has an entry of ordinary size (tail values make y * (1 - y) round to y)."""

import pytest
import torch

from autograder.exercises.lesson01_sigmoid.saved_copies import (copy_of_output,
                                                                derivative_of_output)
from autograder.probes import SavedTensor

pytestmark = pytest.mark.lesson01


def _saved(tensor: torch.Tensor, role: str = "intermediate") -> SavedTensor:
    return SavedTensor(role, tuple(tensor.shape), tensor.dtype,
                       tensor.numel() * tensor.element_size(), tensor)


def test_a_clone_and_a_wider_copy_are_named():
    """Is y.clone() a copy, and y in float64 for a float32 y a float64 copy?"""
    y = torch.sigmoid(torch.linspace(-3, 3, 7))
    assert copy_of_output(_saved(y.clone()), y).startswith("a copy of its output y")
    assert copy_of_output(_saved(y.double()), y).startswith("a float64 copy of its output y")


def test_tail_values_and_other_tensors_are_not_copies():
    """Is y * (1 - y) at tail values (equal to y there) left unnamed, and so are the output
    itself and a mask?"""
    tail = torch.sigmoid(torch.tensor([-700.0, -600.0], dtype=torch.float64))
    assert copy_of_output(_saved(tail * (1 - tail)), tail) == ""
    y = torch.sigmoid(torch.linspace(-3, 3, 7, dtype=torch.float64))
    assert copy_of_output(_saved(y, "output"), y) == ""
    assert copy_of_output(_saved(y > 0.5), y) == ""


def test_the_derivative_is_named():
    """Is y * (1 - y) named as the derivative, and y itself not?"""
    y = torch.sigmoid(torch.linspace(-3, 3, 7, dtype=torch.float64))
    named = derivative_of_output(_saved(y * (1 - y)), y, lambda t: t * (1 - t), "y * (1 - y)")
    assert named.startswith("the derivative y * (1 - y)")
    assert derivative_of_output(_saved(y.clone()), y, lambda t: t * (1 - t), "y * (1 - y)") == ""
