"""The per-call check's two calls: which constants they take, and how far apart that puts them."""

import dataclasses

import pytest
import torch

from autograder.checks import Spec
from autograder.domain import Constant, Domain, sampled
from autograder.errors import GradingError
from autograder.per_call import FAR, check_per_call, per_call_constants, per_call_separation

SCALED = Spec("Scaled", ("x", "c"), lambda x, c: c * x)
ONE_HOT = Spec("OneHotSoftmax", ("x", "tau"), lambda x, tau: torch.softmax(x / tau, -1))


def _domain(spec, low, high, scale=1.0):
    return Domain(spec, sampled(spec, {"x": (3, 4)}, {spec.input_names[1]: 1.0}, scale=scale),
                  constants={spec.input_names[1]: Constant(low, high, "a constant")})


def test_the_calls_take_both_ends_of_each_range_by_default():
    assert per_call_constants(_domain(SCALED, -2.0, 3.0)) == ({"c": -2.0}, {"c": 3.0})


def test_the_calls_take_the_domain_s_constants_where_it_names_them():
    domain = dataclasses.replace(_domain(SCALED, -2.0, 3.0),
                                 per_call_constants=({"c": 0.5}, {"c": 2.0}))
    assert per_call_constants(domain) == ({"c": 0.5}, {"c": 2.0})


def test_a_constant_that_scales_the_gradient_separates_the_calls():
    assert per_call_separation(_domain(SCALED, -2.0, 3.0), "cpu") > FAR


def test_a_softmax_one_hot_at_one_end_does_not_separate_the_calls():
    """At tau = 0.01 a softmax of logits a few units apart is one-hot: its gradient is almost 0,
    and so is any multiple of it, whatever tau a backward divides by."""
    assert per_call_separation(_domain(ONE_HOT, 0.01, 100.0, scale=30.0), "cpu") < 1


def test_no_constants_leave_nothing_to_separate():
    domain = Domain(SCALED, sampled(SCALED, {"x": (3,)}, {"c": 1.0}))
    assert per_call_separation(domain, "cpu") == float("inf")


# The check itself: two pairs of calls, the second on the same input tensors, and the classes'
# attributes compared by what they hold.

_KEPT: dict = {}


def _scaled(forward, backward, **attributes):
    """A Function c * x of ``SCALED``, its forward and backward given as functions."""
    return type("Scaled", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward),
                 "__module__": __name__, **attributes})


def _right_forward(ctx, x, c):
    ctx.c = c
    return c * x


def _right_backward(ctx, grad_output):
    return grad_output * ctx.c, None


def _keyed_forward(ctx, x, c):  # c kept in a global under the input's id
    ctx.key = id(x)
    _KEPT[id(x)] = c
    return c * x


def _keyed_backward(ctx, grad_output):
    return grad_output * _KEPT[ctx.key], None


def _popped_backward(ctx, grad_output):  # the entry consumed: a second call on x finds none
    return grad_output * _KEPT.pop(ctx.key), None


def test_a_right_function_passes_both_pairs_of_calls():
    check_per_call(_domain(SCALED, -2.0, 3.0), _scaled(_right_forward, _right_backward), "cpu",
                   "per call")


def test_state_under_the_input_s_id_is_named_by_the_calls_on_the_same_input():
    """Two calls on different inputs have different keys: only the same input shows it."""
    with pytest.raises(GradingError) as error:
        check_per_call(_domain(SCALED, -2.0, 3.0), _scaled(_keyed_forward, _keyed_backward),
                       "cpu", "per call")
    assert error.value.mistake == "Scaled/state-shared-between-calls"
    assert error.value.hint.startswith("Scaled's backward used another call's c: with two calls "
                                       "on the same input tensors in one graph")


def test_without_constants_state_one_call_consumes_is_named():
    """No constants: the same call twice, where state keyed by the input finds the same values
    (harmless), but state one call consumes is gone for the other."""
    domain = Domain(SCALED, sampled(SCALED, {"x": (3,)}, {"c": 1.5}))
    check_per_call(domain, _scaled(_keyed_forward, _keyed_backward), "cpu", "per call")
    with pytest.raises(GradingError) as error:
        check_per_call(domain, _scaled(_keyed_forward, _popped_backward), "cpu", "per call")
    assert error.value.mistake == "Scaled/state-shared-between-calls"


def _dict_forward(ctx, x, c):
    ctx.key = id(x)
    type(ctx)._forward_cls.kept[id(x)] = c
    return c * x


def test_a_dict_on_the_class_keyed_by_the_input_is_named():
    cls = _scaled(_dict_forward, lambda ctx, g: (g * type(ctx)._forward_cls.kept[ctx.key], None),
                  kept={})
    with pytest.raises(GradingError) as error:
        check_per_call(_domain(SCALED, -2.0, 3.0), cls, "cpu", "per call")
    assert error.value.mistake == "Scaled/state-on-class"
