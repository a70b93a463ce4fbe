"""grader.added_tests (`make add-test`): a test cell of the instructor's own added to a lesson's
source notebook from the command line, as nbgrader's Create Assignment panel would, where the
trial's instructor had to edit the notebook's JSON by hand."""

import os
import subprocess
import sys

import nbformat
import pytest

from grader.added_tests import add_test_cell
from grader.lessons import ROOT, RUN_ON
from grader.notebook_format import grade_id, is_test_cell

LESSON = "98_trial"
CODE = 'assert twice(3) == 6, "twice(3) is not 6"\n'


def _root(tmp_path):
    """A course root whose lesson has two exercises, each an answer and a test cell."""
    cells = []
    for name in ("Twice", "Thrice"):
        factor = {"Twice": 2, "Thrice": 3}[name]
        answer = nbformat.v4.new_code_cell(f"def {name.lower()}(x):\n    return {factor} * x")
        answer.metadata["nbgrader"] = {"grade": False, "solution": True, "locked": False,
                                       "grade_id": f"answer_{name}", "schema_version": 3}
        test = nbformat.v4.new_code_cell(f"assert {name.lower()}(1)")
        test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                     "grade_id": name, "points": 1, "schema_version": 3}
        cells += [answer, test, nbformat.v4.new_markdown_cell("prose")]
    (tmp_path / "source" / LESSON).mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells),
                   tmp_path / "source" / LESSON / f"{LESSON}.ipynb")
    return tmp_path


def _cells(root):
    return nbformat.read(root / "source" / LESSON / f"{LESSON}.ipynb", as_version=4).cells


def test_a_test_cell_lands_after_the_test_it_extends_as_nbgrader_makes_one(tmp_path):
    """Is the cell an autograded, locked nbgrader test with its points and code, tagged as the
    course's test cells are, with a valid id, right after the test cell named (or the last
    test cell), a valid notebook; and does the line say how to release it?"""
    root = _root(tmp_path)
    line = add_test_cell(root, LESSON, "twice_again", CODE, 2, after="Twice")
    assert line.startswith("added test cell twice_again (2 points) after Twice in ")
    assert line.endswith(f"make release LESSONS={LESSON} (with REGRADE=1 once submissions "
                         "are graded)")
    cells = _cells(root)
    assert [grade_id(cell) for cell in cells if is_test_cell(cell)] == [
        "Twice", "twice_again", "Thrice"]
    added = cells[2]
    assert added.source == CODE.strip("\n") and added.id == "twice_again"
    assert added.metadata["nbgrader"] == {"grade": True, "solution": False, "locked": True,
                                          "grade_id": "twice_again", "points": 2,
                                          "schema_version": 3}
    assert added.metadata["tags"] == [RUN_ON]
    nbformat.validate(nbformat.read(root / "source" / LESSON / f"{LESSON}.ipynb",
                                    as_version=4))
    add_test_cell(root, LESSON, "last_one", CODE, 1)
    assert grade_id(_cells(root)[6]) == "last_one"  # after Thrice, before its prose


@pytest.mark.parametrize("name, after, points, code, refusal", [
    ("Twice", None, 1, CODE, "already has a cell 'Twice'"),
    ("twice again", None, 1, CODE, "letters, digits and _ only"),
    ("more", "Nope", 1, CODE, "has no test cell 'Nope'; its test cells: Twice, Thrice"),
    ("more", None, -1, CODE, "0 or more"),
    ("more", None, 1, "\n", "code is empty"),
])
def test_what_would_make_a_bad_cell_is_refused_and_nothing_written(tmp_path, name, after,
                                                                   points, code, refusal):
    root = _root(tmp_path)
    before = (root / "source" / LESSON / f"{LESSON}.ipynb").read_bytes()
    with pytest.raises(ValueError, match=refusal.replace("(", r"\(")):
        add_test_cell(root, LESSON, name, code, points, after=after)
    assert (root / "source" / LESSON / f"{LESSON}.ipynb").read_bytes() == before
    with pytest.raises(ValueError, match="make release LESSONS=99_none"):
        add_test_cell(root, "99_none", "more", CODE, 1)


def test_make_add_test_runs_the_command_with_each_variable(tmp_path):
    """Does `make add-test` pass LESSON, NAME, POINTS, FILE and AFTER to `python -m grader
    add-test`, and does the command write the cell in the course root COURSE_ROOT names?"""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", "add-test", "LESSON=03",
                           "NAME=scale_positive", "POINTS=1", "FILE=t.py", "AFTER=FakeQuantize"],
                          cwd=ROOT, text=True, capture_output=True, env=environment, check=True)
    assert ('-m grader add-test 03 --name "scale_positive" --points "1" --file "t.py" '
            '--after "FakeQuantize"') in " ".join(done.stdout.replace("\\\n", " ").split())
    root = _root(tmp_path)
    (tmp_path / "t.py").write_text(CODE)
    ran = subprocess.run([sys.executable, "-m", "grader", "add-test", LESSON, "--name", "more",
                          "--points", "1", "--file", str(tmp_path / "t.py")], cwd=ROOT,
                         text=True, capture_output=True, env={**os.environ,
                                                              "COURSE_ROOT": str(root)})
    assert ran.returncode == 0, ran.stderr
    assert "added test cell more (1 point) after Thrice" in ran.stdout


def test_a_test_its_own_solution_fails_is_refused_and_nothing_written(tmp_path):
    """Instructor trial 2: a test cell added with a wrong assert fails every learner. Does
    `make add-test` run the new cell on the lesson's solution (the source notebook) and refuse,
    writing nothing, where it fails there?"""
    root = _root(tmp_path)
    before = (root / "source" / LESSON / f"{LESSON}.ipynb").read_bytes()
    with pytest.raises(ValueError, match="fails on the lesson's own solution \\(AssertionError: "
                                         "twice\\(3\\) is not 7\\)"):
        add_test_cell(root, LESSON, "wrong", 'assert twice(3) == 7, "twice(3) is not 7"', 1,
                      after="Twice")
    assert (root / "source" / LESSON / f"{LESSON}.ipynb").read_bytes() == before
