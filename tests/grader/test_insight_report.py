"""grader.insight_report and ``python -m grader insight``: the terminal lines, the CSV, the page
and its figures, learner ids kept off the page unless asked for, and a clear error for bad input."""

import csv
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from grader.insight import class_insight
from grader.insight_figures import bars, figure_bytes, key_lines, lesson_figure
from grader.insight_parts import section
from grader.insight_report import (csv_rows, html_page, lesson_html, text_report,
                                   write_reports)
from grader.lessons import ROOT
from tests.grader.recorded import LESSON, failed, passed, record, release

STUDENTS = ("ana-ix", "ben-ix", "cam-ix", "dee-ix")


@pytest.fixture
def root(tmp_path):
    release(tmp_path)
    record(tmp_path, "ana-ix", {"Shift": passed(), "Scale": passed()})
    record(tmp_path, "ben-ix", {"Shift": failed("Shift/forgets-offset", "Shift forgets b"),
                                "Scale": passed()})
    record(tmp_path, "cam-ix", {"Shift": failed("Shift/forgets-offset", "Shift forgets b"),
                                "Scale": failed("unproven:wrong-value", "Scale's output is "
                                                "wrong")})
    record(tmp_path, "dee-ix", {"Shift": failed("not-implemented"), "Scale": failed(
        "not-implemented")})
    return tmp_path


def test_the_terminal_lists_counts_groups_and_learners(root):
    """Does the terminal show per exercise its counts, then each group with its count, id,
    explanation and learners; and say in one last line which lessons nobody handed in?"""
    text = text_report(*class_insight(root, [LESSON, "08_later", "09_later"]))
    assert text.splitlines()[0].startswith(f"{LESSON} (Lesson 07")
    assert text.splitlines()[-1] == ("not handed in by anyone yet, skipped (2 lessons): "
                                     "08_later, 09_later")
    assert "Shift: 4 graded, 1 with full marks, 3 failed" in text
    assert re.search(r"2  Shift/forgets-offset: Shift forgets b\n\s+ben-ix, cam-ix", text)
    assert re.search(r"1  a wrong output or gradient, cause not proven", text)
    assert "unproven:" not in text  # a category reads as words on the terminal, its id in the CSV


def test_a_long_explanation_keeps_its_end_on_the_terminal(root):
    """Is a group's explanation too long for its line cut in its middle, so that the terminal
    still says what went wrong (the end: "...which dims does your formula leave...?"), and does
    the terminal say where the whole hint is, only when one was cut?"""
    long = ("Shift.backward returned grad_x of shape (4, 3) for x of shape (3,): autograd's "
            "engine summed it down to x's shape for you here, but a gradient has its input's "
            "shape; which dims does your formula leave that the input lacks?" + " Yes." * 10)
    assert "… marks a hint cut short" not in text_report(*class_insight(root, [LESSON]))
    record(root, "eve-ix", {"Shift": failed("Shift/wrong-shape", long), "Scale": passed()})
    text = text_report(*class_insight(root, [LESSON]))
    assert ("(… marks a hint cut short to fit a line here: the page, insight.html, and "
            "insight.csv's explanation and hint columns have each one whole)") in text
    line = next(line for line in text.splitlines() if "Shift/wrong-shape" in line)
    assert " … " in line and line.endswith("the input lacks? Yes. Yes. Yes. Yes. Yes. Yes. Yes. "
                                           "Yes. Yes. Yes.")


