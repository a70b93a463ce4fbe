"""grader.manual: points and comments given by hand from the command line, into the gradebook
fields the formgrader writes, with a clear refusal for anything the gradebook does not have."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from grader.gradebook import db_url
from grader.lessons import ROOT
from grader.batch import Summary
from grader.manual import ManualGradeError, by_hand, give, outvoted


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A gradebook with lesson 02 released (two graded exercises, worth 2 and 1) and alice's
    submission autograded to 0 and 1 points, made once (nbgrader runs alembic to make one: this
    environment's bin/ leads PATH)."""
    folder = tmp_path_factory.mktemp("gradebook")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), path])
    try:
        _make(folder)
    finally:
        os.environ["PATH"] = path
    return folder / "gradebook.db"


@pytest.fixture
def root(made, tmp_path):
    """A fresh copy of the gradebook for each test."""
    shutil.copy(made, tmp_path / "gradebook.db")
    return tmp_path


def _make(folder):
    with Gradebook(db_url(folder)) as gradebook:
        gradebook.update_or_create_assignment("02_linear")
        gradebook.update_or_create_notebook("02_linear", "02_linear")
        for name, points in (("MyLinearFunction", 2), ("Bilinear", 1)):
            gradebook.update_or_create_grade_cell(name, "02_linear", "02_linear",
                                                  max_score=points, cell_type="code")
            gradebook.update_or_create_solution_cell(f"answer_{name}", "02_linear", "02_linear")
        gradebook.add_student("alice")
        gradebook.add_submission("02_linear", "alice")
        gradebook.find_grade("Bilinear", "02_linear", "02_linear", "alice").auto_score = 1
        gradebook.find_grade("MyLinearFunction", "02_linear", "02_linear", "alice").auto_score = 0
        gradebook.db.commit()


def _grade(root, exercise):
    with Gradebook(db_url(root)) as gradebook:
        grade = gradebook.find_grade(exercise, "02_linear", "02_linear", "alice")
        comment = gradebook.find_comment(f"answer_{exercise}", "02_linear", "02_linear", "alice")
        return grade.manual_score, grade.score, comment.manual_comment


def test_points_and_a_comment_land_where_the_formgrader_puts_them(root):
    """Are the points the exercise's manual score (the score nbgrader counts) and the comment on
    its answer cell, and does the line say what changed?"""
    line = give(root, "02_linear", "alice", "MyLinearFunction", points=1.5,
                comment="right idea, wrong transpose")
    assert line == ("alice 02_linear MyLinearFunction: 0 (automatic) -> 1.5 (by hand) of 2 "
                    "points; comment set")
    assert _grade(root, "MyLinearFunction") == (1.5, 1.5, "right idea, wrong transpose")
    assert _grade(root, "Bilinear") == (None, 1, None)


def test_a_grade_changed_again_and_given_back_to_the_autograder(root):
    """Can a manual grade be changed, and dropped for the automatic score again?"""
    give(root, "02_linear", "alice", "MyLinearFunction", points=2)
    give(root, "02_linear", "alice", "MyLinearFunction", points=1)
    assert _grade(root, "MyLinearFunction")[:2] == (1, 1)
    line = give(root, "02_linear", "alice", "MyLinearFunction", automatic=True)
    assert line.endswith("1 (by hand) -> 0 (automatic) of 2 points")
    assert _grade(root, "MyLinearFunction")[:2] == (None, 0)


def test_points_alone_keep_the_comment_and_say_so_and_an_empty_comment_clears_it(root):
    """Does a grade given without a comment keep the one there and say so (with how to clear
    it), and does an empty comment clear it?"""
    give(root, "02_linear", "alice", "MyLinearFunction", points=1, comment="see me")
    line = give(root, "02_linear", "alice", "MyLinearFunction", automatic=True)
    assert line.endswith("of 2 points; your comment kept (COMMENT= clears it)")
    assert _grade(root, "MyLinearFunction")[2] == "see me"
    assert give(root, "02_linear", "alice", "MyLinearFunction", comment="").endswith(
        "; comment cleared")
    assert _grade(root, "MyLinearFunction")[2] == ""
    assert give(root, "02_linear", "alice", "MyLinearFunction", points=2).endswith(" points")


def _make_manual(*assignments: str) -> str:
    """The command `make manual` runs for alice's Bilinear with ``assignments`` (no COMMENT in
    the environment)."""
    environment = {key: value for key, value in os.environ.items()  # not make test's own make
                   if key not in ("COMMENT", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", "manual", "LESSON=02",
                           "STUDENT=alice", "EXERCISE=Bilinear", *assignments], cwd=ROOT,
                          text=True, capture_output=True, env=environment, check=True)
    return next(line for line in done.stdout.splitlines() if " -m grader manual " in line)


