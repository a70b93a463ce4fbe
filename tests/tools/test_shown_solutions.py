"""An ungraded "Try it" whose worked answer the solutions show (a WORKED region): the worked
code passes the lesson's own checker, and a plausible slip fails it."""

import contextlib
import io

import torch

from grader.lessons import LESSONS, WORKED


def _lesson_08() -> str:
    return (LESSONS / "08_compile.py").read_text()


def _shown_cross() -> type:
    """The Cross class of lesson 08's worked region, as the solutions show it."""
    worked = next(match[1] for match in WORKED.finditer(_lesson_08()) if "class Cross" in match[1])
    namespace = {"torch": torch}
    exec(worked, namespace)  # noqa: S102 - our lesson
    return namespace["Cross"]


def _checker_output(cross) -> str:
    """What lesson 08's check_cross prints for ``cross``."""
    lesson = _lesson_08()
    source = lesson[lesson.index("def check_cross():"):lesson.index("\ncheck_cross()\n")]
    namespace = {"torch": torch, "Cross": cross}
    exec(source, namespace)  # noqa: S102 - our lesson
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check_cross"]()
    return printed.getvalue()


def test_the_worked_cross_passes_every_check():
    """Does the worked answer lesson 08's solutions show pass its own checker, line by line?"""
    lines = _checker_output(_shown_cross()).splitlines()
    assert len(lines) == 4 and all(line.endswith("✓") for line in lines), lines


def test_the_checker_catches_a_backward_with_the_factors_swapped():
    """Does the checker fail a backward whose cross products have the wrong order (sign)?"""
    class SwappedBackward(_shown_cross()):
        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            return torch.linalg.cross(grad_output, b), torch.linalg.cross(a, grad_output)

    output = _checker_output(SwappedBackward)
    assert "backward (gradcheck) ✗" in output
