"""Grading through the real nbgrader CLI: full marks, zero, and exactly the broken exercise lost.

Each lesson has its own course root, released and autograded once per test run (every
submission below for that lesson in one ``nbgrader autograde``), so the lessons spread over the
test workers and no one fixture grades the whole course.
"""

import functools
import re
import textwrap

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.verdict import VERDICT_MIME
from grader.instructor import release
from grader.lessons import lesson_names, source_notebook
from grader.nbgrader_cli import nbgrader
from autograder.exercises import EXERCISES
from tools.catalogue import mistakes
from tests.built_once import built_once
from tools.submissions import solved, with_answer, with_cell_before

pytestmark = pytest.mark.slow

LESSONS = lesson_names()

SIGMOID_WRONG_SIGN = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return -grad_output * y * (1 - y)
"""

PATCH_GRADCHECK_AND_ALLCLOSE = """
torch.autograd.gradcheck = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
"""

PATCH_SHOWTRACEBACK = """
get_ipython().showtraceback = lambda *args, **kwargs: None
"""

PATCH_GRADING_LIBRARY = """
import autograder, autograder.grading, autograder.exercises, autograder.checks
autograder.grade = autograder.grading.grade = lambda *args, **kwargs: print("passed")
autograder.grading.verdict = lambda *args, **kwargs: (True, "passed")
autograder.checks.diagnose_gradient = lambda *args, **kwargs: None
autograder.checks.check_values_and_gradients.__code__ = (lambda *args, **kwargs: (None, None)).__code__
"""

FORGE_VERDICT = f"""
import json
from IPython.display import publish_display_data

def _forge(result):
    for name in ("MySigmoid", "MyReLU", "ScaledSigmoid"):
        payload = json.dumps({{"exercise": name, "message": "ok", "passed": True}}, sort_keys=True)
        publish_display_data({{"{VERDICT_MIME}": {{"payload": payload, "signature": "0" * 64}}}})

get_ipython().events.register("post_run_cell", _forge)
"""

PATCH_DURING_BACKWARD = """
class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        import torch.autograd.gradcheck as gradcheck_module
        torch.allclose = lambda *args, **kwargs: True
        gradcheck_module._allclose_with_type_promotion = lambda *args, **kwargs: True
        y, = ctx.saved_tensors
        return 2 * grad_output * y * (1 - y)
"""


GLOBAL_STATE = """
torch.set_grad_enabled(False)
torch.set_default_dtype(torch.float64)
"""

SQUARE_THAT_WARNS = """
import sys
import warnings


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        warnings.warn("Square.forward: a harmless warning")
        print("debug output on stderr", file=sys.stderr)
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        print("backward ran", file=sys.stderr)
        return grad_output * 2 * x
