"""Every answer with a known verdict, through the two calls a notebook makes.

- each lesson's own solution (``tools.solutions``) and every correct-but-unusual answer of the
  catalogue pass ``self_check`` and ``grade``;
- every catalogued mistake fails the visible ``self_check`` and ``grade`` with the same first
  line, which holds its hint (one battery: a green self-check is a promise).

Both calls run ``Exercise.run``, the exercise's one battery; here it runs once per answer, and
the second call gets the first one's outcome back (``battery_once``): the test still sees each
call reach that battery with the same answer and report the same outcome, in half the time.

`make test` (CI) runs every solution, each exercise's first unusual answer, every mistake that
goes through real nbgrader grading or witnesses one of its exercise's own clauses, and each
lesson's first witness of each Function-contract rule (the rules are checked by the generic
layer, one code for every exercise): each exercise's own checks, the rules in every lesson, and
each exercise's acceptance of unusual answers, proved in every tier. The exhaustive tier (`make
test-all`, and `make mutants`) runs every entry: 2,500 batteries are more than CI's 15 minutes
on two cores can hold beside the rest.

Self-check times are not asserted (timings are not tests): ``make bench`` prints each
exercise's, measured after a warm-up call.
"""

import contextlib
import io
import pkgutil
import re
import warnings
from collections import Counter
from pathlib import Path

import pytest

from autograder.contract import EACH_INPUT_ALONE, recording
from autograder.errors import GradingError
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from autograder.failure import headline
from autograder import grading
from autograder.grading import classified_verdict, self_check, verdict
from tools import catalogue
from tools.catalogue import contract_of
from tools.catalogue.clauses import enforced
from tools.solutions import solution


def witnessed_checks(entry) -> list[str]:
    """The checks of ``entry``'s exercise (its clauses' and its rules') whose witness ``entry``
    is."""
    clauses, rules = contract_of(entry.exercise)
    return [check for checks in [clause.checks for clause in clauses] + list(rules.values())
            for check, witness in checks.items() if witness == entry.name]


def _witnessed(entry) -> tuple[bool, set[str]]:
    """(``entry`` witnesses one of its exercise's own clauses, the Function-contract rules it
    witnesses a check of)."""
    clauses, rules = contract_of(entry.exercise)
    own = any(witness == entry.name for clause in clauses for witness in clause.checks.values())
    return own, {rule for rule, checks in rules.items() if entry.name in checks.values()}


def _marks(exercise: str):
    return [getattr(pytest.mark, f"lesson{EXERCISES[exercise].lesson[:2]}")]


# Lessons whose catalogued answers run in the exhaustive tier (`make test-all`), not in `make
# test`: lesson 13's battery interprets Triton kernels, 5 to 15 s an answer on a CPU, which CI's
# time cannot hold for all of them. Its own solutions pass in both tiers.
EXHAUSTIVE_LESSONS = ("13_kernels",)
# of each exercise, the first in catalogue order: with the lesson's own solution, two correct
# answers of every exercise in every tier (two unusual ones kept CI past 13 minutes)
UNUSUAL_IN_EVERY_TIER = 1


def _in_every_tier(entry, earlier: Counter) -> bool:
    """Does ``entry`` run in `make test` too: a mistake handed in to nbgrader, or that witnesses
    one of its exercise's own clauses, or the lesson's first witness of a Function-contract rule
    (the rules' checks are the generic layer's, one code for every exercise: every exercise's
    witnesses of them run in the exhaustive tier), or one of its exercise's first unusual
    answers?"""
    lesson = EXERCISES[entry.exercise].lesson
    if lesson in EXHAUSTIVE_LESSONS:
        return False
    if isinstance(entry, catalogue.Mistake):
        own, rules = _witnessed(entry)
        first = {rule for rule in rules if (lesson, rule) not in earlier}
        earlier.update((lesson, rule) for rule in rules)
        return entry.nbgrader or own or bool(first)
    earlier[entry.exercise] += 1
    return earlier[entry.exercise] <= UNUSUAL_IN_EVERY_TIER


def _params(entries):
    earlier = Counter()
    return [pytest.param(entry, id=f"{entry.exercise}-{entry.name}", marks=[
        *_marks(entry.exercise),
        *([] if _in_every_tier(entry, earlier) else [pytest.mark.exhaustive])])
        for entry in entries]


def _quiet(call, *args):
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args)


@pytest.fixture
def on(monkeypatch):
    """``on(device)``: grade as a machine with that device does: CPU alone, or CPU then CUDA
    where there is a GPU (the hidden tests add a CUDA run; they never drop the CPU one)."""
    def grade_on(device):
        if device.type == "cpu":
            monkeypatch.setenv("AUTOGRADER_DEVICE", "cpu")
        else:
            monkeypatch.delenv("AUTOGRADER_DEVICE", raising=False)
    return grade_on


@pytest.fixture
def battery_once(monkeypatch):
    """The (exercise, answer) of every call of a battery, which runs on the first call only: a
    later call with the same answer gets that call's outcome back (its devices, or the very
    exception it raised)."""
    calls, outcomes, run = [], {}, Exercise.run

    def run_once(exercise, submission):
        calls.append((exercise.name, submission))
        key = (exercise.name, id(submission))
        if key not in outcomes:
            try:
                outcomes[key] = (run(exercise, submission), None)
            except Exception as error:
                outcomes[key] = (None, error)
        devices, error = outcomes[key]
        if error is not None:
            raise error
        return devices

    monkeypatch.setattr(Exercise, "run", run_once)
    return calls