def test_make_manual_passes_an_empty_comment_and_leaves_out_an_absent_one():
    """Does `make manual ... COMMENT=` clear the comment (an empty --comment), while a call
    without COMMENT leaves --comment out, so the comment is kept?"""
    assert _make_manual("COMMENT=").endswith('--comment "$COMMENT"')
    assert _make_manual("POINTS=1").endswith('--exercise "Bilinear" --points 1')


def _autograded(root, exercise, points):
    with Gradebook(db_url(root)) as gradebook:
        gradebook.find_grade(exercise, "02_linear", "02_linear", "alice").auto_score = points
        gradebook.db.commit()


def test_a_resubmission_graded_under_points_by_hand_says_they_still_count(root):
    """When a regrade changes the automatic points of an exercise graded by hand (the learner
    fixed it after the instructor's grade), does the autograde report say the hand-given points
    still count, with the command that takes the new ones; and say nothing when the automatic
    points did not move?"""
    give(root, "02_linear", "alice", "MyLinearFunction", points=0.5, comment="see me")
    give(root, "02_linear", "alice", "Bilinear", points=1)
    before = by_hand(root, "alice", "02_linear")
    assert before == {"MyLinearFunction": (0.5, 0), "Bilinear": (1, 1)}
    _autograded(root, "MyLinearFunction", 2)
    lines = outvoted("alice", "02_linear", before, by_hand(root, "alice", "02_linear"))
    assert lines == ["alice 02_linear MyLinearFunction: your 0.5 by hand still counts, but the "
                     "automatic points changed from 0 to 2; keep it, or use the new ones: make "
                     "manual LESSON=02_linear STUDENT=alice EXERCISE=MyLinearFunction AUTOMATIC=1 "
                     "(COMMENT= also clears your comment)"]
    assert Summary(outvoted=lines).report() == lines[0]
    assert outvoted("alice", "02_linear", {}, by_hand(root, "alice", "02_linear")) == []
    assert by_hand(root, "bob", "02_linear") == {}


def test_points_or_automatic_settle_a_regrade_the_formgrader_would_list(root):
    """Instructor trial 2: after a resubmission's regrade under points by hand, nbgrader marks
    the grade "needs manual grade"; `make manual ... AUTOMATIC=1` (or POINTS=) settles it, as
    the formgrader's own page does. Is the flag cleared, so the formgrader no longer lists the
    notebook as needing manual grading while grades.csv is settled?"""
    def needs(exercise):
        with Gradebook(db_url(root)) as gradebook:
            return gradebook.find_grade(exercise, "02_linear", "02_linear",
                                        "alice").needs_manual_grade

    for exercise, settle in (("MyLinearFunction", {"automatic": True}),
                             ("Bilinear", {"points": 0.5})):
        give(root, "02_linear", "alice", exercise, points=1)
        with Gradebook(db_url(root)) as gradebook:  # as nbgrader's regrade leaves it
            gradebook.find_grade(exercise, "02_linear", "02_linear",
                                 "alice").needs_manual_grade = True
            gradebook.db.commit()
        give(root, "02_linear", "alice", exercise, **settle)
        assert needs(exercise) is False
    give(root, "02_linear", "alice", "Bilinear", comment="a comment alone settles nothing")
    assert needs("Bilinear") is False


@pytest.mark.parametrize("lesson, student, exercise, points, refusal", [
    ("03_ste", "alice", "SignSTE", 1, "no released lesson '03_ste' (released: 02_linear)"),
    ("02_linear", "bob", "Bilinear", 1, "no learner 'bob' is known"),
    ("02_linear", "alice", "Outer", 1, "02_linear has no graded cell 'Outer'; its graded cells: "
                                       "Bilinear, MyLinearFunction"),
    ("02_linear", "alice", "Bilinear", 3, "Bilinear is worth 0 to 1 point, not 3"),
    ("02_linear", "alice", "Bilinear", -1, "Bilinear is worth 0 to 1 point, not -1"),
])
def test_what_the_gradebook_does_not_have_is_refused_and_nothing_changes(
        root, lesson, student, exercise, points, refusal):
    with pytest.raises(ManualGradeError, match=refusal.replace("(", r"\(").replace(")", r"\)")):
        give(root, lesson, student, exercise, points=points)
    assert _grade(root, "Bilinear") == (None, 1, None)