def test_the_csv_has_a_row_per_learner_and_exercise(root):
    """Does the CSV hold one row per learner and exercise, learners in alphabetical order within
    each exercise, each failure with its mistake, its hint and whether the mistake is named?"""
    rows = csv_rows(class_insight(root, [LESSON])[0])
    assert len(rows) == 2 * len(STUDENTS)
    for exercise in ("Shift", "Scale"):
        learners = [row["student_id"] for row in rows if row["exercise"] == exercise]
        assert learners == sorted(STUDENTS), learners
    by_key = {(row["exercise"], row["student_id"]): row for row in rows}
    assert by_key["Shift", "ana-ix"]["result"] == "full-marks"
    assert (by_key["Shift", "ben-ix"]["mistake"], by_key["Shift", "ben-ix"]["named"]) == (
        "Shift/forgets-offset", "yes")
    assert by_key["Scale", "cam-ix"]["named"] == "no"
    assert by_key["Scale", "cam-ix"]["hint"] == "Scale's output is wrong"


def test_the_csv_scores_every_row(root):
    """Does every row carry the fraction of the test's points earned: 1 for full marks, the
    partial credit, 0 for a failure?"""
    record(root, "eve-ix", {"Shift": failed("Shift/forgets-offset", "Shift forgets b",
                                            score=0.25), "Scale": passed()})
    rows = {(row["exercise"], row["student_id"]): row["fraction_of_points"]
            for row in csv_rows(class_insight(root, [LESSON])[0])}
    assert rows["Shift", "ana-ix"] == "1"
    assert rows["Shift", "eve-ix"] == "0.25"
    assert rows["Shift", "ben-ix"] == rows["Scale", "dee-ix"] == "0"


def test_the_page_shows_counts_only_unless_names_are_asked_for(root):
    """Does the page name no learner by default, and every learner of a group with names?"""
    insight = class_insight(root, [LESSON])[0][0]

    def page(names):
        body = lesson_html(insight, b"\x89PNG", names)
        return html_page({LESSON: section(LESSON, body, "today", names)}, [])

    private = page(names=False)
    assert not any(student in private for student in STUDENTS)
    assert "Shift/forgets-offset" in private and "Counts only" in private
    assert "`make insight NAMES=1`, --names" in private
    named = page(names=True)
    assert "ben-ix, cam-ix" in named and f"Learner ids are shown for {LESSON}" in named


def test_the_page_is_self_contained(root, tmp_path):
    """Are the page, CSV and a PNG per lesson written, the page loading nothing from elsewhere
    (its figures embedded), the CSV readable by a spreadsheet?"""
    written = write_reports(*class_insight(root, [LESSON]), tmp_path / "out")
    page = written["html"].read_text()
    assert "data:image/png;base64," in page
    assert not re.search(r"""(src|href)=["']?(https?:|//|/)""", page)
    assert written[LESSON].read_bytes().startswith(b"\x89PNG")
    with open(written["csv"]) as handle:
        assert len(list(csv.DictReader(handle))) == 2 * len(STUDENTS)


def test_the_figure_stacks_full_marks_named_and_unnamed_with_a_key(root):
    """Does each exercise's bar hold full marks, each named mistake lettered, then the other
    failures, and apart from them the learners who did not attempt it (the stub still raises)
    and those who did not hand it in; does the key say which mistake each letter is, row by row,
    and the legend that a letter names a different mistake on each row; and does it draw?"""
    insight = class_insight(root, [LESSON])[0][0]
    assert bars(insight) == {
        "Shift": [("", "full marks", 1), ("A", "Shift/forgets-offset", 2),
                  ("", "failed, no named mistake", 0), ("", "not attempted", 1),
                  ("", "handed in before the test was added", 0), ("", "not handed in", 0)],
        "Scale": [("", "full marks", 2), ("", "failed, no named mistake", 1),
                  ("", "not attempted", 1), ("", "handed in before the test was added", 0),
                  ("", "not handed in", 0)]}
    assert key_lines(bars(insight)) == [
        "Key, row by row (a letter stands for a different mistake on each row):",
        "Shift: A forgets-offset (2)"]
    figure = lesson_figure(insight)
    assert figure_bytes(figure, "svg").lstrip().startswith(b"<?xml")
    from matplotlib.colors import to_hex

    from grader.insight_figures import _style

    def legend(figure):
        return [((to_hex(patch.get_facecolor()).upper(), patch.get_hatch() or ""),
                 text.get_text()) for patch, text in zip(figure.legends[0].get_patches(),
                                                        figure.legends[0].get_texts())]

    shown = legend(figure)
    assert shown[1] == (_style(0), "A: the row's most frequent named mistake (which one: the "
                                   "key below)")
    assert [label.split(" (")[0] for _, label in shown] == [
        "full marks", "A: the row's most frequent named mistake", "failed, no named mistake",
        "not attempted"]  # no bar has a B: no B in the legend


