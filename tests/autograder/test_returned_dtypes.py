"""Rule 2's dtype clause, for every exercise: a backward that returns a gradient in another dtype
than its input's (float64 for a float32 input) is caught from what it returned, before the
engine casts it back without a word; one that computes wider and casts back before returning
passes. The same for a custom operator's backward registered with ``register_autograd``."""

import pytest
import torch

from autograder.domain import Domain, Operator, sampled
from autograder.function_contract import rule_reference
from autograder.properties import check_domain
from autograder.returned_dtypes import check_returned_dtypes, registered_backwards
from autograder.spec import Spec
from tests.autograder.rule_answers import (CPU, GATED, OUTER_DOMAIN, SQUARE_DOMAIN, function,
                                          outer)

WIDE = ("gu = g.double() @ v.double() if ctx.needs_input_grad[0] else None\n"
        "gv = g.T @ u if ctx.needs_input_grad[1] else None\n"
        "return gu, gv")
NARROW = ("gu = g @ v if ctx.needs_input_grad[0] else None\n"
          "gv = (g.T.float() @ u.float()) if ctx.needs_input_grad[1] else None\n"
          "return gu, gv")
CAST_BACK = ("gu = (g.double() @ v.double()).to(u.dtype) if ctx.needs_input_grad[0] else None\n"
             "gv = (g.T.double() @ u.double()).to(v.dtype) if ctx.needs_input_grad[1] else None\n"
             "return gu, gv")


def test_the_engine_casts_what_backward_returned():
    """Why the check reads backward's own return: u.grad is float32 whatever backward gave."""
    u = torch.randn(4, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    outer(WIDE).apply(u, v).sum().backward()
    assert u.grad.dtype == torch.float32


def test_a_wider_gradient_is_caught(raises_hint):
    with raises_hint("Outer.backward returned grad_u in float64 for a float32 u: autograd casts "
                     "it back without a word, after the work (and the memory) of float64") as info:
        check_returned_dtypes(OUTER_DOMAIN, outer(WIDE), CPU)
    assert str(info.value).splitlines()[0].endswith(rule_reference("gradients"))
    assert info.value.mistake == "Outer/wrong-gradient-dtype"


def test_a_narrower_gradient_is_caught_for_the_precision_it_lost(raises_hint):
    with raises_hint("Outer.backward returned grad_v in float32 for a float64 v: autograd casts "
                     "it back to float64 without a word, after the precision was lost") as info:
        check_returned_dtypes(OUTER_DOMAIN, outer(NARROW), CPU)
    assert info.value.mistake == "Outer/wrong-gradient-dtype"


@pytest.mark.parametrize("backward", [GATED, CAST_BACK], ids=["in the input's dtype",
                                                              "computed wider, cast back"])
def test_a_gradient_in_the_input_dtype_passes(backward):
    check_returned_dtypes(OUTER_DOMAIN, outer(backward), CPU)


def test_the_generic_battery_runs_it(raises_hint):
    """check_domain, which every exercise's domain goes through (an instructor's
    FunctionExercise too), names a wider gradient that every other check passes."""
    square = function("Square", "ctx.save_for_backward(x)\nreturn x * x",
                      "x, = ctx.saved_tensors\nreturn 2 * x.double() * g.double()")
    with raises_hint("Square.backward returned grad_x in float64 for a float32 x"):
        check_domain(SQUARE_DOMAIN, square, CPU)


def _scaled_square(x: torch.Tensor, scale: float) -> torch.Tensor:
    raise NotImplementedError  # the schema only: each operator above has its own body


SCALED = Spec("scaled_square", ("x", "scale"), lambda x, scale: x * x * scale)
OPERATOR_DOMAIN = Domain(SCALED, sampled(SCALED, {"x": (3, 4)}, {"scale": 0.5}),
                         prepare=Operator)


def _typed(function):
    function.__annotations__ = _scaled_square.__annotations__
    return function


@pytest.fixture(scope="module")
def operators():
    wide = torch.library.custom_op("returned_dtypes_test::wide", mutates_args=())(
        _typed(lambda x, scale: x * x * scale))
    kept = torch.library.custom_op("returned_dtypes_test::kept", mutates_args=())(
        _typed(lambda x, scale: x * x * scale))
    for op, widen in ((wide, True), (kept, False)):
        op.register_fake(lambda x, scale: torch.empty_like(x))
        op.register_autograd(_backward(widen), setup_context=_setup_context)
    return wide, kept


def _setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


def _backward(widen: bool):
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad = 2 * x.double() * grad_output.double() * ctx.scale
        return (grad if widen else grad.to(x.dtype)), None
    return backward


def test_an_operators_registered_backward_is_recorded_before_the_cast(raises_hint, operators):
    wide, kept = operators
    with raises_hint("the backward registered for wide returned grad_x in float64 for a "
                     "float32 x") as info:
        check_returned_dtypes(OPERATOR_DOMAIN, Operator(wide), CPU)
    assert info.value.mistake == "scaled_square/wrong-gradient-dtype"
    check_returned_dtypes(OPERATOR_DOMAIN, Operator(kept), CPU)


def test_the_registered_functions_are_put_back(operators):
    wide, _ = operators
    backward, setup_context = wide._backward_fn, wide._setup_context_fn
    with registered_backwards() as calls:
        x = torch.randn(3, requires_grad=True)
        wide(x, 2.0).sum().backward()
    assert [(name, dtypes) for name, _, dtypes, _ in calls] == [("wide", (torch.float32, None))]
    assert wide._backward_fn is backward and wide._setup_context_fn is setup_context
