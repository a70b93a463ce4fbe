"""The progress file: every self-check leaves its outcome, and the table reads them back."""

import json

import pytest

from autograder import progress
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.grading import self_check
from tools.catalogue import mistake
from tools.solutions import solution, stub


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A lesson folder of its own course to work in, as the kernel's working directory."""
    lesson = tmp_path / "course" / "lesson"
    lesson.mkdir(parents=True)
    monkeypatch.chdir(lesson)
    return lesson


def test_a_fresh_course_has_every_exercise_not_tried_and_the_first_next(folder):
    """Before any self-check, is every exercise listed in course order, the first one next?"""
    rows = progress.table()
    assert [row["exercise"] for row in rows] == sorted(
        EXERCISES, key=lambda name: EXERCISES[name].lesson)[:len(rows)]
    assert {row["outcome"] for row in rows} == {progress.NOT_TRIED}
    assert rows[0]["next"] and sum(row["next"] for row in rows) == 1
    assert rows[0]["lesson"].startswith("00")


def test_self_checks_record_passed_failed_and_not_implemented(folder, capsys):
    """Does each self-check leave its outcome (and a failure its hint) in the progress file?"""
    self_check("Square", solution("Square"))
    with pytest.raises(NotImplementedError):
        self_check("WeightedSum", stub("WeightedSum"))
    with pytest.raises(GradingError) as failure:
        self_check("MySigmoid", mistake("MySigmoid", "saves the input x").load())
    saved = json.loads((folder / progress.FILE_NAME).read_text())
    assert saved["Square"]["outcome"] == progress.PASSED
    assert saved["WeightedSum"]["outcome"] == progress.NOT_STARTED
    assert saved["MySigmoid"]["outcome"] == progress.FAILED
    assert saved["MySigmoid"]["hint"] == str(failure.value).splitlines()[0]
    rows = {row["exercise"]: row for row in progress.table()}
    # no lesson named, no notebook: the learner is where the last self-check ran (lesson 01)
    assert rows["MySigmoid"]["next"] and not rows["Square"]["next"]
    text = progress.summary()
    assert "1 of" in text and "Next: MySigmoid in 01_sigmoid." in text
    assert progress.table(lesson="00_template")[1]["next"]  # in lesson 00: WeightedSum


def test_the_table_reads_the_folders_beside_this_one(tmp_path, monkeypatch):
    """nbgrader gives every lesson a folder: does lesson 01's table see lesson 00's checks?"""
    (tmp_path / "00_template").mkdir()
    (tmp_path / "01_sigmoid").mkdir()
    progress.record("Square", "00_template", progress.PASSED, folder=tmp_path / "00_template")
    monkeypatch.chdir(tmp_path / "01_sigmoid")
    rows = {row["exercise"]: row for row in progress.table()}
    assert rows["Square"]["outcome"] == progress.PASSED


def test_a_folder_beside_that_is_no_lesson_is_not_read(tmp_path, monkeypatch):
    """Does a folder beside this one that is not a lesson's (another project's, a reviewer's
    scratch folder in /tmp) leave the table alone?"""
    (tmp_path / "someone_else").mkdir()
    (tmp_path / "01_sigmoid").mkdir()
    progress.record("Square", "00_template", progress.PASSED, folder=tmp_path / "someone_else")
    monkeypatch.chdir(tmp_path / "01_sigmoid")
    rows = {row["exercise"]: row for row in progress.table()}
    assert rows["Square"]["outcome"] == progress.NOT_TRIED


def test_a_broken_or_unwritable_file_never_fails_a_self_check(folder):
    """Does a corrupt progress file read as empty, and an unwritable folder cost nothing?"""
    (folder / progress.FILE_NAME).write_text("{not json")
    assert progress.recorded() == {}
    progress.record("Square", "00_template", progress.PASSED, folder=folder / "missing")
    assert progress.recorded(folder / "missing") == {}


def test_the_table_follows_the_course_order(folder):
    """Are the exercises listed in the order the lessons' answer cells come?"""
    from grader.lessons import lesson_names, source_notebook

    in_lessons = [cell.metadata["nbgrader"]["grade_id"].removeprefix("answer_")
                  for lesson in lesson_names() for cell in source_notebook(lesson).cells
                  if cell.metadata.get("nbgrader", {}).get("grade_id", "").removeprefix(
                      "answer_") in EXERCISES
                  and cell.metadata["nbgrader"]["grade_id"].startswith("answer_")]
    assert [row["exercise"] for row in progress.table()] == in_lessons


def test_a_scratch_notebook_does_not_replace_the_lessons_record(folder, monkeypatch):
    """Does a self-check run in another notebook, in this folder or the one beside it, leave
    what the lesson's notebook recorded, and record where the lesson's notebook has not?"""
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "00_template.ipynb"))
    progress.record("Square", "00_template", progress.PASSED)
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "scratch.ipynb"))
    progress.record("Square", "00_template", progress.FAILED, "a scratch try")
    progress.record("WeightedSum", "00_template", progress.FAILED, "a scratch try")
    rows = {row["exercise"]: row for row in progress.table()}
    assert rows["Square"]["outcome"] == progress.PASSED
    assert rows["WeightedSum"]["outcome"] == progress.FAILED
    beside = folder.parent / "scratch"
    beside.mkdir()
    progress.record("Square", "00_template", progress.FAILED, "a later try", folder=beside)
    assert {row["exercise"]: row for row in progress.table()}["Square"]["outcome"] == (
        progress.PASSED)
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "00_template.ipynb"))
    progress.record("Square", "00_template", progress.FAILED, "broken since")
    assert {row["exercise"]: row for row in progress.table()}["Square"]["outcome"] == (
        progress.FAILED)


