"""The per-call check's two calls: which constants they take, and how far apart that puts them."""

import dataclasses

import torch

from autograder.domain import Constant, Domain, sampled
from autograder.checks import Spec
from autograder.per_call import FAR, per_call_constants, per_call_separation

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
