"""Lesson 03's exercises with constants: the per-call check's two calls are far apart (issue 45).

Each call's expected gradients differ from those the other call's constants give, and from 0,
by far more than the tolerance: state one call keeps for the other (a constant in a global)
then changes a gradient the check compares."""

import pytest

from autograder.exercises import EXERCISES
from autograder.per_call import FAR, per_call_separation

pytestmark = pytest.mark.lesson03

WITH_CONSTANTS = [name for name, exercise in EXERCISES.items()
                  if exercise.lesson == "03_ste" and exercise.domain is not None
                  and exercise.domain.per_call and exercise.domain.constants]


def test_the_lesson_has_exercises_with_constants():
    assert WITH_CONSTANTS


@pytest.mark.parametrize("name", WITH_CONSTANTS)
def test_the_per_call_check_tells_its_two_calls_apart(name):
    assert per_call_separation(EXERCISES[name].domain, "cpu") > FAR
