"""autograder.diagnose: the numbers a hint prints, short enough to read, never two equal-looking
numbers for two that differ, a zero as 0 whatever its sign."""

import pytest
import torch

from autograder.diagnose import diagnose_gradient, diagnose_values, exact, factor


@pytest.mark.parametrize("value, text", [(-0.9999999, "-0.9999999"), (-1.0, "-1"), (2.0, "2"),
                                         (1e-28, "1e-28"), (-1e17, "-1e+17"), (0.1, "0.1")])
def test_numbers_in_hints_keep_every_digit(value, text):
    """Does a hint print -0.9999999 in full (not -1, as .6g does), and whole numbers plainly?"""
    assert exact(value) == text


@pytest.mark.parametrize("value, text", [(2.5000000000000004, "2.5"), (0.99999, "0.99999"),
                                         (-1.0000001, "-1.0000001"), (1.0, "1")])
def test_factors_are_short_unless_they_would_read_as_one(value, text):
    """Is a factor shown to four digits, and in full only where four would read as 1 or -1?"""
    assert factor(value) == text


def test_values_in_a_report_are_short_but_never_read_as_equal(raises_hint):
    """Are the two values at the worst index given to the fewest digits (four or more) that
    tell them apart, an input value of many digits to six with ≈, and a random grad_output
    said to be random, with its value there, a zero as 0 whatever its sign?"""
    truth = torch.tensor([0.8414709848078965, 0.5, 0.25], dtype=torch.float64)
    got = truth.clone()
    got[0] += 1e-6
    inputs = {"x": torch.tensor([1.0000000001234567, 2.0, 3.0], dtype=torch.float64)}
    grad_output = torch.tensor([-0.6143201234567, 1.0, 1.0], dtype=torch.float64)
    with raises_hint("largest error 1e-06 at index (0,), where x ≈ 1 (got 0.841472, expected "
                     "0.841471; grad_output is random, -0.6143 there)"):
        diagnose_gradient("x", got, truth, rtol=1e-9, atol=1e-10, inputs=inputs,
                          grad_output=grad_output)
    with raises_hint("(got 0.5, expected 0; grad_output is random, 0 there)"):
        diagnose_gradient("x", torch.tensor([0.5, 1.0], dtype=torch.float64),
                          torch.tensor([-0.0, 1.0], dtype=torch.float64), rtol=0, atol=0,
                          grad_output=torch.tensor([-0.0, 1.0], dtype=torch.float64))
    with raises_hint("(got 2.000000001, expected 2)"):
        diagnose_values("f's output", torch.tensor([2.000000001, 1.0], dtype=torch.float64),
                        torch.tensor([2.0, 1.0], dtype=torch.float64), rtol=1e-12, atol=0)
