"""Grading through the real nbgrader CLI: full marks, zero, and exactly the broken exercise lost.

One course root is released once; every submission below is autograded by one
``nbgrader autograde`` run per lesson.
"""

import textwrap

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.nbgrader_cli import nbgrader
from autograder.verdict import VERDICT_MIME
from grader.instructor import release
from grader.lessons import lesson_names, source_notebook
from grader.notebook_format import SOLUTION_MARKER
from tools.submissions import (LINEAR_IGNORES_NEEDS_INPUT_GRAD, LINEAR_TRANSPOSED_GRAD_X,
                               RELU_MASKS_GRAD_OUTPUT_IN_PLACE, SIGMOID_SAVES_INPUT,
                               WEIGHTED_SUM_TWO_GRADIENTS, solved, with_answer,
                               with_cell_before)

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


# Lessons 03 and 04: appended to the solved answer cell, a subclass overrides one method.
SIGN_STE_ZERO_GRADIENT = """
class SignSTE(SignSTE):
    @staticmethod
    def backward(ctx, grad_output):
        return torch.zeros_like(grad_output)
"""

SIGN_CLIPPED_STE_UNCLIPPED = """
class SignClippedSTE(SignClippedSTE):
    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
"""

ROUND_STE_FLOOR = """
class RoundSTE(RoundSTE):
    @staticmethod
    def forward(ctx, x):
        return torch.floor(x)
"""

SWISH_BACKWARD_DETACHES = """
class SwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad_output):
        x, beta = (t.detach() for t in ctx.saved_tensors)
        s = torch.sigmoid(beta * x)
        grad_x = grad_output * (s + beta * x * s * (1 - s))
        grad_beta = (grad_output * x * x * s * (1 - s)).sum()
        return grad_x, grad_beta
"""

CUBE_ONCE_TWICE_DIFFERENTIABLE = """
class CubeOnce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2
"""


# Lessons 05 and 06.
CHECKPOINT_IGNORES_RNG_STATE = """
class CheckpointFunction(CheckpointFunction):
    @staticmethod
    def backward(ctx, grad_output):
        saved = iter(ctx.saved_tensors)
        args = []
        for is_tensor, other in zip(ctx.is_tensor, ctx.others):
            if is_tensor:
                tensor = next(saved)
                other = tensor.detach().requires_grad_(tensor.requires_grad)
            args.append(other)
        with torch.enable_grad():
            output = ctx.run_fn(*args)
        torch.autograd.backward(output, grad_output)
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
"""

SEQUENTIAL_WITHOUT_CHECKPOINTS = """
def checkpoint_sequential(layers, segments, x):
    for layer in layers:
        x = layer(x)
    return x
"""

ATTENTION_WITHOUT_ROW_SUM = """
class ScaledDotProductAttention(ScaledDotProductAttention):
    @staticmethod
    def backward(ctx, grad_output):
        Q, K, V, P = ctx.saved_tensors
        grad_V = P.transpose(-2, -1) @ grad_output
        grad_S = P * (grad_output @ V.transpose(-2, -1))
        grad_Q = ctx.scale * grad_S @ K
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
        return grad_Q, grad_K, grad_V, None, None
"""

MEMORY_EFFICIENT_SAVES_PROBABILITIES = """
class MemoryEfficientAttention(ScaledDotProductAttention):
    pass
"""


def _answer(code: str) -> str:
    return textwrap.dedent(code).strip()


# student -> (lesson, exercise that must lose its points, how the submission is made, a phrase
# the hint must contain). A change is ("answer", grade_id, code): the answer cell holds code;
# ("append", grade_id, code): code follows the solution in its answer cell; or
# ("cell", grade_id, code): a new cell with code just before that cell.
MISTAKES = {
    "sigmoid-saves-input": ("01_sigmoid", "MySigmoid",
                            [("answer", "answer_MySigmoid", SIGMOID_SAVES_INPUT)],
                            "saved its input x"),
    "relu-masks-grad-output-in-place": ("01_sigmoid", "MyReLU",
                                        [("answer", "answer_MyReLU",
                                          RELU_MASKS_GRAD_OUTPUT_IN_PLACE)],
                                        "modified grad_output in place"),
    "linear-ignores-needs-input-grad": (
        "02_linear", "MyLinearFunction",
        [("answer", "answer_MyLinearFunction", LINEAR_IGNORES_NEEDS_INPUT_GRAD)],
        "ctx.needs_input_grad"),
    "linear-transposed-grad-x": ("02_linear", "MyLinearFunction",
                                 [("answer", "answer_MyLinearFunction", LINEAR_TRANSPOSED_GRAD_X)],
                                 "a transpose"),
    "weighted-sum-two-gradients": ("00_template", "WeightedSum",
                                   [("answer", "answer_WeightedSum", WEIGHTED_SUM_TWO_GRADIENTS)],
                                   "backward returned 2 gradients for 4 inputs: return None for "
                                   "w1 and w2"),
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
    "sign-ste-zero-gradient": ("03_ste", "SignSTE",
                               [("append", "answer_SignSTE", SIGN_STE_ZERO_GRADIENT)],
                               "true derivative of sign"),
    "sign-clipped-ste-unclipped": ("03_ste", "SignClippedSTE",
                                   [("append", "answer_SignClippedSTE", SIGN_CLIPPED_STE_UNCLIPPED)],
                                   "not clipped"),
    "round-ste-floors": ("03_ste", "RoundSTE",
                         [("append", "answer_RoundSTE", ROUND_STE_FLOOR)], "not round(x)"),
    "swish-backward-detaches": ("04_double_backward", "SwishFunction",
                                [("answer", "answer_SwishFunction", SWISH_BACKWARD_DETACHES)],
                                "cut off from autograd"),
    "cube-once-without-once-differentiable": (
        "04_double_backward", "CubeOnce",
        [("answer", "answer_CubeOnce", CUBE_ONCE_TWICE_DIFFERENTIABLE)],
        "mark backward with @once_differentiable"),
    "checkpoint-ignores-rng-state": (
        "05_checkpointing", "CheckpointFunction",
        [("append", "answer_CheckpointFunction", CHECKPOINT_IGNORES_RNG_STATE)],
        "drew new random numbers"),
    "checkpoint-sequential-checkpoints-nothing": (
        "05_checkpointing", "checkpoint_sequential",
        [("answer", "answer_checkpoint_sequential", SEQUENTIAL_WITHOUT_CHECKPOINTS)],
        "checkpointed nothing"),
    "attention-without-row-sum": (
        "06_attention", "ScaledDotProductAttention",
        [("append", "answer_ScaledDotProductAttention", ATTENTION_WITHOUT_ROW_SUM)],
        "row-sum term"),
    "memory-efficient-attention-saves-probabilities": (
        "06_attention", "MemoryEfficientAttention",
        [("answer", "answer_MemoryEfficientAttention", MEMORY_EFFICIENT_SAVES_PROBABILITIES)],
        "as big as the Lq x Lk probabilities"),
}

