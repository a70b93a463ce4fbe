"""Lesson 04's live derivation checkers pass the worked answers and show where a named slip
is off."""

import torch

from tests.autograder.catalogued import mistake
from tests.tools.shown.lesson_code import run_cells, source
from tools.solutions import solution


def test_swish_derivation_worked_passes_and_a_lost_beta_is_located():
    """Does the worked my_ds_dx pass at Hint 3's point and every beta, and one without the chain
    rule's factor beta fail with the point and both values (the live check stops one step short
    of the exercise: at ds/dx, the chain rule's half of dy/dx, whose product rule and gradient
    for beta are the exercise's)? After the self-check, do the solution's gradients pass the
    five-point comparison, and a grad_beta missing a factor x fail on dL/dbeta with both values,
    while an unsummed grad_beta of x's shape passes (the Function contract's rule 2)?"""
    cells = ["my_ds_dx = lambda", "def check_swish_derivation():\n"]  # the cell calls it
    lines = run_cells("04_double_backward", cells)
    assert len(lines) == 5 and all(line.endswith(": ds/dx ✓") for line in lines), lines
    assert lines[0] == "Hint 3, beta = 2.0: ds/dx ✓", lines
    no_beta = run_cells("04_double_backward", cells, my_ds_dx=lambda x, beta: (
        torch.sigmoid(beta * x) * (1 - torch.sigmoid(beta * x))))
    assert "ds/dx ✗ at x = -0.5: yours 0.1966, autograd 0.3932" in no_beta[0], no_beta
    learner = source("04_double_backward", learner=True)
    assert "dy/dbeta" not in learner and "my_dy_dx" not in learner
    after = ["my_ds_dx = lambda", "def check_swish_derivation():\n",
             "def compare_swish_gradients():"]
    compared = run_cells("04_double_backward", after, SwishFunction=solution("SwishFunction"))[5:]
    assert len(compared) == 5 and all(line.endswith("dL/dx ✓, dL/dbeta ✓")
                                      for line in compared), compared
    slip = run_cells("04_double_backward", after,
                     SwishFunction=mistake("SwishFunction", "grad_beta misses a factor x"))[5:]
    assert slip[0] == ("Hint 3, beta = 2.0: dL/dx ✓, dL/dbeta ✗ yours 0.0067, autograd 0.1541"),\
        slip
    unsummed = run_cells("04_double_backward", after,
                         SwishFunction=_grad_beta_unsummed(solution("SwishFunction")))[5:]
    assert len(unsummed) == 5 and all(line.endswith("dL/dx ✓, dL/dbeta ✓")
                                      for line in unsummed), unsummed


def _grad_beta_unsummed(swish):
    """A grad_beta of x's shape, which the engine sums down to beta's (rule 2 accepts it)."""
    class Unsummed(swish):
        @staticmethod
        def backward(ctx, grad_output):
            grad_x, _ = swish.backward(ctx, grad_output)
            x, beta = ctx.saved_tensors
            s = torch.sigmoid(beta * x)
            return grad_x, grad_output * x * x * s * (1 - s)

    return Unsummed


def test_backward_of_backward_worked_passes_and_slips_are_named():
    """Do the worked grad_g, grad_a, grad_c agree with autograd, and a one-term grad_g and a
    transposed grad_a fail with what is off?"""
    cells = ["grad_g = lambda", "def b(g, a, c):"]
    lines = run_cells("04_double_backward", cells)
    assert len(lines) == 3 and all("✓" in line for line in lines), lines
    slips = run_cells("04_double_backward", cells,
                      grad_g=lambda gbar_a, gbar_c, g, a, c: gbar_a @ c,
                      grad_a=lambda gbar_a, gbar_c, g, a, c: gbar_c @ g.T)
    assert slips[0].startswith("grad_g ✗ 12 of 12 entries differ; furthest off at"), slips
    assert slips[1] == "grad_a ✗ shape (2, 3), not (3, 2): the transpose's shape", slips
