"""Lesson 11, linear_cross_entropy in float16 and bfloat16: a loss right in float32 and off in
the input dtype is a proven precision loss, with an id of its own."""

import pytest

from tests.autograder.catalogued import graded_mistake

pytestmark = pytest.mark.lesson11


def test_accumulating_in_the_input_dtype_is_a_named_precision_loss():
    """Does an answer that accumulates in bfloat16 and float16 (right in float32) get the
    narrow-accumulation id, so that insight groups it under a name?"""
    assert graded_mistake("linear_cross_entropy", "accumulating in bfloat16") \
        == "linear_cross_entropy/narrow-accumulation"
