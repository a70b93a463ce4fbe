"""A test cell of the instructor's own, added to a lesson's source notebook from the command line
(`make add-test`): what the Create Assignment panel or hand-written cell metadata does, in one
call. The cell is an nbgrader autograded test with its points, locked, tagged as the course's
own test cells are (``lessons.RUN_ON``), placed after the test cell it extends; `make release`
then releases the source as edited (REGRADE=1 under existing submissions)."""

import re
from pathlib import Path

import nbformat

from .lessons import RUN_ON
from .notebook_format import grade_id, is_test_cell, skipped_when_grading

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # a grade_id and a cell id alike


def add_test_cell(root: Path, lesson: str, name: str, code: str, points: float,
                  after: str | None = None) -> str:
    """Add test cell ``name`` worth ``points`` holding ``code`` to ``lesson``'s source notebook
    in course root ``root``, after test cell ``after`` (default: the last test cell); the line
    to print. ValueError, and nothing written, for a name that is taken or not an identifier,
    points below 0, empty code, an ``after`` that is no test cell, no source notebook, or a cell
    that fails on the lesson's own solution (``_run_to``)."""
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
    stopped = _run_to(notebook, at, source.parent)
    if stopped:
        raise ValueError(stopped)
    nbformat.write(notebook, source)
    before = grade_id(notebook.cells[at - 1]) or "the cell before"
    return (f"added test cell {name} ({points:g} point{'' if points == 1 else 's'}) after "
            f"{before} in {source}; release it: make release LESSONS={lesson} (with REGRADE=1 "
            "once submissions are graded)")


CELL_TIMEOUT = 600  # seconds a cell of the lesson's solution may run while the new test is tried


def _run_to(notebook, at: int, folder: Path) -> str:
    """Run ``notebook``'s code cells (its solution: the source notebook) up to and with the new
    test cell at ``at``, in ``folder``: "" where all ran, else why the cell is refused (the new
    test fails on the lesson's own solution, or the solution stopped before it)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    cells = [cell for cell in notebook.cells[:at + 1]
             if cell.cell_type == "code" and not skipped_when_grading(cell)]
    trial = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)
                                            for cell in cells])  # no RUN_ON tag: errors stop
    client = NotebookClient(trial, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError:
        for ran in trial.cells:
            errors = [output for output in ran.get("outputs", [])
                      if output.get("output_type") == "error"]
            if errors:
                said = f"{errors[-1].get('ename')}: {errors[-1].get('evalue')}"
                if ran is trial.cells[-1]:
                    return (f"the new test fails on the lesson's own solution ({said}): a test "
                            "its solution fails would fail every learner; nothing written")
                return (f"the lesson's solution stopped at {grade_id(ran) or 'a cell'} before "
                        f"the new test ran ({said}); nothing written")
        return "the new test could not be run on the lesson's solution; nothing written"
    return ""
