"""The course's lessons: one jupytext source each in ``lessons/``, turned into the nbgrader
"source" notebook (solutions and hidden tests included) that ``nbgrader generate_assignment``
releases."""

from pathlib import Path

import jupytext
import nbformat

from .notebook_format import GRADE_CALL, HIDDEN_TESTS, NBGRADER_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"


def lesson_names() -> list[str]:
    return sorted(path.stem for path in LESSONS.glob("[0-9][0-9]_*.py"))


def _nbgrader_metadata(cell, index: int) -> dict | None:
    """Complete the short nbgrader metadata written in a cell header."""
    given = cell.metadata.get("nbgrader")
    if given is None and cell.cell_type == "markdown":
        given = {"locked": True}
    if given is None:
        return None
    grade, solution = given.get("grade", False), given.get("solution", False)
    metadata = {
        "grade": grade,
        "grade_id": given.get("grade_id", f"cell-{index:03d}"),
        "locked": given.get("locked", not solution),
        "schema_version": NBGRADER_SCHEMA,
        "solution": solution,
    }
    if grade:
        metadata["points"] = given["points"]
    return metadata


def _check_test_cell(lesson: str, cell) -> None:
    """A graded test cell must call grade() on its own grade_id inside its hidden tests."""
    grade_id = cell.metadata.nbgrader["grade_id"]
    hidden = HIDDEN_TESTS.search(cell.source)
    if not hidden or GRADE_CALL.findall(hidden.group()) != [grade_id]:
        raise ValueError(f"{lesson}: test cell {grade_id!r} must call grade({grade_id!r}, ...) "
                         "once, between BEGIN and END HIDDEN TESTS")


def source_notebook(lesson: str) -> nbformat.NotebookNode:
    """The instructor's nbgrader source notebook for a lesson."""
    path = LESSONS / f"{lesson}.py"
    notebook = jupytext.read(path, fmt="py:percent")
    banner = nbformat.v4.new_markdown_cell(
        f"*Generated from `lessons/{lesson}.py` by `make notebooks`. Course authors: edit that "
        "file, not this notebook.*")
    notebook.cells.insert(0, banner)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index:03d}"
        metadata = _nbgrader_metadata(cell, index)
        cell.metadata = {"nbgrader": metadata} if metadata else {}
        if metadata and metadata["grade"] and not metadata["solution"]:
            _check_test_cell(lesson, cell)
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook
