"""shared.call_state: where a call keeps what backward needs."""

import torch

from autograder.exercises.lesson00_template.template import SQUARE
from autograder.exercises.shared.call_state import check_input_version_tracking
from tools.solutions import solution


def test_version_tracking_accepts_an_independent_copy():
    """Is a Square that saves 2 * x (a new tensor, unaffected by later in-place changes) left
    alone by the version check, while one that saves x.data is not?"""

    class SavesTwiceX(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(2 * x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            twice, = ctx.saved_tensors
            return grad_output * twice

    values = {"x": torch.randn(4, dtype=torch.float64)}
    check_input_version_tracking(SavesTwiceX, SQUARE, values)
    check_input_version_tracking(solution("Square"), SQUARE, values)
