"""The insight view: a lesson's figure and table of mistakes, counts only until learner ids are
asked for, read again on Refresh; a plain message where there is nothing to show."""

import subprocess
import sys

from tests.grader.recorded import LESSON, failed, passed, record, release
from widgets.insight import insight_parts, insight_view


def _class(root):
    release(root)
    record(root, "ana-w", {"Shift": passed(), "Scale": passed()})
    record(root, "ben-w", {"Shift": failed("Shift/forgets-offset", "Shift forgets b"),
                           "Scale": failed("timeout")})
    return root


def test_the_parts_are_a_figure_and_a_table_of_counts(tmp_path):
    """Are the parts a PNG and a table naming each mistake with its count, and no learner?"""
    parts = insight_parts(LESSON, _class(tmp_path))
    assert parts["figure"].startswith(b"\x89PNG")
    assert "Shift/forgets-offset" in parts["table"] and "ben-w" not in parts["table"]
    assert "2 learners graded" in parts["summary"]
    assert "ben-w" in insight_parts(LESSON, tmp_path, names=True)["table"]


def test_nothing_to_show_says_why(tmp_path):
    """Does a course root never autograded, a lesson nobody handed in, or one whose every
    notebook the grader failed on get a sentence and no figure?"""
    assert "no autograde run yet" in insight_parts(LESSON, tmp_path)["summary"]
    _class(tmp_path)
    parts = insight_parts("08_later", tmp_path)
    assert parts["figure"] is None and "nobody has handed it in yet" in parts["summary"]
    release(tmp_path, "09_broken")
    record(tmp_path, "ana-w", {}, lesson="09_broken", status="grader-error", recorded=False)
    parts = insight_parts("09_broken", tmp_path)
    assert parts["figure"] is None and "the grader failed on 1" in parts["summary"]


def test_the_names_box_and_refresh(tmp_path):
    """Does ticking the box show learner ids, and Refresh show a learner graded since?"""
    view = insight_view(LESSON, _class(tmp_path))
    assert "ben-w" not in view.panes["table"].value
    view.controls["names"].value = True
    assert "ben-w" in view.panes["table"].value
    record(tmp_path, "cam-w", {"Shift": passed(), "Scale": passed()})
    view.controls["refresh"].click()
    assert "3 learners graded" in view.panes["summary"].value


def test_importing_widgets_needs_no_grader():
    """Can a learner's kernel, which has no ``grader`` package, still import ``widgets``?"""
    probe = ("import sys; sys.modules['grader'] = None\n"
             "import widgets; print(callable(widgets.insight_view))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "True", done.stderr
