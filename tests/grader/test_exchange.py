"""A JupyterHub course end to end through nbgrader's exchange: the instructor releases, two
learners fetch and submit from their own folders (one solved, one untouched), the instructor
collects and grades with the course's own commands, releases feedback, and each learner fetches
it, as the Assignments tab does. Grades and feedback are those of `make autograde`."""

import csv
import filecmp
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from grader.course_config import COURSE_ID
from grader.lessons import ROOT
from tests.released import released_root
from tools.submissions import solved

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("exchange")]

LESSON = "00_template"
LEARNERS = ("ada", "bob")  # ada hands in the solved notebook, bob the untouched one


def _run(command: list[str], cwd: Path, root: Path) -> str:
    environment = {**os.environ, "COURSE_ROOT": str(root), "AUTOGRADER_CELL_TIMEOUT": "60"}
    done = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True)
    assert done.returncode == 0, " ".join(command) + "\n" + done.stdout + done.stderr
    return done.stdout + done.stderr


def _nbgrader(*args: str, cwd: Path, root: Path, exchange: Path, learner: str | None = None):
    """``nbgrader ARGS`` as the instructor (in the course root) or as ``learner`` (in their
    home, with their own exchange cache), against the exchange directory ``exchange``."""
    options = [f"--Exchange.root={exchange}", f"--CourseDirectory.course_id={COURSE_ID}"]
    if learner:
        options += [f"--student={learner}", f"--Exchange.cache={cwd / '.nbgrader-cache'}"]
    return _run([sys.executable, "-m", "nbgrader", *args, *options], cwd, root)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("hub")
    root, exchange = base / "instructor", base / "exchange"
    homes = {learner: base / learner for learner in LEARNERS}
    released_root(tmp_path_factory, root, [LESSON])  # as `make release` makes it
    _nbgrader("release_assignment", LESSON, cwd=root, root=root, exchange=exchange)
    source = nbformat.read(root / "source" / LESSON / f"{LESSON}.ipynb", as_version=4)
    for learner, home in homes.items():
        home.mkdir()
        _nbgrader("fetch_assignment", LESSON, cwd=home, root=root, exchange=exchange,
                  learner=learner)
        fetched = home / LESSON / f"{LESSON}.ipynb"
        if learner == "ada":
            nbformat.write(solved(nbformat.read(fetched, as_version=4), source), fetched)
        _nbgrader("submit", LESSON, cwd=home, root=root, exchange=exchange, learner=learner)
    # check_owner: one OS user plays every learner here; on a hub each learner is their own user
    _nbgrader("collect", LESSON, "--CollectApp.check_owner=False", cwd=root, root=root,
              exchange=exchange)
    for step in ("autograde", "feedback", "grades"):
        _run([sys.executable, "-m", "grader", step, LESSON], ROOT, root)
    _nbgrader("release_feedback", LESSON, cwd=root, root=root, exchange=exchange)
    for learner, home in homes.items():
        _nbgrader("fetch_feedback", LESSON, cwd=home, root=root, exchange=exchange,
                  learner=learner)
    return root, homes


def test_collect_brings_each_learner_s_notebook_as_submitted(course):
    """Is the notebook the instructor grades exactly the one the learner submitted?"""
    root, homes = course
    for learner, home in homes.items():
        submitted = root / "submitted" / learner / LESSON / f"{LESSON}.ipynb"
        assert filecmp.cmp(submitted, home / LESSON / f"{LESSON}.ipynb", shallow=False)


def test_grades_are_full_for_the_solved_notebook_and_zero_for_the_untouched_one(course):
    """Does the course's autograde give the solved copy full marks and the stubs none (graded,
    and listed as unanswered: every answer cell still holds its stub)?"""
    root, _ = course
    with (root / "grades.csv").open() as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert float(rows["ada"]["score"]) == float(rows["ada"]["max_score"]) > 0
    assert float(rows["bob"]["score"]) == 0
    assert (rows["ada"]["status"], rows["bob"]["status"]) == ("ok", "unanswered")


def test_each_learner_fetches_the_instructor_s_feedback(course):
    """Does fetch_feedback give each learner the feedback page the instructor generated?"""
    root, homes = course
    for learner, home in homes.items():
        fetched = sorted((home / LESSON / "feedback").glob(f"*/{LESSON}.html"))
        assert len(fetched) == 1, f"{learner} fetched {fetched}"
        generated = root / "feedback" / learner / LESSON / f"{LESSON}.html"
        assert filecmp.cmp(fetched[0], generated, shallow=False)
    bob = (homes["bob"] / LESSON / "feedback").glob(f"*/{LESSON}.html")
    assert "not implemented yet" in next(bob).read_text()
