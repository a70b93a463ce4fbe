"""Lesson 01's transfer exercise Softplus: what the catalogue harness does not cover."""

import pytest
import torch

from autograder.exercises.softplus_function import RELATIVE, SOFTPLUS, TAILS, softplus_full
from autograder.errors import GradingError
from tools.catalogue import load

pytestmark = pytest.mark.lesson01

OFF_BY = """
class Softplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.logaddexp(x, torch.zeros_like(x)) * (1 + FACTOR)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y / (1 + FACTOR))
"""


def test_every_tail_point_has_a_normal_reference():
    """Is every tail point one where the value and the gradient are normal float64 numbers,
    the only places the contract promises relative accuracy?"""
    x = torch.tensor(TAILS, dtype=torch.float64)
    tiny = torch.finfo(torch.float64).tiny
    assert bool((SOFTPLUS.reference(x=x) >= tiny).all())
    assert bool((torch.sigmoid(x) >= tiny).all())


def test_the_tails_reach_past_f_softplus_threshold():
    """Is there a tail point above 20 where F.softplus's switch to x is off by more than the
    contract allows?"""
    x = torch.tensor([t for t in TAILS if t > 20], dtype=torch.float64)
    relative = (torch.nn.functional.softplus(x) - SOFTPLUS.reference(x=x)).abs() / x
    assert bool((relative > RELATIVE).any())


@pytest.mark.parametrize("factor, passes", [(RELATIVE / 4, True), (RELATIVE * 4, False)])
def test_the_bound_is_the_contract_relative_error(factor, passes):
    """Does a relative error a quarter of 1e-12 pass, and four times it fail?"""
    answer = load("Softplus", OFF_BY.replace("FACTOR", repr(factor)))
    if passes:
        softplus_full(answer, torch.device("cpu"))
    else:
        with pytest.raises(GradingError, match="relative error"):
            softplus_full(answer, torch.device("cpu"))
