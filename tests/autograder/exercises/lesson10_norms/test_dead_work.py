"""Lesson 10: the liveness read of backward's logged ops (norm_dead_work) and the half-precision
'rounded once' rule (norm_module_eps.rounded_once)."""

import pytest
import torch
from torch import nn

from autograder.exercises.lesson10_norms.norm_checks import Op
from autograder.exercises.lesson10_norms.norm_dead_work import dead_ops
from autograder.exercises.lesson10_norms.norm_module_eps import exact_output, rounded_once

pytestmark = pytest.mark.lesson10


def _op(name, reads, writes):
    return Op(name, 0, [6], [6], 0, False, frozenset(reads), frozenset(writes))


def test_an_op_no_returned_gradient_reads_is_dead():
    # go * x_hat (storage 3) is read by nothing; g = go * w (4) feeds grad_x (5)
    ops = [_op("mul", {1, 2}, {3}), _op("mul", {1}, {4}), _op("mul", {4, 2}, {5})]
    assert [op.writes for op in dead_ops(ops, {5})] == [frozenset({3})]


def test_a_buffer_reused_in_place_or_with_out_stays_live():
    # the solution's buffer: (x - mean) * go, read for grad_x, then overwritten with out=
    ops = [_op("sub", {1, 2}, {3}), _op("mul_", {3, 9}, {3}), _op("mv", {3, 7}, {4}),
           _op("sub", {1, 2, 3}, {3}), _op("mul_", {3, 4}, {3})]
    assert dead_ops(ops, {3}) == []


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rounded_once_takes_float32_orders_and_refuses_a_second_rounding(dtype):
    torch.manual_seed(0)
    reference = nn.RMSNorm(6, eps=1e-6).to(dtype)
    with torch.no_grad():
        reference.weight.copy_(1 + 0.5 * torch.randn(6))
    x = torch.randn(64, 6).to(dtype)
    weight = reference.weight.detach()
    with torch.no_grad():
        expected = reference(x).double()
    exact = exact_output(reference, x)
    wide = x.float()
    rstd = torch.rsqrt(wide.square().mean(-1, keepdim=True) + 1e-6)
    for once in (wide * rstd * weight.float(), wide * (rstd * weight.float()),
                 wide / torch.sqrt((wide * wide).sum(-1, keepdim=True) / 6 + 1e-6)
                 * weight.float()):
        assert rounded_once(once.to(dtype).double(), expected, dtype, exact)
    twice = (wide * rstd).to(dtype) * weight
    assert not rounded_once(twice.double(), expected, dtype, exact)