def test_the_legend_shows_only_what_some_bar_draws(root):
    """With a second named mistake, does the legend explain B (and C, D, ... only once a
    bar has a C); with no failure without a name drawn, does it leave that swatch out?"""
    from grader.insight_figures import _style, legend_entries

    record(root, "eve-ix", {"Shift": failed("Shift/drops-sign", "Shift drops the sign"),
                            "Scale": passed()})
    rows = bars(class_insight(root, [LESSON])[0][0])
    entries = legend_entries(rows)
    assert (*_style(1), "B: the row's next named mistake (which one: the key below)") in entries
    rows["Shift"].insert(3, ("C", "Shift/third", 1))
    assert "C, D" in legend_entries(rows)[2][2]
    only_passed = {"Shift": [("", "full marks", 3), ("", "failed, no named mistake", 0),
                             ("", "not attempted", 0)]}
    assert [label for *_, label in legend_entries(only_passed)] == ["full marks"]


def test_the_legend_fits_inside_the_figure(root):
    """With every swatch drawn (full marks, A, B, a failure without a name, not attempted), does
    the legend, long labels and all, lie inside the figure, not cut at its edges?"""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    record(root, "eve-ix", {"Shift": failed("Shift/drops-sign", "Shift drops the sign"),
                            "Scale": passed()})
    figure = lesson_figure(class_insight(root, [LESSON])[0][0])
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    legend, whole = figure.legends[0].get_window_extent(renderer), figure.bbox
    assert len(figure.legends[0].get_texts()) == 5
    assert whole.x0 <= legend.x0 and legend.x1 <= whole.x1
    assert whole.y0 <= legend.y0 and legend.y1 <= figure.axes[0].get_position().y0 * whole.height


def _insight(root, *args):
    environment = {**os.environ, "COURSE_ROOT": str(root)}
    done = subprocess.run([sys.executable, "-m", "grader", "insight", *args], cwd=ROOT,
                          env=environment, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_the_command_writes_its_reports_and_refuses_bad_input(root):
    """Does `python -m grader insight` report and write the page, CSV and figure; and give a
    one-line error for an unknown lesson and for a course root never autograded?"""
    (root / "source" / LESSON).mkdir(parents=True)
    (root / "gradebook.db").touch()
    status, output = _insight(root, LESSON[:4])  # a prefix of one lesson's name will do
    assert status == 0, output
    assert "Shift/forgets-offset" in output and "ben-ix, cam-ix" in output
    # a make user reads the make spelling (issue 68: only "--names" was said)
    assert "counts only; `make insight NAMES=1` (--names) adds learner ids" in output
    assert (root / "insight" / "insight.html").exists()
    assert (root / "insight" / f"{LESSON}.png").exists()
    page = (root / "insight" / "insight.html").read_text()
    status, output = _insight(root, "08")  # a lesson nobody handed in: one line, page kept
    assert status == 0 and output.splitlines() == [
        f"nothing to show for 08_compile: nobody has handed it in yet; the page is unchanged: "
        f"{root / 'insight' / 'insight.html'}"], output
    assert (root / "insight" / "insight.html").read_text() == page
    status, output = _insight(root, "07")
    assert status == 2 and "error: unknown lessons: '07' could be 07_demo or 07_outputs" in output
    (root / ".autograder" / "ledger.json").unlink()
    status, output = _insight(root)
    assert status == 2 and "no autograde run yet: run `make autograde` first" in output
    assert "Traceback" not in output


def test_make_insight_is_a_documented_target():
    """Is there a `make insight` target, listed by `make help`, that runs the command?"""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^insight: .*## ", makefile, re.MULTILINE)
    assert "-m grader insight $(LESSONS)" in makefile
    assert "make insight" in (ROOT / "README.md").read_text()


def test_a_lesson_without_a_verdict_is_reported_not_drawn(root, tmp_path):
    """Where every notebook of a lesson ended in a grader error, do the terminal and the page
    say so, with no figure (and none left from an earlier run), instead of failing?"""
    release(root, "08_broken")
    for student in ("ana-ix", "ben-ix"):
        record(root, student, {}, lesson="08_broken", status="grader-error", recorded=False)
    found, skipped = class_insight(root, [LESSON, "08_broken"])
    text = text_report(found, skipped)
    assert ("08_broken (Lesson 07 · A demo lesson): 0 learners graded, not handed in: 2 "
            "(cam-ix, dee-ix), the grader failed on 2 (`make autograde` retries them") in text
    assert "no verdict to show yet" in text
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "08_broken.png").write_bytes(b"\x89PNG from an earlier run")
    written = write_reports(found, skipped, folder)
    assert "08_broken" not in written and not (folder / "08_broken.png").exists()
    assert "the grader failed on 2" in written["html"].read_text()