"""


def _answer(code: str) -> str:
    return textwrap.dedent(code).strip()


# student -> (lesson, exercise that must lose its points, how the submission is made, a phrase
# the hint must contain). A change is ("answer", grade_id, code): the answer cell holds code;
# or ("cell", grade_id, code): a new cell with code just before that cell. Every mistake of the
# catalogue marked nbgrader=True is one student; the rest try to fake a verdict.
CATALOGUED = {re.sub(r"[^a-z0-9]+", "-", f"{m.exercise} {m.name}".lower()).strip("-"): (EXERCISES[m.exercise].lesson, m.exercise,
                                          [("answer", f"answer_{m.exercise}", m.answer_cell)],
                                          m.hint)
              for m in mistakes() if m.nbgrader}
TAMPERING = {
    "sigmoid-wrong-with-gradcheck-and-allclose-patched": (
        "01_sigmoid", "MySigmoid",
        [("answer", "answer_MySigmoid", SIGMOID_WRONG_SIGN + PATCH_GRADCHECK_AND_ALLCLOSE)],
        "check the sign"),
    "sigmoid-wrong-with-showtraceback-patched": (
        "01_sigmoid", "MySigmoid",
        [("answer", "answer_MySigmoid", SIGMOID_WRONG_SIGN + PATCH_SHOWTRACEBACK)],
        "check the sign"),
    "sigmoid-wrong-with-grading-library-patched": (
        "01_sigmoid", "MySigmoid",
        [("answer", "answer_MySigmoid", SIGMOID_WRONG_SIGN),
         ("cell", "MySigmoid", PATCH_GRADING_LIBRARY)],
        "check the sign"),
    "sigmoid-wrong-with-forged-verdicts": (
        "01_sigmoid", "MySigmoid",
        [("answer", "answer_MySigmoid", SIGMOID_WRONG_SIGN + FORGE_VERDICT)],
        "check the sign"),
    "sigmoid-wrong-patching-torch-during-backward": (
        "01_sigmoid", "MySigmoid", [("answer", "answer_MySigmoid", PATCH_DURING_BACKWARD)],
        "while it was being graded"),
}
MISTAKES = CATALOGUED | TAMPERING

# student -> (lesson, how the submission is made): correct work that must keep every point
CORRECT_BUT_NOISY = {
    "square-warns-on-stderr": ("00_template", [("answer", "answer_Square", SQUARE_THAT_WARNS)]),
    # a learner's global torch state must not cost a correct answer (grading restores it)
    "sigmoid-then-global-state": ("01_sigmoid", [("cell", "MySigmoid", GLOBAL_STATE)]),
}


def _points(source) -> dict[str, float]:
    return {cell.metadata.nbgrader["grade_id"]: float(cell.metadata.nbgrader["points"])
            for cell in source.cells
            if cell.metadata.get("nbgrader", {}).get("grade")}


@functools.cache
def _source(lesson: str):
    return source_notebook(lesson)


def _grade_lesson(lesson: str, root) -> None:
    """Release ``lesson`` into ``root``, hand in every submission made for it, autograde them."""
    release(root, [lesson])
    released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)

    def submit(student, notebook):
        folder = root / "submitted" / student / lesson
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")

    submit("solver", solved(released, _source(lesson)))
    submit("untouched", released)
    made = {student: changes for student, (of, _, changes, _) in MISTAKES.items() if of == lesson}
    made |= {student: changes for student, (of, changes) in CORRECT_BUT_NOISY.items()
             if of == lesson}
    for student, changes in made.items():
        notebook = solved(released, _source(lesson))
        for kind, grade_id, code in changes:
            change = with_answer if kind == "answer" else with_cell_before
            notebook = change(notebook, grade_id, _answer(code))
        submit(student, notebook)
    nbgrader("autograde", lesson, "--force", "--log-level=WARN", root=root)


@pytest.fixture(scope="module")
def course(request, tmp_path_factory):
    """(root, lesson): the lesson's course root with its submissions autograded (parametrized
    indirectly by lesson; the tests of one lesson share one xdist group, so one worker)."""
    lesson = request.param
    root = built_once(tmp_path_factory, f"course-{lesson}",
                      functools.partial(_grade_lesson, lesson))
    return root, lesson


def _by_lesson(*cases):
    """Parameters ``(lesson, *rest)`` for tests taking the indirect ``course`` fixture."""
    return [pytest.param(case[0], *case[1:], id="-".join(case[1:]) or case[0],
                         marks=pytest.mark.xdist_group(f"course-{case[0]}")) for case in cases]


def _source_cell(notebook, grade_id: str):
    return next(cell for cell in notebook.cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _scores(root, student: str, lesson: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(lesson, lesson, student)
        return {grade.name: grade.score for grade in notebook.grades}


@pytest.mark.parametrize("course", _by_lesson(*[(lesson,) for lesson in LESSONS]),
                         indirect=True)
def test_solutions_score_full_marks(course):
    """Does a learner who writes the solutions get every point?"""
    root, lesson = course
    assert _scores(root, "solver", lesson) == _points(_source(lesson))


@pytest.mark.parametrize("course", _by_lesson(*[(lesson,) for lesson in LESSONS]),
                         indirect=True)
def test_untouched_learner_copy_scores_zero(course):
    """Does the released notebook, handed in untouched, score nothing?"""
    root, lesson = course
    assert _scores(root, "untouched", lesson) == {name: 0.0 for name in _points(_source(lesson))}


STUDENTS = _by_lesson(*[(lesson, student) for student, (lesson, *_) in MISTAKES.items()])


@pytest.mark.parametrize("course, student", STUDENTS, indirect=["course"])
def test_a_mistake_loses_exactly_its_exercise(course, student):
    """Does each broken or tampering submission lose that exercise's points and keep the rest?"""
    root, lesson = course
    _, broken, _, _ = MISTAKES[student]
    expected = _points(_source(lesson)) | {broken: 0.0}
    assert _scores(root, student, lesson) == expected


@pytest.mark.parametrize("course, student", STUDENTS, indirect=["course"])
def test_a_lost_exercise_shows_the_hint_that_names_the_mistake(course, student):
    """Does the autograded notebook tell the learner, in plain words, what went wrong?"""
    root, lesson = course
    _, broken, _, phrase = MISTAKES[student]
    notebook = nbformat.read(root / "autograded" / student / lesson / f"{lesson}.ipynb",
                             as_version=4)
    cell = _source_cell(notebook, broken)
    assert [o.output_type for o in cell.outputs] == ["error"]
    assert phrase in cell.outputs[0].evalue, cell.outputs[0].evalue


@pytest.mark.parametrize("course, student",
                         _by_lesson(*[(lesson, student)
                                      for student, (lesson, _) in CORRECT_BUT_NOISY.items()]),
                         indirect=["course"])
def test_warnings_on_stderr_never_cost_points(course, student):
    """Does correct work keep every point even when it writes warnings to stderr?"""
    root, lesson = course
    assert _scores(root, student, lesson) == _points(_source(lesson))