# student -> (lesson, how the submission is made): correct work that must keep every point
CORRECT_BUT_NOISY = {
    "square-warns-on-stderr": ("00_template", [("answer", "answer_Square", SQUARE_THAT_WARNS)]),
}


def _points(source) -> dict[str, float]:
    return {cell.metadata.nbgrader["grade_id"]: float(cell.metadata.nbgrader["points"])
            for cell in source.cells
            if cell.metadata.get("nbgrader", {}).get("grade")}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A released course with every submission below autograded; returns (root, sources)."""
    root = tmp_path_factory.mktemp("course")
    release(root, LESSONS)
    sources = {lesson: source_notebook(lesson) for lesson in LESSONS}
    released = {lesson: nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
                 for lesson in LESSONS}

    def submit(student, lesson, notebook):
        folder = root / "submitted" / student / lesson
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")

    for lesson in LESSONS:
        submit("solver", lesson, solved(released[lesson], sources[lesson]))
        submit("untouched", lesson, released[lesson])
    submissions = {student: (lesson, changes) for student, (lesson, _, changes, _) in MISTAKES.items()}
    for student, (lesson, changes) in (submissions | CORRECT_BUT_NOISY).items():
        notebook = solved(released[lesson], sources[lesson])
        for kind, grade_id, code in changes:
            if kind == "append":
                solution = SOLUTION_MARKER.sub("", _source_cell(sources[lesson], grade_id).source)
                notebook = with_answer(notebook, grade_id, solution + "\n\n" + _answer(code))
            else:
                change = with_answer if kind == "answer" else with_cell_before
                notebook = change(notebook, grade_id, _answer(code))
        submit(student, lesson, notebook)
    for lesson in LESSONS:
        nbgrader("autograde", lesson, "--force", "--log-level=WARN", root=root)
    return root, sources


def _source_cell(notebook, grade_id: str):
    return next(cell for cell in notebook.cells
                if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _scores(root, student: str, lesson: str) -> dict[str, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(lesson, lesson, student)
        return {grade.name: grade.score for grade in notebook.grades}


@pytest.mark.parametrize("lesson", LESSONS)
def test_solutions_score_full_marks(course, lesson):
    """Does a learner who writes the solutions get every point?"""
    root, sources = course
    assert _scores(root, "solver", lesson) == _points(sources[lesson])


@pytest.mark.parametrize("lesson", LESSONS)
def test_untouched_learner_copy_scores_zero(course, lesson):
    """Does the released notebook, handed in untouched, score nothing?"""
    root, sources = course
    assert _scores(root, "untouched", lesson) == {name: 0.0 for name in _points(sources[lesson])}


@pytest.mark.parametrize("student", MISTAKES)
def test_a_mistake_loses_exactly_its_exercise(course, student):
    """Does each broken or tampering submission lose that exercise's points and keep the rest?"""
    root, sources = course
    lesson, broken, _, _ = MISTAKES[student]
    expected = _points(sources[lesson]) | {broken: 0.0}
    assert _scores(root, student, lesson) == expected


@pytest.mark.parametrize("student", MISTAKES)
def test_a_lost_exercise_shows_the_hint_that_names_the_mistake(course, student):
    """Does the autograded notebook tell the learner, in plain words, what went wrong?"""
    root, _ = course
    lesson, broken, _, phrase = MISTAKES[student]
    notebook = nbformat.read(root / "autograded" / student / lesson / f"{lesson}.ipynb",
                             as_version=4)
    cell = _source_cell(notebook, broken)
    assert [o.output_type for o in cell.outputs] == ["error"]
    assert phrase in cell.outputs[0].evalue, cell.outputs[0].evalue


@pytest.mark.parametrize("student", CORRECT_BUT_NOISY)
def test_warnings_on_stderr_never_cost_points(course, student):
    """Does correct work keep every point even when it writes warnings to stderr?"""
    root, sources = course
    lesson = CORRECT_BUT_NOISY[student][0]
    assert _scores(root, student, lesson) == _points(sources[lesson])
