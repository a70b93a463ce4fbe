"""`make feedback` made faster: the same pages without nbconvert's BeautifulSoup pass, and a
notebook whose feedback is current (same autograded notebook, gradebook entries and feedback
code) not written again. Its times are measured in `make bench` (tools/bench_feedback.py), not
here."""

import base64
import copy
import os
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook
from traitlets.config import Config

from grader import feedback_run
from grader.feedback import NO_ALT, FeedbackHTMLExporter
from grader.feedback_run import current, digests
from grader.gradebook import db_url
from grader.manual import give

LESSON = "02_linear"
# a 1x1 PNG: an output image, which nbconvert gives an alt text
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")).decode()


def _notebook():
    shown = new_code_cell("plot()", outputs=[
        new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        new_output("stream", text="it's <b>bold</b> & 'quoted'\n")])
    html_out = new_code_cell("show()", outputs=[new_output("display_data", data={
        "text/html": '<div class="x"><img src="a.png"><img alt="kept" src="b.png"></div>'})])
    return new_notebook(cells=[new_markdown_cell("# Title\n\nSome *text* with `code` & <i>"),
                               new_code_cell("x = 1  # a 'comment'"), shown, html_out])


@pytest.mark.parametrize("template", ["classic", "lab"])
def test_the_page_is_nbconvert_s_without_its_soup_pass(template):
    """Is the page the course's exporter writes the same document as nbconvert's own exporter
    writes (nbconvert's is ours parsed and written out by BeautifulSoup), each image without
    one given nbconvert's alt text, also for a notebook whose cells it rendered before?"""
    config = Config()
    config.HTMLExporter.template_name = template
    config.HTMLExporter.sanitize_html = True
    notebook = _notebook()
    theirs, _ = HTMLExporter(config=config).from_notebook_node(copy.deepcopy(notebook))
    exporter = FeedbackHTMLExporter(config=config)
    ours, _ = exporter.from_notebook_node(copy.deepcopy(notebook))
    assert str(BeautifulSoup(ours, features="html.parser")) == theirs
    # the next learner's notebook: its cells rendered once already, the page the same
    assert exporter.from_notebook_node(notebook)[0] == ours
    assert ours.count(f'alt="{NO_ALT}"') == theirs.count(f'alt="{NO_ALT}"') >= 1
    assert ours.count('tabindex="0"') == theirs.count('tabindex="0"')


def test_the_course_root_uses_it():
    """Does every course root's nbgrader configuration write feedback with it?"""
    from grader.course_config import configure
    config = Config()
    configure(config)
    assert config.GenerateFeedback.exporter_class is FeedbackHTMLExporter


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """A gradebook with lesson 02's two graded exercises and alice's and bob's submissions."""
    folder = tmp_path_factory.mktemp("gradebook")
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), path])
    try:
        with Gradebook(db_url(folder)) as book:
            book.update_or_create_assignment(LESSON)
            book.update_or_create_notebook(LESSON, LESSON)
            for name, points in (("MyLinearFunction", 2), ("Bilinear", 1)):
                book.update_or_create_grade_cell(name, LESSON, LESSON, max_score=points,
                                                 cell_type="code")
                book.update_or_create_solution_cell(f"answer_{name}", LESSON, LESSON)
            for student in ("alice", "bob"):
                book.add_student(student)
                book.add_submission(LESSON, student)
                book.find_grade("Bilinear", LESSON, LESSON, student).auto_score = 1
            book.db.commit()
    finally:
        os.environ["PATH"] = path
    return folder / "gradebook.db"


@pytest.fixture
def root(gradebook, tmp_path):
    """Both learners' notebooks autograded and their feedback written from them."""
    (tmp_path / "gradebook.db").write_bytes(gradebook.read_bytes())
    for student in ("alice", "bob"):
        for folder, name in (("autograded", f"{LESSON}.ipynb"), ("feedback", f"{LESSON}.html")):
            (tmp_path / folder / student / LESSON).mkdir(parents=True)
            (tmp_path / folder / student / LESSON / name).write_text(f"{student}'s page")
    return tmp_path


def _written(root) -> dict:
    return {student: digest for student, digest in
            digests(root, LESSON, ["alice", "bob"]).items()}


def _current(root, record) -> list[str]:
    return [student for student, digest in _written(root).items()
            if current(root, LESSON, student, digest, record)]


def test_feedback_is_current_until_what_it_shows_changes(root):
    """Is a page current until its autograded notebook changes, its points or comment are
    changed by hand, or the page itself is missing, and only that learner's?"""
    record = {f"{LESSON}/{student}": digest for student, digest in _written(root).items()}
    assert _current(root, record) == ["alice", "bob"]
    give(root, LESSON, "alice", "MyLinearFunction", comment="see me")
    assert _current(root, record) == ["bob"]
    record[f"{LESSON}/alice"] = _written(root)["alice"]
    give(root, LESSON, "alice", "MyLinearFunction", points=1.5)
    assert _current(root, record) == ["bob"]
    record[f"{LESSON}/alice"] = _written(root)["alice"]
    (root / "autograded" / "bob" / LESSON / f"{LESSON}.ipynb").write_text("regraded")
    assert _current(root, record) == ["alice"]
    record[f"{LESSON}/bob"] = _written(root)["bob"]
    (root / "feedback" / "alice" / LESSON / f"{LESSON}.html").unlink()
    assert _current(root, record) == ["bob"]


def test_a_comment_marked_as_on_an_earlier_submission_makes_the_page_not_current(root):
    """The page labels a comment given on an earlier submission: is a page written before the
    label came (or went) no longer current?"""
    from grader.earlier_points import EARLIER_COMMENTS

    record = {f"{LESSON}/{student}": digest for student, digest in _written(root).items()}
    (root / EARLIER_COMMENTS).parent.mkdir(parents=True, exist_ok=True)
    (root / EARLIER_COMMENTS).write_text(f'{{"{LESSON}/alice": {{"MyLinearFunction": "see"}}}}')
    assert _current(root, record) == ["bob"]


def test_make_feedback_leaves_current_pages_out(root, monkeypatch, capsys):
    """Does `make feedback` run nbgrader for the learners whose feedback is not current only
    (excluding the others by name), nothing for a lesson whose pages are all current, and
    every page again with FORCE=1?"""
    started = []

    class Finished:
        stdout = iter(())

        def wait(self):
            return 0

    monkeypatch.setattr(feedback_run, "nbgrader_streamed",
                        lambda *args, root: started.append(args) or Finished())
    assert feedback_run.feedback(root, [LESSON])
    assert started.pop() == ("generate_feedback", LESSON, "--force", "--log-level=INFO")
    assert feedback_run.feedback(root, [LESSON]) and not started
    assert "feedback current, not written again (1 lesson; FORCE=1" in capsys.readouterr().out
    give(root, LESSON, "bob", "Bilinear", points=0.5)
    assert feedback_run.feedback(root, [LESSON])
    assert started.pop()[-1] == "--CourseDirectory.student_id_exclude=alice"
    assert feedback_run.feedback(root, [LESSON], force=True)
    assert started.pop() == ("generate_feedback", LESSON, "--force", "--log-level=INFO")
