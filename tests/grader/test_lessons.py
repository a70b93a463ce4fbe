"""grader.lessons: the course's lessons, by the ids the commands take."""

import re

import pytest

from grader.lessons import ROOT, lesson_names, resolve_lessons


def test_the_readme_table_gives_each_lesson_id_that_lessons_takes():
    """Does the README's table of lessons give, in order, every id `LESSONS=` accepts?"""
    table = re.findall(r"^\| `(\d\d_\w+)` \|", (ROOT / "README.md").read_text(), re.MULTILINE)
    assert table == sorted(lesson_names())


def test_the_readme_names_every_answer_cell_graded_or_practice():
    """Does the README name every answer cell of every lesson (an instructor matching pasted
    notebooks counts them all), the practice ones worth no points included?"""
    readme = (ROOT / "README.md").read_text()
    answers = {name for source in (ROOT / "lessons").glob("*.py")
               for name in re.findall(r'"grade_id": "answer_(\w+)"', source.read_text())}
    assert answers and not {name for name in answers if f"`{name}`" not in readme}


def test_a_lesson_is_taken_by_its_number_or_a_unique_prefix():
    """Does a command take a lesson by its number (07 or 7) or a prefix of its name that only
    it has, refuse an ambiguous one naming the lessons it could be, and suggest the lesson an
    unknown id is part of?"""
    known = ["01_sigmoid", "07_outputs", "08_compile", "08_demo", "10_norms"]
    assert resolve_lessons(["7", "01", "10_n", "08_c", "07_outputs", "1"], known) == [
        "07_outputs", "01_sigmoid", "10_norms", "08_compile"]
    with pytest.raises(ValueError, match=r"'08' could be 08_compile or 08_demo"):
        resolve_lessons(["08"], known)
    # the number is a number however it is written: 1 and 1_ alike, never 10_norms (issue 48)
    assert resolve_lessons(["1_", "1_sig", "01_", "7_out", "10"], known) == [
        "01_sigmoid", "07_outputs", "10_norms"]
    with pytest.raises(ValueError, match=r"'8_' could be 08_compile or 08_demo"):
        resolve_lessons(["8_"], known)
    with pytest.raises(ValueError, match=r"no lesson 'outputs' \(did you mean 07_outputs\?\)"):
        resolve_lessons(["outputs"], known)
