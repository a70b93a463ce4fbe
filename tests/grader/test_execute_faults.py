"""Fault isolation: one batch holds a clean submission and one submission per fault the grader
must survive (tools/faulty.py). Each fault gets its own status and reason in the grades CSV,
costs at most the exercise it touches, and the batch ends within its timeouts.
"""

import csv
import io
import os
import random
import re
import time

import nbformat
import psutil
import pytest
from nbgrader.api import Gradebook

from grader import batch, sandbox
from grader.gradebook import db_url
from grader.grades_csv import export_grades
from grader.ledger import Ledger
from grader.settings import Settings
from tools.faulty import EXPECTED, fault_submissions, stray_commands, write_folder
from tests.released import released_root
from grader.lessons import source_notebook

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("faults")]

LESSON, FIRST, SECOND = "00_template", "Square", "WeightedSum"
# A cell of the clean submission takes well under a second: six seconds is a wide margin on a
# busy machine, and each looping submission waits it out.
SETTINGS = Settings(cell_timeout=6, notebook_timeout=120, memory_limit_mb=1024,
                    sandbox="auto", output_limit_kb=1024, restart_limit=3)
SLACK = 30  # seconds a job may take beyond its notebook's budget: intake, kernel stop, files
TOKEN = random.randrange(10**6)  # marks this run's stray processes


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """The course root after one two-worker batch over every fault; returns (root, summary,
    seconds, output)."""
    root = tmp_path_factory.mktemp("faults")
    released_root(tmp_path_factory, root, [LESSON])
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    for student, files in fault_submissions(released, source_notebook(LESSON), LESSON,
                                            FIRST, SECOND, token=TOKEN).items():
        write_folder(root / "submitted" / student / LESSON, files)
    output = io.StringIO()
    began = time.monotonic()
    summary = batch.autograde(root, [LESSON], workers=2, settings=SETTINGS, stream=output)
    return root, summary, time.monotonic() - began, output.getvalue()


def _scores(root, student: str) -> dict[str, float]:
    with Gradebook(db_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
        return {grade.name: grade.score for grade in notebook.grades}


def _rows(root) -> dict[str, dict]:
    output = root / "grades.csv"
    export_grades(root, output)
    with open(output, newline="") as handle:
        return {row["student_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.parametrize("student", EXPECTED)
def test_each_fault_gets_its_status(course, student):
    """Does the grades CSV give each faulty submission the status naming its fault, with a
    reason, and the clean one "ok"?"""
    root = course[0]
    status, _ = EXPECTED[student]
    row = _rows(root)[student]
    assert row["status"] == status, row["reason"]
    assert bool(row["reason"]) == (status != "ok")


@pytest.mark.parametrize("student", EXPECTED)
def test_a_fault_costs_at_most_its_exercise(course, student):
    """Are the parts a fault does not touch graded as correct (the submissions are otherwise
    the solutions), and only the touched exercise, or the unreadable notebook, lost?"""
    root = course[0]
    _, cost = EXPECTED[student]
    points = {FIRST: 1.0, SECOND: 1.0, "Outer": 2.0}  # the lesson's exercises, its transfer last
    lost = {"first": {FIRST}, "second": {SECOND}, "all": set(points)}.get(cost, set())
    assert _scores(root, student) == {name: 0.0 if name in lost else full
                                      for name, full in points.items()}


def test_reasons_say_what_happened(course):
    """Do the reasons name the cell, the limit or the file, in words an instructor can act on?"""
    rows = _rows(course[0])
    assert "ignored the interrupt" in rows["loops-ignoring-sigint"]["reason"]
    assert "exited with status 3" in rows["kernel-exits"]["reason"]
    assert "1024 MiB" in rows["exhausts-memory"]["reason"]
    assert "not valid JSON" in rows["invalid-json"]["reason"]
    assert "is empty" in rows["empty-notebook"]["reason"]
    assert "my copy.ipynb" in rows["renamed-notebook"]["reason"]
    assert "torch.py" in rows["torch-py-beside"]["reason"]
    assert stray_commands(TOKEN)[0] in rows["leaves-processes"]["reason"]


def test_a_cell_out_of_memory_shows_one_line_not_the_graders_traceback(course):
    """Does the autograded notebook (which the feedback shows the learner) give the cell that
    ran out of memory one error line, the cap and the allocation that failed, and no frame of
    the grader's own files?"""
    path = course[0] / "autograded" / "exhausts-memory" / LESSON / f"{LESSON}.ipynb"
    errors = [output for cell in nbformat.read(path, as_version=4).cells
              if cell.cell_type == "code" for output in cell.get("outputs", [])
              if output.get("output_type") == "error" and output["ename"] == "MemoryError"]
    assert len(errors) == 1 and "1024 MiB" in errors[0]["evalue"]
    assert len(errors[0]["traceback"]) == 1 and "site-packages" not in str(errors[0])


def test_the_cell_whose_kernel_died_says_so_under_it(course):
    """Trial 82: the cell whose os._exit killed the kernel showed nothing under it. Does the
    autograded notebook (the feedback's) give that cell, and only it, one error line saying
    Python stopped there and how the kernel ended?"""
    path = course[0] / "autograded" / "kernel-exits" / LESSON / f"{LESSON}.ipynb"
    died = [(cell, output) for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "code" for output in cell.get("outputs", [])
            if output.get("ename") == "KernelDied"]
    assert len(died) == 1 and "os._exit(3)" in died[0][0].source
    assert died[0][1]["evalue"].startswith("Python stopped while this cell ran: the kernel "
                                           "exited with status 3")


def test_the_batch_ends_within_its_timeouts(course):
    """Does every submission finish within its notebook budget (plus a little set-up), with no
    grader error, and the batch report progress with an ETA?"""
    root, summary, _, output = course
    ledger = Ledger(root)
    slow = {student: ledger.get(student, LESSON)["seconds"] for student in EXPECTED}
    assert max(slow.values()) <= SETTINGS.notebook_timeout + SLACK, slow
    assert summary.failed == 0 and summary.graded == len(EXPECTED)
    lines = output.splitlines()
    assert len(lines) == len(EXPECTED) and all("(the rest: ETA " in line for line in lines[:-1])
    assert lines[-1].endswith("(all done)")


def test_no_process_outlives_the_batch(course):
    """Are the processes a submission left running gone, and every sandboxed kernel of the batch
    (a live process whose sandbox folder was already removed would be one that escaped)?"""
    low, high = sandbox.UID_RANGE
    strays = stray_commands(TOKEN)
    left = []
    for process in psutil.process_iter(["cmdline", "uids", "status"]):
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        command = " ".join(process.info["cmdline"] or [])
        base = re.search(r"(/\S*autograder-sandbox-[^/\s]+)/", command)
        uid = process.info["uids"].real if process.info["uids"] else 0
        orphaned = low <= uid < high and base is not None and not os.path.exists(base.group(1))
        if any(stray in command for stray in strays) or orphaned:
            left.append(command)
    assert left == []
