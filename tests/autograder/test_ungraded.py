"""Lesson 11's ungraded chunked-loss step, checked from the library: is its output as short
and as clear as a self-check's, whatever the learner's answer?"""

import pytest
import torch
import torch.nn.functional as F

from autograder.errors import GradingError
from autograder.ungraded import check_chunked


def chunked(x, weight, target, chunk_size):
    total = sum(F.cross_entropy(x[s:s + chunk_size] @ weight.T, target[s:s + chunk_size],
                                reduction="sum") for s in range(0, len(x), chunk_size))
    return total / len(x)


def mean_of_means(x, weight, target, chunk_size):
    return torch.stack([F.cross_entropy(x[s:s + chunk_size] @ weight.T, target[s:s + chunk_size])
                        for s in range(0, len(x), chunk_size)]).mean()


def stub(x, weight, target, chunk_size):
    raise NotImplementedError


def test_a_right_answer_gets_a_tick(capsys):
    """Does a right chunked loss print one line with a tick?"""
    check_chunked(chunked)
    assert capsys.readouterr().out.startswith("✓ chunked_cross_entropy: the loss matches")


@pytest.mark.parametrize("answer, first", [
    (mean_of_means, "✗ chunked_cross_entropy failed its self-check:\x1b[0m the mean of each "
                    "chunk's mean"),
    (stub, "✗ chunked_cross_entropy failed its self-check:\x1b[0m chunked_cross_entropy is not "
           "implemented yet")])
def test_a_wrong_answer_or_the_stub_shows_its_hint_first_in_a_few_lines(answer, first):
    """Does the stub or a mean of chunk means show the hint on the first line, in at most a few
    lines (not a 25-line traceback ending in NotImplementedError)?"""
    with pytest.raises((GradingError, NotImplementedError)) as failure:
        check_chunked(answer)
    lines = failure.value._render_traceback_()
    assert first in lines[0] and len(lines) <= 5


def textbook(x, weight, target, chunk_size):
    total = x.new_zeros(())
    for s in range(0, len(x), chunk_size):
        logits = x[s:s + chunk_size] @ weight.T
        probs = logits.exp() / logits.exp().sum(1, keepdim=True)
        total = total - probs.log().gather(1, target[s:s + chunk_size, None]).sum()
    return total / len(x)


def test_the_textbook_formula_fails_where_its_exponentials_overflow():
    """Does a chunked loss built from exp(logits) / sum(exp(logits)), right at logits of about
    1, fail with the log-sum-exp hint at logits of about 1e3 in float32?"""
    with pytest.raises(GradingError) as failure:
        check_chunked(textbook)
    shown = " ".join(line.strip() for line in failure.value._render_traceback_())
    assert "not finite at logits of magnitude 1e3" in shown


def test_the_grad_mode_designs_that_work_are_a_and_c(capsys):
    """Does the lesson's table of designs (a)-(d) say that exactly (a) and (c) skip the
    gradients under no_grad and compute them with grad mode on, and mark the learner's two
    answers ✓ or ✗ (the menu's words for where to ask, the set {"a", "c"})?"""
    from autograder.ungraded import try_grad_mode_designs
    try_grad_mode_designs({"where to ask": "forward", "ways that work": {"a"}})
    out = capsys.readouterr().out
    assert "✗ ways that work: (a) and (c); you said {'a'}" in out
    assert "✗ where to ask: 'the wrapper, before apply'" in out and "you said 'forward'" in out
    try_grad_mode_designs({"where to ask": "The wrapper,  before apply",
                           "ways that work": {"c", "a"}})
    out = capsys.readouterr().out
    assert "✓ ways that work" in out and "✓ where to ask" in out
    try_grad_mode_designs({"where to ask": "in the wrapper", "ways that work": "a, c"})
    out = capsys.readouterr().out  # a right answer in other words is still right
    assert "✓ ways that work" in out and "✓ where to ask" in out
    try_grad_mode_designs({"where to ask": "the wrapper, or forward", "ways that work": "(a)"})
    out = capsys.readouterr().out
    assert "✗ ways that work" in out and "✗ where to ask" in out
    try_grad_mode_designs({"where to ask": None, "ways that work": None})
    out = capsys.readouterr().out
    assert "✗ ways that work" in out and "✗ where to ask" in out


def test_the_row_gradient_check_ticks_softmax_minus_one_hot_and_names_the_class_off(capsys):
    """Does the derivation's row check tick softmax minus one-hot on all three rows, and for
    the softmax alone name the target's class as the one off, with the row's sum?"""
    from autograder.ungraded import check_grad_row
    check_grad_row(lambda z, y: torch.softmax(z, 0) - F.one_hot(torch.tensor(y), len(z)))
    out = capsys.readouterr().out
    assert out.count("✓") == 3 and "✗" not in out
    check_grad_row(lambda z, y: torch.softmax(z, 0))
    out = capsys.readouterr().out
    assert out.count("✗") == 3 and "(the target's class); your row sums to 1.0000" in out
    check_grad_row(lambda z, y: torch.zeros(len(z) + 1))  # the wrong length: shown, not raised
    assert capsys.readouterr().out.count("✗ RuntimeError") == 3


def test_the_linear_gradients_check_ticks_both_and_names_a_transposed_product(capsys):
    """Does the check of grad_x and grad_W tick G @ W and G^T @ x, and for G @ W^T (a shape
    error) say which product and which shape it must have?"""
    from autograder.ungraded import check_linear_grads
    check_linear_grads(lambda G, x, weight: (G @ weight, G.T @ x))
    out = capsys.readouterr().out
    assert "grad_x: ✓ shape (4, 3)" in out and "grad_W: ✓ shape (5, 3)" in out
    check_linear_grads(lambda G, x, weight: (G @ weight.T, G.T @ x))
    out = capsys.readouterr().out
    assert out.startswith("my_linear_grads: ✗ RuntimeError")
    assert "in grad_x, the product with weight (5, 3) in it: grad_x must have shape (4, 3)" in out
    check_linear_grads(lambda G, x, weight: (2 * G @ weight, x))
    out = capsys.readouterr().out
    assert "grad_x: ✗ shape (4, 3), largest error" in out
    assert "grad_W: ✗ shape (4, 3), autograd's is (5, 3)" in out
