"""Lesson 10's LayerNorm and RMSNorm derivation checkers print a verdict per step: the worked
steps pass, the first guess (rstd * g_hat) fails, and a vjp through the (D, D) matrix is
flagged."""

import torch

from tests.tools.shown.lesson_code import definitions, printed

STEPS = ("my_param_grads", "my_g_hat", "my_rstd_grad", "my_layer_norm_jacobian",
         "my_layer_norm_vjp")


def _lesson(*names: str, learner: bool = False) -> dict:
    from autograder.memory import TensorAccounting
    return definitions("10_norms", *names, learner=learner, TensorAccounting=TensorAccounting)


def _layer_norm_lines(learner: bool = False, **replaced) -> list[str]:
    lesson = _lesson("verdict", "try_step", "check_layer_norm_steps", *STEPS, learner=learner)
    steps = [replaced.get(name, lesson[name]) for name in STEPS]
    return printed(lesson["check_layer_norm_steps"], *steps)


def test_layer_norm_worked_steps_pass_and_the_first_guess_fails():
    """Do the worked Steps 0 to 4 get eight ticks, and the learner's starting points (zeros,
    grad_output, r * I, r * g_hat) a cross on every line?"""
    lines = _layer_norm_lines()
    assert len(lines) == 8 and all(": ✓" in line for line in lines), lines
    assert all(": ✗" in line for line in _layer_norm_lines(learner=True))


def test_layer_norm_vjp_through_the_matrix_is_flagged_and_an_error_is_shown():
    """Does a right vjp that builds J fail Step 4 for its (D, D) tensor, and a step that raises
    print one cross line instead of stopping Run All?"""
    jacobian = _lesson("my_layer_norm_jacobian")["my_layer_norm_jacobian"]
    lines = _layer_norm_lines(my_layer_norm_vjp=lambda h, r, g: jacobian(h, r).T @ g)
    assert "Step 4, J^T g_hat: ✗" in lines[-1] and "(8, 8), D x D" in lines[-1], lines

    def raises(x_hat, rstd):
        raise RuntimeError("size mismatch\nmore")

    lines = _layer_norm_lines(my_rstd_grad=raises)
    assert "Step 2, dr/dx: ✗ RuntimeError: size mismatch" in lines, lines


def test_rms_norm_vjp_worked_passes_and_the_layer_norm_answer_fails():
    """Does the worked RMSNorm vjp pass its check, and the first guess and LayerNorm's answer
    (with its mean term) fail it?"""
    lesson = _lesson("verdict", "try_step", "my_rms_norm_vjp", "check_rms_norm_vjp",
                     "my_layer_norm_vjp")
    row = torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) + 1
    lesson.update(
        row_rms_hat=torch.nn.functional.rms_norm(row, (8,), eps=1e-5),
        rms_rstd_row=1 / torch.sqrt((row ** 2).mean() + 1e-5),
        J_rms=torch.autograd.functional.jacobian(
            lambda t: torch.nn.functional.rms_norm(t, (8,), eps=1e-5), row),
        g_hat=torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(4)))

    def check(vjp) -> str:
        return "\n".join(printed(lesson["check_rms_norm_vjp"], vjp))

    assert check(lesson["my_rms_norm_vjp"]).startswith("RMSNorm, J^T g_hat: ✓")
    assert ": ✗" in check(lesson["my_layer_norm_vjp"])
    assert ": ✗" in check(_lesson("my_rms_norm_vjp", learner=True)["my_rms_norm_vjp"])
