"""A test cell of the instructor's own, added to a lesson's source notebook from the command line
(`make add-test`): what the Create Assignment panel or hand-written cell metadata does, in one
call. The cell is an nbgrader autograded test with its points, locked, tagged as the course's
own test cells are (``lessons.RUN_ON``), placed after the test cell it extends; `make release`
then releases the source as edited (REGRADE=1 under existing submissions)."""

import re
from pathlib import Path

import nbformat

from .lessons import RUN_ON
from .notebook_format import grade_id, is_test_cell

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a grade_id and a cell id alike


def add_test_cell(root: Path, lesson: str, name: str, code: str, points: float,
                  after: str | None = None) -> str:
    """Add test cell ``name`` worth ``points`` holding ``code`` to ``lesson``'s source notebook
    in course root ``root``, after test cell ``after`` (default: the last test cell); the line
    to print. ValueError, and nothing written, for a name that is taken or not an identifier,
    points below 0, empty code, an ``after`` that is no test cell, or no source notebook."""
    source = root / "source" / lesson / f"{lesson}.ipynb"
    if not source.is_file():
        raise ValueError(f"{lesson} has no source notebook in {root}: `make release "
                         f"LESSONS={lesson}` writes it first")
    if not NAME.fullmatch(name):
        raise ValueError(f"test cell name {name!r}: letters, digits and _ only, not starting "
                         "with a digit (it is the cell's grade_id)")
    if points < 0:
        raise ValueError(f"points {points:g}: 0 or more")
    if not code.strip():
        raise ValueError("the test cell's code is empty: FILE= names a file of asserts")
    notebook = nbformat.read(source, as_version=4)
    taken = {grade_id(cell) for cell in notebook.cells} | {cell.get("id") for cell in
                                                           notebook.cells}
    if name in taken:
        raise ValueError(f"{lesson} already has a cell {name!r}: pick another name")
    tests = [index for index, cell in enumerate(notebook.cells) if is_test_cell(cell)]
    if after is None:
        at = (tests[-1] if tests else len(notebook.cells) - 1) + 1
    else:
        found = [index for index in tests if grade_id(notebook.cells[index]) == after]
        if not found:
            names = ", ".join(grade_id(notebook.cells[index]) for index in tests)
            raise ValueError(f"{lesson} has no test cell {after!r}; its test cells: {names}")
        at = found[0] + 1
    cell = nbformat.v4.new_code_cell(code.strip("\n"), id=name, metadata={
        "nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": name,
                     "points": points, "schema_version": 3},
        "tags": [RUN_ON]})
    notebook.cells.insert(at, cell)
    nbformat.write(notebook, source)
    before = grade_id(notebook.cells[at - 1]) or "the cell before"
    return (f"added test cell {name} ({points:g} point{'' if points == 1 else 's'}) after "
            f"{before} in {source}; release it: make release LESSONS={lesson} (with REGRADE=1 "
            "once submissions are graded)")
