"""What a learner reads: a pass as visible as a failure, where they stand in a few lines about
the lesson they are in, and a first self-check that does not wait on torch._dynamo."""

import subprocess
import sys

import pytest

from autograder import failure, progress
from autograder.exercises import EXERCISES


@pytest.fixture
def course(tmp_path):
    folder = tmp_path / "09_patterns"
    folder.mkdir()
    return folder


def test_the_list_is_about_the_lesson_the_learner_is_in(course):
    """In lesson 09, with lesson 00 half done, does the list show lesson 09's exercises, the
    counts (five lessons a line), lesson 09's first exercise as the next, and one line on what
    is open in the lessons begun before it (lessons not begun are in the counts), in a few
    lines?"""
    progress.record("Square", "00_template", progress.PASSED, folder=course)
    text = progress.summary(course, "09_patterns")
    here = [name for name, exercise in EXERCISES.items() if exercise.lesson == "09_patterns"]
    count_lines = -(-len({e.lesson for e in EXERCISES.values()}) // progress.LESSONS_PER_LINE)
    assert len(text.splitlines()) == len(here) + 4 + count_lines
    assert text.splitlines()[-1] == (
        "Still open in lessons you began before this one: 2 exercises in 00.")
    assert text.startswith("This lesson (09_patterns):")
    assert f"Next: {here[0]} in 09_patterns." in text
    assert "00 1/3" in text and "Square" not in text


def test_a_finished_lesson_points_to_the_next_one(course):
    """With every exercise of lesson 09 passed, does the list say so and name the next
    lesson's first exercise (not lesson 00's)?"""
    here = [name for name, exercise in EXERCISES.items() if exercise.lesson == "09_patterns"]
    for name in here:
        progress.record(name, "09_patterns", progress.PASSED, folder=course)
    text = progress.summary(course, "09_patterns")
    first_later = next(name for name, row in sorted(EXERCISES.items(),
                                                    key=lambda item: item[1].lesson)
                       if row.lesson > "09_patterns")
    assert f"This lesson is done. Next: {first_later} in {EXERCISES[first_later].lesson}." in text
    assert f"09 {len(here)}/{len(here)} ✓" in text


def test_a_pass_in_a_notebook_is_a_green_box(monkeypatch):
    """In a notebook kernel, is a pass shown as a green box with a plain-text tick behind it?"""
    import IPython
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: type("Shell", (), {"kernel": object()}))
    monkeypatch.setattr(IPython.display, "display", lambda data, raw: shown.append(data))
    failure.show_pass("Square passes every check grading runs on CPU")
    assert shown[0]["text/plain"] == "✓ Square passes every check grading runs on CPU."
    assert "#edf7ed" in shown[0]["text/html"] and "border-left:4px solid #2e7d32" in \
        shown[0]["text/html"]


def test_the_setup_cell_imports_dynamo_so_the_first_self_check_does_not():
    """Does the setup cell's check_environment import torch._dynamo (every probe's dispatch mode
    imports it on first use), in the foreground, with no thread left importing?"""
    code = ("import sys, threading, autograder\n"
            "autograder.check_environment()\n"
            "print(threading.active_count(), 'torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    assert done.stdout.split()[-2:] == ["1", "True"], done.stderr