def test_a_lesson_done_names_what_is_still_open_before_it(folder):
    """After the last exercise of a later lesson, does the summary point on, and also name
    what is open in the lessons begun before it: an exercise by name, a count, and never a
    lesson not begun (the counts above show those)?"""
    for name, exercise in EXERCISES.items():
        if exercise.lesson < "02" and name != "Softplus" or exercise.lesson.startswith("07"):
            progress.record(name, exercise.lesson, progress.PASSED)
    progress.record("BroadcastMul", "09_patterns", progress.PASSED)
    progress.record("MyLinearFunction", "02_linear", progress.PASSED)
    text = progress.summary(lesson="07_outputs")
    assert "This lesson is done. Next: LogSumExp in 08_compile." in text
    assert text.splitlines()[-1] == (
        "Still open in lessons you began before this one: Softplus in 01; 2 exercises in 02.")
    assert "not begun" not in text


def test_every_lesson_states_the_same_rule_for_earlier_lessons(folder):
    """Issue 48 (learner 57): lesson 02 had no 'still open' line with 00 and 01 not begun,
    while 09 listed 'lessons 00-01, 03-08 not begun'. Does every lesson follow one rule, said
    in the line: what is open in lessons begun before it, and nothing of lessons not begun?"""
    progress.record("MyLinearFunction", "02_linear", progress.PASSED)
    progress.record("BroadcastMul", "09_patterns", progress.PASSED)
    for lesson in ("02_linear", "09_patterns", "10_norms"):
        text = progress.summary(lesson=lesson)
        assert "not begun" not in text and "00" not in text.splitlines()[-1], text
    assert "before" not in progress.summary(lesson="02_linear")
    for lesson in ("09_patterns", "10_norms"):
        last = progress.summary(lesson=lesson).splitlines()[-1]
        assert last.startswith(progress.STILL_OPEN + ": ") and " in 02" in last, last
    assert progress.summary(lesson="10_norms").splitlines()[-1].endswith("exercises in 09.")


def test_a_learner_who_starts_at_a_later_lesson_is_not_told_of_earlier_ones(folder):
    """With nothing tried before this lesson (a learner who starts here, a solution run in a
    fresh folder), is the summary free of earlier lessons?"""
    progress.record("LogSumExp", "08_compile", progress.PASSED)
    assert "before this lesson" not in progress.summary(lesson="08_compile")


def test_a_lesson_begun_alone_points_on(folder):
    """Lesson 02 done and nothing else begun (its solution notebook run on its own): is the
    next exercise the one after it, not lesson 00's?"""
    for name, exercise in EXERCISES.items():
        if exercise.lesson.startswith("02"):
            progress.record(name, exercise.lesson, progress.PASSED)
    assert progress.summary(lesson="02_linear").endswith("This lesson is done. Next: SignSTE "
                                                         "in 03_ste.")


def test_a_lesson_skipped_at_the_course_s_start_is_next(folder):
    """Learner trial 82: lessons 01 and 02 done, 00 never opened. Does Next point to 00, where
    the README says to start, not past it to 03; and within a lesson still open, to that
    lesson's own next exercise?"""
    for name, exercise in EXERCISES.items():
        if exercise.lesson[:2] in ("01", "02"):
            progress.record(name, exercise.lesson, progress.PASSED)
    text = progress.summary(lesson="02_linear")
    assert text.splitlines()[-1] == ("This lesson is done. Next: Square in 00_template, where "
                                     "the course starts.")
    assert [row["exercise"] for row in progress.table(lesson="02_linear") if row["next"]] == [
        "Square"]
    progress.record("Bilinear", "02_linear", progress.FAILED, "a slip")
    assert progress.summary(lesson="02_linear").splitlines()[-1] == "Next: Bilinear in 02_linear."


def test_when_says_its_time_zone(folder):
    """Issue 48: does the recorded time name its offset from UTC, so the table's 'when' column
    reads right on another machine?"""
    import os
    import re
    import time

    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        progress.record("Square", "00_template", progress.PASSED)
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()
    when = progress.recorded()["Square"]["when"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\+05:30", when), when


def test_a_long_hint_is_cut_at_a_word_and_says_so(folder):
    """Is a hint longer than the record keeps cut between words, with an ellipsis, and a short
    one kept whole?"""
    long = "the mask is a write too " * 20
    progress.record("Square", "00_template", progress.FAILED, long)
    progress.record("Outer", "00_template", progress.FAILED, "short and whole")
    kept = json.loads((folder / progress.FILE_NAME).read_text())
    cut = kept["Square"]["hint"]
    assert cut.endswith("…") and len(cut) <= 300
    assert long.startswith(cut[:-1]) and long[len(cut) - 1] == " "  # a whole word last
    assert kept["Outer"]["hint"] == "short and whole"


def test_the_lessons_count_lines_stay_short_enough_not_to_wrap(folder):
    """Issue 48: a notebook wrapped the one 'By lesson' line inside "12": are the counts on
    lines of at most 5 lessons, each under 80 characters, every lesson once and in order?"""
    for name, exercise in EXERCISES.items():
        progress.record(name, exercise.lesson, progress.PASSED)
    lines = progress.summary().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("By lesson: "))
    count_lines = [lines[start]] + [line for line in lines[start + 1:]
                                    if line.startswith(" " * len("By lesson: "))]
    assert all(len(line) < 80 for line in count_lines)
    numbers = [entry.split()[0] for line in count_lines
               for entry in line.removeprefix("By lesson: ").strip().split(" · ")]
    assert numbers == sorted({exercise.lesson[:2] for exercise in EXERCISES.values()})
