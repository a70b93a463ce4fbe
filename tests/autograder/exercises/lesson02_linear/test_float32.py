"""Lesson 02's float32 probes: which values float32 can give in each order of summation, and a
device whose F.linear adds the bias first, inside fused multiply-adds (addmm on some CPUs and on
a GPU), fails no correct answer while a forward computed in float64 is still named."""

import itertools

import pytest
import torch
import torch.nn.functional as F

from autograder.errors import GradingError
from autograder.exercises.lesson02_linear import float32
from autograder.exercises.lesson02_linear.float32 import (CAST_BEFORE_BIAS, OVERFLOW_IN_FLOAT32,
                                                          ROUNDED_ONCE, bias_after_products)
from autograder.exercises.lesson02_linear.linear import (FUSED_IN_ORDER, FUSED_LINEAR_RELU,
                                                         MY_LINEAR)
from autograder.spec import Spec
from tools.solutions import solution


def _terms(given: dict, row: int = 0) -> list:
    """Entry (row, 0)'s float32 terms: each product, then the bias."""
    x, weight = given["x"][row], given["weight"][0]
    return [torch.tensor(a * b, dtype=torch.float32) for a, b in zip(x, weight)] + \
        [torch.tensor(given["bias"][0], dtype=torch.float32)]


def _every_order(terms: list) -> set:
    """The float32 sums of ``terms`` in every order, one term added at a time."""
    sums = set()
    for order in itertools.permutations(terms):
        total = order[0]
        for term in order[1:]:
            total = total + term
        sums.add(total.item())
    return sums


def test_cast_before_bias_float32_orders_and_the_cast_back_sum_differ():
    *products, bias = _terms(CAST_BEFORE_BIAS)
    for a, b, c in itertools.permutations(products):
        assert ((a + b) + c) + bias == 0 and (a + (b + c)) + bias == 0
    assert 2.0 ** 41 not in _every_order(products + [bias])
    values = {n: torch.tensor(v) for n, v in CAST_BEFORE_BIAS.items()}
    wide = F.linear(values["x"].double(), values["weight"].double()).float() + values["bias"]
    assert wide[0, 0] == 2.0 ** 41


def test_rounded_once_is_one_in_every_float32_order_and_not_in_float64():
    assert _every_order(_terms(ROUNDED_ONCE)) == {1.0}
    exact = sum(torch.tensor(t.item(), dtype=torch.float64) for t in _terms(ROUNDED_ONCE))
    assert exact.float() == 1 + 2.0 ** -23


def _fused_bias_first(x, weight, bias=None):
    """F.linear as addmm runs it on some devices: the accumulator starts at the bias and each
    product is added in a fused multiply-add (one rounding per product; float64 holds every
    product of two float32 numbers exactly)."""
    z = bias.expand(*x.shape[:-1], weight.shape[0]).double()
    for k in range(x.shape[-1]):
        z = (z + x[..., k:k + 1].double() * weight[:, k].double()).to(x.dtype).double()
    return z.to(x.dtype)


FUSED_DEVICE = Spec(MY_LINEAR.name, MY_LINEAR.input_names, _fused_bias_first)
IN_ORDER = bias_after_products(MY_LINEAR, F.linear)


def test_the_fused_device_differs_where_the_probes_say():
    values = float32.float32_values(OVERFLOW_IN_FLOAT32, "cpu")
    wide = F.linear(*(v.double() for v in values.values())).float()
    assert _fused_bias_first(**values)[0, 0] == wide[0, 0] < float("inf")
    assert (F.linear(values["x"], values["weight"]) + values["bias"])[0, 0] == float("inf")


@pytest.mark.parametrize("check", [
    lambda f: float32.check_float32_rounded_once(f, FUSED_DEVICE, IN_ORDER, "cpu", ROUNDED_ONCE),
    lambda f: float32.check_float32_overflow(f, FUSED_DEVICE, IN_ORDER, "cpu",
                                             OVERFLOW_IN_FLOAT32, "x @ weight.T"),
    lambda f: float32.check_float32_bias_order(f, FUSED_DEVICE, IN_ORDER, "cpu", lambda z: z,
                                               float32.BIAS_ORDER),
    lambda f: float32.check_float32_cast_before_bias(f, FUSED_DEVICE, IN_ORDER, "cpu",
                                                     CAST_BEFORE_BIAS, F.linear),
], ids=["rounded-once", "overflow", "bias-order", "cast-before-bias"])
def test_the_solution_passes_on_a_device_that_adds_the_bias_first(check):
    check(solution("MyLinearFunction"))


class _BiasFirstAnswer(torch.autograd.Function):
    """A forward that adds the bias as the fused device's F.linear does."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        return _fused_bias_first(x, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError


def test_an_answer_that_matches_the_device_passes_where_the_order_differs():
    float32.check_float32_overflow(_BiasFirstAnswer, FUSED_DEVICE, IN_ORDER, "cpu",
                                   OVERFLOW_IN_FLOAT32, "x @ weight.T")


class _Float64Answer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        return F.linear(x.double(), weight.double(), bias.double()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError


@pytest.mark.parametrize("reference", [MY_LINEAR, FUSED_DEVICE], ids=["this-device", "fused"])
def test_a_float64_forward_is_named_whatever_the_device_order(reference):
    with pytest.raises(GradingError, match="computes in a wider dtype") as raised:
        float32.check_float32_rounded_once(_Float64Answer, reference, IN_ORDER, "cpu",
                                           ROUNDED_ONCE)
    assert raised.value.mistake == "MyLinearFunction/computes-in-wider-dtype"


def test_fused_linear_relu_solution_passes_the_zero_probe_on_a_fused_device():
    device = Spec(FUSED_LINEAR_RELU.name, FUSED_LINEAR_RELU.input_names,
                  lambda x, weight, bias=None: torch.relu(_fused_bias_first(x, weight, bias)))
    float32.check_float32_zero_pre_activation(solution("FusedLinearReLU"), device,
                                              FUSED_IN_ORDER, "cpu")
