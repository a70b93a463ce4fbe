"""Feedback that teaches: each graded test with its name, points and hint, never the hidden
tests' source or tracebacks; and partial credit where an exercise declares weighted checks."""

import html
import io
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.utils import determine_grade

from autograder import seal
from autograder.errors import GradingError
from grader.nbgrader_cli import nbgrader
from autograder.partial import Part, WeightedExercise, scored_verdict
from autograder.verdict import read_verdicts
from grader import batch
from grader.feedback import FeedbackSummary
from grader.notebook_format import HIDDEN_TESTS, SKIP_WHEN_GRADING, SKIPPED_NOTE
from grader.settings import Settings
from tools.catalogue import mistake
from grader.verdicts import apply_verdicts
from tests.released import released_root
from grader.lessons import source_notebook
from tools.submissions import solved, with_answer

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("feedback")]

LESSON = "00_template"
SETTINGS = Settings(cell_timeout=30, notebook_timeout=120, memory_limit_mb=1024,
            sandbox="auto", output_limit_kb=1024, restart_limit=3)
TWO_GRADIENTS = mistake("WeightedSum", "two gradients for four inputs").answer_cell
# A learner cell that prints every cell source IPython has seen, hidden tests included.
LEAK = """
import linecache
print("\\n".join("".join(entry[2]) for name, entry in list(linecache.cache.items())
                if "/ipykernel_" in name or "ipython-input" in name))
"""

# An ungraded cell a lesson tags to skip while grading (a C++ build, in lesson 13)
SLOW_AND_UNGRADED = 'raise RuntimeError("a cell tagged skip-when-grading ran")'


