"""grader.insight: failures grouped by the mistake grading recorded, from the records alone."""

import pytest

from grader.insight import class_insight, explanation, layout, lesson_insight, without_case
from tests.grader.recorded import LESSON, SECTIONS, failed, passed, record, release


@pytest.fixture
def root(tmp_path):
    """A lesson graded for eight learners: full marks, a mistake three share, one another named
    mistake, an unproven wrong value, an error, an unanswered exercise, a timeout."""
    release(tmp_path)
    shared = "Shift/forgets-offset"
    record(tmp_path, "ana", {"Shift": passed(), "Scale": passed()})
    record(tmp_path, "ben", {"Shift": failed(shared, "Shift forgets the offset (with x of "
                                                      "shape (3, 4), b=2.0)"),
                             "Scale": passed()})
    record(tmp_path, "cam", {"Shift": failed(shared, "Shift forgets the offset (with x of "
                                                      "shape (5,), b=2.0)"),
                             "Scale": failed("Scale/squares-it", "Scale squares x")})
    record(tmp_path, "dee", {"Shift": failed(shared, "Shift forgets the offset"),
                             "Scale": failed("unproven:wrong-value", "Scale's output is wrong: "
                                                                     "largest error 0.5")})
    record(tmp_path, "eli", {"Shift": failed("raised:ValueError", "Shift raised ValueError: no"),
                             "Scale": passed()})
    record(tmp_path, "fay", {"Shift": failed("not-implemented"), "Scale": failed(
        "not-implemented")})
    record(tmp_path, "gus", {"Shift": passed(), "Scale": failed("timeout")})
    record(tmp_path, "hal", {"Shift": passed(), "Scale": failed("Scale/squares-it", "Scale "
                                                                "squares x", score=0.5)})
    return tmp_path


def _groups(exercise):
    return {group.mistake: group.students for group in exercise.groups}


def test_failures_are_grouped_by_mistake_most_frequent_first(root):
    """Does each exercise count its graded learners and full marks, and group its failures by
    the recorded mistake, the most frequent first?"""
    insight = lesson_insight(root, LESSON)
    shift, scale = insight.exercises
    assert (shift.name, shift.graded, shift.passed) == ("Shift", 8, ("ana", "gus", "hal"))
    assert [group.mistake for group in shift.groups][0] == "Shift/forgets-offset"
    assert _groups(shift) == {"Shift/forgets-offset": ("ben", "cam", "dee"),
                              "raised:ValueError": ("eli",), "not-implemented": ("fay",)}
    assert _groups(scale) == {"Scale/squares-it": ("cam", "hal"),
                              "unproven:wrong-value": ("dee",), "not-implemented": ("fay",),
                              "timeout": ("gus",)}
    assert scale.passed == ("ana", "ben", "eli")


def test_only_a_proven_id_is_a_named_group(root):
    """Is a group named only when its mistake is a proven id, never a category?"""
    scale = lesson_insight(root, LESSON).exercises[1]
    assert {group.mistake: group.named for group in scale.groups} == {
        "Scale/squares-it": True, "unproven:wrong-value": False, "not-implemented": False,
        "timeout": False}


def test_a_named_group_is_explained_by_its_hint_without_the_inputs(root):
    """Is a named mistake explained by the hint most of its learners read, without the
    inputs it failed for; an error the learner's code raised by the error, quoted; a category
    by its own words?"""
    shift = lesson_insight(root, LESSON).exercises[0]
    explained = {group.mistake: group.explanation for group in shift.groups}
    assert explained["Shift/forgets-offset"] == "Shift forgets the offset"
    assert explained["raised:ValueError"] == "Shift raised ValueError: no"
    assert "stub still raises NotImplementedError" in explained["not-implemented"]


def test_each_group_points_to_the_section_of_its_exercise(root):
    """Without a section of its own, does each group point to its exercise's section?"""
    insight = lesson_insight(root, LESSON)
    for exercise in insight.exercises:
        assert exercise.section == SECTIONS[exercise.name]
        assert {group.section for group in exercise.groups} == {SECTIONS[exercise.name]}
    assert insight.title == "Lesson 07 · A demo lesson"