def test_nothing_to_change_is_refused(root):
    with pytest.raises(ManualGradeError, match="nothing to change"):
        give(root, "02_linear", "alice", "Bilinear")


def test_points_given_by_hand_have_their_own_column_in_the_grades(root):
    """Does grades.csv count the points given by hand apart, and leave the column empty for a
    learner whose score is all automatic; does it give each exercise's points, marking those
    given by hand?"""
    from grader.grades_csv import export_grades

    assert export_grades(root, root / "grades.csv")[0]["by_hand"] == ""
    give(root, "02_linear", "alice", "MyLinearFunction", points=1.5)
    row, = export_grades(root, root / "grades.csv")
    assert (row["by_hand"], row["score"], row["max_score"]) == (1.5, 2.5, 3)
    assert row["exercises"] == "MyLinearFunction 1.5/2 (by hand); Bilinear 1/1"
    assert "by_hand" in (root / "grades.csv").read_text().splitlines()[0].split(",")


def test_the_feedback_table_shows_points_by_hand_beside_the_hint_and_the_comment(root):
    """Does the learner's table of graded tests say which points were given by hand, and put the
    instructor's comment on the answer right after the hint, and only a comment the instructor
    wrote (not nbgrader's "No response." on an unanswered cell)?"""
    from nbformat.v4 import new_code_cell, new_notebook

    from grader.feedback import FeedbackSummary

    give(root, "02_linear", "alice", "MyLinearFunction", points=1.5, comment="right idea")
    answer = new_code_cell("class MyLinearFunction: ...", metadata={"nbgrader": {
        "grade_id": "answer_MyLinearFunction", "solution": True, "grade": False,
        "comment": "right idea"}})
    test = new_code_cell("self_check(...)", metadata={"nbgrader": {
        "grade_id": "MyLinearFunction", "grade": True, "solution": False, "points": 2,
        "score": 1.5}})
    test.outputs = [{"output_type": "error", "ename": "GradingError",
                     "evalue": "your gradient for weight is transposed", "traceback": []}]
    unanswered = new_code_cell("raise NotImplementedError", metadata={"nbgrader": {
        "grade_id": "answer_Bilinear", "solution": True, "grade": False,
        "comment": "No response."}})  # nbgrader's own comment on an unchanged answer
    stub_test = new_code_cell("self_check(...)", metadata={"nbgrader": {
        "grade_id": "Bilinear", "grade": True, "solution": False, "points": 1, "score": 0}})
    notebook = new_notebook(cells=[answer, test, unanswered, stub_test])
    FeedbackSummary().preprocess(notebook, {"nbgrader": {
        "db_url": db_url(root), "notebook": "02_linear", "assignment": "02_linear",
        "student": "alice"}})
    assert ("| 1.5 / 2 (by hand) | ✗ your gradient for weight is transposed · Your instructor: "
            "right idea |") in notebook.cells[0].source
    assert "No response" not in notebook.cells[0].source


def test_an_unknown_learner_is_named_with_the_close_ids_and_a_known_one_told_to_autograde(root):
    """A typo (`STUDENT=frnk`, issue 68): does the refusal say no such learner is known and give
    the close ids, not advise `make autograde`; while a learner the course knows (a folder in
    submitted/) without a graded submission still gets that advice?"""
    (root / "submitted" / "frank" / "02_linear").mkdir(parents=True)
    with pytest.raises(ManualGradeError) as refused:
        give(root, "02_linear", "frnk", "Bilinear", points=1)
    assert str(refused.value) == ("no learner 'frnk' is known (not in the gradebook, no folder "
                                  "in submitted/); close names: frank")
    with pytest.raises(ManualGradeError) as refused:
        give(root, "02_linear", "zoe", "Bilinear", points=1)
    assert str(refused.value).endswith("the learners: alice, frank")
    with pytest.raises(ManualGradeError, match=r"frank has no graded submission of 02_linear "
                                               r"\(graded: alice\); run `make autograde` first"):
        give(root, "02_linear", "frank", "Bilinear", points=1)


def test_one_point_is_said_in_the_singular(root):
    """Does an exercise worth 1 say "of 1 point", not "of 1 points" (issue 68)?"""
    assert give(root, "02_linear", "alice", "Bilinear", points=0.5).endswith(
        "1 (automatic) -> 0.5 (by hand) of 1 point")
    with pytest.raises(ManualGradeError, match="Bilinear is worth 0 to 1 point, not 3"):
        give(root, "02_linear", "alice", "Bilinear", points=3)


