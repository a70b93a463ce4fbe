"""A class for the insight tests, handed in and autograded once per test run through the
course's own commands (``python -m grader autograde``, what ``make autograde`` runs): 13
learners over lessons 00 and 12, each answer from the catalogue (correct, correct-but-unusual,
or a mistake with a known hint), so that every group insight must find is known in advance.

Planted: correct work, three learners sharing a mistake in each lesson, a proven mistake in
every other exercise, an unproven wrong value (lesson 00), one learner who answered nothing,
one whose Outer never returns (a timeout), one whose kernel dies, one whose code raises.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

from grader.lessons import ROOT, source_notebook
from tests.built_once import built_once
from tests.released import released_root
from tools.catalogue import mistake, unusual
from tools.submissions import solved, with_answer

LESSONS = ("00_template", "12_surgery")
CELL_TIMEOUT = 8  # seconds (no cell here takes 2): the learner whose Outer loops waits two out

NEVER_RETURNS = """
import time


class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, v):
        while True:  # never returns (asleep: the machine's other work keeps the core)
            time.sleep(0.1)

    @staticmethod
    def backward(ctx, grad_output):
        return None, None
"""
KILLS_KERNEL = "import os\nos._exit(1)"
UNANSWERED = None  # the released notebook handed in untouched


def _mistake(exercise: str, name: str) -> tuple[str, str]:
    return exercise, mistake(exercise, name).answer_cell


def _unusual(exercise: str, name: str) -> tuple[str, str]:
    entry = next(e for e in unusual() if (e.exercise, e.name) == (exercise, name))
    return exercise, entry.code


# student -> lesson -> the answers that differ from the lesson's solution
CLASS = {
    "ana1": {"00_template": [], "12_surgery": []},
    "ben2": {"00_template": [_unusual("Square", "einsum forward and backward")],
             "12_surgery": [_unusual("GradientReversal", "x + 0 and torch.mul")]},
    "cam3": {"00_template": [_mistake("Square", "forgets grad_output")],
             "12_surgery": [_mistake("GradientReversal", "alpha forgotten")]},
    "dan4": {"00_template": [_mistake("Square", "forgets grad_output"),
                             _mistake("WeightedSum", "swapped weights")],
             "12_surgery": [_mistake("GradientReversal", "alpha forgotten")]},
    "eve5": {"00_template": [_mistake("Square", "forgets grad_output")],
             "12_surgery": [_mistake("ClipGradientNorm", "columns clipped")]},
    "fay6": {"00_template": [_mistake("Outer", "grad_u = grad_output.T @ v (the wrong side)")],
             "12_surgery": [_mistake("SoftThreshold",
                                     "lam's gradient without the mask (issue 37)")]},
    "gus7": {"00_template": [_mistake("Square", "two calls to save_for_backward")],
             "12_surgery": [_mistake("PerSampleClippedLinear", "clipped by ||g_n|| alone")]},
    "hal8": {"00_template": UNANSWERED, "12_surgery": UNANSWERED},
    "ada0": {"00_template": [("Outer", NEVER_RETURNS)]},
    "jon10": {"00_template": [_mistake("WeightedSum", "two gradients for four inputs"),
                              _mistake("Square", "a Jacobian as a matrix: "
                                       "grad_output @ torch.diag(2 * x)")]},
    "kim11": {"12_surgery": [_mistake("GradientReversal", "alpha forgotten")]},
    "lou12": {"12_surgery": [_mistake("PerSampleClippedLinear", "Opacus-style ghost norms, "
                                      "max_norm / (norm + 1e-6) (issue 37)")]},
    "max13": {"00_template": [("WeightedSum", KILLS_KERNEL)]},
}

# (lesson, exercise) -> mistake -> the learners who must be grouped under it; everyone else
# who handed the lesson in has full marks on that exercise
EXPECTED = {
    ("00_template", "Square"): {"Square/ignores-grad-output": {"cam3", "dan4", "eve5"},
                                "unproven:wrong-value": {"gus7"},
                                "Square/builds-jacobian": {"jon10"}, "unanswered": {"hal8"}},
    ("00_template", "WeightedSum"): {"WeightedSum/swaps-weights": {"dan4"},
                                     "WeightedSum/wrong-gradient-count": {"jon10"},
                                     "kernel-died": {"max13"}, "unanswered": {"hal8"}},
    ("00_template", "Outer"): {"Outer/grad-output-on-wrong-side": {"fay6"},
                               "timeout": {"ada0"}, "unanswered": {"hal8"}},
    ("12_surgery", "GradientReversal"): {
        "GradientReversal/forgets-alpha": {"cam3", "dan4", "kim11"}, "unanswered": {"hal8"}},
    ("12_surgery", "ClipGradientNorm"): {"ClipGradientNorm/clips-columns": {"eve5"},
                                         "unanswered": {"hal8"}},
    ("12_surgery", "SoftThreshold"): {"SoftThreshold/lam-without-mask": {"fay6"},
                                      "unanswered": {"hal8"}},
    ("12_surgery", "PerSampleClippedLinear"): {
        "PerSampleClippedLinear/norm-of-g-alone": {"gus7"},
        "PerSampleClippedLinear/eps-in-norm": {"lou12"}, "unanswered": {"hal8"}},
}


def handed_in(lesson: str) -> set[str]:
    return {student for student, lessons in CLASS.items() if lesson in lessons}


def _hand_in(root: Path) -> None:
    for lesson in LESSONS:
        released = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        good = solved(released, source_notebook(lesson))
        for student in sorted(handed_in(lesson)):
            answers = CLASS[student][lesson]
            notebook = released if answers is UNANSWERED else good
            for exercise, code in answers or []:
                notebook = with_answer(notebook, f"answer_{exercise}",
                                       textwrap.dedent(code).strip())
            folder = root / "submitted" / student / lesson
            folder.mkdir(parents=True)
            nbformat.write(notebook, folder / f"{lesson}.ipynb")


def grader(root: Path, *args: str) -> tuple[int, str]:
    """``python -m grader ARGS`` in course root ``root``: exit status and all it printed."""
    environment = {**os.environ, "COURSE_ROOT": str(root),
                   "AUTOGRADER_CELL_TIMEOUT": str(CELL_TIMEOUT)}
    done = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def graded_class(tmp_path_factory) -> Path:
    """The course root with the class handed in and autograded (built once per test run)."""

    def build(root: Path) -> None:
        released_root(tmp_path_factory, root, list(LESSONS))
        _hand_in(root)
        status, output = grader(root, "autograde", "--workers", "2")
        assert status == 0, output
        (root / "autograde.out").write_text(output)

    return built_once(tmp_path_factory, "insight-class", build)
