"""A term as an instructor runs it, with the course's own commands (``python -m grader ...``,
what ``make release|autograde|feedback|grades`` run): two lessons released, only the first
handed in, by learners who pasted their answers into a new notebook, killed their kernel or
replaced what grading uses; then a test cell added to the lesson under its grades.
"""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.gradebook import db_url
from grader.lessons import ROOT, source_notebook
from tools.notebooks import solution_notebook
from tools.submissions import solved, with_answer

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("term")]

LESSON, UNSUBMITTED = "00_template", "01_sigmoid"
BEFORE = "2026-01-05 09:00:00.000000 UTC"  # every first submission: before the new test cell
KILLS_KERNEL = "import os\nos._exit(1)"
REPLACES_GRADING = """
import torch
torch.autograd.gradcheck = lambda *args, **kwargs: True

def grade(*args, **kwargs):
    print("✓ all good")
"""
NEW_TEST = """\
### BEGIN HIDDEN TESTS
x = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
Square.apply(x).sum().backward()
assert torch.allclose(x.grad, 2 * x.detach()), "Square's gradient is not 2x"
### END HIDDEN TESTS
"""


def run(*args: str, root: Path) -> tuple[int, str]:
    """``python -m grader ARGS`` in course root ``root``: exit status and everything printed.
    (nbgrader's feedback, run in the course root, imports this checkout's configuration.)"""
    environment = {**os.environ, "COURSE_ROOT": str(root), "AUTOGRADER_CELL_TIMEOUT": "60"}
    if args[0] == "feedback":
        environment["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def submit(root: Path, student: str, notebook, timestamp: str = BEFORE) -> None:
    folder = root / "submitted" / student / LESSON
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{LESSON}.ipynb")
    (folder / "timestamp.txt").write_text(timestamp)


def rows(root: Path) -> dict[str, dict]:
    with open(root / "grades.csv") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)
                if row["assignment"] == LESSON}


