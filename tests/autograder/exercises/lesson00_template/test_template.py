"""Lesson 00 (template): what the catalogue harness (tests/autograder/test_catalogue.py) does
not cover for Square and WeightedSum."""

import pytest
import torch

from autograder.exercises import EXERCISES
from autograder.exercises.lesson00_template.template import SHAPES
from tests.autograder.catalogued import mistake
from tests.autograder.exercises.battery import run
from tools.solutions import solution

pytestmark = pytest.mark.lesson00

NAMES = ["Square", "WeightedSum"]


def test_zero_dimensional_shape_is_graded_last():
    """Is 0-d graded, and after a shape whose hint can tell a factor from a sign?"""
    assert () in SHAPES and SHAPES[0] != () and SHAPES[-1] == ()


def test_ctx_tensor_caught_on_every_grading_device(raises_hint):
    """Storing x on ctx gives the right numbers: does grading still name it?"""
    with raises_hint("Square stores a tensor as ctx.x"):
        EXERCISES["Square"].run(mistake("Square", "tensor on ctx"))


def test_weighted_sum_swapped_weights(raises_hint):
    """Are swapped weights (w2 for x1) named as such, with the weights that show it?"""
    with raises_hint("the weights are swapped: with w1=0.5 and w2=-2.0 grad_x1 is w2 * "
                     "grad_output"):
        run("WeightedSum", mistake("WeightedSum", "swapped weights"))


@pytest.mark.parametrize("name", NAMES)
def test_not_a_function(name, raises_hint):
    """Is a plain function named for what it is?"""
    with raises_hint(f"{name} must be a class deriving from torch.autograd.Function, got function"):
        run(name, mistake("Square", "a plain function"))


def test_instance_instead_of_class_warns(raises_hint):
    """Does creating an instance warn (PyTorch deprecates it), and is it named?"""
    with pytest.warns(DeprecationWarning):
        instance = solution("Square")()
    with raises_hint("Square is an instance: pass the class itself and call Square.apply(...)"):
        run("Square", instance)


class _Stub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        raise NotImplementedError()

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


