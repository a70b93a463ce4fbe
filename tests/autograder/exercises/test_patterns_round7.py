"""Lesson 09, seventh fresh review: Cumsum on a grad_output decaying along dim (the total less a
running sum cancels there), and Normalize's eps as a float32 tensor."""

import pytest
import torch

from autograder.exercises.cumsum_decay import (DECAYS, check_decaying_grad_output,
                                               decaying_grad_output, total_minus_prefix)
from autograder.exercises.normalize_rows import eps_as_float32, just_below
from autograder.exercises.patterns import CUMSUM
from autograder.exercises.selections import NORMALIZE
from tests.autograder.catalogued import graded_mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson09


@pytest.mark.parametrize("exercise, name, expected", [
    ("Cumsum", "total minus the exclusive prefix", "Cumsum/total-minus-prefix"),
    ("Cumsum", "PyTorch's own 2017 Cumsum (torch/autograd/_functions/reduce.py): an exclusive "
     "sum scan", "Cumsum/total-minus-prefix"),
    ("Cumsum", "total minus cumsum plus g (other order), dim normalised",
     "Cumsum/total-minus-prefix"),
    ("Cumsum", "total minus a running sum (grad_output.sum(dim, keepdim=True) - "
     "(grad_output.cumsum(dim) - grad_output))", "Cumsum/total-minus-prefix"),
    ("Cumsum", "reversed scan in float32", "Cumsum/loses-late-entries"),
    ("Normalize", "eps as torch.tensor(eps) in forward and backward",
     "Normalize/eps-as-float32-tensor"),
    ("Normalize", "norm for the test computed on x.float()", "Normalize/just-below-eps-as-above"),
])
def test_round7_mistakes_carry_their_ids(exercise, name, expected):
    """Is each named only where its probe proves it (x.float() is not a float32 eps)?"""
    assert graded_mistake(exercise, name) == expected


@pytest.mark.parametrize("dtype, spread, where", DECAYS)
def test_the_decaying_case_tells_the_subtraction_apart(dtype, spread, where):
    """Is the total less a running sum wrong by far more than rounding on the battery's
    grad_output, in the dtype, while a scan from the end is within it?"""
    g = decaying_grad_output((2, 24), 1, spread, dtype, "cpu")
    truth = g.double().flip(1).cumsum(1).flip(1)
    scale = g.double().abs().flip(1).cumsum(1).flip(1)
    bound = 4 * 24 * torch.finfo(dtype).eps * scale
    assert ((g.flip(1).cumsum(1).flip(1).double() - truth).abs() <= bound).all()
    assert ((total_minus_prefix(g, 1).double() - truth).abs() > 100 * bound).any()


def test_the_solution_passes_the_decaying_case():
    check_decaying_grad_output(solution("Cumsum"), CUMSUM, "cpu")


def test_a_right_normalize_is_not_a_float32_eps():
    """Is the lesson's Normalize, right with the Python eps, not right with float32(eps) on the
    probe's rows (the row one ulp below float32(eps) tells them apart)?"""
    row = torch.zeros(1, 5, dtype=torch.float64)
    row[0, 0] = just_below(0.01, torch.float64)
    assert float(torch.tensor(0.01, dtype=torch.float32)) <= row[0, 0].item() < 0.01
    assert not eps_as_float32(solution("Normalize"), NORMALIZE, row, 0.01)
