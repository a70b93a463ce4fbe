"""Lesson 02's live checkers (the three gradients of x @ W.T + b, the fused layer's ReLU part,
Bilinear's dL/dx1): each passes the worked answer, and the placeholder and the slips fail."""

import torch

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


def _check_relu(keeps, grad_z) -> list[str]:
    """What check_relu_backward prints for ``keeps`` and ``grad_z``, one line per z."""
    lesson = definitions("02_linear", "check_relu_backward", relu_keeps=keeps, my_grad_z=grad_z)
    lines = printed(lesson["check_relu_backward"])  # two per z: what is kept, then dL/dz
    return [kept + ";" + grad[20:] for kept, grad in zip(lines[::2], lines[1::2])]


def test_relu_checker_passes_the_worked_answer_and_names_each_slip():
    """Does the fused layer's question-1 checker pass the mask, and tell apart a float kept,
    an unwritten gradient, a mask that lets the exact zeros through and a one-byte non-bool?"""
    worked = definitions("02_linear", "relu_keeps", "my_grad_z")
    lines = _check_relu(worked["relu_keeps"], worked["my_grad_z"])
    assert len(lines) == 2, lines
    assert all(line.endswith("kept torch.bool ✓ 1 byte per element (z: 4); dL/dz ✓")
               for line in lines), lines
    placeholder = definitions("02_linear", "relu_keeps", "my_grad_z", learner=True)
    line = _check_relu(placeholder["relu_keeps"], placeholder["my_grad_z"])[0]
    assert "dL/dz ✗ not written yet" in line, line
    assert "kept torch.float32 ✗ 4 bytes per element (z: 4)" in line, line
    at_zero = _check_relu(lambda z: z >= 0, lambda G, kept: G * kept)
    assert all("dL/dz ✗ only where z is exactly 0" in line for line in at_zero), at_zero
    from_z = _check_relu(lambda z: z, lambda G, kept: G * (kept > 0))
    assert all("kept torch.float32 ✗" in line and line.endswith("; dL/dz ✓")
               for line in from_z), from_z
    uint8 = _check_relu(lambda z: (z > 0).to(torch.uint8), lambda G, kept: G * kept)
    assert all("kept torch.uint8 ✓ 1 byte" in line and "saves a torch.bool" in line
               for line in uint8), uint8
    unmasked = _check_relu(lambda z: z > 0, lambda G, kept: G)
    assert all("dL/dz ✗ largest error" in line for line in unmasked), unmasked


def _check_x1(grad_x1) -> list[str]:
    """What check_grad_x1 prints for ``grad_x1``, a lambda or numbers."""
    return printed(definitions("02_linear", "check_grad_x1", my_grad_x1=grad_x1)["check_grad_x1"])


def test_bilinear_x1_checker_passes_the_worked_answer_and_names_each_slip():
    """Does Bilinear's dL/dx1 checker pass the worked lambda and Hint 3's numbers, and tell
    apart an unwritten answer, a missing grad_output, the other input's formula, an unsummed
    out and numbers, which it checks at Hint 3's inputs alone?"""
    worked = definitions("02_linear", "my_grad_x1")["my_grad_x1"]
    lines = _check_x1(worked)
    assert len(lines) == 3 and all(" ✓" in line for line in lines), lines
    assert lines[0].endswith("yours [[6, 10], [-1, -3]], autograd [[6, 10], [-1, -3]]"), lines
    placeholder = definitions("02_linear", "my_grad_x1", learner=True)["my_grad_x1"]
    assert _check_x1(placeholder) == [
        "✗ not written yet: write your dL/dx1 into my_grad_x1, then run this cell again"]
    by_hand = _check_x1([[6, 10], [-1, -3]])
    assert " ✓" in by_hand[0] and by_hand[1].startswith("Numbers check Hint 3's inputs only")
    assert "✗ largest error 1 " in _check_x1([[6, 10], [-1, -4]])[0]
    no_G = _check_x1(lambda G, x1, x2, W: torch.einsum("oij,...j->...i", W, x2))
    assert all("✗ right only for a grad_output of all ones" in line for line in no_G), no_G
    other_input = _check_x1(lambda G, x1, x2, W: torch.einsum("...o,oij,...i->...j", G, W, x1))
    assert "✗ largest error 6" in other_input[0], other_input  # n1 = n2 there: values differ
    assert "✗ shape (2, 3, 5), not x1's (2, 3, 4)" in other_input[1], other_input
    unsummed = _check_x1(lambda G, x1, x2, W: torch.einsum("...o,oij,...j->...oi", G, W, x2))
    assert all("✗ shape" in line for line in unsummed), unsummed
