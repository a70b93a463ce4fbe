"""Lesson 01's live checkers, each one step short of an exercise: the worked answers pass, and
the slips a learner makes fail with what is off."""

import math

import torch

from tests.tools.shown.lesson_code import cell_from, code_cells, live_check, run_code
from tools.solutions import solution


def test_worked_slope_passes_and_the_answer_in_y_fails():
    """Does the worked sigmoid_slope (step 1, written with x) match autograd at nine points, and
    is y (1 - y) written with x in place of y named as the step-2 form?"""
    lines = live_check("01_sigmoid", "sigmoid_slope")
    assert len(lines) == 10 and all(line.endswith("✓") for line in lines[:9]), lines
    assert lines[9] == "✓ all nine match", lines
    in_y = live_check("01_sigmoid", "sigmoid_slope", sigmoid_slope=lambda x: x * (1 - x))
    assert in_y[9].startswith("✗ this is x (1 - x): the checker passes x itself"), in_y
    sign = live_check("01_sigmoid", "sigmoid_slope",
                      sigmoid_slope=lambda x: -torch.exp(-x) / (1 + torch.exp(-x)) ** 2)
    assert sign[9].startswith("✗ wrong at x = -8, -6"), sign
    raises = live_check("01_sigmoid", "sigmoid_slope", sigmoid_slope=lambda x, y: x)
    assert raises[0].startswith("✗ sigmoid_slope raised TypeError"), raises
    assert live_check("01_sigmoid", "sigmoid_slope", learner=True) == [
        "Write your step 1 into sigmoid_slope first."]


def _z_check(learner: bool = False, **slip) -> list[str]:
    """What the z checker prints after the cell that defines exponential_z; ``slip`` replaces
    it."""
    cells = code_cells("01_sigmoid", learner)
    namespace = {"torch": torch, "math": math}
    exec(next(cell for cell in cells if cell.startswith("exponential_z = ")),  # noqa: S102
         namespace)
    namespace.update(slip)
    return run_code(next(cell for cell in cells if cell.startswith("def _tensor_of(")), namespace)


def test_worked_z_passes_and_the_slips_are_named():
    """Does the worked z pass on both sides of 0, with no formula for z or the branches asked
    for or shown (the checker tries properties only: z in [0, 1] out to |x| = 1e300, growing as
    x nears 0 on each side); is a z that overflows on one side, or one that cannot tell the
    points of a side apart, refused with the side it fails on and a question, and does another
    z with those properties pass?"""
    lines = _z_check()
    assert lines == ["✓ your z stays in [0, 1] out to |x| = 1e300 on both sides, and tells the "
                     "points of each side apart: each side's formula in z is yours to work out "
                     "in Exercise 1"], lines
    one_sided = _z_check(exponential_z=lambda x: torch.exp(-x))
    assert one_sided[0].startswith("✗ on the side x < 0, your z leaves [0, 1] at x = -1e+300"), \
        one_sided
    assert "exp" not in one_sided[0].replace("exponential", ""), one_sided
    clamped = _z_check(exponential_z=lambda x: torch.exp(-x).clamp(max=1))
    assert clamped == ["✗ on the side x < 0, your z does not grow as x nears 0 (at x = -40, -5, "
                       "-1, -0.25 it is 1, 1, 1, 1): a formula in z alone could not tell these "
                       "points apart, or your z is not one that shrinks far from 0"], clamped
    rising = _z_check(exponential_z=torch.sigmoid)
    assert rising[0].startswith("✗ on the side x > 0, your z does not grow as x nears 0"), rising
    assert _z_check(exponential_z=lambda x: torch.exp(-x.abs()) / 2)[0].startswith("✓"), \
        "a z off by a constant factor has every property the checker asks for"
    raises = _z_check(exponential_z=lambda x, y: x)
    assert raises[0].startswith("✗ exponential_z raised TypeError"), raises
    assert _z_check(learner=True) == ["Write your z into exponential_z first."]


class _NanToZero(torch.autograd.Function):
    """A MyReLU whose mask makes a nan 0 and whose backward multiplies: inf * 0 is nan."""

    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        ctx.save_for_backward(mask)
        return torch.where(mask, x, 0.0)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask


def test_the_relu_edges_cell_ends_with_a_verdict():
    """Issue 48: does the cell that sets MyReLU beside torch.relu on infinities and a nan end
    with one verdict line, a tick for the worked answer and, for a slip, which entries
    differ (values or gradients), not a comparison left to the eye?"""
    cell = cell_from("01_sigmoid", 'edges = torch.tensor([-float("inf")')
    assert run_code(cell, {"torch": torch, "MyReLU": solution("MyReLU")})[-1] == (
        "✓ every entry matches torch.relu, values and gradients")
    assert run_code(cell, {"torch": torch, "MyReLU": _NanToZero})[-1] == (
        "✗ MyReLU differs from torch.relu: values at x = nan; gradients at x = -inf, -1, 0")


def test_scaled_slope_checks_one_number_and_names_each_slip():
    """Does the ScaledSigmoid live checker take one number (dy/dx at x = 1, s = -2), never a
    formula, pass the worked one, and meet the sign, the missing factor s and y itself each with
    a question, without printing the answer for a wrong number?"""
    assert live_check("01_sigmoid", "scaled_slope")[0].startswith("✓ -0.3932"), (
        live_check("01_sigmoid", "scaled_slope"))
    sig = torch.sigmoid(torch.tensor(1.0, dtype=torch.float64)).item()
    slips = {0.3932: "✗ the sign", sig * (1 - sig): "✗ that is σ'(1) alone",
             -2 * sig: "✗ that is y itself", 0.5: "✗ 0.5 is not ∂y/∂x",
             (lambda x, s: x): "✗ scaled_slope is a function: write one number"}
    for slip, start in slips.items():
        lines = live_check("01_sigmoid", "scaled_slope", scaled_slope=slip)
        assert len(lines) == 1 and lines[0].startswith(start), (slip, lines)
        assert "0.393" not in lines[0], lines
    assert live_check("01_sigmoid", "scaled_slope", learner=True) == [
        "Write your number for question 1 into scaled_slope first."]
