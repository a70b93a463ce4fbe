"""Lesson 03's derivation checker: its oracle gives the contract's derivatives."""

import pytest
import torch

from autograder.exercises.lesson03_straight_through.fake_quantize import expected_gradients
from autograder.exercises.lesson03_straight_through.fake_quantize_derivation import (
    fake_quantize_derivatives)

pytestmark = pytest.mark.lesson03


@pytest.mark.parametrize("step", [0.5, 1.5])
def test_the_lessons_derivation_oracle_is_the_contract(step):
    """Does fake_quantize_derivatives, behind the lesson's derivation checker, give each
    element's y, dy/dx and dy/ds as the grader's own expected gradients have them?"""
    v = torch.tensor([-5.3, -4.7, -4.0, -2.7, -0.4, 0.6, 2.3, 3.0, 3.6, 4.8], dtype=torch.float64)
    x = v * step
    y, dy_dx, dy_ds = fake_quantize_derivatives(x, step, -4, 3)
    scale = torch.tensor(step, dtype=torch.float64)
    assert torch.allclose(y, torch.clamp(torch.round(v), -4, 3) * step)
    for i, unit in enumerate(torch.eye(len(v), dtype=torch.float64)):
        grad_x, grad_scale = expected_gradients(x, scale, -4, 3, unit)
        assert dy_dx[i] == grad_x[i] and torch.isclose(dy_ds[i], grad_scale)
