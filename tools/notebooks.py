"""Build the learner and solution notebooks from the one source of each lesson.

lessons/NN_name.py (jupytext percent format, nbgrader metadata in cell headers)
  -> source notebook (solutions and hidden tests; the instructor's nbgrader "source")
  -> course/NN_name.ipynb     learner copy: real `nbgrader generate_assignment` output
  -> solutions/NN_name.ipynb  solutions kept, hidden tests and markers removed, executed
"""

import argparse
import copy
import os
import re
import tempfile
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from autograder.nbgrader_cli import nbgrader, prepare_course_root

ROOT = Path(__file__).resolve().parents[1]
LESSONS, COURSE, SOLUTIONS = ROOT / "lessons", ROOT / "course", ROOT / "solutions"
NBGRADER_SCHEMA = 3
EXECUTION_TIMEOUT = 300
WIDGETS_SEED_VARIABLE = "WIDGETS_SEED"
HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS[ \t]*\n?",
                          re.DOTALL | re.MULTILINE)
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)
GRADE_CALL = re.compile(r"""grade\(\s*["']([^"']+)["']""")


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


def solution_notebook(source: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Solutions kept, hidden tests and solution markers removed, nbgrader metadata dropped."""
    notebook = copy.deepcopy(source)
    for cell in notebook.cells:
        cell.metadata = {}
        if cell.cell_type == "code":
            cell.source = SOLUTION_MARKER.sub("", HIDDEN_TESTS.sub("", cell.source)).rstrip()
    return notebook


def execute(notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, stopping at the first error; widget state is kept,
    with seeded widget ids so that a rebuild gives the same bytes."""
    client = NotebookClient(notebook, timeout=EXECUTION_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(cwd)}}, record_timing=False,
                            store_widget_state=True)
    previous = os.environ.get(WIDGETS_SEED_VARIABLE)
    os.environ[WIDGETS_SEED_VARIABLE] = "0"  # the kernel inherits it; see widgets/ids.py
    try:
        client.execute()
        # a print can arrive as several stream messages, split at random: merge them
        CoalesceStreamsPreprocessor().preprocess(notebook, {})
    finally:
        if previous is None:
            os.environ.pop(WIDGETS_SEED_VARIABLE)
        else:
            os.environ[WIDGETS_SEED_VARIABLE] = previous
    return notebook


def release(sources: dict[str, nbformat.NotebookNode], course_root: Path) -> dict[str, Path]:
    """Run the real ``nbgrader generate_assignment`` on source notebooks in ``course_root``;
    return each lesson's released (learner) notebook."""
    prepare_course_root(course_root)
    released = {}
    for lesson, notebook in sources.items():
        folder = course_root / "source" / lesson
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")
        nbgrader("generate_assignment", lesson, "--force", "--log-level=WARN", root=course_root)
        released[lesson] = course_root / "release" / lesson / f"{lesson}.ipynb"
    return released


def learner_notebooks(lessons: list[str]) -> dict[str, nbformat.NotebookNode]:
    """The learner copy of each lesson, as nbgrader releases it."""
    with tempfile.TemporaryDirectory(prefix="course-build-") as scratch:
        released = release({name: source_notebook(name) for name in lessons}, Path(scratch))
        return {name: nbformat.read(path, as_version=4) for name, path in released.items()}


def write(notebook: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(notebook) + "\n")


def without_outputs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy without what execution adds (outputs, counts, widget state, language details)."""
    notebook = copy.deepcopy(notebook)
    notebook.metadata.pop("widgets", None)
    notebook.metadata.pop("language_info", None)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return notebook


def build(lessons: list[str], *, run_solutions: bool = True) -> None:
    for name, notebook in learner_notebooks(lessons).items():
        write(notebook, COURSE / f"{name}.ipynb")
        print(f"course/{name}.ipynb")
    for name in lessons:
        solution = solution_notebook(source_notebook(name))
        if run_solutions:
            execute(solution, SOLUTIONS)
        write(solution, SOLUTIONS / f"{name}.ipynb")
        print(f"solutions/{name}.ipynb" + (" (executed)" if run_solutions else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: all)")
    parser.add_argument("--no-execute", action="store_true", help="do not run the solutions")
    args = parser.parse_args()
    unknown = sorted(set(args.lessons) - set(lesson_names()))
    if unknown:
        parser.error(f"unknown lessons {unknown}; known: {lesson_names()}")
    build(args.lessons or lesson_names(), run_solutions=not args.no_execute)


if __name__ == "__main__":
    main()
