"""Lesson 02's live checker of the three gradients of x @ W.T + b, shape first with out != in:
the worked answer passes on every leading shape, the placeholder and two slips fail."""

from tests.tools.shown.lesson_code import definitions, printed


def _check(gradients, *shapes) -> list[str]:
    """What check_linear_gradients prints for ``gradients`` on ``shapes``."""
    lesson = definitions("02_linear", "check_linear_gradients", my_linear_gradients=gradients)
    return printed(lesson["check_linear_gradients"], *shapes)


def test_worked_gradients_pass_for_every_leading_shape_and_slips_fail():
    shapes = ((5, 3), (2, 5, 3), (3,))
    worked = definitions("02_linear", "my_linear_gradients")["my_linear_gradients"]
    lines = _check(worked, *shapes)
    assert len(lines) == 3 and all(line.count("✓") == 3 for line in lines), lines
    placeholder = definitions("02_linear", "my_linear_gradients", learner=True)
    assert "grad_x ✗ not written yet" in _check(placeholder["my_linear_gradients"], (5, 3))[0]
    swapped = lambda G, x, W: (G @ W, x.T @ G, G.sum())  # noqa: E731 - a transpose, a 0-d sum
    line, = _check(swapped, (5, 3))
    assert "grad_x ✓" in line and "grad_weight ✗ shape (3, 4), not (4, 3)" in line, line
    assert "grad_bias ✗ shape (), not (4,)" in line, line
    batched = lambda G, x, W: (G @ W, G.mT @ x, G.sum(dim=0))  # noqa: E731 - right for 2-D only
    lines = _check(batched, *shapes)
    assert lines[0].count("✓") == 3 and "grad_weight ✗ shape (2, 4, 3), not (4, 3)" in lines[1]
    assert "✗ raises RuntimeError" in lines[2], lines
