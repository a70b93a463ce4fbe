"""What every learner's notebook opens with and how it runs: no maintainers' note among its
cells (the notebook's metadata says where it comes from), every code cell after the setup
tagged to run on under Run All, and a cell run again after Run All reads its own section's
names; a scratch cell's worked answer reaches the solutions only."""

import ast
import functools
import json

import nbformat
import pytest
from nbgrader.utils import is_solution

from grader.lessons import (GENERATED_FROM, LESSONS, RUN_ON, WORKED, lesson_names,
                            source_notebook, with_worked)
from grader.needed_cells import cell_names
from autograder.unwritten import STUB_LINE, cell_exercise
from grader.notebook_format import skipped_when_grading
from tools.notebooks import COURSE, SOLUTIONS

# each lesson's released source and each cell's names, read once for the tests below (read only)
_released = functools.cache(source_notebook)
_names = functools.cache(cell_names)


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
    JupyterLab's Run All goes on after an unsolved exercise (tests/test_run_all.py drives it)?
    And where an untouched answer cell raises at its own top level (the stub's raise left under
    the class), does its calm line name the cell's exercise (autograder.unwritten), not
    "<module>"?"""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert RUN_ON not in code[0].metadata.get("tags", [])
    assert all(RUN_ON in cell.metadata.get("tags", []) for cell in code[1:])
    for cell in code:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        lines = cell.source.splitlines(keepends=True)
        for lineno, line in enumerate(lines, 1):
            if grade_id.startswith("answer_") and line.rstrip() == STUB_LINE:  # top level
                assert cell_exercise(lines, lineno) == grade_id.removeprefix("answer_"), grade_id


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


def _bound_and_read(source: str) -> tuple[set[str], set[str]]:
    """The global names a cell binds and reads, as grading's own analysis sees them (a
    function's parameters and locals are its own); where that analysis cannot see a cell's
    names, every name it binds or reads anywhere, inside a function too (stricter)."""
    names = _names(source)
    if not names.opaque:
        return set(names.binds), set(names.reads)
    tree = ast.parse(source)
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return bound, read


@pytest.mark.parametrize("lesson", lesson_names())
def test_a_cell_skipped_when_grading_defines_nothing_a_graded_run_needs(lesson):
    """Does every name a skipped cell binds stay unread by the cells that still run under
    autograding (until a running cell binds it again)? Otherwise grading would meet a
    NameError that the learner, who ran every cell, never saw."""
    notebook = _released(lesson)  # its answers are the solutions: they may read names too
    only_in_skipped: dict[str, int] = {}  # name -> the skipped cell that bound it last
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code" or cell.source.lstrip().startswith(("%", "!")):
            continue
        bound, read = _bound_and_read(cell.source)
        if skipped_when_grading(cell):
            only_in_skipped |= dict.fromkeys(bound, index)
            continue
        needed = {name: only_in_skipped[name] for name in read - bound if name in only_in_skipped}
        assert not needed, (f"cell {index} reads {sorted(needed)}, bound only in skipped cell(s) "
                            f"{sorted(set(needed.values()))}")
        for name in bound:
            only_in_skipped.pop(name, None)


@pytest.mark.parametrize("lesson", lesson_names())
def test_a_cell_run_again_after_run_all_reads_what_its_own_section_bound(lesson):
    """After Run All, a learner solves an exercise and runs the cells after it again: does each
    cell after the first exercise still read what the cells before it bound? A name it reads
    (and does not bind itself) that a later cell binds again holds the later cell's value by
    then, so a correct answer meets another section's tensors ("mat1 and mat2 shapes cannot be
    multiplied") or a prediction dict of another question."""
    code = [(index, _names(cell.source), is_solution(cell))
            for index, cell in enumerate(_released(lesson).cells)
            if cell.cell_type == "code" and cell.source.strip()]
    first_exercise = next(index for index, _, solution in code if solution)
    rebound = {}
    for position, (index, names, _) in enumerate(code):
        if index <= first_exercise:
            continue
        earlier = set().union(*(found.binds for _, found, _ in code[:position]))
        for name in (names.reads - names.binds) & earlier:
            later = [after for after, found, _ in code[position + 1:] if name in found.binds]
            if later:
                rebound.setdefault(index, {})[name] = later
    assert not rebound, (f"{lesson}: cell -> {{name read: later cells that bind it again}}: "
                         f"{rebound}")


def test_a_worked_region_gives_the_solutions_its_answer_and_the_learner_the_stub():
    """Does a scratch cell's worked region become its worked lines, or the learner's, whole?"""
    source = ("x = 1\n### BEGIN WORKED\nf = lambda y: y * (1 - y)\n### LEARNER\n"
              "f = None  # yours\n### END WORKED\nprint(f)\n")
    assert with_worked(source, worked=True) == "x = 1\nf = lambda y: y * (1 - y)\nprint(f)\n"
    assert with_worked(source, worked=False) == "x = 1\nf = None  # yours\nprint(f)\n"


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_worked_answer_reaches_what_nbgrader_releases(lesson):
    """Is every worked line out of the released source and the learner's copy, and every
    marker out of both copies?"""
    worked = {line.strip() for match in WORKED.finditer((LESSONS / f"{lesson}.py").read_text())
              for line in match[1].splitlines() if line.strip()}
    released = "\n".join(cell.source for cell in _released(lesson).cells)
    learner = "\n".join(cell.source for cell in
                        nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4).cells)
    solutions = (SOLUTIONS / f"{lesson}.ipynb").read_text()
    for text in (released, learner):
        assert not [line for line in worked if line in text.splitlines()], lesson
    assert not any("WORKED" in text or "### LEARNER" in text
                   for text in (released, learner, solutions)), lesson