def page(root: Path, student: str) -> str:
    return (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text()


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """Both lessons released, lesson 00 handed in by four learners and autograded; returns the
    course root and what autograde printed."""
    root = tmp_path_factory.mktemp("term")
    status, output = run("release", LESSON, UNSUBMITTED, root=root)
    assert status == 0, output
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    good = solved(released, source_notebook(LESSON))
    answer = next(cell.source for cell in good.cells
                  if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer_Square")
    submit(root, "clean", good)
    submit(root, "pasted", solution_notebook(source_notebook(LESSON)))
    submit(root, "dies", with_answer(good, "answer_Square", KILLS_KERNEL))
    submit(root, "replaces", with_answer(good, "answer_Square", answer + REPLACES_GRADING))
    status, output = run("autograde", "--workers", "2", root=root)
    assert status == 0, output
    return root, output


def test_autograde_prints_one_line_per_submission_and_what_to_look_at(term):
    """Does autograde keep each submission's outcome on its own line, with no warnings, and
    end with the notebooks to look at?"""
    _, output = term
    assert not re.search(r"\w+Warning: |\| WARNING\]|DuplicateCellId", output), output
    assert all(f"] {student} {LESSON}:" in output for student in ("clean", "dies", "replaces"))
    assert f"dies {LESSON}/{LESSON}: kernel-died:" in output
    assert f"replaces {LESSON}/{LESSON}: suspicious-code:" in output


@pytest.fixture(scope="module")
def feedback(term):
    """Feedback given for the term so far; returns the course root and what feedback said."""
    root, _ = term
    return root, run("feedback", root=root)


def test_feedback_skips_a_lesson_nobody_handed_in(feedback):
    """Does `make feedback` give feedback for lesson 00, say in one line that lesson 01 has
    nothing yet, and succeed, without nbgrader's warnings?"""
    root, (status, output) = feedback
    assert status == 0, output
    assert (f"nothing autograded yet, no feedback (1 lesson): {UNSUBMITTED}"
            in output.splitlines())
    assert f"{LESSON}: feedback for 4 students" in output
    assert re.search(rf"^\[1/4\] \w+ {LESSON}: feedback written", output, re.MULTILINE), output
    assert "| WARNING]" not in output and "Traceback" not in output
    assert all(page(root, student) for student in ("clean", "pasted", "dies", "replaces"))


def test_grades_show_every_status_where_the_instructor_looks(term):
    """Do grades.csv and the terminal give each notebook its status: full marks for answers
    pasted without nbgrader's metadata, kernel-died for os._exit, suspicious-code for replacing
    gradcheck and grade; and does lesson 01 read not-submitted?"""
    root, _ = term
    status, output = run("grades", root=root)
    assert status == 0, output
    graded = rows(root)
    assert graded["clean"]["status"] == "ok" and float(graded["clean"]["score"]) == 4.0
    assert graded["pasted"]["status"] == "no-nbgrader-metadata"
    assert float(graded["pasted"]["score"]) == 4.0
    assert "matched 3 of 3 answer cells" in graded["pasted"]["reason"]
    assert graded["dies"]["status"] == "kernel-died"
    assert graded["replaces"]["status"] == "suspicious-code"
    assert "replaces a function that grading uses" in graded["replaces"]["reason"]
    assert "torch.autograd.gradcheck" in graded["replaces"]["reason"]
    assert f"pasted {LESSON}/{LESSON}: no-nbgrader-metadata" in output
    assert "4 not-submitted" in output  # lesson 01, counted, not listed one by one


def test_the_feedback_page_says_how_grading_went(feedback):
    """Does a learner whose answer killed the kernel read so in the hint of the test it cost,
    with the notebook's status on the page; does the formgrader's notebook show a suspicious
    line to the instructor, and the learner's page not?"""
    root, _ = feedback
    dies = page(root, "dies")
    assert "Grading status" in dies and "kernel-died" in dies
    assert "os._exit" in dies and "then: " in dies
    # trial 82: under the cell that killed it, as a cell's own error is shown (not only above)
    assert "Python stopped while this cell ran: the kernel exited with status 1" in dies
    autograded = (root / "autograded" / "replaces" / LESSON / f"{LESSON}.ipynb").read_text()
    assert "suspicious-code" in autograded
    assert "suspicious-code" not in page(root, "replaces")
    assert "Graded normally" in page(root, "clean")  # as an ok page with a note reads (issue 68)
    assert "Graded normally" in page(root, "replaces")  # suspicious-code: for the instructor
    assert "Generated from" not in page(root, "clean")


@pytest.fixture(scope="module")
def added(feedback):
    """A test cell added to lesson 00's source after feedback was given, a comment and half a
    point of extra credit the instructor had given kept; returns the course root and what each
    release said."""
    root, _ = feedback
    with Gradebook(db_url(root)) as gradebook:
        comment = gradebook.find_comment("answer_Square", LESSON, LESSON, "clean")
        comment.manual_comment = "Neat: you saved the input, not the output."
        gradebook.find_grade("Square", LESSON, LESSON, "pasted").extra_credit = 0.5
        gradebook.db.commit()
    path = root / "source" / LESSON / f"{LESSON}.ipynb"
    source = nbformat.read(path, as_version=4)
    after = next(i for i, cell in enumerate(source.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "Square")
    cell = nbformat.v4.new_code_cell(NEW_TEST)
    cell.id = "square-again"
    cell.metadata = {"nbgrader": {"grade": True, "grade_id": "Square_again", "locked": True,
                                  "points": 2, "schema_version": 3, "solution": False}}
    source.cells.insert(after + 1, cell)
    nbformat.write(source, path)
    refused = run("release", LESSON, root=root)
    regraded = run("release", LESSON, "--regrade", "--workers", "2", root=root)
    return root, refused, regraded


def test_release_says_how_to_add_a_test_cell_under_grades(added):
    """Does a plain release refuse the changed lesson without a traceback, name the command
    that releases it, and leave its release as it was?"""
    root, (status, output), _ = added
    assert status == 1
    assert "NOT released 00_template" in output and "Traceback" not in output
    assert "make release LESSONS=00_template REGRADE=1" in output
    assert output.strip().splitlines()[-1].startswith(  # expected, not a crash (issue 48)
        "not released: 00_template (why: above")


def test_regrade_releases_it_and_keeps_the_grades(added):
    """Does `--regrade` release the new test cell (said once, before the grading), grade every
    submission again (the new cell included), keep the instructor's comment and extra credit,
    the score on each submission's line counting them (they are put back before it is
    printed), and end with what it kept?"""
    root, _, (status, output) = added
    assert status == 0, output
    released = (root / "release" / LESSON / f"{LESSON}.ipynb").read_text()
    assert "Square_again" in released
    assert "graded 4 (" in output and "skipped 0 unchanged" in output
    with Gradebook(db_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(LESSON, LESSON, "clean")
        assert {grade.name: grade.score for grade in notebook.grades} == {
            "Square": 1.0, "Square_again": 2.0, "WeightedSum": 1.0, "Outer": 2.0}
        assert gradebook.find_comment("answer_Square", LESSON, LESSON, "clean").manual_comment \
            == "Neat: you saved the input, not the output."
        assert gradebook.find_grade("Square", LESSON, LESSON, "pasted").extra_credit == 0.5
        pasted = gradebook.find_submission(LESSON, "pasted").score
    assert pasted % 1 == 0.5
    assert re.search(rf"\] pasted {LESSON}: {pasted:g}/6 points \(0.5 by hand\)", output), output
    assert "kept the 1 manual grade and 1 comment" in output.strip().splitlines()[-1], output
    assert output.count(f"released {LESSON}") == 1, "said released again after the summary"


def test_a_test_cell_added_later_is_not_blamed_on_the_learner(added):
    """Is a notebook handed in before the new cell existed noted added-test-cell (not
    deleted-test-cell; its status its own, ok), said once for the lesson, while one handed in
    after, without it, is deleted-test-cell?"""
    root, _, _ = added
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    deleter = solved(released, source_notebook(LESSON))
    deleter.cells = [cell for cell in deleter.cells
                     if cell.metadata.get("nbgrader", {}).get("grade_id") != "Square_again"]
    submit(root, "deleter", deleter, timestamp="2099-01-01 00:00:00.000000 UTC")
    # issue 68: a copy of the release before the cell was added, handed in after it was: the
    # release it was made from never held the cell, so it is not said to be deleted
    fetched_before = nbformat.read(root / "submitted" / "clean" / LESSON / f"{LESSON}.ipynb",
                                   as_version=4)
    submit(root, "late", fetched_before, timestamp="2099-01-01 00:00:00.000000 UTC")
    assert run("autograde", "--workers", "2", root=root)[0] == 0
    status, output = run("grades", root=root)
    graded = rows(root)
    assert graded["clean"]["status"] == "ok"
    assert "Square_again was added to the lesson" in graded["clean"]["reason"]
    # trial 82: the late copy is not counted among those "handed in before it"
    assert re.search(rf"{LESSON}: test cell Square_again added and graded in \d+ notebooks that "
                     r"never held it: \d+ handed in before it, 1 after it was added, from a copy "
                     r"fetched before \(", output), output
    assert graded["clean"]["comments"] == "Square: Neat: you saved the input, not the output."
    assert "clean 00_template/00_template" not in output
    assert float(graded["clean"]["score"]) == 6.0
    assert graded["deleter"]["status"] == "deleted-test-cell"
    assert graded["late"]["status"] == "ok", graded["late"]
    assert "never held the cell" in graded["late"]["reason"]
    assert graded["dies"]["status"] == "kernel-died"  # its real status, not hidden


def test_a_forced_regrade_says_what_it_kept_of_the_marks_by_hand(added):
    """Trial 82: `python -m grader autograde <lesson> --force` kept the manual grades and
    comments but said nothing of them. Does it say what it kept, as a REGRADE=1 release does?"""
    root, _, _ = added
    status, output = run("autograde", LESSON, "--force", "--student", "clean", "--student",
                         "pasted", root=root)
    assert status == 0, output
    assert ("marks given by hand on the regraded submissions: kept the 1 manual grade and 1 "
            "comment") in output.splitlines(), output
