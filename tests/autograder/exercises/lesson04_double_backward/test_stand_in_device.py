"""Lesson 04: CubeOnce's "as a tensor on x's device", checked without a GPU on a stand-in
device (a CPU tensor that says it is on the meta device)."""

import re

import numpy as np
import pytest
import torch
from torch.autograd.function import once_differentiable

from autograder.errors import GradingError
from autograder.exercises.lesson04_double_backward.double_backward import CUBE_ONCE
from autograder.exercises.lesson04_double_backward.stand_in_device import (
    check_result_on_x_device)


def _cube(local):
    """A marked CubeOnce whose backward makes 3x^2 with ``local(x, grad_output)``."""
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * local(x, grad_output)
    return Cube


def _square(x):
    return 3 * x.detach().cpu().numpy() ** 2


@pytest.mark.parametrize("local", [
    lambda x, g: torch.as_tensor(_square(x)).to(x.device),
    lambda x, g: torch.as_tensor(_square(x), device=g.device, dtype=g.dtype),
    lambda x, g: torch.from_numpy(_square(x)).to(g),
    lambda x, g: torch.tensor(_square(x), device=x.device),
    lambda x, g: x.new_tensor(_square(x)),
    lambda x, g: torch.as_tensor(_square(x)).cuda() if x.is_cuda else torch.as_tensor(_square(x)),
    lambda x, g: torch.as_tensor(_square(x)).to("cuda" if x.is_cuda else "cpu"),
], ids=["to-x-device", "as-tensor-device", "to-like", "tensor-device", "new-tensor", "is-cuda",
        "to-cuda-by-name"])
def test_ways_back_to_x_device_pass(local):
    """Does every way of bringing the NumPy result back to x's device pass?"""
    check_result_on_x_device(_cube(local), CUBE_ONCE)


@pytest.mark.parametrize(("local", "said"), [
    (lambda x, g: torch.as_tensor(_square(x)), "mixed a tensor on x's device with one left"),
    (lambda x, g: torch.as_tensor(3 * x.detach().numpy() ** 2).to(x.device),
     "called .numpy() on a tensor not in CPU memory"),
], ids=["left-on-cpu", "numpy-without-cpu"])
def test_left_on_the_cpu_fails(local, said):
    """Is a local derivative left on the CPU, or read without .cpu(), named?"""
    with pytest.raises(GradingError, match=re.escape(said)):
        check_result_on_x_device(_cube(local), CUBE_ONCE)


def test_cuda_method_restored():
    """Are torch.Tensor.cuda and .to the real ones again after the probe, even when it failed?"""
    cuda, to = torch.Tensor.cuda, torch.Tensor.to
    with pytest.raises(GradingError):
        check_result_on_x_device(_cube(lambda x, g: torch.as_tensor(_square(x))), CUBE_ONCE)
    assert (torch.Tensor.cuda, torch.Tensor.to) == (cuda, to)


def test_result_returned_on_the_cpu_fails():
    """Is a gradient returned on the CPU for an x elsewhere named, though nothing raised?"""
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output.cpu() * torch.as_tensor(np.square(x.cpu().numpy()) * 3)
    with pytest.raises(GradingError, match="returned its gradient on cpu, not on x's device"):
        check_result_on_x_device(Cube, CUBE_ONCE)


def test_torch_tensor_is_left_as_it_was():
    """A sealed kernel fails a grading that leaves torch changed: after the check, does
    torch.Tensor hold no attribute of its own for .to and .cuda (both inherited, as before), the
    solution's grading through real nbgrader having once lost its point to exactly that?"""
    before = dict(vars(torch.Tensor))
    check_result_on_x_device(_cube(lambda x, g: torch.from_numpy(
        3 * x.cpu().numpy() ** 2).to(x.device)), CUBE_ONCE)
    assert dict(vars(torch.Tensor)) == before
