"""Lesson 01's live checker of the overflow-free forward: the worked answer passes, the
textbook formulas fail where they lose the tails."""

import torch

from tests.tools.shown.lesson_code import live_check


def test_worked_forward_passes_and_the_textbook_formulas_fail():
    """Does the worked my_sigmoid pass all eight points with a finite autograd gradient, and do
    1 - 1 / (1 + e^x) (0 in the left tail) and e^x / (1 + e^x) (nan at 800) fail?"""
    lines = live_check("01_sigmoid", "my_sigmoid")
    assert len(lines) == 9 and all(line.rstrip().endswith("✓") for line in lines[:8]), lines
    assert lines[8].endswith("✓ finite at every point"), lines
    cancels = live_check("01_sigmoid", "my_sigmoid",
                         my_sigmoid=lambda x: 1 - 1 / (1 + torch.exp(x)))
    assert "✗ 0: does your formula subtract two numbers near 1 here?" in cancels[2], cancels
    overflows = live_check("01_sigmoid", "my_sigmoid",
                           my_sigmoid=lambda x: torch.exp(x) / (1 + torch.exp(x)))
    assert "✗ not finite" in overflows[7] and "nan at x = [800.0]" in overflows[8], overflows
    assert live_check("01_sigmoid", "my_sigmoid", learner=True) == [
        "Write your forward into my_sigmoid first."]


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