def test_a_comment_alone_says_the_points_did_not_change_and_an_empty_clear_says_so(root):
    """Issue 68: a comment-only call printed `0 (automatic) -> 0 (automatic)`, as if it changed
    points, and clearing a comment that was never there said "comment cleared". Does the line
    say the points are unchanged, and that there was no comment to clear?"""
    line = give(root, "02_linear", "alice", "MyLinearFunction", comment="see me")
    assert line == ("alice 02_linear MyLinearFunction: 0 (automatic) of 2 points, points "
                    "unchanged; comment set")
    give(root, "02_linear", "alice", "MyLinearFunction", comment="")
    assert give(root, "02_linear", "alice", "MyLinearFunction", comment="").endswith(
        "points unchanged; there was no comment to clear")
    assert give(root, "02_linear", "alice", "Bilinear", comment="").endswith(
        "; there was no comment to clear")


def test_many_grades_at_once_from_a_csv_file(root):
    """Issue 68: `make manual` one grade at a time costs a start-up each. Does a CSV file
    (student, lesson, exercise, points, comment) give every row in one session, its lesson
    written as a number, `automatic` dropping points by hand, an empty cell keeping what is
    there?"""
    from grader.manual import give_file

    give(root, "02_linear", "alice", "Bilinear", points=0.5, comment="keep me")
    marks = root / "marks.csv"
    marks.write_text("student,lesson,exercise,points,comment\n"
                     "alice,2,MyLinearFunction,1.5,\"right idea, wrong transpose\"\n"
                     "alice,02_linear,Bilinear,automatic,\n")
    lines = give_file(root, marks, lambda lesson: "02_linear" if lesson in ("2", "02_linear")
                      else lesson)
    assert lines == [
        "alice 02_linear MyLinearFunction: 0 (automatic) -> 1.5 (by hand) of 2 points; comment set",
        "alice 02_linear Bilinear: 0.5 (by hand) -> 1 (automatic) of 1 point; your comment kept "
        "(COMMENT= clears it)"]
    assert _grade(root, "MyLinearFunction") == (1.5, 1.5, "right idea, wrong transpose")
    assert _grade(root, "Bilinear") == (None, 1, "keep me")


@pytest.mark.parametrize("rows, said", [
    ("alice,02_linear,Bilinear,3,\n", "row 3: Bilinear is worth 0 to 1 point, not 3"),
    ("bob,02_linear,Bilinear,1,\n", "row 3: no learner 'bob' is known"),
    ("alice,02_linear,Outer,1,\n", "row 3: 02_linear has no graded cell 'Outer'"),
    ("alice,02_linear,Bilinear,one,\n", "row 3: points 'one' is not a number"),
    ("alice,02_linear,Bilinear,,\n", "row 3: neither points nor a comment"),
    ("alice,99,Bilinear,1,\n", "row 3: no lesson '99'"),
    ("alice,02_linear,MyLinearFunction,1,\n", "row 3: alice 02_linear MyLinearFunction again "
                                             "(first on row 2)"),
])
def test_a_csv_file_with_a_bad_row_changes_nothing(root, rows, said):
    """Is a file with any bad row refused whole, the row named with what is wrong, and the
    good rows before it not given either?"""
    from grader.manual import give_file

    def resolve(lesson):
        if lesson != "02_linear":
            raise ValueError(f"no lesson {lesson!r}")
        return lesson

    marks = root / "marks.csv"
    marks.write_text("student,lesson,exercise,points,comment\n"
                     "alice,02_linear,MyLinearFunction,2,fine\n" + rows)
    with pytest.raises(ManualGradeError) as refused:
        give_file(root, marks, resolve)
    assert said in str(refused.value) and "1 bad row, so nothing changed" in str(refused.value)
    assert "; nothing changed" not in str(refused.value)
    assert _grade(root, "MyLinearFunction") == (None, 0, None)
    assert _grade(root, "Bilinear") == (None, 1, None)


def test_a_csv_file_without_its_header_is_refused():
    from grader.manual import give_file

    with pytest.raises(ManualGradeError, match="must name the columns student, lesson, exercise"):
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            marks = Path(folder) / "marks.csv"
            marks.write_text("alice,02_linear,Bilinear,1,\n")
            give_file(Path(folder), marks)


def test_make_manual_takes_a_file():
    """Does `make manual FILE=marks.csv` run the file form, and nothing of the one-grade form?"""
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("COMMENT", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", "manual", "FILE=marks.csv"],
                          cwd=ROOT, text=True, capture_output=True, env=environment, check=True)
    line = next(line for line in done.stdout.splitlines() if " -m grader manual " in line)
    assert line.endswith('-m grader manual --file "marks.csv"')
