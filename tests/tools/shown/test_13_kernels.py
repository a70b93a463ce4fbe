"""Lesson 13's live checker of Exercise 1's design: the worked answers to its two questions
pass, two exponentials (or another shared quantity) fail."""

from tests.tools.shown.lesson_code import cell_from, definitions, run_code


def test_design_answers_worked_pass_and_two_exponentials_fail():
    """Do the worked answers to Exercise 1's two design questions get ✓, and 2 exponentials
    (or another shared quantity) a ✗?"""
    checker = cell_from("13_kernels", "def autograd_silu_mul_grads")
    worked = definitions("13_kernels", "my_silu_mul_grads", "my_shared", "my_exps_per_element")
    lines = run_code(checker, dict(worked))
    assert len(lines) == 6 and all("✓" in line for line in lines), lines
    lines = run_code(checker, {**worked, "my_shared": "g * b", "my_exps_per_element": 2})
    assert "✗" in lines[-2] and "✗" in lines[-1], lines