def test_the_layout_reads_the_released_notebook(root):
    """Are the test cells read in notebook order with their sections, and every heading?"""
    shape = layout(root, LESSON)
    assert shape.tests == {LESSON: ["Shift", "Scale"]}
    assert shape.sections == SECTIONS
    assert "Background 0" in shape.headings


def test_learners_not_graded_or_graded_before_records_are_counted_apart(root):
    """Is a submission not graded yet, one whose grader failed, and one graded before verdicts
    were recorded each counted apart, and none of them in an exercise's counts?"""
    (root / "submitted" / "ivy" / LESSON).mkdir(parents=True)
    record(root, "jon", {}, status="grader-error", recorded=False)
    record(root, "kim", {}, recorded=False)
    insight = lesson_insight(root, LESSON)
    assert insight.not_graded == ("ivy",)
    assert insight.grader_failed == ("jon",)
    assert insight.unrecorded == ("kim",)
    assert len(insight.graded) == 8 and insight.exercises[0].graded == 8


def test_an_unreadable_notebook_fails_every_exercise_for_that_reason(root):
    """Does a missing notebook count as a failure of each exercise, grouped by its status?"""
    record(root, "lou", {}, status="missing-notebook", reason="no notebook found")
    shift, scale = lesson_insight(root, LESSON).exercises
    assert _groups(shift)["missing-notebook"] == ("lou",)
    assert _groups(scale)["missing-notebook"] == ("lou",)


def test_a_test_without_a_verdict_is_no_verdict(root):
    """Is a test cell with no recorded verdict grouped as no-verdict, never as a mistake?"""
    record(root, "max", {"Shift": passed()})
    scale = lesson_insight(root, LESSON).exercises[1]
    assert _groups(scale)["no-verdict"] == ("max",)


def test_a_term_under_way_skips_lessons_nobody_handed_in(root):
    """Does class insight skip a lesson without submissions, and report the others?"""
    found, skipped = class_insight(root, [LESSON, "08_later"])
    assert [insight.lesson for insight in found] == [LESSON]
    assert skipped == ["08_later"]


def test_the_inputs_are_cut_from_a_hint_only_at_its_end():
    """Is only a trailing "(with ...)" removed, nested parentheses and all?"""
    assert without_case("a factor 2 (with x of shape (3, 4), b=2.0)") == "a factor 2"
    assert without_case("a transpose? (a guess)") == "a transpose? (a guess)"
    assert without_case("no parenthesis") == "no parenthesis"
    assert explanation("kernel-died", []).startswith("the kernel died")


def test_a_check_without_an_id_is_explained_by_its_hint():
    """Is a failed check without an id explained by the hint its learners read (saying when
    others read other hints), never hidden behind its category?"""
    hint = ("AbsInPlace saves 14 bytes for 7 elements: the contract allows at most one byte per "
            "element")
    assert explanation("unnamed:check", [f"{hint} (with x of shape (7,))", hint]) == hint
    assert explanation("unnamed:check", [hint, hint, "another check failed"]) == (
        f"{hint} (and 1 other check: the CSV has each hint)")
    assert explanation("unnamed:check", [""]) == "failed a check that gives no mistake id"


def test_every_category_a_group_can_have_is_documented():
    """Does the insight page of the docs name every category a failure can be grouped by?"""
    from grader.insight import CATEGORIES
    from grader.lessons import ROOT

    insight = (ROOT / "docs" / "insight.md").read_text()
    missing = [category for category in CATEGORIES if f"`{category}`" not in insight]
    assert missing == []


def test_failed_asserts_of_a_test_cell_are_grouped_by_their_message(root):
    """Are the failed asserts of an instructor's own test cell grouped by the message the
    instructor wrote (where it failed beside it), not lumped into one "test-failed" group?"""
    for student, said in [("ivy", "a test failed (line 2 of the test cell): y is not 3"),
                          ("jon", "a test failed (line 2 of the test cell): y is not 3"),
                          ("kim", "a test failed (in the hidden tests of the test cell): no"),
                          ("lou", "a test failed (line 4 of the test cell); the test gives no "
                                  "message")]:
        record(root, student, {"Shift": passed(), "Scale": failed("test-failed", said)})
    scale = lesson_insight(root, LESSON).exercises[1]
    explained = {group.explanation: group.students for group in scale.groups
                 if group.mistake == "test-failed"}
    assert explained == {
        "an assert of the test cell failed: y is not 3 (line 2)": ("ivy", "jon"),
        "an assert of the test cell failed: no (in the hidden tests)": ("kim",),
        "an assert of the test cell failed: no message (line 4)": ("lou",)}


