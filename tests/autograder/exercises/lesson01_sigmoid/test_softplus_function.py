"""Lesson 01's transfer exercise Softplus: what the catalogue harness does not cover."""

import pytest
import torch

from autograder.exercises.lesson01_sigmoid.softplus_function import (RELATIVE, SOFTPLUS, TAILS,
                                                                     softplus_full)
from autograder.errors import GradingError
from tests.autograder.catalogued import mistake
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


def test_an_error_just_past_the_bound_is_not_rounded_onto_it():
    """Is a relative error of 1.04e-12 written with enough digits to show it exceeds the
    contract's 1e-12 (at two digits it read 'relative error 1e-12, the contract allows 1e-12')?"""
    answer = load("Softplus", OFF_BY.replace("FACTOR", repr(RELATIVE * 1.04)))
    with pytest.raises(GradingError, match=r"relative error 1\.04e-12, the contract allows 1e-12"):
        softplus_full(answer, torch.device("cpu"))


@pytest.mark.parametrize("name", ["x - logsigmoid(x): cancels in the left tail, no formula named"])
def test_no_formula_named_without_a_probe(name):
    """Is a left-tail 0 that log(1 + exp(x)) does not reproduce at every left-tail point told
    no cause (log(1 + e^x) is 0 at x = -708 too, which alone proves nothing)?"""
    with pytest.raises(GradingError) as info:
        softplus_full(mistake("Softplus", name), torch.device("cpu"))
    assert info.value.hint.endswith("the contract allows 1e-12)")


@pytest.mark.parametrize("threshold", [20.5, 21.0, 22.0, 23.0, 24.0])
def test_a_threshold_short_of_the_contract_fails(threshold):
    """Does x itself above any threshold where softplus(x) is still more than 1e-12 (relative)
    from x fail, not only the default 20?"""
    answer = load("Softplus", OFF_BY.replace(
        "torch.logaddexp(x, torch.zeros_like(x)) * (1 + FACTOR)",
        f"F.softplus(x, threshold={threshold!r})").replace("-y / (1 + FACTOR)", "-y"))
    with pytest.raises(GradingError, match="that is x itself"):
        softplus_full(answer, torch.device("cpu"))


def _with_backward(line: str):
    return load("Softplus", OFF_BY.replace("FACTOR", "0.0").replace(
        "return grad_output * -torch.expm1(-y / (1 + 0.0))", line))


def test_a_shortcut_wrong_at_ordinary_x_is_named():
    """Is a backward that returns y itself below y = 1e-3, wrong already at x = -7 (within the
    ordinary inputs the first check samples), told the cause the tail probe proves?"""
    answer = _with_backward("return grad_output * torch.where(y < 1e-3, y, -torch.expm1(-y))")
    with pytest.raises(GradingError) as info:
        softplus_full(answer, torch.device("cpu"))
    assert "that is y itself" in info.value.hint, info.value.hint
    assert info.value.mistake == "Softplus/gradient-y-in-left-tail"


def test_a_gradient_wrong_everywhere_keeps_the_plain_message():
    """Is a backward with no tail cause a probe proves (y for sigmoid(x) everywhere) left with
    the plain comparison, no cause named?"""
    with pytest.raises(GradingError) as info:
        softplus_full(_with_backward("return grad_output * y"), torch.device("cpu"))
    assert not info.value.mistake and "gradient for x is wrong" in info.value.hint, info.value.hint


def test_an_overflow_names_the_left_tail_only_as_the_probe_saw_it():
    """Does the overflow's message add the left tail only where it is wrong, at the wrong point
    nearest 0, with 0 said as the tiny value lost and any other value as a relative error?"""
    from autograder.exercises.lesson01_sigmoid.softplus_function import _left_tail_too
    x = torch.linspace(-800, 800, 33, dtype=torch.float64)
    truth = SOFTPLUS.reference(x=x)
    assert _left_tail_too(truth, x) == ""
    naive = torch.log(1 + torch.exp(x))
    said = _left_tail_too(naive, x)
    assert "at x = -50.0 it returns 0.0 where log(1 + e^x) = 1.93e-22: the tiny value" in said
    assert _left_tail_too(torch.where(x < -60, 0.0, truth), x).startswith(
        ". The left tail is wrong too: at x = -100.0 it returns 0.0")
    off = torch.where(x < 0, truth * (1 + 4 * RELATIVE), truth)
    said = _left_tail_too(off, x)
    assert "at x = -50.0" in said and "relative error 4e-12, the contract allows 1e-12" in said
    assert _left_tail_too(torch.where(x < 0, truth * (1 + RELATIVE / 4), truth), x) == ""