class _BackwardStub(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError()


@pytest.mark.parametrize("stub", [_Stub, _BackwardStub])
def test_stub_raises_not_implemented(stub):
    """Does an unfinished stub raise NotImplementedError itself, as learners' copies expect?"""
    with pytest.raises(NotImplementedError):
        run("Square", stub)


@pytest.mark.parametrize("name", ["torch.tensor(ctx.w1) in backward, a float32 constant",
                                  "torch.tensor(w1) in forward, a float32 constant"])
def test_weight_rounded_through_float32_is_proven(name, raises_hint):
    """Is a weight made into a float32 tensor (torch.tensor(w) without dtype=), right to
    float32's precision only, named by the battery itself, with the rounded weight?"""
    with raises_hint("is what w1 = 0.10000000149011612") as info:
        run("WeightedSum", mistake("WeightedSum", name))
    assert info.value.mistake == "WeightedSum/float32-constant"


def test_weights_in_the_inputs_dtype_are_not_blamed():
    """Is a weight made into a tensor of the input's dtype, which keeps every digit, left
    alone by the float32-constant probe?"""
    from autograder.exercises.lesson00_template.template import check_weights_not_rounded
    from tools.catalogue import load
    from tools.catalogue.lesson00_template.answers import _weighted
    check_weights_not_rounded(load("WeightedSum", _weighted(
        "        w1 = torch.tensor(ctx.w1, dtype=grad_output.dtype)\n"
        "        w2 = torch.tensor(ctx.w2, dtype=grad_output.dtype)\n"
        "        return grad_output * w1, grad_output * w2, None, None")), torch.device("cpu"))


def test_square_gets_a_non_contiguous_grad_output(raises_hint):
    """Is a backward that flattens grad_output with .view(-1), right for a contiguous one, run
    on a transposed grad_output, and told which?"""
    with raises_hint("(with a transposed grad_output of shape (3, 4), strides (1, 3))"):
        run("Square", mistake("Square", "grad_output flattened with .view(-1)"))


@pytest.mark.parametrize("forward", [
    "        ctx.w1, ctx.w2 = torch.tensor(w1), torch.tensor(w2)\n",
    "        ctx.w = (torch.tensor(w1, dtype=x1.dtype), torch.tensor(w2, dtype=x1.dtype))\n"])
def test_a_weight_made_into_a_tensor_on_ctx_is_told_to_stay_a_float(forward, raises_hint):
    """Is a weight kept on ctx as a 0-d tensor (in float32 or the inputs' dtype, alone or in a
    tuple) told that it is a Python float to keep as one, and not sent to save_for_backward,
    where the float32 tensor would stay?"""
    from tools.catalogue import load
    from tools.catalogue.lesson00_template.answers import _weighted
    backward = ("        w1, w2 = (ctx.w1, ctx.w2) if hasattr(ctx, 'w1') else ctx.w\n"
                "        return grad_output * w1, grad_output * w2, None, None")
    with raises_hint("w1 is a Python float: keep it as one") as info:
        run("WeightedSum", load("WeightedSum", _weighted(
            backward, forward + "        return w1 * x1 + w2 * x2")))
    assert info.value.mistake == "WeightedSum/weight-as-tensor-on-ctx"
    assert "save_for_backward" not in str(info.value).splitlines()[0]


def test_a_zero_dimensional_input_on_ctx_is_not_taken_for_a_weight():
    """Is a 0-d input x1 kept on ctx (it requires grad), even one equal to w1, left to the
    shared tensor-on-ctx check rather than called a weight?"""
    from autograder.checks import make_inputs, run_forward
    from autograder.exercises.lesson00_template.template import (WEIGHTED_SUM, _weighted_values,
                                               check_weights_kept_as_floats)
    from tools.catalogue import load
    from tools.catalogue.lesson00_template.answers import _weighted
    function = load("WeightedSum", _weighted(
        "        return grad_output * ctx.w1, grad_output * ctx.w2, None, None",
        "        ctx.w1, ctx.w2, ctx.x1 = w1, w2, x1\n        return w1 * x1 + w2 * x2"))
    values = _weighted_values((), "cpu", w1=0.5, w2=-2.0)
    values["x1"] = torch.tensor(0.5, dtype=torch.float64)  # an input equal to w1
    forward = run_forward(function, WEIGHTED_SUM, make_inputs(values))
    assert "ctx.x1" in forward.ctx_tensor_attributes
    check_weights_kept_as_floats(forward, values)


@pytest.mark.parametrize("name", ["Square", "WeightedSum"])
def test_a_forgotten_grad_output_is_led_to_the_chain_rule_not_given_it(name, raises_hint):
    """Issue 48: does the hint ask a question that leads to the chain rule, without writing
    the product the lesson asks the learner to derive?"""
    with raises_hint(f"{name}.backward ignores grad_output") as info:
        EXERCISES[name].run(mistake(name, "forgets grad_output"))
    first = str(info.value).splitlines()[0]
    assert "?" in first and "grad_x = grad_output *" not in first and "sum over" not in first


class _SquareCut(torch.autograd.Function):
    """The gradient set to 0 where |x| < 1e-4: right on every sample of (3, 4), wrong on the
    few entries of (256, 512) below 1e-4; the extremes check names it first when graded."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.where(x.abs() < 1e-4, torch.zeros_like(x), 2 * x)


class _SquareNarrowed(torch.autograd.Function):
    """Float32 arithmetic above 10,000 entries: a size switch."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if x.numel() > 10_000:
            return (2 * x.float() * grad_output.float()).to(x.dtype)
        return 2 * x * grad_output


@pytest.mark.parametrize("function, said, named", [
    (_SquareCut, "and as far off with those values alone (x of shape (1,)): it is the values, "
                 "not the size", "Square/wrong-at-some-values"),
    (_SquareNarrowed, "does your code narrow the dtype, or switch method, above some size?",
     "Square/narrows-large-input")])
def test_a_large_input_failure_says_whether_size_or_values(function, said, named):
    """Is a failure at the large size called a size switch only when the worst entry's values,
    re-run alone, come out right (review 76g: a threshold on |x| was called a size switch)?"""
    from autograder.errors import GradingError
    from autograder.exercises.lesson00_template.large_inputs import check_large_sizes
    from autograder.exercises.lesson00_template.square_extremes import SQUARE
    from autograder.exercise import sample
    with pytest.raises(GradingError) as raised:
        check_large_sizes(function, SQUARE, {"x": sample((3, 4), "cpu", seed=8)},
                          {"x": sample((256, 512), "cpu", seed=9)}, "x of shape (256, 512)",
                          alone=lambda values, what, index: [
                              ({"x": values["x"][index].reshape(1)}, "x of shape (1,)")])
    assert said in str(raised.value).splitlines()[0]
    assert raised.value.mistake == named
