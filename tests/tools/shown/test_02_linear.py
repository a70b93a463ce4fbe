"""Lesson 02's live checkers (the Jacobian entries of x @ W.T, Bilinear's entries in x1 and in
weight): each passes the worked answer, and the placeholder and the slips fail."""

import itertools

import torch

from tests.tools.shown.lesson_code import definitions, printed


def _check_entries(dy_dx, dy_dW) -> list[str]:
    """What check_linear_entries prints for ``dy_dx`` and ``dy_dW``, one line each."""
    lesson = definitions("02_linear", "check_linear_entries", itertools=itertools, dy_dx=dy_dx,
                         dy_dW=dy_dW)
    return printed(lesson["check_linear_entries"])


def test_linear_entry_checker_passes_the_worked_entries_and_names_each_slip():
    """Do the worked entries pass, the placeholders read as not written, and an entry without
    its Kronecker delta, or with W's indices the other way round, fail with the first entry?"""
    worked = definitions("02_linear", "dy_dx", "dy_dW")
    assert _check_entries(worked["dy_dx"], worked["dy_dW"]) == [
        "dy_dx ✓ all 48 entries match autograd's Jacobian",
        "dy_dW ✓ all 96 entries match autograd's Jacobian"]
    placeholder = definitions("02_linear", "dy_dx", "dy_dW", learner=True)
    assert _check_entries(placeholder["dy_dx"], placeholder["dy_dW"]) == [
        "dy_dx ✗ not written yet", "dy_dW ✗ not written yet"]
    every_row = _check_entries(lambda n, i, m, j, x, W: W[i, j], worked["dy_dW"])[0]
    assert every_row.startswith("dy_dx ✗ 24 of 48 entries differ. The first: at (n, i, m, j) "
                                "= (0, 0, 1, 0)"), every_row
    transposed = _check_entries(worked["dy_dx"], lambda n, i, k, j, x, W: W[j, i])[1]
    assert transposed.startswith("dy_dW ✗ raises IndexError"), transposed


def _check_bilinear(dy_dx1, dy_dweight) -> list[str]:
    """What Bilinear's check_entries prints for ``dy_dx1`` and ``dy_dweight``, one line each."""
    lesson = definitions("02_linear", "check_entries", "check_entry", itertools=itertools,
                         dy_dx1=dy_dx1, dy_dweight=dy_dweight)
    return [line.strip() for line in printed(lesson["check_entries"])]


def test_bilinear_entry_checker_passes_the_worked_entries_and_names_each_slip():
    """Do Bilinear's step-1 entries pass, an unwritten one read as not written, and an entry
    with no position delta, or with x2 on the wrong index, fail? Does Exercise 1's dy_dW keep
    its own name (the Bilinear cell must not overwrite it)?"""
    worked = definitions("02_linear", "dy_dx1", "dy_dweight", "dy_dW")
    assert _check_bilinear(worked["dy_dx1"], worked["dy_dweight"]) == [
        "dy_dx1", "Hint 3's numbers  ✓ all 8 entries match autograd's Jacobian",
        "random, out = 3   ✓ all 108 entries match autograd's Jacobian",
        "dy_dweight", "Hint 3's numbers  ✓ all 8 entries match autograd's Jacobian",
        "random, out = 3   ✓ all 540 entries match autograd's Jacobian"]
    assert worked["dy_dW"](0, 1, 1, 2, torch.ones(1, 3), None) == 1.0
    placeholder = definitions("02_linear", "dy_dx1", "dy_dweight", learner=True)
    assert _check_bilinear(placeholder["dy_dx1"], placeholder["dy_dweight"]) == [
        "dy_dx1", "✗ not written yet: write your entry into dy_dx1, then run this cell again",
        "dy_dweight",
        "✗ not written yet: write your entry into dy_dweight, then run this cell again"]
    every_position = _check_bilinear(lambda p, o, q, k, x1, x2, W: W[o, k] @ x2[p],
                                     worked["dy_dweight"])[1:3]
    assert all("entries differ" in line for line in every_position), every_position
    other_side = _check_bilinear(
        lambda p, o, q, k, x1, x2, W: W[o, :, k] @ x2[p] if q == p else 0.0,
        worked["dy_dweight"])[1:3]
    assert "✗ 4 of 8 entries differ" in other_side[0], other_side
    assert "✗ raises" in other_side[1] or "entries differ" in other_side[1], other_side
