"""`make generic` (tools/generic_only.py): the table of what the generic grading layer catches
alone, beside the full battery, checked on Square's first mistakes."""

import pytest

from autograder.exercises import EXERCISES
from tools import catalogue, generic_only
from tools.solutions import solution


@pytest.fixture(autouse=True)
def on_cpu(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_DEVICE", "cpu")


def _mistake(name: str):
    return catalogue.mistake("Square", name)


class _Answer:
    """An answer as ``generic_only.fails`` takes a catalogue entry."""

    def __init__(self, submission):
        self.load = lambda: submission


def test_the_generic_layer_alone_catches_a_wrong_gradient_and_not_a_bespoke_rule():
    """A wrong sign fails each input alone; a tensor kept on ctx is Square's own check (the
    generic layer sees right values there)."""
    generic = generic_only.generic_exercise(EXERCISES["Square"])
    assert generic_only.fails(generic, _mistake("wrong sign"))
    assert not generic_only.fails(generic, _mistake("tensor on ctx"))


def test_the_table_counts_each_way_of_grading():
    row = generic_only.tally("Square", limit=2)
    assert (row.lesson, row.mistakes, row.full, row.gpu_only) == ("00_template", 2, 2, 0)
    assert row.generic == 2 and row.missed == [] and row.share == "100%"
    lines = generic_only.table([row]).splitlines()
    assert lines[0].startswith("| lesson | exercise | mistakes | full battery fails")
    assert lines[2] == "| 00_template | Square | 2 | 2 | 2 | 100% |"
    assert lines[-1] == "| | **total** | 2 | 2 | 2 | 100% |"


def test_names_select_exercises_or_lessons_in_the_course_s_order():
    assert generic_only.selected(["Outer", "00"])[:3] == ["Square", "WeightedSum", "Outer"]
    assert generic_only.selected(["lesson01"]) == [n for n, e in EXERCISES.items()
                                                   if e.lesson.startswith("01")]
    with pytest.raises(ValueError, match="no exercise or lesson"):
        generic_only.selected(["Nonsense"])


@pytest.mark.parametrize("name", ["SortWithIndices", "SplitHalves", "ReversibleCoupling"])
def test_the_generic_layer_passes_a_right_answer_returning_a_tuple(name):
    """An op of several outputs (or values and indices) is checked at the domain's typical
    inputs with every input at once: the lesson's own answer passes, a wrong one fails."""
    generic = generic_only.generic_exercise(EXERCISES[name])
    assert not generic_only.fails(generic, _Answer(solution(name)))
    assert any(generic_only.fails(generic, mistake) for mistake in catalogue.mistakes()
               if mistake.exercise == name)
