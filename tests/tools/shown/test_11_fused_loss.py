"""Lesson 11's live checkers (autograder.ungraded) of one row's cross-entropy gradient and of the
linear layer's gradients print a verdict per point: the lesson's worked answers pass them, its
placeholders and a slip fail; and the optional section's accumulation numbers reproduce."""

import re

import torch

from autograder.ungraded import check_grad_row, check_linear_grads
from tests.tools.shown.lesson_code import definitions, printed, run_cells, source


def _grad_row_lines(answer=None, learner=False) -> list[str]:
    lesson = definitions("11_fused_loss", "my_grad_row", learner=learner)
    return printed(check_grad_row, answer or lesson["my_grad_row"])


def test_grad_row_worked_passes_and_zeros_or_a_missing_target_term_fail():
    """Does the worked one-row gradient (softmax minus one-hot) pass all three rows, the
    placeholder fail them, a softmax without the one-hot fail at the target's class with a row
    sum of 1, and a function that raises print a cross instead of stopping Run All? The checker
    judges one row's loss only: the mean over counted rows is left to CrossEntropy's
    self-check."""
    lines = _grad_row_lines()
    assert len(lines) == 3 and all(": ✓" in line for line in lines), lines
    assert all(": ✗" in line for line in _grad_row_lines(learner=True))
    softmax_only = _grad_row_lines(lambda z, y: torch.softmax(z, 0))
    assert all(": ✗ largest error" in line and "(the target's class)" in line
               and line.endswith("your row sums to 1.0000") for line in softmax_only), softmax_only

    def raises(*args):
        raise IndexError("index 7 is out of bounds")

    assert all("✗ IndexError: index 7" in line for line in _grad_row_lines(raises))


def test_grad_row_cross_never_prints_autograds_number():
    """Does a wrong row (one-hot at the wrong class) name the class that is off without
    printing autograd's value there?"""
    def shifted(z, y):
        return torch.softmax(z, 0) - torch.nn.functional.one_hot(torch.tensor((y + 1) % len(z)),
                                                                   len(z))

    line = _grad_row_lines(shifted)[1]
    assert line.startswith("7 classes, target 6: ✗ largest error"), line
    assert ", at class " in line and "autograd's" not in line, line
    assert line.endswith("your row sums to 0.0000"), line


def test_linear_grads_worked_passes_and_the_placeholder_or_a_transpose_slip_fails():
    """Does the worked (G W, G^T x) pass both lines, the zeros fail, and G^T x for grad_x (a
    shape slip) fail with its shape?"""
    lesson = definitions("11_fused_loss", "my_linear_grads")
    check = check_linear_grads
    assert [line.split(":")[1][:2] for line in printed(check, lesson["my_linear_grads"])] == \
        [" ✓", " ✓"]
    placeholder = definitions("11_fused_loss", "my_linear_grads", learner=True)["my_linear_grads"]
    assert all(": ✗" in line for line in printed(check, placeholder))
    swapped = printed(check, lambda G, x, weight: (G.T @ x, G @ weight))
    assert all("✗ shape" in line for line in swapped), swapped


def test_linear_grads_a_product_that_cannot_run_names_its_gradient_and_shape():
    """Does a transpose slip that PyTorch refuses to multiply (G x^T for grad_W, G W^T for
    grad_x) say which gradient the product is in and the shape that gradient must have?"""
    check = check_linear_grads
    grad_w_slip = printed(check, lambda G, x, weight: (G @ weight, G @ x.T))
    assert "✗ RuntimeError: mat1 and mat2 shapes cannot be multiplied" in grad_w_slip[0]
    assert grad_w_slip[1].strip().startswith("in grad_W") and "shape (5, 3)" in grad_w_slip[1]
    grad_x_slip = printed(check, lambda G, x, weight: (G @ weight.T, G.T @ x))
    assert grad_x_slip[1].strip().startswith("in grad_x") and "shape (4, 3)" in grad_x_slip[1]


