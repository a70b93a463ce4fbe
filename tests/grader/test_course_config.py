"""Grading through the real nbgrader CLI: full marks, zero, and exactly the broken exercises lost.

The lessons fall into a few groups; each group has its own course root, autograded once per
test run (every submission of its lessons in one ``nbgrader autograde``), so the groups spread
over the test workers and no one fixture grades the whole course. Catalogued mistakes of
different exercises share a submission, as a learner's several mistakes would.
"""

import functools
import re
import textwrap

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.verdict import VERDICT_MIME
from grader.lessons import lesson_names, source_notebook
from grader.nbgrader_cli import nbgrader
from grader.notebook_format import is_test_cell
from autograder.exercises import EXERCISES
from tools.catalogue import mistakes
from tests.built_once import built_once
from tests.released import released_root
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
# catalogue marked nbgrader=True is handed in (packed with mistakes in other exercises of its
# lesson, see _packed); the rest try to fake a verdict, each alone, in the released copy with
# only the tampered exercise answered (a fake that passed anything would score its neighbours).
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


def _packed(lesson: str) -> dict[str, list[str]]:
    """Submission -> the catalogued mistakes it holds: as few submissions as there can be, none
    holding two mistakes in one exercise, so each still loses exactly its mistakes' exercises."""
    packs: list[dict[str, str]] = []  # exercise -> mistake
    for student, (of, exercise, _, _) in CATALOGUED.items():
        if of == lesson:
            pack = next((pack for pack in packs if exercise not in pack), None)
            if pack is None:
                packs.append(pack := {})
            pack[exercise] = student
    return {f"mistakes-{number}": list(pack.values()) for number, pack in enumerate(packs, 1)}


def _submissions(lesson: str, catalogued: bool) -> dict[str, tuple[bool, list]]:
    """The submissions made for ``lesson``, its catalogued mistakes' packs or the others:
    student -> (made from the solved copy, rather than the released one; the changes made)."""
    if catalogued:
        return {student: (True, [change for mistake in mistakes for change in MISTAKES[mistake][2]])
                for student, mistakes in _packed(lesson).items()}
    made = {"solver": (True, []), "untouched": (False, [])}
    made |= {student: (False, changes) for student, (of, _, changes, _) in TAMPERING.items()
             if of == lesson}
    made |= {student: (True, changes) for student, (of, changes) in CORRECT_BUT_NOISY.items()
             if of == lesson}
    return made


def _handed_in_by(mistake: str) -> str:
    """The student whose submission holds ``mistake``."""
    lesson = MISTAKES[mistake][0]
    return next((student for student, held in _packed(lesson).items() if mistake in held),
                mistake)


def _grade_group(lessons: list[str], root, catalogued: bool) -> None:
    """Release ``lessons`` into ``root``, hand in the submissions made for them (their
    catalogued mistakes' packs, or the others), autograde them all in one nbgrader run."""
    for lesson in lessons:
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        for student, (from_solved, changes) in _submissions(lesson, catalogued).items():
            notebook = solved(released, _source(lesson)) if from_solved else released
            for kind, grade_id, code in changes:
                change = with_answer if kind == "answer" else with_cell_before
                notebook = change(notebook, grade_id, _answer(code))
            folder = root / "submitted" / student / lesson
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{lesson}.ipynb")
    nbgrader("autograde", "*", "--force", "--log-level=WARN", root=root)


def _group(lesson: str, catalogued: bool = False) -> str:
    """The course root a lesson is graded in: lessons paired first with last, and so on (the
    later lessons are the heavier), two pairs to a root and to one nbgrader run (each run
    starts nbgrader and a zygote that imports torch: seconds of CPU that fewer runs save).
    Every lesson's catalogued mistakes share one root of their own, graded only in the
    exhaustive tier (`make test-all`): the catalogue's own test gives each its hint in every
    tier, and the tampering submissions take the real nbgrader run in both."""
    if catalogued:
        return "course-catalogued"
    index = LESSONS.index(lesson)
    return f"course-{min(index, len(LESSONS) - 1 - index) // 2}"


@pytest.fixture(scope="module")
def course(request, tmp_path_factory):
    """(root, lesson): the course root holding the lesson's submissions, autograded
    (parametrized indirectly by lesson, or by (lesson, True) for its catalogued mistakes; the
    tests of one group share one xdist group, so one worker, and the root is built once)."""
    lesson, catalogued = (request.param if isinstance(request.param, tuple)
                          else (request.param, False))
    group = _group(lesson, catalogued)

    def build(root):
        lessons = [other for other in LESSONS if _group(other, catalogued) == group]
        released_root(tmp_path_factory, root, lessons)
        _grade_group(lessons, root, catalogued)

    return built_once(tmp_path_factory, group, build), lesson


def _by_lesson(*cases, catalogued: bool = False):
    """Parameters ``(lesson, *rest)`` for tests taking the indirect ``course`` fixture."""
    marks = [pytest.mark.exhaustive] if catalogued else []
    return [pytest.param((case[0], True) if catalogued else case[0], *case[1:],
                         id="-".join(case[1:]) or case[0],
                         marks=[*marks, pytest.mark.xdist_group(_group(case[0], catalogued))])
            for case in cases]


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


@pytest.mark.parametrize("course", _by_lesson(*[(lesson,) for lesson in LESSONS]),
                         indirect=True)
def test_an_untouched_copy_fails_only_with_the_stubs(course):
    """Does an untouched learner copy run to the end under grading, every error one of its
    stubs' NotImplementedError (a view or demo that calls an unsolved exercise included), and
    every test cell say which exercise is not implemented yet? (Solutions run in a learner's
    environment in test_notebooks; the copies differ only in their answer cells.)"""
    root, lesson = course
    notebook = nbformat.read(root / "autograded" / "untouched" / lesson / f"{lesson}.ipynb",
                             as_version=4)
    tests, others = [], []
    for cell in notebook.cells:
        errors = [f"{output.ename}: {output.evalue}" for output in cell.get("outputs", [])
                  if output.output_type == "error"]
        (tests if is_test_cell(cell) else others).append(errors)
    assert all(len(errors) == 1 and "is not implemented yet" in errors[0] for errors in tests)
    assert all(error.startswith("NotImplementedError") for errors in others for error in errors)


STUDENTS = (_by_lesson(*[(lesson, student) for student, (lesson, *_) in TAMPERING.items()])
            + _by_lesson(*[(lesson, student) for student, (lesson, *_) in CATALOGUED.items()],
                         catalogued=True))


@pytest.mark.parametrize("course, student", STUDENTS, indirect=["course"])
def test_a_mistake_loses_exactly_its_exercise(course, student):
    """Does each broken submission lose its broken exercises' points (this mistake's among
    them) and keep the rest, and a tampering one score nothing, its unsolved exercises too?"""
    root, lesson = course
    held = _packed(lesson).get(_handed_in_by(student), [student])
    points = _points(_source(lesson))
    if student in TAMPERING:
        points = dict.fromkeys(points, 0.0)
    expected = points | {MISTAKES[mistake][1]: 0.0 for mistake in held}
    assert _scores(root, _handed_in_by(student), lesson) == expected


@pytest.mark.parametrize("course, student", STUDENTS, indirect=["course"])
def test_a_lost_exercise_shows_the_hint_that_names_the_mistake(course, student):
    """Does the autograded notebook tell the learner, in plain words, what went wrong?"""
    root, lesson = course
    _, broken, _, phrase = MISTAKES[student]
    notebook = nbformat.read(
        root / "autograded" / _handed_in_by(student) / lesson / f"{lesson}.ipynb", as_version=4)
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
