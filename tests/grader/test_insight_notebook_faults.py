"""Insight's notebook-level faults (grader/insight.py, insight_report.py, insight_figures.py):
what went wrong with whole notebooks, one line per lesson, and a notebook handed in unchanged."""

from grader.insight import UNANSWERED, lesson_insight
from grader.insight_figures import NOT_ATTEMPTED_LABEL, bars
from grader.insight_report import lesson_html, text_report
from tests.grader.recorded import LESSON, failed, passed, record, release


def _groups(exercise):
    return {group.mistake: group.students for group in exercise.groups}


def test_notebook_level_faults_have_a_line_per_lesson_and_an_untouched_notebook_says_so(tmp_path):
    """Issue 68: a dead kernel, a cell error, a notebook handed in unchanged and a deleted test
    cell showed only in grades.csv, and the unchanged notebook read as "not attempted" on every
    exercise row. Does the lesson get one line of its notebook faults (counts on the page, the
    learners where insight shows ids: the terminal and NAMES=1), most serious first, without
    the routine added-test-cell note; and do the unchanged notebook's exercises say the whole
    notebook was handed in unchanged, while another learner's undone exercise stays
    not-implemented, and the figure counts both as not attempted?"""
    release(tmp_path)
    record(tmp_path, "ana", {"Shift": passed(), "Scale": passed()})
    record(tmp_path, "bob", {"Shift": passed(), "Scale": passed()}, faults=(
        "cell-error", "deleted-test-cell", "added-test-cell"))
    record(tmp_path, "carol", {"Shift": passed(), "Scale": failed("not-implemented")},
           status="kernel-died", faults=("kernel-died",))
    record(tmp_path, "erin", {"Shift": failed("not-implemented"),
                              "Scale": failed("not-implemented")},
           status="unanswered", faults=("unanswered",))
    insight = lesson_insight(tmp_path, LESSON)
    assert insight.notebook_faults == (("kernel-died", ("carol",)), ("unanswered", ("erin",)),
                                       ("deleted-test-cell", ("bob",)), ("cell-error", ("bob",)))
    shift, scale = insight.exercises
    assert _groups(shift) == {UNANSWERED: ("erin",)}
    assert _groups(scale) == {"not-implemented": ("carol",), UNANSWERED: ("erin",)}
    assert "handed in unchanged" in next(g.explanation for g in scale.groups
                                         if g.mistake == UNANSWERED)
    assert dict((label, count) for _, label, count in bars(insight)["Scale"])[
        NOT_ATTEMPTED_LABEL] == 2
    shown = text_report([insight], []).splitlines()
    assert shown[1] == ("  notebook faults: 1 kernel-died: carol; 1 unanswered (handed in "
                        "unchanged): erin; 1 deleted-test-cell: bob; 1 cell-error (a cell of the "
                        "learner's own raised): bob (grades.csv's reason says each, make grades "
                        "lists them)")
    page = lesson_html(insight, None)
    assert ("Notebook faults: 1 kernel-died; 1 unanswered (handed in unchanged); 1 "
            "deleted-test-cell; 1 cell-error") in page
    assert "carol" not in page and "erin" not in page
    assert "erin" in lesson_html(insight, None, names=True)
    quiet = tmp_path / "quiet"
    release(quiet)
    record(quiet, "ana", {"Shift": passed(), "Scale": passed()}, faults=("added-test-cell",))
    assert lesson_insight(quiet, LESSON).notebook_faults == ()
    assert "notebook faults" not in text_report([lesson_insight(quiet, LESSON)], [])
