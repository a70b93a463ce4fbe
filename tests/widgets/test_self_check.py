"""A failing visible self-check offers the gradient-check explorer; a passing one does not.
In a notebook the cell shows the hint first, in a few lines, and the explorer below it."""

import re

import nbformat
import pytest
from nbclient import NotebookClient

import widgets  # noqa: F401  (installs the hook)
from autograder import self_check
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.grading import SELF_CHECK_FAILURE_HOOKS
from tests.autograder.catalogued import mistake
from tools.catalogue import mistake as catalogued
from tools.solutions import solution
from tests.autograder.passing import passes
from widgets import self_check as hook_module
from widgets.view import View

# One worker runs the module: its learner's kernel session runs once, not once per worker.
pytestmark = pytest.mark.xdist_group("self-check-session")


@pytest.fixture
def shown(monkeypatch) -> list:
    """What the hook displayed."""
    displayed = []
    monkeypatch.setattr(hook_module, "display", displayed.append)
    return displayed


def test_importing_widgets_installs_the_hook_once():
    """Is the explorer registered with autograder exactly once, however often it is installed?"""
    hook_module.install()
    assert SELF_CHECK_FAILURE_HOOKS.count(hook_module.offer_gradient_explorer) == 1


def test_a_failing_self_check_shows_the_explorer_and_still_raises_the_hint(shown):
    """Does a wrong sign get its hint and, below it, the Jacobian explorer?"""
    with pytest.raises(GradingError, match="check the sign"):
        self_check("Square", mistake("Square", "wrong sign"))
    assert any(isinstance(item, View) for item in shown)


def test_a_failure_the_jacobians_cannot_show_gets_one_note_not_the_panel(shown):
    """Where backward agrees with central differences of forward and the hint proves no
    mistake, is the learner told in one note that the failure lies elsewhere, with no
    heatmaps?"""
    unproven = GradingError("Square's gradient differs for float32 x")
    hook_module.offer_gradient_explorer(EXERCISES["Square"], solution("Square"), unproven)
    note, = shown
    assert "At these small example inputs" in note.data
    assert "the failure is in a case above" in note.data
    assert "float32" not in note.data  # the hint is shown above it


def test_a_named_mistake_or_a_stub_gets_no_note_under_its_hint(shown):
    """Under a hint that names the mistake (a tensor kept on ctx), or an unwritten stub, is
    nothing added (issue 48: the note read as noise, or as contradicting the hint)?"""
    with pytest.raises(GradingError, match="ctx.x"):
        self_check("Square", mistake("Square", "tensor on ctx"))
    with pytest.raises(NotImplementedError):
        self_check("Square", mistake("Square", "backward left as the stub"))
    assert shown == []


def test_an_error_the_learners_code_raised_gets_nothing_below_its_hint(shown):
    """Issue 48: under "CubeOnce.backward raised RuntimeError" (a second backward), a note that
    the Jacobians agree read as contradicting the hint, and a Function that raised at the
    example inputs too got an empty panel repeating the error: is nothing shown in both?"""
    raised = GradingError("Square.backward raised RuntimeError: boom")
    raised.__cause__ = RuntimeError("boom")
    hook_module.offer_gradient_explorer(EXERCISES["Square"], solution("Square"), raised)
    namespace = {}
    exec(RAISES_IN_BACKWARD, namespace)
    with pytest.raises(GradingError, match="raised IndexError"):
        self_check("Square", namespace["Square"])
    assert shown == []


def test_a_disagreement_does_not_repeat_the_hint_above_it(shown):
    """Issue 48: below the red hint, does the panel's own box leave the hint out?"""
    with pytest.raises(GradingError, match="ignores grad_output"):
        self_check("Square", mistake("Square", "forgets grad_output"))
    view, = [item for item in shown if isinstance(item, View)]
    assert "ignores grad_output" not in view.panes["failure"].value
    assert "disagreement" in view.panes["failure"].value


def test_unasked_for_gradients_are_noted_only_when_the_failure_is_about_them():
    """Is the note on gradients nobody asked for kept for a needs_input_grad failure and left
    out of any other?"""
    note = ("with x1 alone requiring grad, backward still computed a gradient for w, which "
            "nobody asked for")
    other = GradingError("wrong sign", mistake="Outer/grad-output-on-wrong-side")
    unneeded = GradingError("unneeded work", mistake="Outer/computes-unneeded-gradient")
    assert hook_module.relevant_notes([note], other) == []
    assert hook_module.relevant_notes([note], unneeded) == [note]


