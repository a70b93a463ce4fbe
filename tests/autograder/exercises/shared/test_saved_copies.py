"""shared.saved_copies: what forward saves is no copy of an input or the output, and nothing
cast wider than the inputs' dtype where that adds no digit."""

import pytest
import torch

from autograder.checks import Spec, make_inputs, run_forward
from autograder.errors import GradingError
from autograder.exercises.shared.saved_copies import (check_no_copy_saved,
                                                      check_no_copy_saved_strided)

CUBE = Spec("Cube", ("x",), lambda x: x ** 3)


def _cube(save):
    """A right Cube whose forward saves ``save(x, y)`` (a tuple) and whose backward reads x
    from the first saved tensor."""

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x ** 3
            ctx.save_for_backward(*save(x, y))
            return y

        @staticmethod
        def backward(ctx, grad_output):
            x = ctx.saved_tensors[0]
            return (3 * x * x * grad_output).to(grad_output.dtype)

    return Cube


def _check(function, dtype=torch.float64):
    inputs = make_inputs({"x": torch.randn(3, 4, dtype=dtype)})
    check_no_copy_saved(CUBE, run_forward(function, CUBE, inputs), inputs)


@pytest.mark.parametrize("save", [lambda x, y: (x,), lambda x, y: (x, y),
                                  lambda x, y: (x.detach(),), lambda x, y: (x.float(),),
                                  lambda x, y: (x, (x * x).float())],
                         ids=["x", "x and y", "x.detach()", "narrower x", "x and a narrower x*x"])
def test_the_tensors_themselves_and_narrower_casts_pass(save):
    _check(_cube(save))


@pytest.mark.parametrize("save, said", [
    (lambda x, y: (x.clone(),), "saved a copy of x"),
    (lambda x, y: (x, y.clone()), "saved a copy of the output"),
    (lambda x, y: (x.double(),), "saved a wider copy of x")], ids=["x", "y", "wider x"])
def test_a_copy_of_an_input_or_the_output_fails(save, said):
    with pytest.raises(GradingError, match=said) as raised:
        _check(_cube(save), torch.float32)
    assert raised.value.mistake == "Cube/saves-copy"


def test_a_contiguous_copy_of_a_strided_input_fails_only_where_it_copies():
    cube = _cube(lambda x, y: (x.contiguous(),))
    _check(cube)
    with pytest.raises(GradingError, match="saved a contiguous copy of x"):
        check_no_copy_saved_strided(cube, CUBE, {"x": torch.randn(3, 4, dtype=torch.float64)},
                                    "x")


def test_a_tensor_cast_wider_with_no_digit_more_fails():
    cube = _cube(lambda x, y: (x, (x * x).double()))
    with pytest.raises(GradingError, match="float64 tensor of shape") as raised:
        _check(cube, torch.float32)
    assert raised.value.mistake == "Cube/saves-widened"
    _check(cube)  # float64 inputs: the cast is no cast
