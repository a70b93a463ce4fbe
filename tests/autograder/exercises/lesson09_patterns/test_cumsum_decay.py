"""Lesson 09's Cumsum on a grad_output decaying along dim, where the total less a running sum
cancels (lesson09_patterns.cumsum_decay)."""

import pytest
import torch

from autograder.exercises.lesson09_patterns.cumsum_decay import (DECAYS, check_decaying_grad_output,
                                               decaying_grad_output, total_minus_prefix)
from autograder.exercises.lesson09_patterns.patterns import CUMSUM
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
])
def test_a_subtraction_from_the_total_is_named_only_where_it_is_wrong(exercise, name, expected):
    """Is each named only where its probe proves it?"""
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
