"""Lessons 12 and 13: each live checker's worked answer, as the solutions show it, passes the
lesson's checker cell, and a named slip fails it (split from test_shown_solutions.py, which is
at its length limit)."""

import ast
import contextlib
import io
import math

import torch

from grader.lessons import LESSONS, WORKED, with_worked


def _worked(lesson: str, name: str) -> dict:
    """The function ``name`` of ``lesson`` as the solutions show it, in a namespace of its own."""
    source = with_worked((LESSONS / f"{lesson}.py").read_text(), True)
    namespace = {"torch": torch}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    return namespace


def _surgery_kernels_cell(lesson: str, start: str) -> str:
    """The code of ``lesson`` from the line starting ``start`` to the end of its cell."""
    source = (LESSONS / f"{lesson}.py").read_text()
    begin = source.index(start)
    end = source.find("\n# %%", begin)
    return source[begin:end if end >= 0 else len(source)]


def _surgery_kernels_run(code: str, namespace: dict) -> list[str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, namespace)  # noqa: S102 - our lesson
    return printed.getvalue().splitlines()


def test_12_surgery_clip_factor_worked_passes_and_a_factor_ignoring_max_norm_fails():
    """Does the worked my_clip_factor pass at max_norm 1 and 0.25, and min(1, 1 / n), right
    at max_norm 1 only, fail at 0.25?"""
    checker = _surgery_kernels_cell("12_surgery", "for max_norm in (1.0, 0.25):")
    worked = _worked("12_surgery", "my_clip_factor")["my_clip_factor"]
    lines = _surgery_kernels_run(checker, {"torch": torch, "math": math,
                                           "my_clip_factor": worked})
    rows = [line for line in lines if "row norm" in line]
    assert len(rows) == 14 and all(line.endswith("✓") for line in rows), lines
    ignoring = lambda norms, max_norm: (1 / norms).clamp(max=1)  # noqa: E731
    lines = _surgery_kernels_run(checker, {"torch": torch, "math": math,
                                           "my_clip_factor": ignoring})
    at_1, at_quarter = lines[1:8], lines[9:]
    assert all(line.endswith("✓") for line in at_1), lines
    assert any(line.endswith("✗") for line in at_quarter), lines


def test_13_kernels_design_answers_worked_pass_and_two_exponentials_fail():
    """Do the worked answers to Exercise 1's two design questions get ✓, and 2 exponentials
    (or another shared quantity) a ✗?"""
    source = (LESSONS / "13_kernels.py").read_text()
    answers = {}
    exec(next(match[1] for match in WORKED.finditer(source) if "my_shared =" in match[1]),
         answers)  # noqa: S102 - our lesson
    checker = _surgery_kernels_cell("13_kernels", "def autograd_silu_mul_grads")
    namespace = {"torch": torch, "F": torch.nn.functional,
                 "my_silu_mul_grads": _worked("13_kernels", "my_silu_mul_grads")[
                     "my_silu_mul_grads"]}
    lines = _surgery_kernels_run(checker, {**namespace, "my_shared": answers["my_shared"],
                                           "my_exps_per_element": answers["my_exps_per_element"]})
    assert len(lines) == 6 and all("✓" in line for line in lines), lines
    lines = _surgery_kernels_run(checker, {**namespace, "my_shared": "g * b",
                                           "my_exps_per_element": 2})
    assert "✗" in lines[-2] and "✗" in lines[-1], lines