def test_the_accumulation_numbers_reproduce_for_seed_0():
    """Do the optional section's numbers on accumulating in bfloat16 / float16 hold for seed 0 at
    N = 512, d = 32, V = 512: the course's low-memory copy (working dtype = input dtype) against
    float64 at 16, 128 and 512 chunks, and float32 accumulators at 512 chunks?"""
    lesson = definitions("11_fused_loss", "LinearCrossEntropy", "linear_cross_entropy")
    text = source("11_fused_loss")
    cls = text[text.index("class LinearCrossEntropy"):]
    cls = cls[:cls.index("\n# %%")]
    low = cls.replace("wide = torch.promote_types(x.dtype, torch.float32)", "wide = x.dtype")
    assert low != cls
    exec(low.replace("class LinearCrossEntropy", "class Low"), lesson)  # noqa: S102 - ours
    stated = text[text.index("### Accumulating in bfloat16 and float16"):]
    assert "$N = 512$, $d = 32$,\n# $V = 512$, seeds 0 to 3" in stated

    def errors(dtype, function, chunk_size):
        generator = torch.Generator().manual_seed(0)
        x = torch.randn(512, 32, generator=generator).to(dtype)
        weight = (torch.randn(512, 32, generator=generator) / 32 ** 0.5).to(dtype)
        target = torch.randint(0, 512, (512,), generator=generator)
        x64, w64 = x.double(), weight.double().requires_grad_()
        exact = torch.nn.functional.cross_entropy(x64 @ w64.T, target)
        exact.backward()
        x, weight = x.requires_grad_(), weight.requires_grad_()
        loss = function.apply(x, weight, target, chunk_size)
        loss.backward()
        return (100 * abs(loss.double().item() / exact.item() - 1),
                100 * ((weight.grad.double() - w64.grad).norm() / w64.grad.norm()).item())

    low_bf16 = [errors(torch.bfloat16, lesson["Low"], size) for size in (32, 4, 1)]
    stated_ranges = [((0.1, 0.5), (0.5, 0.5)), ((4.7, 6.4), (1.2, 1.2)),
                     ((27.6, 28.6), (1.6, 1.7))]  # (loss, grad_weight) at 16, 128, 512 chunks
    for (loss, grad), (loss_range, grad_range) in zip(low_bf16, stated_ranges):
        assert loss_range[0] - 0.05 <= loss <= loss_range[1] + 0.05, low_bf16
        assert grad_range[0] - 0.05 <= grad <= grad_range[1] + 0.05, low_bf16
    assert max(errors(torch.bfloat16, lesson["LinearCrossEntropy"], 1)) <= 0.17
    low_fp16 = errors(torch.float16, lesson["Low"], 1)
    assert low_fp16[0] <= 0.3 and low_fp16[1] <= 0.35, low_fp16
    assert max(errors(torch.float16, lesson["LinearCrossEntropy"], 1)) <= 0.03
    half = torch.tensor(2048.0, dtype=torch.float16)
    assert half + 1 == half  # a float16 running sum of ones stops at 2048


def test_the_explorer_text_states_what_large_chunks_measure():
    """Does the explorer's text give the peaks the explorer measures (N = 512, d = 64, V = 4096):
    the solution's 9 MiB at chunk_size 512 below the composed loss's 16, and a correct answer
    with a one-hot per chunk above it, 25 MiB at 256 and 41 at 512 (a learner's valid answer
    once passed the composed loss where the text said large chunks only approach it)?"""
    from tests.autograder.catalogued import unusual
    from tools.solutions import solution
    from widgets.fused_loss import loss_inputs, measure_chunks

    text = source("11_fused_loss")
    stated = text[text.index("### Peak memory and time against chunk size"):]
    stated = " ".join(stated[:stated.index("fused_loss_explorer(")].replace("#", " ").split())
    assert "approach the composed loss's peak" not in stated
    assert "peaks at 9 MiB there against the composed loss's 16" in stated
    assert "passes it (25 MiB at 256, 41 at 512)" in stated
    inputs = loss_inputs(512, 64, 4096)

    def mib(function):
        return [round(run.peak_bytes / 2 ** 20) for run in measure_chunks(function, *inputs,
                                                                          (256, 512), 1)]

    assert mib(solution("linear_cross_entropy")) == [16, 5, 9]
    one_hot = unusual("linear_cross_entropy",
                      "torch.logsumexp and a one-hot per chunk, the gradient summed with +=")
    assert mib(one_hot) == [16, 25, 41]


def _first_predictions(learner: bool) -> list[str]:
    from autograder.memory import TensorAccounting
    from autograder.predictions import compare_all, written

    from torch.autograd.graph import saved_tensors_hooks

    lesson = definitions("11_fused_loss", "saved_shapes", saved_tensors_hooks=saved_tensors_hooks)
    helpers = {"compare_all": compare_all, "written": written,
               "TensorAccounting": TensorAccounting, "saved_shapes": lesson["saved_shapes"]}
    return (run_cells("11_fused_loss", ["predicted_memory = {", "N, d, V = 1024"], learner,
                      **helpers)
            + run_cells("11_fused_loss", ["predicted_stability = {", "huge = torch.tensor"],
                        learner, **helpers))


def test_the_first_two_predictions_are_judged_and_the_answers_wait_for_them():
    """Do the memory and stability predict-then-run cells judge each prediction with ✓ or ✗,
    as lessons 01 and 05 do (not only echo it), and print nothing of the answers before the
    learner has written a prediction?"""
    solved = _first_predictions(learner=False)
    judged = [line for line in solved if "as you predicted" in line]
    assert len(judged) == 5 and all("✓" in line for line in judged), solved
    assert any(line.startswith("kept for backward: [") for line in solved), solved
    blank = _first_predictions(learner=True)
    assert len(blank) == 5 and all("no prediction written" in line for line in blank), blank


def test_the_derivation_example_is_the_same_on_every_run_and_prints_no_negative_zero():
    """Does the cell printing autograd's grad_logits draw the same logits on every rerun (the
    learner compares them with their own work) and print its row sums without '-0.'?"""
    cell = ["logits = torch.randn(5, 4"]
    first, again = run_cells("11_fused_loss", cell), run_cells("11_fused_loss", cell)
    assert first == again and not re.search(r"-0\.0*(?!\d)", "\n".join(first)), first
    assert "row sums: [0. 0. 0. 0. 0.]" in first, first
