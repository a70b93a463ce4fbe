"""A fixed sample of real mutants, one per lesson, the operator families in turn: grading kills
each, or its lesson lists it as an equivalent (``make mutants`` runs them all)."""

import pytest

from autograder.exercises import EXERCISES
from tools.mutants.equivalents import listed
from tools.mutants.grading import FAILED, grade
from tools.mutants.operators import FAMILIES
from tools.mutants.selection import sample

LESSONS = sorted({spec.lesson for spec in EXERCISES.values()})


def test_the_sample_covers_every_family():
    """Do the lessons' sampled mutants cover every operator family?"""
    assert {sample(lesson)[1].family for lesson in LESSONS} == set(FAMILIES)


@pytest.mark.parametrize("lesson", [pytest.param(lesson, marks=getattr(pytest.mark,
                                                                       f"lesson{lesson[:2]}"))
                                    for lesson in LESSONS])
def test_the_sampled_mutant_is_killed_or_a_listed_equivalent(lesson):
    """Does grading fail this lesson's sampled mutant, or is it listed with its reason?"""
    answer, mutant = sample(lesson)
    outcome = grade((answer, mutant))
    assert outcome.status in FAILED or mutant.key in listed([mutant.exercise]), (
        f"{mutant.family}/{mutant.operator} survives grading and is not listed as an "
        f"equivalent:\n{mutant.diff(answer)}")
