"""Lesson 10's LayerNorm derivation checker prints a verdict per step, Steps 0 to 3 only (Step 4,
the vector-Jacobian product, is Exercise 1's own): the worked steps pass, the learner's starting
points fail, and a step that raises prints one cross line."""

import torch

from tests.tools.shown.lesson_code import definitions, printed

STEPS = ("my_param_grads", "my_g_hat", "my_rstd_grad", "my_layer_norm_jacobian")


def _lesson(*names: str, learner: bool = False) -> dict:
    return definitions("10_norms", *names, learner=learner)


def _layer_norm_lines(learner: bool = False, **replaced) -> list[str]:
    lesson = _lesson("verdict", "try_step", "check_layer_norm_steps", *STEPS, learner=learner)
    steps = [replaced.get(name, lesson[name]) for name in STEPS]
    return printed(lesson["check_layer_norm_steps"], *steps)


def test_layer_norm_worked_steps_pass_and_the_first_guesses_fail():
    """Do the worked Steps 0 to 3 get seven ticks (Step 3 checked one step short of the whole
    Jacobian: J @ ones, J @ x_hat and its trace), and the learner's starting points (zeros,
    grad_output, zeros, r * I) a cross on every line?"""
    lines = _layer_norm_lines()
    assert len(lines) == 7 and all(": ✓" in line for line in lines), lines
    assert [line.split(":")[0] for line in lines[4:]] == [
        "Step 3, J @ ones (a shift)", "Step 3, J @ x_hat (a scaling)", "Step 3, trace of J"]
    assert all(": ✗" in line for line in _layer_norm_lines(learner=True))


def test_no_checker_takes_the_whole_backward():
    """Does the lesson check no function that returns dL/dx (Exercise 1's formula), and a step
    that raises print one cross line instead of stopping Run All?"""
    lesson = _lesson("check_layer_norm_steps", "my_layer_norm_vjp", "my_rms_norm_vjp")
    assert "my_layer_norm_vjp" not in lesson and "my_rms_norm_vjp" not in lesson

    def raises(x_hat, rstd):
        raise RuntimeError("size mismatch\nmore")

    lines = _layer_norm_lines(my_rstd_grad=raises)
    assert "Step 2, dr/dx: ✗ RuntimeError: size mismatch" in lines, lines


def test_the_step_2_answer_is_also_rms_norms():
    """Is the lesson right that LayerNorm's dr/dx, written with r, D and x_hat, is RMSNorm's
    too (the RMSNorm section runs the learner's Step 2 on RMSNorm's x_hat and r)?"""
    rstd_grad = _lesson("my_rstd_grad")["my_rstd_grad"]
    row = torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) + 1
    rstd = 1 / torch.sqrt((row ** 2).mean() + 1e-5)
    truth = torch.autograd.functional.jacobian(lambda t: 1 / torch.sqrt((t ** 2).mean() + 1e-5),
                                               row)
    assert torch.allclose(rstd_grad(row * rstd, rstd), truth)
