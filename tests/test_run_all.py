"""Run All as a learner uses it, in JupyterLab in headless Chromium: with one exercise still a
stub, every cell runs (the unsolved self-check shows its hint, a solved one a green box, the
lesson's last cell where the learner stands), while nbgrader's Validate still reports the
unsolved exercise; and the learners' JupyterLab has none of nbgrader's instructor tools."""

import os
import subprocess
import sys

import nbformat
import pytest

from grader.lessons import source_notebook
from grader.notebook_format import without_solution_markers
from tests.jupyterlab import REPO, open_notebook, run_all
from tools.notebooks import COURSE
from tools.submissions import with_answer

# One worker runs every JupyterLab test (one server, one browser: tests/jupyterlab.py); both
# tests here share the notebook half_done writes.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("jupyterlab")]

LESSON = "00_template"
FOLDER = REPO / "artifacts" / "run_all"  # git-ignored
SCREENSHOTS = REPO / "artifacts" / "screenshots"
RELATIVE = f"artifacts/run_all/{LESSON}/{LESSON}.ipynb"


@pytest.fixture(scope="module")
def half_done():
    """The learner's copy of lesson 00 with every exercise solved but WeightedSum, still its
    stub. (course/ holds the learner's copy as nbgrader releases it: test_notebooks checks.)"""
    notebook = nbformat.read(COURSE / f"{LESSON}.ipynb", as_version=4)
    for cell in source_notebook(LESSON).cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("answer_") and grade_id != "answer_WeightedSum":
            notebook = with_answer(notebook, grade_id, without_solution_markers(cell.source))
    path = REPO / RELATIVE
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(".autograd-progress.json"):
        stale.unlink()
    nbformat.write(notebook, path)
    return path


def _cells(page) -> list[dict]:
    return page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.widgets
        .filter(c => c.model.type === 'code').map(c => ({
            id: c.model.sharedModel.getMetadata('nbgrader')?.grade_id || '',
            count: c.model.executionCount,
            running: c.promptNode.textContent.includes('*'),
            outputs: c.model.outputs.toJSON()}))""")


def _text(outputs: list[dict]) -> str:
    parts = []
    for output in outputs:
        parts.append(output.get("text", "") if isinstance(output.get("text"), str)
                     else "".join(output.get("text", [])))
        parts += [output.get("ename", ""), output.get("evalue", ""),
                  *output.get("traceback", [])]
        data = output.get("data", {})
        parts += [str(data.get("text/plain", "")), str(data.get("text/html", ""))]
    return "\n".join(parts)


def test_run_all_runs_every_cell_past_an_unsolved_exercise(lab_page, half_done):
    """Does Run All run every code cell of a lesson whose WeightedSum is unsolved, the
    WeightedSum self-check showing its hint, Square's a green box, and the last cell the
    learner's progress?"""
    page = lab_page
    open_notebook(page, RELATIVE)
    assert page.evaluate("() => window.jupyterapp.hasPlugin("
                         "'@jupyter/nbgrader:validate-assignment')")
    assert not page.evaluate("() => window.jupyterapp.hasPlugin("
                             "'@jupyter/nbgrader:create-assignment')")
    run_all(page, allow_errors=True)  # the unsolved self-check raises
    cells = _cells(page)
    by_id = {cell["id"]: cell for cell in cells}
    unsolved = _text(by_id["WeightedSum"]["outputs"])
    assert "WeightedSum is not implemented yet" in unsolved, unsolved
    solved = by_id["Square"]["outputs"]
    assert "✓ Square passes every check" in _text(solved)
    assert any("#edf7ed" in str(o.get("data", {}).get("text/html", "")) for o in solved)
    assert "This lesson (00_template)" in _text(cells[-1]["outputs"])
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    cells_dom = page.locator(".jp-Notebook .jp-CodeCell")
    for name, index in (("square", [c["id"] for c in cells].index("Square")),
                        ("weighted_sum", [c["id"] for c in cells].index("WeightedSum")),
                        ("progress", len(cells) - 1)):
        cells_dom.nth(index).scroll_into_view_if_needed()
        cells_dom.nth(index).screenshot(path=str(SCREENSHOTS / f"run_all_{name}.png"))


def test_validate_still_reports_the_unsolved_exercise(half_done):
    """Does nbgrader's Validate (what the toolbar's Validate button runs) still fail the
    notebook on the WeightedSum test cell, though every cell runs on?"""
    done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(half_done)],
                          capture_output=True, text=True, cwd=half_done.parent, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    said = done.stdout + done.stderr
    assert "VALIDATION FAILED ON 1 CELL(S)" in said, said
    assert 'self_check("WeightedSum", WeightedSum)' in said