def _hidden_lines() -> list[str]:
    lines = []
    for cell in source_notebook(LESSON).cells:
        for region in HIDDEN_TESTS.findall(cell.source):
            lines += [line.strip() for line in region.splitlines()[1:-1] if line.strip()]
    assert lines
    return lines


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    """Graded and fed back: {student: feedback HTML}, and the course root."""
    root = tmp_path_factory.mktemp("feedback")
    released_root(tmp_path_factory, root, [LESSON])
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    good = solved(released, source_notebook(LESSON))
    good.cells.append(new_code_cell(SLOW_AND_UNGRADED, metadata={"tags": [SKIP_WHEN_GRADING]}))
    leaking = with_answer(good, "answer_WeightedSum", TWO_GRADIENTS)
    leaking.cells.append(new_code_cell(LEAK.strip()))
    submissions = {"clean": nbformat.writes(good).encode(),
                   "two-gradients": nbformat.writes(with_answer(
                       good, "answer_WeightedSum", TWO_GRADIENTS)).encode(),
                   "leaks-hidden-tests": nbformat.writes(leaking).encode(),
                   "unreadable": b"{ not json"}
    for student, data in submissions.items():
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        (folder / f"{LESSON}.ipynb").write_bytes(data)
    batch.autograde(root, [LESSON], workers=2, settings=SETTINGS, stream=io.StringIO())
    nbgrader("generate_feedback", LESSON, "--force", "--log-level=ERROR", root=root)
    pages = {student: (root / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
             for student in submissions}
    return root, pages


def _hint(root, student: str, exercise: str) -> str:
    path = root / "autograded" / student / LESSON / f"{LESSON}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == exercise)
    return cell.outputs[0].evalue


def test_a_cell_tagged_skip_when_grading_is_not_run(feedback):
    """Is a lesson's slow ungraded cell left out of grading, saying so in its output?"""
    root, _ = feedback
    notebook = nbformat.read(root / "autograded" / "clean" / LESSON / f"{LESSON}.ipynb",
                             as_version=4)
    tagged = [cell for cell in notebook.cells if cell.source == SLOW_AND_UNGRADED]
    assert [output.get("text") for output in tagged[0].outputs] == [SKIPPED_NOTE]


def test_feedback_lists_each_test_with_points_and_hint(feedback):
    """Does the feedback open with every graded test: its name, the points earned of the points
    possible, and for a failed one the grading library's hint?"""
    root, pages = feedback
    page = pages["two-gradients"]
    hint = _hint(root, "two-gradients", "WeightedSum")
    assert "gradients" in hint  # the library's hint about the returned gradients
    summary = page[page.index("Your graded tests"):]
    assert re.search(r"Square.*?1 / 1.*?✓", summary, re.DOTALL)
    assert re.search(r"WeightedSum.*?0 / 1.*?✗", summary, re.DOTALL)
    assert html.escape(hint) in summary


def test_a_hint_with_pipes_reads_as_written_in_the_summary_table():
    """Does a hint's "||g_n||" reach the page as written (not as "¦¦g_n¦¦", issue 48), in its
    own cell of the table, with its HTML escaped?"""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune
    from grader.feedback import _cell_text
    hint = "PerSampleClippedLinear clips by ||g_n|| alone: <x> should be scaled\nper sample"
    page = markdown2html_mistune(f"| Test | Hint |\n|---|---|\n| a | {_cell_text(hint)} |")
    assert "<td>PerSampleClippedLinear clips by ||g_n|| alone: &lt;x&gt; should be scaled " \
           "per sample</td>" in page


def test_feedback_explains_an_unreadable_notebook(feedback):
    """Does a learner whose notebook was not JSON read why every test scored 0?"""
    page = feedback[1]["unreadable"]
    assert "not valid JSON" in page and page.count("0 / 1") >= 2


@pytest.mark.parametrize("student", ["clean", "two-gradients", "leaks-hidden-tests",
                                     "unreadable"])
def test_feedback_never_shows_hidden_tests(feedback, student):
    """Is no line of any hidden test in the feedback, raw or HTML-escaped (in any of the ways
    the page's templates escape it: read unescaped too), nor its markers?"""
    page = feedback[1][student]
    assert "HIDDEN TESTS" not in page
    for line in _hidden_lines():
        forms = {line, html.escape(line), html.escape(line, quote=False)}
        assert not any(form in text for form in forms for text in (page, html.unescape(page))), line


def test_the_leak_was_real(feedback):
    """Did the leaking cell really print the hidden tests into the autograded notebook (so the
    test above proves the scrubbing, not an empty output)?"""
    root, _ = feedback
    path = root / "autograded" / "leaks-hidden-tests" / LESSON / f"{LESSON}.ipynb"
    last = nbformat.read(path, as_version=4).cells[-1]
    printed = "".join(output.get("text", "") for output in last.outputs)
    assert any(line in printed for line in _hidden_lines())


# -- partial credit ---------------------------------------------------------------------------

KEY = b"k" * 32


def _fails(hint):
    def check(submission, device):
        raise GradingError(hint)
    return check


WEIGHTED = WeightedExercise(
    "Weighted", "00_template", battery=None,
    parts=(Part("forward values", 1, lambda submission, device: None),
           Part("gradients", 3, _fails("your gradient is off by a constant factor 2"))))


def _graded_cell(outputs, points=4):
    cell = new_code_cell("grade('Weighted', Weighted)")
    cell.metadata = {"nbgrader": {"grade": True, "solution": False, "grade_id": "Weighted",
                                  "points": points, "locked": True, "schema_version": 3}}
    cell.outputs = outputs
    return cell


def _signed(verdict) -> list:
    published = []
    grade = seal.make_sealed_grade(KEY, lambda: [], verdict, lambda passed, message: None,
                                   published.append)
    grade("Weighted", object())
    return [nbformat.NotebookNode(output_type="display_data", data=bundle, metadata={})
            for bundle in published]


def test_weighted_parts_earn_their_share():
    """Does an exercise with weighted parts score the weight of the passing ones, and name the
    first failing part's hint?"""
    passed, message, score = WEIGHTED.score(object())
    assert (passed, score) == (False, 0.25)
    assert message.splitlines()[0] == "your gradient is off by a constant factor 2"
    assert "✓ forward values" in message and "✗ gradients" in message


def test_partial_credit_reaches_nbgrader():
    """Is a signed partial verdict recorded by nbgrader as that share of the cell's points, and
    shown in the feedback summary as partial?"""
    verdict = scored_verdict(lambda name, submission: (True, "unused"), {"Weighted": WEIGHTED})
    notebook = new_notebook(cells=[_graded_cell(_signed(verdict))])
    apply_verdicts(notebook, KEY)
    assert determine_grade(notebook.cells[0]) == (1.0, 4.0)
    notebook.cells[0].metadata.nbgrader["score"] = 1.0
    FeedbackSummary().preprocess(notebook, {})
    assert "| 1 / 4 | ◐" in notebook.cells[0].source


def test_all_or_nothing_stays_the_default():
    """Does an exercise without weighted parts still lose all its points on any failure?"""
    verdict = scored_verdict(lambda name, submission: (False, "a hint"), {})
    notebook = new_notebook(cells=[_graded_cell(_signed(verdict))])
    apply_verdicts(notebook, KEY)
    assert determine_grade(notebook.cells[0]) == (0, 4.0)
    assert read_verdicts(_signed(verdict), KEY) == {"Weighted": (False, "a hint")}
