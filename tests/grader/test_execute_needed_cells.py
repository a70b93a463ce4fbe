"""Leaving out the demo cells grading does not need changes no grade: lesson 00 graded with and
without them (AUTOGRADER_RUN_EVERY_CELL) gives the same scores to a right answer, a wrong one
and a right one that reads a name a demo cell defines (that demo cell still runs)."""

import dataclasses
import re
import textwrap

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader import batch
from grader.gradebook import db_url
from grader.lessons import source_notebook
from grader.needed_cells import NOT_NEEDED_NOTE
from grader.settings import Settings
from tests.released import released_root
from tools.catalogue import mistakes
from tools.submissions import solved, with_answer

# One worker runs the module: the class is graded (both ways) once, not once per worker.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("needed-cells")]

LESSON = "00_template"
SETTINGS = Settings(cell_timeout=60, notebook_timeout=300, memory_limit_mb=2048, sandbox="auto")
DEMO_NAME_READ = ("        assert callable(passes_gradcheck)  # defined by a demo cell before "
                  "WeightedSum's\n")


def _submissions(released) -> dict[str, nbformat.NotebookNode]:
    right = solved(released, source_notebook(LESSON))
    answer = next(cell for cell in right.cells if cell.metadata.get("nbgrader", {})
                  .get("grade_id") == "answer_WeightedSum").source
    wrong = next(m for m in mistakes() if m.exercise == "Square" and m.nbgrader)
    reader = re.sub(r"(def forward\(ctx[^)]*\):\n)", lambda m: m[1] + DEMO_NAME_READ, answer,
                    count=1)
    assert reader != answer
    return {"right": right,
            "wrong": with_answer(right, "answer_Square", textwrap.dedent(wrong.answer_cell)),
            "reads-demo": with_answer(right, "answer_WeightedSum", reader)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(root, scores) per way of grading: scores is student -> test -> score."""
    results = {}
    for every_cell in (False, True):
        root = tmp_path_factory.mktemp(f"every-cell-{every_cell}")
        released_root(tmp_path_factory, root, [LESSON])
        released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
        for student, notebook in _submissions(released).items():
            folder = root / "submitted" / student / LESSON
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{LESSON}.ipynb")
        settings = dataclasses.replace(SETTINGS, run_every_cell=every_cell)
        batch.autograde(root, [LESSON], workers=2, settings=settings, each=False,
                        stream=open("/dev/null", "w"))
        with Gradebook(db_url(root)) as gradebook:
            scores = {student: {grade.name: grade.score for grade in gradebook
                                .find_submission_notebook(LESSON, LESSON, student).grades}
                      for student in ("right", "wrong", "reads-demo")}
        results[every_cell] = root, scores
    return results


def _executed(root, student: str) -> nbformat.NotebookNode:
    return nbformat.read(root / "autograded" / student / LESSON / f"{LESSON}.ipynb", as_version=4)


def test_scores_are_those_of_running_every_cell(graded):
    pruned, every = graded[False][1], graded[True][1]
    assert pruned == every
    assert pruned["reads-demo"] == pruned["right"]
    assert pruned["wrong"]["Square"] == 0 < pruned["right"]["Square"]
    assert all(score > 0 for score in pruned["right"].values())


def test_demo_cells_nobody_needs_are_left_out_and_a_read_one_runs(graded):
    left_out = [cell for cell in _executed(graded[False][0], "right").cells
                if cell.cell_type == "code" and cell.outputs
                and cell.outputs[0].get("text") == NOT_NEEDED_NOTE]
    assert left_out
    read = next(cell for cell in _executed(graded[False][0], "reads-demo").cells
                if cell.cell_type == "code" and cell.source.startswith("def passes_gradcheck"))
    assert all(output.get("text") != NOT_NEEDED_NOTE for output in read.outputs)
    every = _executed(graded[True][0], "right").cells
    assert not any(output.get("text") == NOT_NEEDED_NOTE
                   for cell in every if cell.cell_type == "code" for output in cell.outputs)
