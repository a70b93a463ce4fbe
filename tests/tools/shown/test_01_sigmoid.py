"""Lesson 01's live checker of the overflow-free forward: the worked answer passes, the
textbook formulas fail where they lose the tails."""

import torch

from tests.tools.shown.lesson_code import live_check


def test_worked_forward_passes_and_the_textbook_formulas_fail():
    """Does the worked my_sigmoid pass all eight points with a finite autograd gradient, and do
    1 - 1 / (1 + e^x) (0 in the left tail) and e^x / (1 + e^x) (nan at 800) fail?"""
    lines = live_check("01_sigmoid", "my_sigmoid")
    assert len(lines) == 10 and all(line.rstrip().endswith("✓") for line in lines[:8]), lines
    assert lines[8].endswith("✓ finite at every point"), lines
    assert lines[9] == "✓ all eight match and the gradient is finite", lines
    cancels = live_check("01_sigmoid", "my_sigmoid",
                         my_sigmoid=lambda x: 1 - 1 / (1 + torch.exp(x)))
    assert "✗ 0: does your formula subtract two numbers near 1 here?" in cancels[2], cancels
    overflows = live_check("01_sigmoid", "my_sigmoid",
                           my_sigmoid=lambda x: torch.exp(x) / (1 + torch.exp(x)))
    assert "✗ not finite" in overflows[7] and "not finite at x = 800:" in overflows[8], overflows
    assert overflows[9] == "✗ values wrong at x = 800, gradient not finite", overflows
    assert live_check("01_sigmoid", "my_sigmoid", learner=True) == [
        "Write your forward into my_sigmoid first."]


def test_my_sigmoid_verdict_names_a_cancelling_branch_after_a_finite_gradient():
    """A where-based forward whose x < 0 branch is 1 - 1 / (1 + z) has a finite gradient, yet
    its last line is a ✗ naming the two points where the branch cancels to 0 (at -800 the
    true value is 0 too)."""
    def cancelling(x):
        z = torch.exp(-x.abs())
        return torch.where(x >= 0, 1 / (1 + z), 1 - 1 / (1 + z))
    lines = live_check("01_sigmoid", "my_sigmoid", my_sigmoid=cancelling)
    assert lines[8].endswith("✓ finite at every point"), lines
    assert lines[9] == "✗ values wrong at x = -708, -40", lines


def test_worked_scaled_derivative_passes_and_the_forgotten_scale_fails():
    """Does the worked scaled_derivative match autograd at s = 2.5, -2 and 0, and does
    Exercise 1's derivative without the factor s fail at every scale but 1?"""
    assert live_check("01_sigmoid", "scaled_derivative") == [
        f"s = {s:4}   ✓ all nine match" for s in (2.5, -2.0, 0.0)]
    forgot = live_check("01_sigmoid", "scaled_derivative",
                        scaled_derivative=lambda x, s: torch.sigmoid(x) * (1 - torch.sigmoid(x)))
    assert len(forgot) == 3 and all("✗ wrong at 9 of 9 points" in line for line in forgot), forgot
    raises = live_check("01_sigmoid", "scaled_derivative", scaled_derivative=lambda x: x)
    assert all("✗ scaled_derivative raised TypeError" in line for line in raises), raises
    assert live_check("01_sigmoid", "scaled_derivative", learner=True) == [
        "Write your derivative into scaled_derivative first."]


def test_my_sigmoid_names_float32_where_every_value_is_a_float32_number():
    """The stable formula rounded through float32 is 0 at x = -708: is that put down to float32,
    not to a subtraction near 1, and is a step function (all float32 numbers, none tiny) not?"""
    def through_float32(x):
        z = torch.exp(-x.abs())
        return torch.where(x >= 0, 1 / (1 + z), z / (1 + z)).float()
    lines = live_check("01_sigmoid", "my_sigmoid", my_sigmoid=through_float32)
    assert lines[1].endswith("✗ 0"), lines
    assert not any("subtract two numbers near 1" in line for line in lines), lines
    assert lines[9].startswith("✗ every value is exactly a float32 number"), lines
    assert lines[10].startswith("✗ values wrong at x = -708, -40, -1, 1"), lines
    step = live_check("01_sigmoid", "my_sigmoid", my_sigmoid=lambda x: (x > 0).double())
    assert not any("float32" in line for line in step), step


def test_my_sigmoid_names_float32_where_the_values_not_0_carry_float32_rounding():
    """z computed in float32, then widened, is 0 at x = -708 and off by about 1e-8 (relative)
    wherever it is not 0: is that put down to a float32 step, and is no subtraction near 1
    asked about, which only a formula exact everywhere else can be suspected of?"""
    def z_in_float32(x):
        z = torch.exp(-x.abs().float()).double()
        return torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
    lines = live_check("01_sigmoid", "my_sigmoid", my_sigmoid=z_in_float32)
    assert lines[1].endswith("✗ 0"), lines
    assert "✗ relative error" in lines[2] and "✗ relative error" in lines[3], lines
    assert not any("subtract two numbers near 1" in line for line in lines), lines
    assert lines[9].startswith("✗ the values that are not 0 are off by up to "), lines
    assert "(relative), float32's rounding: a step ran in float32" in lines[9], lines
    assert lines[10].startswith("✗ values wrong at x = -708, -40, -1"), lines
