"""The course's lessons: one jupytext source each in ``lessons/``, turned into the nbgrader
"source" notebook (solutions and hidden tests included) that ``nbgrader generate_assignment``
releases."""

from pathlib import Path

import jupytext
import nbformat

from .notebook_format import NBGRADER_SCHEMA

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
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": {"name": "python"},
    }
    nbformat.validate(notebook)
    return notebook
