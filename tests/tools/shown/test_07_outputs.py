"""Lesson 07's live checkers: the worked sort backward, ClampInPlace and derivatives from y
pass the lesson's checks, and the placeholder or a plausible slip fails them."""

import torch

from tests.tools.shown.lesson_code import definitions, printed


def test_sort_backward_worked_passes_on_a_row_and_a_batch_and_gather_fails():
    x = torch.tensor([0.3, -1.2, 2.5, 0.9, -0.4])
    values, indices = torch.sort(x)
    grad_values = torch.tensor([10.0, 20.0, 30.0, 40.0, 50.0])
    leaf = x.clone().requires_grad_()
    torch.sort(leaf).values.backward(grad_values)
    for learner, ok in ((False, True), (True, False)):
        backward = definitions("07_outputs", "my_sort_backward", learner=learner)[
            "my_sort_backward"]
        assert torch.equal(backward(grad_values, indices), leaf.grad) == ok
        batched = backward(grad_values.reshape(1, 5), indices.reshape(1, 5))
        assert torch.equal(batched, leaf.grad.reshape(1, 5)) == ok


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
    """Does the from-y checker pass 1 - e^-y for softplus and the three other answers, and fail
    sigmoid(y), the derivative written in x but fed y?"""
    right = {"softplus": lambda y: 1 - torch.exp(-y), "tanh": lambda y: 1 - y ** 2,
             "sin": "y is not enough", "cube": lambda y: 3 * y.abs() ** (2 / 3)}
    lines = _from_y_check(right)
    assert len(lines) == 4 and all(line.startswith("✓") for line in lines), lines
    assert _from_y_check({**right, "softplus": torch.sigmoid})[0].startswith("✗   softplus")
