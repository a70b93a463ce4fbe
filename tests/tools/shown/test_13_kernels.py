"""Lesson 13's live checker of Exercise 1's design: the worked answers to its two questions
pass, two exponentials (or another shared quantity) fail."""

from autograder.predictions import same_answer
from tests.tools.shown.lesson_code import cell_from, definitions, run_code


def test_design_answers_worked_pass_and_two_exponentials_fail():
    """Do the worked answers to Exercise 1's two design questions get ✓ (question 1 in any of
    sigmoid's spellings), and 2 exponentials (or another shared quantity) a ✗, one off the
    list told to copy a string offered?"""
    checker = cell_from("13_kernels", "def autograd_silu_mul_grads")
    worked = definitions("13_kernels", "my_silu_mul_grads", "my_shared", "my_exps_per_element",
                         same_answer=same_answer)
    lines = run_code(checker, dict(worked))
    assert len(lines) == 6 and all("✓" in line for line in lines), lines
    lines = run_code(checker, {**worked, "my_shared": "g * b", "my_exps_per_element": 2})
    assert "✗" in lines[-2] and "✗" in lines[-1], lines
    for spelling in (" Sigmoid(A) ", "sigmoid", "σ(a)", "torch.sigmoid( a )"):
        lines = run_code(checker, {**worked, "my_shared": spelling})
        assert "✓" in lines[-2], (spelling, lines)
    lines = run_code(checker, {**worked, "my_shared": "silu(a)*b"})
    assert "✗ is that a factor of both?" in lines[-2], lines
    lines = run_code(checker, {**worked, "my_shared": "exp(-a)"})
    assert "none of the three answers: copy one" in lines[-2], lines


def test_silu_checker_shows_a_learners_exception_in_one_line_and_goes_on():
    """Does a my_silu_mul_grads that raises on the float64 grid get a one-line ✗ there, and do
    the float32 points and both questions still get their verdicts?"""
    checker = cell_from("13_kernels", "def autograd_silu_mul_grads")
    worked = definitions("13_kernels", "my_silu_mul_grads", "my_shared", "my_exps_per_element",
                         same_answer=same_answer)
    lines = run_code(checker, {**worked, "my_silu_mul_grads": lambda a, b, g: (a.view(2, -1), g)})
    assert lines[0].startswith("float64, a from -6 to 6: ✗ raises RuntimeError"), lines
    assert len(lines) == 5 and "✓" in lines[-1], lines


def test_rms_checker_passes_the_worked_answer_and_shows_a_list_of_partials_in_one_line():
    """Do the worked my_rms_row_grads and my_weight_partials get ✓ throughout, and do partial
    rows returned as a list (not stacked) get a one-line ✗ for each grouping, step 1 kept ✓?"""
    checker = cell_from("13_kernels", "def autograd_rms_grads")
    worked = definitions("13_kernels", "my_rms_row_grads", "my_weight_partials")
    lines = run_code(checker, dict(worked))
    assert [line.count("✓") for line in lines if "✗" not in line] == [1, 1, 0, 1, 0], lines
    listed = lambda x_hat, g, rows: [(g_rows * x_rows).sum(0) for g_rows, x_rows in  # noqa: E731
                                     zip(g.split(rows), x_hat.split(rows))]
    lines = run_code(checker, {**worked, "my_weight_partials": listed})
    assert "✓" in lines[0] and len(lines) == 3, lines
    assert all("✗ raises ValueError" in line for line in lines[1:]), lines


def test_backward_design_checker_asks_for_a_and_b_and_asks_custom_op_about_the_annotation():
    """Does Exercise 1's design cell give ✓ to the worked saved tensors, a ✗ to a y saved
    alone, no verdict on the return annotation (two tensors and one tensor both get a question
    that leaves the design to the learner), and custom_op's own refusal of
    tuple[torch.Tensor, ...]?"""
    import torch

    checker = cell_from("13_kernels", "if my_saved is not None:")
    worked = definitions("13_kernels", "my_saved", "my_backward_returns")
    lines = run_code(checker, {**worked, "torch": torch})
    assert len(lines) == 2 and "✓" in lines[0], lines
    assert "✓" not in lines[1] and "memory of its own?" in lines[1], lines
    lines = run_code(checker, {"torch": torch, "my_saved": ("y",),
                               "my_backward_returns": "torch.Tensor"})
    assert lines[0].startswith("saved: ✗ a and b missing"), lines
    assert "✗" not in lines[1] and "where does the kernel store the second one" in lines[1], lines
    assert "tuple" not in lines[1], lines  # the question does not hand the tuple return over
    lines = run_code(checker, {**worked, "torch": torch,
                               "my_backward_returns": "tuple[torch.Tensor, ...]"})
    assert lines[1].startswith("returns: ✗ custom_op refuses it: ValueError"), lines
