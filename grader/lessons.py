"""The course's lessons: one jupytext source each in ``lessons/``, turned into the nbgrader
"source" notebook (solutions and hidden tests included) that ``nbgrader generate_assignment``
releases."""

import tomllib
from pathlib import Path

import jupytext
import nbformat

from .notebook_format import NBGRADER_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"


PACKAGE_VARIABLE = "AUTOGRAD_COURSE_PACKAGE"
SETUP_CELL = """\
# Setup. In Colab, on a JupyterHub or in any Jupyter where the course is not installed, this
# installs it (from ${variable} if you set it: a wheel or any pip requirement). Under
# `make lab` it does nothing.
import importlib.util, os, subprocess, sys

if importlib.util.find_spec("autograder") is None:
    course_package = os.environ.get("${variable}", "${default}")
    print(f"Installing the course package: pip install {course_package}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", course_package], check=True)
    importlib.invalidate_caches()
    print("Installed autograder and widgets; the notebook goes on as usual.")

import autograder

autograder.check_environment()"""


PROGRESS_NOTE = """\
## Where you stand

Every self-check you run is remembered in `.autograd-progress.json` beside this notebook. The
cell below lists every exercise of the course with the outcome of its last self-check, and the
next one to do. (`from widgets import progress_view; progress_view()` shows the same as a table
with a Refresh button.)"""


def course_package() -> str:
    """What a learner's notebook installs by default: the repository named in pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return f"git+{project['urls']['Repository']}"


def setup_cell() -> nbformat.NotebookNode:
    source = (SETUP_CELL.replace("${variable}", PACKAGE_VARIABLE)
              .replace("${default}", course_package()))
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"locked": True}})


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
    notebook.cells[:0] = [banner, setup_cell()]
    notebook.cells += [nbformat.v4.new_markdown_cell(PROGRESS_NOTE),
                       nbformat.v4.new_code_cell("autograder.show_progress()")]
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
