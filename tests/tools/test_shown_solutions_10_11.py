"""Lessons 10 and 11's live derivation checkers (WORKED regions): each worked answer, as the
solutions show it, passes every line of its check; the learner's placeholder and a plausible
slip fail it; an error the learner's code raises is shown in one line."""

import ast
import contextlib
import io

import torch

from grader.lessons import LESSONS, with_worked


# Lesson 10: the LayerNorm and RMSNorm derivation checkers print a verdict per step; the
# worked steps pass, the first guess (rstd * g_hat) fails, and a vjp through the (D, D)
# matrix is flagged.

def _lesson_10(names: tuple[str, ...], learner: bool = False) -> dict:
    from autograder.memory import TensorAccounting
    source = with_worked((LESSONS / "10_norms.py").read_text(), not learner)
    namespace = {"torch": torch, "F": torch.nn.functional, "TensorAccounting": TensorAccounting}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    return namespace


_STEPS = ("my_param_grads", "my_rstd_grad", "my_layer_norm_jacobian", "my_layer_norm_vjp")


def _layer_norm_lines(learner: bool = False, **replaced) -> list[str]:
    lesson = _lesson_10(("verdict", "try_step", "check_layer_norm_steps", *_STEPS), learner)
    steps = [replaced.get(name, lesson[name]) for name in _STEPS]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        lesson["check_layer_norm_steps"](*steps)
    return printed.getvalue().splitlines()


def test_10_layer_norm_worked_steps_pass_and_the_first_guess_fails():
    """Do the worked Steps 0, 2, 3 and 4 get seven ticks, and the learner's starting points
    (zeros, r * I, r * g_hat) a cross on every line?"""
    lines = _layer_norm_lines()
    assert len(lines) == 7 and all(": ✓" in line for line in lines), lines
    assert all(": ✗" in line for line in _layer_norm_lines(learner=True))


def test_10_layer_norm_vjp_through_the_matrix_is_flagged_and_an_error_is_shown():
    """Does a right vjp that builds J fail Step 4 for its (D, D) tensor, and a step that
    raises print one cross line instead of stopping Run All?"""
    jacobian = _lesson_10(("my_layer_norm_jacobian",))["my_layer_norm_jacobian"]
    lines = _layer_norm_lines(my_layer_norm_vjp=lambda h, r, g: jacobian(h, r).T @ g)
    assert "Step 4, J^T g_hat: ✗" in lines[-1] and "(8, 8), D x D" in lines[-1], lines

    def raises(x_hat, rstd):
        raise RuntimeError("size mismatch\nmore")

    lines = _layer_norm_lines(my_rstd_grad=raises)
    assert "Step 2, dr/dx: ✗ RuntimeError: size mismatch" in lines, lines


def test_10_rms_norm_vjp_worked_passes_and_the_layer_norm_answer_fails():
    """Does the worked RMSNorm vjp pass its check, and the first guess and LayerNorm's answer
    (with its mean term) fail it?"""
    names = ("verdict", "try_step", "my_rms_norm_vjp", "check_rms_norm_vjp", "my_layer_norm_vjp")
    lesson = _lesson_10(names)
    row = torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) + 1
    lesson.update(
        row_rms_hat=torch.nn.functional.rms_norm(row, (8,), eps=1e-5),
        rms_rstd_row=1 / torch.sqrt((row ** 2).mean() + 1e-5),
        J_rms=torch.autograd.functional.jacobian(
            lambda t: torch.nn.functional.rms_norm(t, (8,), eps=1e-5), row),
        g_hat=torch.randn(8, dtype=torch.float64, generator=torch.Generator().manual_seed(4)))

    def lines(vjp):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            lesson["check_rms_norm_vjp"](vjp)
        return printed.getvalue()

    assert lines(lesson["my_rms_norm_vjp"]).startswith("RMSNorm, J^T g_hat: ✓")
    assert ": ✗" in lines(lesson["my_layer_norm_vjp"])
    assert ": ✗" in lines(_lesson_10(("my_rms_norm_vjp",), learner=True)["my_rms_norm_vjp"])