def test_a_passing_self_check_shows_nothing(shown, capsys):
    """Does a correct Function get only its tick?"""
    self_check("Square", solution("Square"))
    assert shown == [] and f"✓ {passes('Square')}" in capsys.readouterr().out


def test_exercises_without_a_gradient_to_compare_are_left_alone(shown):
    """Are straight-through estimators, whose gradients differ by design, not offered it?"""
    with pytest.raises(GradingError):
        self_check("SignSTE", mistake("SignSTE", "zero gradient (the true derivative)"))
    assert shown == []


def test_a_surrogate_gradient_is_shown_beside_the_reference(shown):
    """Issue 68: under a failing FakeQuantize self-check the explorer compared backward with
    central differences, which a straight-through estimator disagrees with by design (it
    flagged the right x gradient, and called the wrong scale gradient right). Is the learner's
    Jacobian shown beside the reference's instead, opening on scale, where they differ?"""
    with pytest.raises(GradingError, match="gradient for scale is wrong"):
        self_check("FakeQuantize",
                   mistake("FakeQuantize", "clipped elements give scale nothing"))
    view, = shown
    assert isinstance(view, View) and "beside" in view.panes["heading"].value
    assert view.controls["input"].value == "scale"
    assert "differ" in view.panes["readout"].value
    view.controls["input"].value = "x"
    assert "matches" in view.panes["readout"].value


def test_a_surrogate_gradient_that_matches_the_reference_gets_nothing_more(shown):
    """Where the learner's Jacobians match the reference's (a copy of x saved), is the hint
    left alone?"""
    with pytest.raises(GradingError, match="saved a copy of x"):
        self_check("FakeQuantize", mistake("FakeQuantize", "saves x.clone()"))
    assert shown == []


def test_a_function_that_cannot_be_differentiated_gets_no_reference_view(shown):
    """Trial 76 (screenshot 55): under StraightThroughSoftmax returning an int64 one-hot (the
    hint names the dtype), the reference view added "raised RuntimeError: element 0 of tensors
    does not require grad", a follow-on of the same bug, beside a lone reference. Where every
    input's Jacobian raises, is the hint left alone?"""
    with pytest.raises(GradingError, match="int64"):
        self_check("StraightThroughSoftmax", mistake("StraightThroughSoftmax", "int64 one-hot"))
    assert shown == []


def test_the_readme_says_exactly_which_exercises_get_no_view():
    """Trial 76: the README promised a view under failing SignSTE self-checks, which have no
    example inputs and so never get one. Do the README's lists (no example inputs, plain
    functions, a reference beside yours) name exactly the exercises the hook treats so?"""
    from pathlib import Path

    from widgets.functions import is_function_class

    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())

    def listed(after: str, until: str) -> tuple[set, set]:
        text = readme.split(after, 1)[1].split(until, 1)[0]
        return set(re.findall(r"`(\w+)`", text)), set(re.findall(r"\b(\d\d)\b", text))

    def in_lessons(lessons: set) -> set:
        return {name for name, e in EXERCISES.items() if e.lesson[:2] in lessons}

    names, lessons = listed("exercises without such inputs (", ")")
    assert names | in_lessons(lessons) == {n for n, e in EXERCISES.items() if e.example is None}
    with_example = {n: e for n, e in EXERCISES.items() if e.example is not None}
    names, lessons = listed("written as plain functions (", "), under")
    plain = {n for n in with_example if not is_function_class(solution(n))}
    assert names | in_lessons(lessons) == plain
    names, _ = listed("the hint names the mistake or quotes your error); for ", ", whose")
    assert names == {n for n, e in with_example.items() if n not in plain
                     and hook_module.surrogate_reference(e, e.example()) is not None}


