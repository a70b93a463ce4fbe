"""Lesson 04's transfer exercise, NumpyTanh: the conversions its NumPy checks allow, and a
battery that keeps to the CPU."""

import pytest

from autograder.exercises.lesson04_double_backward.numpy_tanh import CONVERSIONS
from tests.autograder.exercises.battery import run
from tools.solutions import solution

pytestmark = pytest.mark.lesson04


def test_conversions_hold_no_arithmetic():
    """Is every op the NumPy checks allow a conversion, copy or view, never arithmetic?"""
    assert not CONVERSIONS & {"mul", "add", "sub", "div", "pow", "tanh", "tanh_backward", "neg"}


def test_numpy_tanh_is_graded_on_the_cpu_whatever_the_device():
    """Does the battery keep to CPU tensors, as the contract says, even when asked for CUDA?"""
    run("NumpyTanh", solution("NumpyTanh"), device="meta")  # a device nothing could run on
