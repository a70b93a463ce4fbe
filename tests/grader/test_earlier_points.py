"""Marks by hand under a resubmission: points by hand given for an earlier submission, and a
comment given on one, said so on the learner's feedback page and in grades.csv until the
instructor decides again; and the comments column of grades.csv."""

from nbgrader.api import Gradebook

from grader.gradebook import db_url
from grader.manual import give
from tests.grader.test_manual import _autograded, made, root  # noqa: F401 (fixtures)


def _table(root) -> str:
    """The feedback page's table of graded tests for alice's MyLinearFunction, passed."""
    from nbformat.v4 import new_code_cell, new_notebook

    from grader.feedback import FeedbackSummary

    test = new_code_cell("self_check(...)", metadata={"nbgrader": {
        "grade_id": "MyLinearFunction", "grade": True, "solution": False, "points": 2,
        "score": 1}})
    test.outputs = [{"output_type": "stream", "name": "stdout",
                     "text": "✓ MyLinearFunction passes every check\n"}]
    notebook = new_notebook(cells=[test])
    FeedbackSummary().preprocess(notebook, {"nbgrader": {
        "db_url": db_url(root), "notebook": "02_linear", "assignment": "02_linear",
        "student": "alice"}})
    return notebook.cells[0].source


def _regraded(root, points: float, timestamp=None) -> None:
    """alice's resubmission graded as ``make autograde`` records it: MyLinearFunction's
    automatic points now ``points`` (and the hand-in time ``timestamp``, where given)."""
    from datetime import datetime

    from grader.earlier_points import note_earlier, note_earlier_comments
    from grader.manual import hand_marks

    before = hand_marks(root, "alice", "02_linear")
    _autograded(root, "MyLinearFunction", points)
    if timestamp:
        with Gradebook(db_url(root)) as gradebook:
            gradebook.find_submission("02_linear", "alice").timestamp = datetime.fromisoformat(
                timestamp)
            gradebook.db.commit()
    after = hand_marks(root, "alice", "02_linear")
    note_earlier(root, "alice", "02_linear", before.points, after.points)
    note_earlier_comments(root, "alice", "02_linear", before, after)


def test_points_by_hand_under_a_resubmission_say_on_the_page_they_were_for_an_earlier_one(root):
    """Issue 68: a learner fixed an exercise the instructor had graded by hand, and the regrade
    changed its automatic points; the instructor has not taken them. Does the feedback page say
    the points by hand (and the comment) were given for an earlier submission, beside the new
    result, without the automatic points or anything else of the instructor's; does a new
    comment read as the current submission's while the points still say earlier; and do the
    points stop saying so once the instructor decides them again (POINTS= or AUTOMATIC=1)?"""
    from grader.earlier_points import earlier

    give(root, "02_linear", "alice", "MyLinearFunction", points=1, comment="float32 step")
    assert "| 1 / 2 (by hand) | ✓ MyLinearFunction passes every check · Your instructor: " \
           "float32 step |" in _table(root)
    _regraded(root, 2)
    assert earlier(root, "alice", "02_linear") == {"MyLinearFunction"}
    shown = _table(root)
    assert ("| 1 / 2 (by hand, given for an earlier submission) | ✓ MyLinearFunction passes "
            "every check · Your instructor (on an earlier submission): float32 step |") in shown
    assert "automatic" not in shown
    give(root, "02_linear", "alice", "MyLinearFunction", comment="better now")
    assert ("(by hand, given for an earlier submission) | ✓ MyLinearFunction passes every "
            "check · Your instructor: better now |") in _table(root)
    give(root, "02_linear", "alice", "MyLinearFunction", points=1)
    assert "earlier" not in _table(root) and earlier(root, "alice", "02_linear") == set()


def test_automatic_keeps_a_comment_on_an_earlier_submission_labelled_so(root):
    """Trial 82: after a resubmission, `make manual ... AUTOMATIC=1` dropped the points by hand
    and the kept comment (about the earlier submission's bug) lost its "(on an earlier
    submission)" label, beside a ✓ as if it were about the current one. Does the comment keep
    the label on the page and in grades.csv, does the command say so, and does only a new
    comment (COMMENT=) take it away?"""
    from grader.grades_csv import export_grades

    give(root, "02_linear", "alice", "MyLinearFunction", points=1, comment="float32 step")
    _regraded(root, 2)
    line = give(root, "02_linear", "alice", "MyLinearFunction", automatic=True)
    assert line.endswith("1 (by hand) -> 2 (automatic) of 2 points; your comment kept, still "
                         "shown as given on an earlier submission (COMMENT= replaces or clears "
                         "it)")
    shown = _table(root)
    assert "(by hand" not in shown
    assert ("| ✓ MyLinearFunction passes every check · Your instructor (on an earlier "
            "submission): float32 step |") in shown
    row, = export_grades(root, root / "grades.csv")
    assert row["comments"] == "MyLinearFunction (on an earlier submission): float32 step"
    give(root, "02_linear", "alice", "MyLinearFunction", points=2)  # points only: label kept
    assert "Your instructor (on an earlier submission): float32 step" in _table(root)
    give(root, "02_linear", "alice", "MyLinearFunction", comment="fixed, well done")
    assert "· Your instructor: fixed, well done |" in _table(root)


def test_a_comment_rewritten_in_the_formgrader_is_about_the_current_submission(root):
    """A comment given on an earlier submission, then rewritten in the formgrader (not through
    `make manual`): is the new comment shown without the earlier label, on the page and in
    grades.csv?"""
    from grader.grades_csv import export_grades

    give(root, "02_linear", "alice", "MyLinearFunction", comment="float32 step")
    _regraded(root, 2)
    assert "Your instructor (on an earlier submission): float32 step" in _table(root)
    with Gradebook(db_url(root)) as gradebook:
        gradebook.find_comment("answer_MyLinearFunction", "02_linear", "02_linear",
                               "alice").manual_comment = "fixed now"
        gradebook.db.commit()
    assert "· Your instructor: fixed now |" in _table(root)
    assert export_grades(root, root / "grades.csv")[0]["comments"] == \
        "MyLinearFunction: fixed now"


def test_a_comment_under_a_new_hand_in_is_on_an_earlier_submission_whatever_its_points(root):
    """A comment alone (no points by hand) and a resubmission whose automatic points did not
    move: is the comment labelled as on an earlier submission once the new hand-in is graded,
    and not after a regrade of the same hand-in (same time, same points)?"""
    give(root, "02_linear", "alice", "MyLinearFunction", comment="see me")
    _regraded(root, 0)  # graded again, the same notebook
    assert "Your instructor: see me" in _table(root)
    _regraded(root, 0, timestamp="2026-01-07 10:00:00")  # a new hand-in, the same points
    assert "Your instructor (on an earlier submission): see me" in _table(root)


def test_grades_csv_has_each_exercises_comment_on_one_line(root):
    """Trial 82: comments could be checked only on the feedback pages. Does grades.csv give the
    instructor's comment of each exercise that has one, in the notebook's order, on one line,
    and leave the column empty where there is none?"""
    import csv

    from grader.grades_csv import export_grades

    assert export_grades(root, root / "grades.csv")[0]["comments"] == ""
    give(root, "02_linear", "alice", "Bilinear", comment="good;\nbut see the hint")
    give(root, "02_linear", "alice", "MyLinearFunction", comment="right idea")
    export_grades(root, root / "grades.csv")
    with open(root / "grades.csv", newline="") as handle:
        row, = csv.DictReader(handle)
    assert row["comments"] == "MyLinearFunction: right idea; Bilinear: good; but see the hint"
