"""grader.grades_csv: every notebook of every learner, graded or not, with its status."""

import csv
import os
import sys
from pathlib import Path

from nbgrader.api import Gradebook

from grader.grades_csv import export_grades, status_report
from grader.instructor import grades
from grader.ledger import Ledger
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


def test_a_test_cell_added_later_is_one_line_per_lesson_not_a_status(tmp_path, monkeypatch):
    """After a test cell is added under existing submissions (REGRADE=1), does each notebook
    keep the status of its own faults ("ok" when it has none), the note in its reason, and the
    screen say once per lesson how many notebooks got the cell, listing none of them as worth
    a look for it?"""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get("PATH", "")]))
    added = {"kind": "added-test-cell", "cell": "extra",
             "message": "test cell extra was added to the lesson on 2026-01-02 UTC, after this "
                        "notebook was handed in: put it in after its answer and graded it"}
    timeout = {"kind": "timeout", "cell": "answer_Square",
               "message": "answer_Square ran past the 60 s limit and was interrupted"}
    with Gradebook(db_url(tmp_path)) as gradebook:
        gradebook.add_assignment("00_demo")
        gradebook.add_notebook("00_demo", "00_demo")
        ledger = Ledger(tmp_path)
        for student, faults in [("ana", [added]), ("ben", [added]), ("cy", [timeout, added])]:
            gradebook.add_student(student)
            gradebook.add_submission("00_demo", student)
            ledger.record(student, "00_demo", {"notebooks": {"00_demo": {
                "status": faults[0]["kind"], "faults": faults,
                "reason": "; ".join(fault["message"] for fault in faults)}}})
    rows = {row["student_id"]: row for row in export_grades(tmp_path, tmp_path / "grades.csv")}
    assert {student: row["status"] for student, row in rows.items()} == {
        "ana": "ok", "ben": "ok", "cy": "timeout"}
    assert "test cell extra was added" in rows["ana"]["reason"]
    report = status_report(list(rows.values())).splitlines()
    assert report[0] == "statuses: 1 timeout, 2 ok"
    assert report[1].startswith("00_demo: test cell extra added and graded in 3 notebooks")
    # the note has its line above: the notebook's line gives its whole width to the faults
    assert report[2:] == ["  cy 00_demo/00_demo: timeout: answer_Square ran past the 60 s limit "
                          "and was interrupted"]


def test_grades_of_some_lessons_only(tmp_path, monkeypatch, capsys):
    """Does `make grades LESSONS=...` pass its lessons on, and the export then replace those
    lessons' rows only, keeping every other lesson's (one no longer in the course too), and
    say so; say plainly of a lesson nobody handed in that nobody did (no bare "statuses: "),
    and that the status counts cover the lessons named only?"""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                os.environ.get("PATH", "")]))
    with Gradebook(db_url(tmp_path)) as gradebook:
        for lesson in ("00_demo", "01_demo"):
            gradebook.add_assignment(lesson)
            gradebook.add_notebook(lesson, lesson)
        gradebook.add_student("ana")
    output = tmp_path / "grades.csv"
    assert len(export_grades(tmp_path, output)) == 2
    with open(output, "a") as handle:  # a lesson taken out of the course since
        handle.write("99_gone,99_gone,,,ana,,,,1.0,0.0,1.0,1.0,ok,\n")
    with Gradebook(db_url(tmp_path)) as gradebook:
        gradebook.add_student("ben")
    grades(tmp_path, output, ["01_demo"])
    with open(output) as handle:
        written = [(row["assignment"], row["student_id"]) for row in csv.DictReader(handle)]
    assert written == [("00_demo", "ana"), ("01_demo", "ana"), ("01_demo", "ben"),
                       ("99_gone", "ana")]
    said = capsys.readouterr().out
    assert said == (f"nothing to update for 01_demo: nobody has handed it in yet; {output} "
                    "keeps its other 2 rows as the last run left them\n")
    (tmp_path / "submitted" / "ben" / "01_demo").mkdir(parents=True)
    grades(tmp_path, output, ["01_demo", "00_demo"])
    said = capsys.readouterr().out.splitlines()
    assert said[:3] == [
        f"grades written to {output} (5 rows; updated for 01_demo, 00_demo: 4 rows, the other 1 "
        "as the last run left them)",
        "nobody has handed in 00_demo yet",
        "statuses of 01_demo only (2 notebooks): 1 not-submitted, 1 not-graded"]
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    assert "-m grader grades $(LESSONS)" in makefile
