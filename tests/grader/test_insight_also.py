"""Insight's "also fails": the further checks a learner's answer failed beside the one its group
is named by, where grading knew them (an exercise scored by weighted parts, each part run
whatever the others did), recorded with the verdict and shown on the terminal, the page and in
insight.csv; an all-or-nothing battery stops at its first failure and records none."""

import nbformat
import torch
from nbformat.v4 import new_code_cell, new_notebook

from autograder import seal
from autograder.errors import GradingError
from autograder.partial import Part, WeightedExercise, scored_verdict
from grader.insight import lesson_insight
from grader.insight_report import csv_rows, lesson_table, text_report
from grader.verdicts import also_failed, apply_verdicts
from grader.verdicts import record as verdict_record
from tests.grader.recorded import LESSON, passed, record, release

KEY = b"k" * 32


def _forward(submission, device):
    x = torch.arange(1.0, 4.0, dtype=torch.float64, device=device)
    if not torch.equal(submission(x), 2 * x):
        raise GradingError("Scale's output is not 2 x: check the forward")


def _gradient(submission, device):
    x = torch.arange(1.0, 4.0, dtype=torch.float64, device=device, requires_grad=True)
    submission(x).sum().backward()
    if not torch.equal(x.grad, torch.full_like(x, 2.0)):
        raise GradingError("Scale's gradient is not 2 everywhere: check the backward")


def _dtype(submission, device):
    x = torch.ones(3, dtype=torch.float64, device=device)
    if submission(x).dtype != x.dtype:
        raise GradingError("Scale's output changes the dtype")


SCALE = WeightedExercise("Scale", LESSON, battery=None,
                         parts=(Part("forward", 1, _forward), Part("gradient", 2, _gradient),
                                Part("keeps the dtype", 1, _dtype)))


def _planted(x):
    """Scale's answer with two mistakes: 3 x, not 2 x, so both the forward and the gradient
    are wrong; the dtype is kept."""
    return 3 * x


def _graded(submission) -> dict:
    """The record grading keeps of ``submission``'s Scale test cell, from its signed verdict."""
    published = []
    grade = seal.make_sealed_grade(KEY, lambda: [], scored_verdict(
        lambda name, answer: (True, "unused"), {"Scale": SCALE}), lambda passed, message: None,
        published.append)
    grade("Scale", submission)
    cell = new_code_cell('grade("Scale", Scale)')
    cell.metadata = {"nbgrader": {"grade": True, "solution": False, "grade_id": "Scale",
                                  "points": 4, "locked": True, "schema_version": 3}}
    cell.outputs = [nbformat.NotebookNode(output_type="display_data", data=bundle, metadata={})
                    for bundle in published]
    return apply_verdicts(new_notebook(cells=[cell]), KEY)["Scale"]


def test_an_answer_failing_two_checks_records_the_second_beside_the_first():
    """Does a planted answer failing two weighted checks keep the first's hint as its hint and
    record the second as also failed, and the check it passes as neither?"""
    found = _graded(_planted)
    assert found["hint"] == "Scale's output is not 2 x: check the forward"
    assert found["also"] == ["gradient"]
    assert found["score"] == 0.25


def test_an_all_or_nothing_failure_records_no_further_checks():
    """Is nothing recorded as also failed where the verdict names one failure only (a battery
    that stopped at its first failure, as every exercise of the course is graded)?"""
    assert "also" not in _graded(lambda x: 2 * x.detach())  # the gradient part alone fails
    assert also_failed("your gradient for x is the numerical one times -1\ndetails") == []
    # details that quote the learner's own error cannot make one up
    forged = "Scale raised ValueError\n✗ a (1 of 2)\n✗ b (1 of 2)"
    assert "also" not in verdict_record(False, forged, None, "raised:ValueError")


def test_insight_shows_what_else_each_learner_failed(tmp_path):
    """Do the terminal, the page and insight.csv say beside the first failing check what else
    the learner's answer failed, from the record alone: the terminal and the CSV with who, the
    page with how many (ids only with --names)?"""
    release(tmp_path)
    planted = _graded(_planted)
    record(tmp_path, "ana", {"Shift": passed(), "Scale": planted})
    record(tmp_path, "ben", {"Shift": passed(), "Scale": {**planted, "also": []}})
    record(tmp_path, "cam", {"Shift": passed(), "Scale": passed()})
    insight = lesson_insight(tmp_path, LESSON)
    scale = insight.exercises[1]
    assert [(group.students, group.also) for group in scale.groups] == [
        (("ana", "ben"), (("gradient", ("ana",)),))]
    assert "          also fails: gradient (ana)" in text_report([insight], []).splitlines()
    rows = {row["student_id"]: row for row in csv_rows([insight])
            if row["exercise"] == "Scale"}
    assert (rows["ana"]["also_fails"], rows["ben"]["also_fails"]) == ("gradient", "")
    assert "also fails: gradient (1)" in lesson_table(insight)
    assert "also fails: gradient (ana)" in lesson_table(insight, names=True)