def test_learners_of_the_class_who_did_not_hand_a_lesson_in_are_counted(root):
    """Is a learner of the class (in the gradebook, or who handed in another lesson) who did
    not hand this lesson in counted as not handed in, and nobody else?"""
    import sqlite3

    release(root, "08_other")
    record(root, "zoe", {"Shift": passed(), "Scale": passed()}, lesson="08_other")
    with sqlite3.connect(root / "gradebook.db") as gradebook:
        gradebook.execute("CREATE TABLE student (id VARCHAR(128) PRIMARY KEY)")
        gradebook.execute("INSERT INTO student VALUES ('ana'), ('yan')")
    found, _ = class_insight(root, [LESSON, "08_other"])
    assert {insight.lesson: insight.not_submitted for insight in found} == {
        LESSON: ("yan", "zoe"),
        "08_other": ("ana", "ben", "cam", "dee", "eli", "fay", "gus", "hal", "yan")}


def test_every_exercise_heading_is_labelled_in_one_style(tmp_path):
    """Are exercise headings, however a lesson words them, labelled "Exercise N · `Name`" with
    "(transfer)" after, a transfer exercise without a number numbered after the one before it;
    and other headings left as they are?"""
    from grader.insight import label

    assert label("✎ Transfer exercise · `Outer`", 2) == (
        "✎ Exercise 3 · `Outer` (transfer)", 3)
    assert label("✎ Exercise 4 · `AbsInPlace` (transfer)", 3)[0] == (
        "✎ Exercise 4 · `AbsInPlace` (transfer)")
    assert label("✎ Exercise 6 (transfer) · `CumMax`", 5)[0] == (
        "✎ Exercise 6 · `CumMax` (transfer)")
    assert label("✎ Exercise 3 · `FakeQuantize`: a quantiser that learns its step", 2)[0] == (
        "✎ Exercise 3 · `FakeQuantize`")
    assert label("✎ Exercise 4 · `GroupNormFunction` (transfer: nobody works this one "
                 "through)", 3)[0] == "✎ Exercise 4 · `GroupNormFunction` (transfer)"
    assert label("Worked example: `Norm`", 1) == ("Worked example: `Norm`", 1)


def test_an_added_test_cell_stands_under_the_exercise_its_code_names(root):
    """Is an instructor's test cell placed after the last exercise's test filed under the
    exercise its code names (``Shift.apply``), one naming no exercise as "your test cell",
    never under the exercise it happens to follow?"""
    import nbformat

    from grader.insight import OWN_TEST

    path = root / "release" / LESSON / f"{LESSON}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    for grade_id, code in [("shift_extra", "# Shift at a few points\ny = Shift.apply(x)\n"
                                           "assert y.shape == x.shape, 'Shift keeps shapes'"),
                           ("own_check", "assert torch.ones(2).sum() == 2")]:
        test = nbformat.v4.new_code_cell(code)
        test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": grade_id,
                                     "points": 1, "locked": True, "schema_version": 3}
        notebook.cells.append(test)
    nbformat.write(notebook, path)
    shape = layout(root, LESSON)
    assert shape.sections == SECTIONS | {"shift_extra": SECTIONS["Shift"],
                                         "own_check": OWN_TEST}
    record(root, "ivy", {"Shift": passed(), "Scale": passed(), "own_check": passed(),
                         "shift_extra": failed("test-failed", "a test failed: Shift keeps "
                                                              "shapes")})
    sections = {exercise.name: exercise.section for exercise in lesson_insight(root, LESSON)
                .exercises}
    assert sections["shift_extra"] == SECTIONS["Shift"] and sections["own_check"] == OWN_TEST