def _own(calls, exercise: str) -> list:
    """The calls of ``exercise``'s battery, without those of the exercises its answer calls
    (graded to name a failing one first: ``autograder.dependencies``)."""
    return [call for call in calls if call[0] == exercise]


@pytest.fixture
def without_failure_views(monkeypatch):
    """No view below a failed self-check's hint (the gradient explorer ``widgets`` adds once
    imported, by any test of this process): what it shows is tested in
    tests/widgets/test_self_check.py, and drawing its figures for every catalogued mistake took
    more than half of this file's time. The hint, the verdict and the raised error are as a
    notebook's."""
    monkeypatch.setattr(grading, "SELF_CHECK_FAILURE_HOOKS", [])


def first_line(message: str) -> str:
    return (message.splitlines() or [""])[0]


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in EXERCISES])
def test_solution_passes_grading_and_self_check(name, device, on, battery_once):
    """Does the lesson's own solution get full marks on this device and pass the visible
    self-check, its battery running each input alone, every edge case its contract declares
    and every property its domain implies?"""
    exercise, submission = EXERCISES[name], solution(name)
    on(device)
    with recording() as ran:
        passed, message = _quiet(verdict, name, submission)
    assert passed, message
    _quiet(self_check, name, submission)
    assert _own(battery_once, name) == [(name, submission)] * 2
    assert EACH_INPUT_ALONE in ran
    assert exercise.contract, f"{name} declares no edge cases of its contract"
    missing = [edge for edge in exercise.contract if edge not in ran]
    assert not missing, f"{name}'s battery never checks {missing}"
    assert exercise.domain is not None, f"{name} declares no domain"
    skipped = [p for p in exercise.domain.properties() if f"domain: {p}" not in ran]
    assert not skipped, f"{name}'s grading skips {skipped}, which its domain implies"


@pytest.mark.parametrize("entry", _params(catalogue.unusual()))
def test_unusual_passes(entry, device, on, battery_once):
    """Is a correct answer written unusually accepted by the hidden tests and the self-check?"""
    submission = entry.load()
    on(device)
    passed, message = _quiet(verdict, entry.exercise, submission)
    assert passed, message
    _quiet(self_check, entry.exercise, submission)
    assert _own(battery_once, entry.exercise) == [(entry.exercise, submission)] * 2


@pytest.mark.parametrize("entry", _params(catalogue.mistakes()))
def test_mistake_fails_self_check_and_grade_alike(entry, device, on, battery_once,
                                                  without_failure_views):
    """Does each mistake fail the self-check and lose its marks, both with its hint on the same
    first line, and through each clause check it is the witness of?"""
    if entry.gpu and device.type != "cuda":
        pytest.skip("wrong on CUDA only: its contract grades it where a GPU is present")
    submission = entry.load()
    on(device)
    passed, message, _, mistake = _quiet(classified_verdict, entry.exercise, submission)
    assert not passed, f"{entry.name} got full marks"
    assert entry.hint in first_line(message)
    for check in witnessed_checks(entry):
        assert enforced(check, mistake, message), (
            f"{entry.name!r}, the witness of {check!r}, fails elsewhere: {mistake}")
    with pytest.raises(Exception) as info:
        _quiet(self_check, entry.exercise, submission)
    error = info.value
    shown = str(error) if isinstance(error, GradingError) else headline(entry.exercise, error)
    assert first_line(shown) == first_line(message)
    assert _own(battery_once, entry.exercise) == [(entry.exercise, submission)] * 2


def _has_catalogue(exercise: str) -> bool:
    lesson = EXERCISES[exercise].lesson[:2]
    return any(info.name.split("_")[0] == f"lesson{lesson}"
               for info in pkgutil.iter_modules(catalogue.__path__))


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in EXERCISES])
def test_every_exercise_has_three_unusual_answers(name):
    """Does the catalogue hold at least three correct-but-unusual answers per exercise?"""
    if not _has_catalogue(name):
        pytest.skip(f"no tools/catalogue module for lesson {EXERCISES[name].lesson} yet")
    assert sum(entry.exercise == name for entry in catalogue.unusual()) >= 3


def test_entries_name_known_exercises_uniquely():
    """Does every entry name a real exercise, and is each (exercise, name) pair unique?"""
    entries = [*catalogue.unusual(), *catalogue.mistakes()]
    assert all(entry.exercise in EXERCISES for entry in entries)
    keys = [(type(entry).__name__, entry.exercise, entry.name) for entry in entries]
    assert len(keys) == len(set(keys))


def test_one_mistake_of_each_exercise_goes_through_real_grading():
    """Is exactly one mistake of every exercise handed in to the real nbgrader
    (tests/grader/test_course_config.py), so that each lesson's mistakes fit in one notebook?"""
    handed_in = Counter(entry.exercise for entry in catalogue.mistakes() if entry.nbgrader)
    assert {name: handed_in[name] for name in EXERCISES} == {name: 1 for name in EXERCISES}


ROUND_NAME = re.compile(r"review|third|fresh|round")


@pytest.mark.parametrize("package", [
    pytest.param(info.name, marks=getattr(pytest.mark, f"lesson{info.name[6:8]}"), id=info.name)
    for info in pkgutil.iter_modules(catalogue.__path__) if info.ispkg])
def test_catalogue_modules_are_named_by_concept(package):
    """Is each module of a lesson's catalogue named by what its answers are about (an
    exercise, a clause, a concept), never by the review round that found them?"""
    folder = Path(catalogue.__path__[0]) / package
    by_round = sorted(path.name for path in folder.glob("*.py") if ROUND_NAME.search(path.stem))
    assert not by_round, f"{package} has modules named by review round: {by_round}"
