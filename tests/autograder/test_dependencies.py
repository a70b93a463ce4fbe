"""A failure the learner's own earlier exercise explains: an answer that calls another exercise
of its lesson by name, where that exercise fails on its own, is told to fix that one first, with
its hint and an id of its own, even where a probe of the answer named a cause (no probe can be
trusted through a broken exercise), its own hint on the second line; an answer that calls a
correct one keeps its failure."""

import pytest
import torch

from autograder import exercises as registry
from autograder.dependencies import failing_dependency, run, used_exercises
from autograder.errors import GradingError
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from autograder.mistakes import mistake_of


class Inner(torch.autograd.Function):
    """An earlier exercise: its battery checks that forward doubles."""


def _inner_battery(submission, device):
    x = torch.ones(2)
    if not torch.equal(submission.apply(x), 2 * x):
        raise GradingError("Inner's output is not 2 x")


def _outer_battery(submission, device):
    if not torch.equal(submission(torch.ones(2)), 3 * torch.ones(2)):
        raise GradingError("Outer's output is not 3 x")  # no id: the cause is not proven


def _proving_battery(submission, device):
    if not torch.equal(submission(torch.ones(2)), 3 * torch.ones(2)):
        raise GradingError("your loop adds x twice", mistake="Proven/adds-twice")  # a probe's id


def _module(inner):
    namespace = {"Inner": inner, "torch": torch}
    exec("def outer(x):\n    return Inner.apply(x) + x\n", namespace)
    return namespace["outer"]


def _function(factor):
    return type("Inner", (torch.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: factor * x),
        "backward": staticmethod(lambda ctx, g: factor * g)})


@pytest.fixture
def lesson(monkeypatch):
    """Inner and Outer, a lesson of two exercises, in the registry for the test."""
    made = {"Inner": Exercise("Inner", "99_test", _inner_battery),
            "Outer": Exercise("Outer", "99_test", _outer_battery),
            "Proven": Exercise("Proven", "99_test", _proving_battery)}
    for name, exercise in made.items():
        monkeypatch.setitem(registry.EXERCISES, name, exercise)
    return made


def test_the_exercises_an_answer_calls_are_found_by_name(lesson):
    broken = _function(5.0)
    assert used_exercises(lesson["Outer"], _module(broken), EXERCISES) == {"Inner": broken}
    assert used_exercises(lesson["Inner"], broken, EXERCISES) == {}


def test_a_failing_exercise_the_answer_calls_is_named_first(lesson):
    with pytest.raises(GradingError) as info:
        run(lesson["Outer"], _module(_function(5.0)), EXERCISES)
    first = str(info.value).splitlines()[0]
    assert first.startswith("Outer calls your Inner, which fails its own check: fix Inner")
    assert "Inner's output is not 2 x" in first
    assert mistake_of(info.value) == "Outer/uses-failing-exercise"


def test_an_answer_s_own_failure_stands_beside_a_correct_exercise(lesson):
    assert failing_dependency(lesson["Outer"], _module(_function(2.0)), EXERCISES) is None
    wrong_itself = _module(_function(2.0))
    with pytest.raises(GradingError, match="Outer's output is not 3 x"):
        run(lesson["Outer"], lambda x: wrong_itself(x) + 1, EXERCISES)


def test_a_proven_cause_gives_way_to_a_failing_exercise_the_answer_calls(lesson):
    """Is a probe's id set aside when the exercise the answer calls fails on its own (the probe
    saw that exercise's failure), the probe's hint kept as what was seen, on the second line; and
    does the id stand where that exercise passes?"""
    with pytest.raises(GradingError) as info:
        run(lesson["Proven"], _module(_function(5.0)), EXERCISES)
    first, second = str(info.value).splitlines()[:2]
    assert first.startswith("Proven calls your Inner, which fails its own check: fix Inner first")
    assert "(Inner's hint: Inner's output is not 2 x)" in first
    assert second == "What Proven's own check saw, through your Inner: your loop adds x twice"
    assert mistake_of(info.value) == "Proven/uses-failing-exercise"
    wrong_itself = _module(_function(2.0))
    with pytest.raises(GradingError) as info:
        run(lesson["Proven"], lambda x: wrong_itself(x) + 1, EXERCISES)
    assert mistake_of(info.value) == "Proven/adds-twice"


def test_a_failure_the_answer_proved_inherited_keeps_its_own_words(lesson, monkeypatch):
    """Does a battery's own fails-through-function verdict (it passes with a correct exercise in
    place of the learner's) stand, as lesson 10's RMSNorm gives it?"""
    def through(submission, device):
        raise GradingError("Proven fails through the Inner it calls",
                           mistake="Proven/fails-through-function")
    monkeypatch.setitem(registry.EXERCISES, "Proven", Exercise("Proven", "99_test", through))
    with pytest.raises(GradingError) as info:
        run(EXERCISES["Proven"], _module(_function(5.0)), EXERCISES)
    assert mistake_of(info.value) == "Proven/fails-through-function"