def test_an_answer_that_did_not_parse_is_grouped_as_grades_csv_words_it(root):
    """Is a failure whose answer cell did not parse grouped as `syntax-error`, grades.csv's
    status, with the cell and line quoted, also where an older run recorded it as
    `raised:SyntaxError` (issue 48: none of the cell ran, so nothing raised)?"""
    said = ("answer cell answer_Shift does not parse (SyntaxError at line 7: unmatched ')'): "
            "Python ran none of it, so the tests of what it defines scored 0")
    record(root, "ivy", {"Shift": failed("syntax-error", said), "Scale": passed()})
    record(root, "jon", {"Shift": failed("raised:SyntaxError", said), "Scale": passed()})
    record(root, "kit", {"Shift": failed("raised:SyntaxError", "Shift raised SyntaxError: eval"),
                         "Scale": passed()})  # code that raised it at run time: raised
    shift = lesson_insight(root, LESSON).exercises[0]
    groups = {group.mistake: group for group in shift.groups}
    assert groups["syntax-error"].students == ("ivy", "jon")
    assert groups["syntax-error"].explanation == said
    assert groups["raised:SyntaxError"].students == ("kit",)


def test_a_timeout_group_names_the_test_and_the_limit():
    """Does a timeout group quote the hint its learners read, which names the test and the
    limit (issue 48), rather than only "a cell ran past the time limit"?"""
    said = ("the test cell Scale ran past the 30 s time limit and was interrupted: does the "
            "code it grades (a forward or backward) loop endlessly?")
    assert explanation("timeout", [said]) == said
    assert explanation("timeout", []).startswith("a test ran past the cell time limit")


def test_a_test_added_after_a_notebook_was_handed_in_is_not_its_learners_mistake(root):
    """An instructor's exercise added after some learners handed in: are the learners whose
    notebook predates it (no answer: NameError) a group of their own that says so, not a class
    mistake, while a learner who handed in after and got it wrong keeps their mistake; and do
    the figure and the CSV count them apart from the failures?"""
    import json

    from grader.insight import BEFORE_ADDED
    from grader.ledger import LEDGER

    for student in ("jo", "lou"):
        record(root, student, {"Shift": passed(), "Scale": passed(), "own_exercise": failed(
            "raised:NameError", "own_exercise raised NameError: name 'Clamp' is not defined")})
    # graded on the answer stub intake now puts in for an exercise added later (issue 68)
    record(root, "kim", {"Shift": passed(), "Scale": passed(), "own_exercise": failed(
        "not-implemented", "not answered: own_exercise was added to the lesson after you "
        "handed it in, so your notebook has no answer for it (0 points)")})
    record(root, "max", {"Shift": passed(), "Scale": passed(),
                         "own_exercise": failed("raised:ValueError", "Clamp raised ValueError")})
    ledger = json.loads((root / LEDGER).read_text())
    for student in ("jo", "kim"):  # as intake words the note when it put the exercise's stub in
        ledger[f"{LESSON}/{student}"]["notebooks"][LESSON]["faults"] = [
            {"kind": "added-test-cell", "message": "test cell own_exercise was added to the "
             "lesson on 2026-11-28 10:00:00 UTC, after this notebook was handed in: put it in "
             "after the stub of its answer (answer_own_exercise: not answered) and graded it",
             "cell": "own_exercise"}]
    (root / LEDGER).write_text(json.dumps(ledger))
    own = {exercise.name: exercise for exercise in lesson_insight(root, LESSON).exercises
           }["own_exercise"]
    assert _groups(own) == {BEFORE_ADDED: ("jo", "kim"), "raised:NameError": ("lou",),
                            "raised:ValueError": ("max",)}
    from grader.insight_report import exercise_summary

    assert exercise_summary(own) == (
        "own_exercise: 4 graded, 0 with full marks, 2 failed, 2 with no answer cell for it (its "
        "exercise came after they handed in); 2 of the 4 handed in before the test was added")
    before = next(group for group in own.groups if group.mistake == BEFORE_ADDED)
    assert before.explanation.startswith("handed in before this test was added")
    assert not before.named
    from grader.insight_figures import bars
    from grader.insight_report import csv_rows

    drawn = dict((label, count) for _, label, count in bars(lesson_insight(root, LESSON))[
        "own_exercise"])
    assert (drawn["handed in before the test was added"], drawn["failed, no named mistake"]) == (
        2, 2)
    assert {row["student_id"]: row["result"] for row in csv_rows([lesson_insight(root, LESSON)])
            if row["exercise"] == "own_exercise"} == {
        "jo": "handed-in-before", "kim": "handed-in-before", "lou": "failed", "max": "failed"}