def _page_parts(folder):
    page = (folder / "insight.html").read_text()
    with open(folder / "insight.csv") as handle:
        lessons = {row["lesson"] for row in csv.DictReader(handle)}
    return page, lessons


def _withdraw(root, student, lesson):
    """``student``'s ``lesson`` as if never handed in: no folder, no ledger entry."""
    shutil.rmtree(root / "submitted" / student / lesson)
    ledger = root / ".autograder" / "ledger.json"
    entries = json.loads(ledger.read_text())
    del entries[f"{lesson}/{student}"]
    ledger.write_text(json.dumps(entries))


def test_a_run_over_some_lessons_replaces_only_their_parts(root, tmp_path):
    """After a run over every lesson, does a run over one lesson replace that lesson's part of
    the page, the CSV and its figure, keep the other lessons' parts, and drop the part and
    figure of a lesson nobody has handed in any more; and does a full run leave no figure of a
    lesson it skipped?"""
    release(root, "08_other")
    record(root, "ana-ix", {"Shift": passed(), "Scale": passed()}, lesson="08_other")
    folder = tmp_path / "out"
    write_reports(*class_insight(root, [LESSON, "08_other", "09_unreleased"]), folder)
    other_figure = (folder / "08_other.png").read_bytes()
    record(root, "eve-ix", {"Shift": failed("Shift/forgets-scale", "Shift forgets a"),
                            "Scale": passed()})
    write_reports(*class_insight(root, [LESSON]), folder, partial=True)
    page, lessons = _page_parts(folder)
    assert lessons == {LESSON, "08_other"}
    assert "Shift/forgets-scale" in page and 'data-lesson="08_other"' in page
    assert "(1 lesson): 09_unreleased" in page
    assert (folder / "08_other.png").read_bytes() == other_figure
    _withdraw(root, "ana-ix", "08_other")  # 08_other's only submission
    write_reports(*class_insight(root, ["08_other"]), folder, partial=True)
    page, lessons = _page_parts(folder)
    assert lessons == {LESSON} and 'data-lesson="08_other"' not in page
    assert not (folder / "08_other.png").exists()
    assert "(2 lessons): 08_other, 09_unreleased" in page
    (folder / "08_other.png").write_bytes(b"\x89PNG from an earlier run")
    write_reports(*class_insight(root, [LESSON, "08_other"]), folder)
    assert not (folder / "08_other.png").exists()
    assert "09_unreleased" not in (folder / "insight.html").read_text()


