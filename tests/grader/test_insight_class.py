"""Acceptance: a class of 13 learners over lessons 00 and 12, handed in from catalogue answers
whose mistakes are known, autograded through the real nbgrader flow (``python -m grader
autograde``), then ``python -m grader insight``: every group, count and learner is the one
planted, and no failure without a proven cause is given a name."""

import csv
import re

import pytest

from tests.grader.insight_class import CLASS, EXPECTED, LESSONS, graded_class, grader, handed_in

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("insight-class")]


@pytest.fixture(scope="module")
def insight(tmp_path_factory):
    """The graded class after `python -m grader insight`: (root, what it printed, CSV rows)."""
    root = graded_class(tmp_path_factory)
    status, output = grader(root, "insight")
    assert status == 0, output
    with open(root / "insight" / "insight.csv") as handle:
        return root, output, list(csv.DictReader(handle))


def _groups(rows) -> dict:
    """(lesson, exercise) -> mistake -> learners, from the CSV's failures."""
    found: dict = {}
    for row in rows:
        if row["result"] in ("failed", "partial"):
            found.setdefault((row["lesson"], row["exercise"]), {}).setdefault(
                row["mistake"], set()).add(row["student_id"])
    return found


def test_every_group_and_learner_is_the_one_planted(insight):
    """Is each exercise's failures grouped exactly as planted (shared mistakes together, each
    under its id; the unanswered, the timeout, the dead kernel and the error by category), and
    does every other learner who handed the lesson in have full marks?"""
    _, _, rows = insight
    assert _groups(rows) == EXPECTED
    for (lesson, exercise), groups in EXPECTED.items():
        full = {row["student_id"] for row in rows if (row["lesson"], row["exercise"],
                                                     row["result"]) == (lesson, exercise,
                                                                        "full-marks")}
        assert full == handed_in(lesson) - set().union(*groups.values()), exercise
        absent = {row["student_id"] for row in rows if (row["lesson"], row["exercise"],
                                                       row["result"]) == (lesson, exercise,
                                                                          "not-submitted")}
        assert absent == set(CLASS) - handed_in(lesson), exercise


def test_an_unproven_failure_is_never_named(insight):
    """Are the unproven wrong values (and every other category) left unnamed, and only proven
    ids named?"""
    _, _, rows = insight
    for row in rows:
        if row["result"] in ("failed", "partial"):
            assert (row["named"] == "yes") == ("/" in row["mistake"]), row
    unproven = {(row["exercise"], row["student_id"]) for row in rows
                if row["mistake"] == "unproven:wrong-value"}
    assert unproven == {("Square", "gus7")}


def test_the_terminal_gives_counts_and_groups_most_frequent_first(insight):
    """Does the terminal give each exercise's counts and its groups, the shared mistake first
    with its learners and the section that teaches it?"""
    _, output, _ = insight
    assert ("00_template (Lesson 00 · The anatomy of a custom autograd Function): "
            "11 learners graded, not handed in: 2 (kim11, lou12)") in output
    assert "Square: 11 graded, 5 with full marks, 6 failed" in output
    square = output.split("Square: 11 graded", 1)[1].split("WeightedSum:", 1)[0]
    assert square.index("Square/ignores-grad-output") < square.index("a wrong output or gradient")
    assert "cam3, dan4, eve5" in square
    assert "taught in: The maths: backward is a vector-Jacobian product" in square
    assert "GradientReversal: 10 graded, 6 with full marks, 4 failed" in output
    # the untouched notebook and the dead kernel, said once per lesson (issue 68)
    faults = next(line for line in output.splitlines()
                  if line.startswith("  notebook faults: "))  # 00_template's, the first lesson
    assert "1 kernel-died: max13" in faults and "1 unanswered (handed in unchanged): hal8" in faults


def test_the_page_and_figures_show_counts_not_learners(insight):
    """Are the page and a figure per lesson written, the page naming no learner?"""
    root, _, _ = insight
    page = (root / "insight" / "insight.html").read_text()
    assert all((root / "insight" / f"{lesson}.png").exists() for lesson in LESSONS)
    assert "GradientReversal/forgets-alpha" in page
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)  # "ana1" by chance
    assert not [student for student in CLASS if student in text]


def test_a_rerun_reads_what_grading_recorded(insight, tmp_path):
    """Does autograde again grade nothing, and insight again (names on the page this time)
    find the same groups from the records alone?"""
    root, _, rows = insight
    status, output = grader(root, "autograde", "--workers", "2")
    handed = sum(len(handed_in(lesson)) for lesson in LESSONS)
    assert status == 0 and f"graded 0, skipped {handed} unchanged" in output, output
    status, output = grader(root, "insight", "--names", "--output", str(tmp_path))
    assert status == 0, output
    with open(tmp_path / "insight.csv") as handle:
        assert _groups(csv.DictReader(handle)) == _groups(rows)
    assert "cam3, dan4, kim11" in (tmp_path / "insight.html").read_text()
