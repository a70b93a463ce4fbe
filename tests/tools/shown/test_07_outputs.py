"""Lesson 07's live checkers: the worked sort backward, ClampInPlace and derivatives from y
pass the lesson's checks, and the placeholder or a plausible slip fails them."""

import torch

from tests.tools.shown.lesson_code import definitions, printed


def _sort_check(backward=None, learner: bool = False) -> list[str]:
    """The verdict lines check_sort_backward prints for ``backward`` (by default the lesson's
    my_sort_backward, worked or the learner's placeholder)."""
    lesson = definitions("07_outputs", "first_line", "check_sort_backward", "my_sort_backward",
                         learner=learner)
    lines = printed(lesson["check_sort_backward"], backward or lesson["my_sort_backward"])
    return [line for line in lines if line.startswith(("✓", "✗"))]


def test_sort_backward_checker_checks_one_row_only():
    """Does the worked answer pass the one-row checker and the first guess (a gather) fail it,
    while the checker leaves the batch to Exercise 1: whole-tensor indexing and a 1-D loop,
    right on one row, pass it (grading names them on a batch)?"""
    assert _sort_check() == ["✓ one row, shape (5,)"]
    assert _sort_check(learner=True) == ["✗ one row, shape (5,)"]

    def every_row(grad_values, indices):
        grad_x = torch.zeros_like(grad_values)
        grad_x[..., indices] = grad_values
        return grad_x

    def loop(grad_values, indices):
        grad_x = torch.zeros_like(grad_values)
        for j in range(len(indices)):
            grad_x[indices[j]] = grad_values[j]
        return grad_x

    assert _sort_check(every_row) == ["✓ one row, shape (5,)"]
    assert _sort_check(loop) == ["✓ one row, shape (5,)"]

    def raises(grad_values, indices):
        return grad_values[indices[99]]

    assert _sort_check(raises)[0].startswith("✗ one row, shape (5,): your code raised IndexError")


def _clamp_check(clamp: type) -> list[str]:
    """What check_clamp_in_place prints for ``clamp``."""
    lesson = definitions("07_outputs", "first_line", "check_clamp_in_place", ClampInPlace=clamp)
    return printed(lesson["check_clamp_in_place"])


def _clamp(learner: bool = False) -> type:
    return definitions("07_outputs", "ClampInPlace", learner=learner)["ClampInPlace"]


def test_clamp_worked_passes_its_check_and_a_tie_sent_to_the_bound_fails():
    assert _clamp_check(_clamp())[0].startswith("✓ gradients of x, lo and hi match")
    assert _clamp_check(_clamp(learner=True)) == ["ClampInPlace is not written yet"]

    class TieToTheBound(_clamp()):
        @staticmethod
        def forward(ctx, x, lo, hi):
            where = (x >= hi).to(torch.int8) - (x <= lo).to(torch.int8)
            x.clamp_(lo, hi)
            ctx.mark_dirty(x)
            ctx.save_for_backward(where)
            return x

    assert _clamp_check(TieToTheBound)[0].startswith("✗ the gradient of x")


def _from_y_check(answers: dict) -> list[str]:
    """What check_derivatives_from_y prints for ``answers``."""
    lesson = definitions("07_outputs", "first_line", "check_derivatives_from_y")
    return printed(lesson["check_derivatives_from_y"], answers)


def test_derivative_from_y_check_passes_softplus_and_fails_sigmoid_of_y():
    """Does the from-y checker pass 1 - e^-y for softplus and the three other answers, fail
    sigmoid(y), the derivative written in x but fed y, and leave the clamp to Exercise 3?"""
    right = {"softplus": lambda y: 1 - torch.exp(-y), "tanh": lambda y: 1 - y ** 2,
             "sin": "y is not enough", "cube": lambda y: 3 * y.abs() ** (2 / 3)}
    lines = _from_y_check(right)
    assert len(lines) == 4 and all(line.startswith("✓") for line in lines), lines
    assert _from_y_check({**right, "softplus": torch.sigmoid})[0].startswith("✗   softplus")
    lesson = definitions("07_outputs", "my_derivative_from_y", learner=True)
    assert "relu" not in lesson["my_derivative_from_y"]  # ReLUInPlace's decision, not shown