def test_learners_who_did_not_hand_a_lesson_in_are_counted(root, tmp_path):
    """Does a learner of the class who did not hand the lesson in read as "not handed in" in the
    lesson's line (named on the terminal, and on the page only with names), get a
    not-submitted row per exercise in the CSV, and a segment of each bar of the figure?"""
    release(root, "08_other")
    record(root, "eve-ix", {"Shift": passed(), "Scale": passed()}, lesson="08_other")
    found, skipped = class_insight(root, [LESSON])
    assert "4 learners graded, not handed in: 1 (eve-ix)" in text_report(found, skipped)
    rows = [row for row in csv_rows(found) if row["student_id"] == "eve-ix"]
    assert [(row["exercise"], row["result"], row["fraction_of_points"]) for row in rows] == [
        ("Shift", "not-submitted", "0"), ("Scale", "not-submitted", "0")]
    counts = lesson_html(found[0], None)
    assert "not handed in: 1" in counts and "eve-ix" not in counts
    assert all(row[-1] == ("", "not handed in", 1) for row in bars(found[0]).values())
    from grader.insight_figures import legend_entries

    assert legend_entries(bars(found[0]))[-1] == ("#FFFFFF", "..", "not handed in (the lesson's "
                                                                   "notebook)")
    figure = lesson_figure(found[0])
    assert figure.axes[0].get_xlabel() == "learners of the class (graded, or not handed in)"
    assert "not handed in: 1 (eve-ix)" in lesson_html(found[0], None, names=True)


def test_the_page_renders_code_in_headings_and_labels(root):
    """Does the page show a lesson title's and an exercise heading's `code` as code, never as
    backticks?"""
    insight = dataclasses.replace(class_insight(root, [LESSON])[0][0],
                                  title="Lesson 07 · Several outputs, and `None` gradients")
    page = lesson_html(insight, None)
    assert "Several outputs, and <code>None</code> gradients</h2>" in page
    assert "Exercise 1 · <code>Shift</code>" in page and "`" not in page


@pytest.mark.parametrize("rows", range(1, 8))
def test_a_hatched_bars_legend_swatch_shows_its_hatch(rows):
    """Trial: the "handed in before you added the test" swatch read plain white, like "not
    attempted", beside its hatched bar (its lines, 6 pt apart, missed a swatch 5.6 pt high,
    depending on where the legend fell): on figures of 1 to 7 rows, with and without named
    mistakes, at the 120 dpi the page embeds, does each hatched swatch draw some of its
    lines, and "not attempted"'s none?"""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from grader.insight import BEFORE_ADDED, ExerciseInsight, Group, LessonInsight

    for named in (False, True):
        groups = (Group(BEFORE_ADDED, "", "", ("b",)), Group("not-implemented", "", "", ("c",))
                  ) + ((Group("t/drops-sign", "", "", ("e",)),) if named else ())
        exercises = tuple(ExerciseInsight(f"t{row}", "", ("a",), (), groups, ("b",))
                          for row in range(rows))
        figure = lesson_figure(LessonInsight("00_x", "T", ("a", "b", "c", "e"), (), (), (),
                                             exercises, ("d",)))
        figure.set_dpi(120)
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        pixels = np.asarray(canvas.buffer_rgba())[..., :3]
        drawn = {}
        for patch, text in zip(figure.legends[0].get_patches(), figure.legends[0].get_texts()):
            box = patch.get_window_extent()  # inside its edge: the hatch alone
            inner = pixels[int(pixels.shape[0] - box.y1) + 2:int(pixels.shape[0] - box.y0) - 1,
                           int(box.x0) + 2:int(box.x1) - 1]
            drawn[text.get_text().split(" (")[0]] = int((inner.min(axis=2) < 160).sum())
        assert drawn["handed in before you added the exercise, no answer cell"] > 0
        assert drawn["not handed in"] > 0 and drawn["not attempted"] == 0
