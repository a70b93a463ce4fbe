"""What the grader shows an instructor as code reaching into it: the learner's lines, never the
lines the course itself ships."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from grader.lessons import ROOT, lesson_names
from grader.needed_cells import demo_sources
from grader.suspicion import suspicious_code_faults, suspicious_lines

UNWRAP = 'backward = staticmethod(getattr(Attention.backward, "__wrapped__", Attention.backward))'
STEAL = "key = grade.__closure__[0].cell_contents"


def _answer(source: str):
    cell = new_code_cell(source)
    cell.metadata = {"nbgrader": {"solution": True, "grade": False, "grade_id": "answer_Square",
                                  "locked": False, "schema_version": 3}}
    return cell


def test_a_learners_line_that_reaches_into_the_grader_is_shown():
    """Is a line reading a closure cell flagged, in an answer cell and in a cell the learner
    added, with the cell and what the line does?"""
    for cell in (_answer(STEAL), new_code_cell(STEAL)):
        found = suspicious_lines(new_notebook(cells=[cell]))
        assert [(number, what) for _, number, what, _ in found] == [(1, "reads closure cells")]


def test_a_line_the_course_ships_is_not_the_learners():
    """Is a demo cell's line as the released notebook ships it left out (lesson 06 unwraps a
    decorated backward), while the same notebook's own stolen key is still shown?"""
    notebook = new_notebook(cells=[new_code_cell(f"class Undecorated:\n    {UNWRAP}"),
                                   new_code_cell(STEAL)])
    assert len(suspicious_code_faults(notebook)) == 2
    faults = suspicious_code_faults(notebook, [f"class Undecorated:\n    {UNWRAP}"])
    assert len(faults) == 1 and faults[0].message.endswith(f"reads closure cells: {STEAL}")


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_solution_notebook_is_suspicious(lesson):
    """Does every lesson's solution, graded against its learner copy's demo cells, come out
    with nothing to show (an instructor's trial found lessons 04 and 06 flagged)?"""
    learner = nbformat.read(ROOT / "course" / f"{lesson}.ipynb", as_version=4)
    solved = nbformat.read(ROOT / "solutions" / f"{lesson}.ipynb", as_version=4)
    assert suspicious_lines(solved, demo_sources(learner)) == []
