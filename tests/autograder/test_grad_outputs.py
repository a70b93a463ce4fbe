"""grad_output is drawn from a stream of its own: never the example input of the same seed and
shape, so a backward that reads x where it should read grad_output is caught."""

import pytest
import torch

from autograder.checks import Spec, check_values_and_gradients
from autograder.errors import GradingError
from autograder.exercise import sample
from autograder.grad_outputs import grad_output_generator


@pytest.mark.parametrize("seed", range(4))
def test_grad_output_is_not_the_input_drawn_with_the_same_seed(seed):
    x = sample((3, 4), "cpu", seed=seed)
    grad_output = torch.randn((3, 4), generator=grad_output_generator(seed), dtype=x.dtype)
    assert not torch.isclose(x, grad_output).any()


class DoubleReadingX(torch.autograd.Function):
    """2x, whose backward multiplies the saved x where grad_output belongs."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 2 * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x


def test_a_backward_reading_x_for_grad_output_fails_at_the_example_input():
    spec = Spec("Double", ("x",), lambda x: 2 * x)
    with pytest.raises(GradingError, match="gradient for x is wrong"):
        check_values_and_gradients(DoubleReadingX, spec, {"x": sample((5,), "cpu")})
