"""What every learner's notebook opens with and how it runs: no maintainers' note among its
cells (the notebook's metadata says where it comes from), and every code cell after the setup
tagged to run on under Run All."""

import json

import nbformat
import pytest

from grader.lessons import GENERATED_FROM, RUN_ON, lesson_names
from grader.notebook_format import skipped_when_grading
from tools.notebooks import COURSE, SOLUTIONS


@pytest.mark.parametrize("lesson", lesson_names())
def test_a_lesson_opens_with_its_setup_not_a_note_for_authors(lesson):
    """Does the learner's copy start with the setup cell, hold no "Generated from ... edit that
    file" note anywhere a learner (or their feedback page) would see it, and name its source in
    the notebook metadata?"""
    for folder in (COURSE, SOLUTIONS):
        notebook = nbformat.read(folder / f"{lesson}.ipynb", as_version=4)
        assert notebook.cells[0].source.startswith("# Setup.")
        assert "Course authors" not in json.dumps([cell.source for cell in notebook.cells])
        assert notebook.metadata[GENERATED_FROM]["generated_from"] == f"lessons/{lesson}.py"


@pytest.mark.parametrize("lesson", lesson_names())
def test_run_all_runs_on_past_an_unsolved_exercise(lesson):
    """Is every code cell but the setup tagged raises-exception in the learner's copy, so that
    JupyterLab's Run All goes on after an unsolved exercise (tests/test_run_all.py drives it)?"""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert RUN_ON not in code[0].metadata.get("tags", [])
    assert all(RUN_ON in cell.metadata.get("tags", []) for cell in code[1:])


@pytest.mark.parametrize("lesson", lesson_names())
def test_a_cpp_build_is_skipped_when_grading(lesson):
    """Does every cell that compiles C++ (seconds of a grading machine for every submission,
    for a section no test grades) carry the skip-when-grading tag, and no nbgrader cell?"""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and "load_inline(" in cell.source:
            assert skipped_when_grading(cell), cell.source[:200]
    assert not any(skipped_when_grading(cell) for cell in notebook.cells
                   if cell.metadata.get("nbgrader"))