def test_a_broken_view_never_hides_the_hint(monkeypatch):
    """If the view itself fails, does the learner still get the hint (and a warning)?"""
    def broken(*args, **kwargs):
        raise RuntimeError("view broke")

    monkeypatch.setattr(hook_module, "explore_gradients", broken)
    with pytest.warns(UserWarning, match="view broke"), pytest.raises(GradingError, match="sign"):
        self_check("Square", mistake("Square", "wrong sign"))


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _displayed(*cells: str) -> list[list[dict]]:
    """Run ``cells`` in a fresh kernel, as in JupyterLab; return each cell's outputs."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return [cell.outputs for cell in notebook.cells]


STUB = ("import torch\nclass Square(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n"
        "        # YOUR CODE HERE\n        raise NotImplementedError()\n")

RAISES_IN_BACKWARD = """
import torch

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output.shape[3]
"""

CHECK = 'self_check("Square", Square)'


@pytest.fixture(scope="module")
def learner_session():
    """One kernel, as a learner's: a wrong Square checked, then %tb; the stub checked; a
    Square whose backward raises checked, then %tb. Each cell's outputs, by name."""
    names = ["imports", "wrong", "wrong-check", "wrong-tb", "stub", "stub-check",
             "raises", "raises-check", "raises-tb"]
    outputs = _displayed("from autograder import self_check\nimport widgets",
                         catalogued("Square", "wrong sign").answer_cell, CHECK, "%tb",
                         STUB, CHECK, RAISES_IN_BACKWARD, CHECK, "%tb")
    return dict(zip(names, outputs))


def _lines(error_output) -> list[str]:
    return ANSI.sub("", "\n".join(error_output.traceback)).splitlines()


def _joined(lines: list[str]) -> str:
    """Shown lines as one text (a long line breaks between words, its pieces indented)."""
    return " ".join(line.strip() for line in lines)


@pytest.mark.slow
def test_a_failing_self_check_cell_shows_the_hint_first_in_a_few_lines(learner_session):
    """In a notebook, does a wrong Square's self-check cell fail (so Run All stops) with the hint
    on its first line, after its case, in one line, the explorer below, and %tb giving the
    traceback of the learner's own cell once, without the grading library's frames?"""
    wrong = catalogued("Square", "wrong sign")
    check, full = learner_session["wrong-check"], learner_session["wrong-tb"]
    error = check[0]  # nothing before the hint: the explorer comes after it
    assert error.output_type == "error" and error.ename == "GradingError"
    lines = _lines(error)
    assert lines[0].startswith("✗ Square failed its self-check (tried with x of shape (5,)): ")
    assert wrong.hint in _joined(lines) and len(lines) == 2  # one line, broken between words
    assert [o.output_type for o in check[1:]] == ["display_data"]  # one heading, the view's
    assert "application/vnd.jupyter.widget-view+json" in check[-1].data
    everything = "\n".join(_lines(full[0]))
    assert full[0].ename == "GradingError" and "Traceback (most recent call last)" in everything
    # the hint once: no chain of the same error re-raised (nothing of the learner's raised)
    assert everything.count("GradingError: ") == 1
    assert "direct cause of the following exception" not in everything
    assert 'self_check("Square", Square)' in everything
    assert "diagnose.py" not in everything and "autograder" not in everything


@pytest.mark.slow
def test_a_stub_in_a_notebook_still_fails_with_not_implemented_error(learner_session):
    """Does an untouched stub's cell keep its NotImplementedError (what the learner-copy tests
    and nbgrader see), shown in a few lines that point at the stub's line as the stub to
    replace (not as "your code": issue 48's learner never wrote it), and not at a %tb that
    would show only the stub's raise (issue 48: lesson 00's Run All)?"""
    (error,) = learner_session["stub-check"]
    assert error.ename == "NotImplementedError"
    assert _lines(error) == [
        "✗ Square failed its self-check: Square is not implemented yet: its stub still raises",
        "  NotImplementedError",
        "  the stub to replace, Cell In[5], line 6, in forward:",
        "      raise NotImplementedError()"]


@pytest.mark.slow
def test_tb_after_an_error_in_the_learners_backward_shows_their_line_not_the_library(
        learner_session):
    """Does %tb after a self-check whose backward raised show the cell and the learner's own
    line, with no frame of the grading library or torch in between?"""
    check, full = learner_session["raises-check"], learner_session["raises-tb"]
    assert "tuple index out of range" in _joined(_lines(check[0])[:2])
    everything = "\n".join(_lines(full[0]))
    assert 'self_check("Square", Square)' in everything
    assert "return 2 * x * grad_output.shape[3]" in everything
    assert "autograder" not in everything and "torch/autograd" not in everything
