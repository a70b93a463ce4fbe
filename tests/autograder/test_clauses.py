"""Every exercise's contract as data (``tools.catalogue.contract_of``: its lesson's catalogue
``contracts`` module): the bullets the learner reads, each enforced by a check that a wrong answer
is shown to fail; and the course's Function contract (``autograder.function_contract``), stated
once and enforced in every exercise (its rules' checks).

- the lesson's contract list and the clauses are the same bullets, in the same order;
- every check a clause or a rule names has a witness, a catalogued wrong answer of the exercise,
  which ``test_catalogue`` fails unless grading fails it through that check (its proven id, or
  a failure in the named case): a check no wrong answer makes fail counts as missing;
- a rewritten exercise states only what it decides: at most four bullets, after a link to the
  Function contract; the page's headings are its rules, and the course and solutions carry it.
"""

import re

import pytest

from autograder.exercises import EXERCISES
from autograder.function_contract import PAGE, RULE_KEYS, RULES
from grader.lessons import COURSE, LESSONS, SOLUTIONS
from tools import catalogue
from tools.catalogue import contract_of
from tools.contracts import contract_bullets, normalised, statement

MOST_BULLETS = 4


def _marks(exercise: str):
    return [getattr(pytest.mark, f"lesson{EXERCISES[exercise].lesson[:2]}")]


EXERCISES_WITH_CLAUSES = [pytest.param(name, marks=_marks(name), id=name)
                          for name in EXERCISES if contract_of(name)[0]]
WITH_CHECKS = [pytest.param(name, marks=_marks(name), id=name) for name in EXERCISES
               if contract_of(name)[0] or any(contract_of(name)[1].values())]


@pytest.mark.parametrize("name", EXERCISES_WITH_CLAUSES)
def test_the_lesson_lists_the_clauses_as_its_contract(name):
    """Does the lesson's contract list say exactly what the exercise's clauses say?"""
    assert contract_bullets(EXERCISES[name].lesson, name) == [
        normalised(clause.text) for clause in contract_of(name)[0]]


@pytest.mark.parametrize("name", WITH_CHECKS)
def test_each_check_of_a_clause_has_a_catalogued_witness(name):
    """Is the witness of each check (of a clause or a rule) a catalogued wrong answer of the
    exercise? (test_catalogue grades it, and fails it unless it fails through that check.)"""
    clauses, rules = contract_of(name)
    held = {entry.name for entry in catalogue.mistakes() if entry.exercise == name}
    missing = [f"{check!r} names the witness {witness!r}"
               for checks in [clause.checks for clause in clauses] + list(rules.values())
               for check, witness in checks.items() if witness not in held]
    assert not missing, f"the catalogue of {name} holds no such answer: " + "; ".join(missing)


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
    assert contract_of(name)[0], (
        f"{name} declares no clauses: list its contract's bullets in its lesson's catalogue "
        "contracts module (tools.catalogue.clauses.Clause) and in the lesson, each with a check "
        "and a witness")


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in EXERCISES])
def test_an_exercise_states_only_what_it_decides(name):
    """At most four bullets of its own, after a link to the Function contract, and its
    clauses' checks apart from the rules' (each rule's checks under its contract's RULES)?"""
    exercise = EXERCISES[name]
    bullets = contract_bullets(exercise.lesson, name)
    assert len(bullets) <= MOST_BULLETS, (
        f"{name}'s contract has {len(bullets)} bullets: keep what the exercise decides (what it "
        f"saves, its accuracy, its memory or work bound) in at most {MOST_BULLETS}")
    assert f"]({PAGE})" in statement(exercise.lesson, name), (
        f"{name}'s statement does not link to the Function contract ({PAGE})")
    assert contract_of(name)[1], f"{name} names no check for any rule of the Function contract"


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in EXERCISES])
def test_every_rule_an_exercise_enforces_is_a_rule_of_the_contract(name):
    unknown = set(contract_of(name)[1]) - set(RULE_KEYS)
    assert not unknown, f"{name} enforces rules {sorted(unknown)}, not among {RULE_KEYS}"


def test_the_contract_page_states_each_rule_in_order():
    """Are the page's numbered headings the rules, word for word, in order?"""
    headings = re.findall(r"^## (\d+)\. (.+)$", (LESSONS / PAGE).read_text(), re.MULTILINE)
    assert headings == [(str(rule.number), rule.title) for rule in RULES]


def test_the_course_and_solutions_carry_the_contract_page():
    """Are course/ and solutions/ copies of lessons/function_contract.md (`make notebooks`)?"""
    source = (LESSONS / PAGE).read_text()
    for folder in (COURSE, SOLUTIONS):
        assert (folder / PAGE).read_text() == source, f"{folder.name}/{PAGE} is stale"