# Lesson 11: the live checkers of the cross-entropy derivation and of the grad-mode wrapper
# print a verdict per point; the worked answers pass them, the placeholders and a slip fail.

def _lesson_11(names: tuple[str, ...], learner: bool = False, **given) -> dict:
    """Lesson 11's top-level ``names`` (functions and classes), as the solutions (or, with
    ``learner``, the learner's copy) have them, in a namespace of their own."""
    source = with_worked((LESSONS / "11_fused_loss.py").read_text(), not learner)
    namespace = {"torch": torch, "F": torch.nn.functional, **given}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            exec(ast.get_source_segment(source, node), namespace)  # noqa: S102 - our lesson
    return namespace


def _printed(check, answer) -> list[str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        check(answer)
    return printed.getvalue().splitlines()


def _grad_logits_lines(answer=None, learner=False) -> list[str]:
    example = {"logits": torch.randn(5, 4, dtype=torch.float64),
               "labels": torch.tensor([2, -100, 0, -100, 3])}
    lesson = _lesson_11(("first_line", "my_grad_logits", "check_grad_logits"), learner,
                        **example)
    return _printed(lesson["check_grad_logits"], answer or lesson["my_grad_logits"])


def test_11_grad_logits_worked_passes_and_zeros_or_a_mean_over_all_rows_fail():
    """Does the worked dL/dlogits pass all three cases, the placeholder fail them, and a
    gradient divided by N (every row) instead of M (the counted rows) fail where rows are
    ignored, and a function that raises print a cross instead of stopping Run All?"""
    lines = _grad_logits_lines()
    assert len(lines) == 3 and all(": ✓" in line for line in lines), lines
    assert all(": ✗" in line for line in _grad_logits_lines(learner=True))

    def over_n(logits, target, ignore_index, grad_output):
        counted = (target != ignore_index)[:, None]
        one_hot = torch.nn.functional.one_hot(torch.where(counted[:, 0], target, 0),
                                              logits.shape[1])
        return (torch.softmax(logits, 1) - one_hot) * counted / len(target) * grad_output

    verdicts = [": ✓" in line for line in _grad_logits_lines(over_n)]
    assert verdicts == [False, True, False], verdicts

    def raises(*args):
        raise IndexError("index 7 is out of bounds")

    assert all("✗ IndexError: index 7" in line for line in _grad_logits_lines(raises))


def test_11_linear_grads_worked_passes_and_the_placeholder_or_a_transpose_slip_fails():
    """Does the worked (G W, G^T x) pass both lines, the zeros fail, and G^T x for grad_x
    (a shape slip) fail with its shape?"""
    lesson = _lesson_11(("first_line", "my_linear_grads", "check_linear_grads"))
    check = lesson["check_linear_grads"]
    assert [line.split(":")[1][:2] for line in _printed(check, lesson["my_linear_grads"])] == \
        [" ✓", " ✓"]
    placeholder = _lesson_11(("my_linear_grads",), learner=True)["my_linear_grads"]
    assert all(": ✗" in line for line in _printed(check, placeholder))
    swapped = _printed(check, lambda G, x, weight: (G.T @ x, G @ weight))
    assert all("✗ shape" in line for line in swapped), swapped


def test_11_wrapper_worked_passes_and_a_constant_flag_or_needs_input_grad_alone_fails():
    """Does the worked wrapper (the caller's grad mode as the flag) get three ticks, and the
    placeholder (flag always True) fail only under torch.no_grad()?"""
    names = ("first_line", "Reports", "my_wrapper", "check_wrapper")
    lesson = _lesson_11(names)
    assert [line[0] for line in _printed(lesson["check_wrapper"], lesson["my_wrapper"])] == \
        ["✓", "✓", "✓"]
    learner = _lesson_11(names, learner=True)
    lines = _printed(learner["check_wrapper"], learner["my_wrapper"])
    assert [line[0] for line in lines] == ["✓", "✗", "✓"], lines
    assert "under torch.no_grad()" in lines[1]
