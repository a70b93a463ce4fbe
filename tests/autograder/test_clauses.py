"""Every exercise's contract as data (``Exercise.clauses``): the bullets the learner reads, each
enforced by a check that a wrong answer is shown to fail.

- the lesson's contract list and the clauses are the same bullets, in the same order;
- every check a clause names has a witness, a catalogued wrong answer of the exercise, which
  ``test_catalogue`` fails unless grading fails it through that check (its proven id, or a
  failure in the named case): a check no wrong answer makes fail counts as missing.
"""

import pytest

from autograder.exercises import EXERCISES
from tools import catalogue
from tools.contracts import contract_bullets, normalised


def _marks(exercise: str):
    return [getattr(pytest.mark, f"lesson{EXERCISES[exercise].lesson[:2]}")]


EXERCISES_WITH_CLAUSES = [pytest.param(name, marks=_marks(name), id=name)
                          for name, exercise in EXERCISES.items() if exercise.clauses]
CHECKS = [pytest.param(name, check, witness, marks=_marks(name), id=f"{name}-{check}")
          for name, exercise in EXERCISES.items() for clause in exercise.clauses
          for check, witness in clause.checks.items()]


@pytest.mark.parametrize("name", EXERCISES_WITH_CLAUSES)
def test_the_lesson_lists_the_clauses_as_its_contract(name):
    """Does the lesson's contract list say exactly what the exercise's clauses say?"""
    exercise = EXERCISES[name]
    assert contract_bullets(exercise.lesson, name) == [
        normalised(clause.text) for clause in exercise.clauses]


@pytest.mark.parametrize("name, check, witness", CHECKS)
def test_each_check_of_a_clause_has_a_catalogued_witness(name, check, witness):
    """Is the clause's witness a catalogued wrong answer of the exercise? (test_catalogue grades
    it, and fails it unless it fails through that check.)"""
    assert witness in {entry.name for entry in catalogue.mistakes() if entry.exercise == name}, (
        f"{check!r} names the witness {witness!r}, which the catalogue of {name} does not hold")


# Exercises whose statement does not yet give its contract as one list of graded bullets: each
# fails test_every_exercise_states_its_contract_as_clauses, as an expected failure that turns
# into an error the day its clauses are written (strict), so this list only shrinks.
CONTRACT_STILL_IN_PROSE: dict[str, str] = {}


def _stated(name: str):
    marks = _marks(name)
    if name in CONTRACT_STILL_IN_PROSE:
        marks.append(pytest.mark.xfail(reason=CONTRACT_STILL_IN_PROSE[name], strict=True))
    return pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", [_stated(name) for name in EXERCISES])
def test_every_exercise_states_its_contract_as_clauses(name):
    """Has the exercise a contract the lesson lists and grading enforces, clause by clause?"""
    assert EXERCISES[name].clauses, (
        f"{name} declares no clauses: list its contract's bullets in its Exercise "
        "(autograder.clauses.Clause) and in the lesson, each with a check and a witness")