def test_a_failure_through_a_failing_exercise_is_labelled_as_inherited_from_it():
    """Is a uses-failing-exercise group said to be inherited from the exercise its hints name,
    not quoted as one learner's long hint?"""
    hint = ("checkpoint_sequential calls your CheckpointFunction, which fails its own check: fix "
            "CheckpointFunction first, then check checkpoint_sequential again (CheckpointFunction's "
            "hint: CheckpointFunction.forward sets CheckpointFunction.run_fn)")
    said = explanation("checkpoint_sequential/uses-failing-exercise", [hint, hint])
    assert said.startswith("inherited from CheckpointFunction: ")
    assert "which fails its own check" in said
    assert explanation("checkpoint_sequential/uses-failing-exercise", ["reworded"]) == "reworded"


def test_a_test_added_later_that_meets_the_learners_own_stub_is_not_implemented(root):
    """Trial (issue: an instructor's cell ``sequential_forward`` calling
    ``checkpoint_sequential``, added after everyone handed in): a learner who left that
    exercise as its stub, where grading put no answer cell in (the note says "after its
    answer"), failed it as ``not-implemented``, as for any exercise, not ``handed-in-before``;
    and does the count line say that all of the graded handed in before the test existed,
    not that one did?"""
    import json

    from grader.ledger import LEDGER

    stub = ("Shift is not implemented yet: its stub still raises NotImplementedError")
    record(root, "jo", {"Shift": failed("not-implemented", stub), "Scale": passed(),
                        "shift_again": failed("not-implemented", stub)})
    record(root, "kim", {"Shift": passed(), "Scale": passed(), "shift_again": passed()})
    ledger = json.loads((root / LEDGER).read_text())
    for student in ("jo", "kim"):
        ledger[f"{LESSON}/{student}"]["notebooks"][LESSON]["faults"] = [
            {"kind": "added-test-cell", "message": "test cell shift_again was added to the "
             "lesson on 2026-11-28 10:00:00 UTC, after this notebook was handed in: put it in "
             "after its answer and graded it", "cell": "shift_again"}]
    (root / LEDGER).write_text(json.dumps(ledger))
    again = {exercise.name: exercise for exercise in lesson_insight(root, LESSON).exercises
             }["shift_again"]
    assert _groups(again) == {"not-implemented": ("jo",)}
    assert again.handed_in_before == ("jo", "kim")
    from grader.insight_report import exercise_summary

    assert exercise_summary(again) == ("shift_again: 2 graded, 1 with full marks, 1 failed; all 2 "
                                       "handed in before the test was added")


def test_an_added_test_cell_is_labelled_by_the_exercise_its_hidden_tests_call(root):
    """Trial: an instructor's cell whose released lines only set up, and whose hidden tests
    call the exercise (``checkpoint_sequential(five, 2, x5)``): is it labelled with that
    exercise's section (its hidden part read from the source notebook), not "your test
    cell"; and does a visible name still win over the hidden tests?"""
    import nbformat

    from grader.insight import OWN_TEST

    setup = "torch.manual_seed(1)\nx5 = torch.randn(2, 4)\n"
    hidden = ("### BEGIN HIDDEN TESTS\nassert torch.allclose(Scale.apply(x5), 2 * x5), "
              "'Scale(x5) is not 2 x5'\n### END HIDDEN TESTS\n")
    released = root / "release" / LESSON / f"{LESSON}.ipynb"
    notebook = nbformat.read(released, as_version=4)
    source = nbformat.read(released, as_version=4)
    for grade_id, shown in [("scale_forward", setup), ("shift_named", "y = Shift.apply(x5)\n")]:
        for target, code in [(notebook, shown), (source, shown + hidden)]:
            test = nbformat.v4.new_code_cell(code)
            test.metadata["nbgrader"] = {"grade": True, "solution": False,
                                         "grade_id": grade_id, "points": 1, "locked": True,
                                         "schema_version": 3}
            target.cells.append(test)
    nbformat.write(notebook, released)
    assert layout(root, LESSON).sections["scale_forward"] == OWN_TEST  # no source: unknown
    (root / "source" / LESSON).mkdir(parents=True)
    nbformat.write(source, root / "source" / LESSON / f"{LESSON}.ipynb")
    sections = layout(root, LESSON).sections
    assert sections["scale_forward"] == SECTIONS["Scale"]
    assert sections["shift_named"] == SECTIONS["Shift"]
