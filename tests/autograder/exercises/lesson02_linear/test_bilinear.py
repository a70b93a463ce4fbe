"""Lesson 02's transfer exercise Bilinear: what the catalogue harness does not cover."""

import pytest
import torch
import torch.nn.functional as F

from autograder.exercises.lesson02_linear.bilinear import FEATURES, LEADING_SHAPES, bilinear_values
from autograder.exercises.lesson02_linear.relu_mask import ZERO_BIAS, ZERO_WEIGHT, ZERO_X

pytestmark = pytest.mark.lesson02


def test_no_leading_dimension_is_f_bilinear_own_case():
    """Does F.bilinear itself accept x1 and x2 with no leading dimension, so that the battery's
    1-D case is the reference's and not a stricter rule?"""
    assert () in LEADING_SHAPES
    values = bilinear_values((), 3, 2, "cpu")
    assert F.bilinear(*values.values()).shape == (4,)


def test_both_feature_orders_are_tried():
    """Does the battery try n1 != n2 and n1 == n2?"""
    assert any(n1 != n2 for n1, n2 in FEATURES) and any(n1 == n2 for n1, n2 in FEATURES)


@pytest.mark.parametrize("bias", [None, ZERO_BIAS])
def test_the_fused_relu_case_has_exact_zero_pre_activations(bias):
    """Does FusedLinearReLU's exact-zero case really hold pre-activations equal to 0, with and
    without a bias?"""
    z = F.linear(torch.tensor(ZERO_X, dtype=torch.float64),
                 torch.tensor(ZERO_WEIGHT, dtype=torch.float64),
                 None if bias is None else torch.tensor(bias, dtype=torch.float64))
    assert int((z == 0).sum()) >= 2
