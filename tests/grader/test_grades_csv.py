"""grader.grades_csv: every notebook of every learner, graded or not, with its status."""

import os
import sys
from pathlib import Path

from nbgrader.api import Gradebook

from grader.grades_csv import export_grades, status_report
from grader.releases import db_url


def test_a_notebook_handed_in_but_not_graded_is_listed_as_not_graded(tmp_path, monkeypatch):
    """Does a learner who handed a lesson in that was never graded (so not in the gradebook
    yet) get a row with the status not-graded, beside a learner who handed in nothing, and is
    no row made for a folder that holds no released lesson?"""
    # a new gradebook runs alembic, from this environment's bin/
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get("PATH", "")]))
    with Gradebook(db_url(tmp_path)) as gradebook:
        gradebook.add_assignment("00_demo")
        gradebook.add_notebook("00_demo", "00_demo")
        gradebook.add_student("ana")
    (tmp_path / "submitted" / "ben" / "00_demo").mkdir(parents=True)
    (tmp_path / "submitted" / ".ipynb_checkpoints").mkdir()  # no learner
    (tmp_path / "submitted" / "cy" / "99_unreleased").mkdir(parents=True)  # no released lesson
    rows = export_grades(tmp_path, tmp_path / "grades.csv")
    assert {row["student_id"]: (row["status"], row["reason"]) for row in rows} == {
        "ana": ("not-submitted", "nothing submitted"),
        "ben": ("not-graded", "submitted but not graded yet")}
    assert "ben 00_demo/00_demo: not-graded" in status_report(rows)
