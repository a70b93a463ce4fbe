"""Lesson 02's live checkers (the Jacobian entries of x @ W.T, Bilinear's entry dy/dx1): each
passes the worked answer, and the placeholder and the slips fail."""

import itertools

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


def _check_x1(entry) -> list[str]:
    """What check_dy_dx1 prints for ``entry``, one line per case."""
    return printed(definitions("02_linear", "check_dy_dx1", itertools=itertools,
                               dy_dx1=entry)["check_dy_dx1"])


def test_bilinear_entry_checker_passes_the_worked_entry_and_names_each_slip():
    """Does Bilinear's step-1 checker pass the worked entry, tell an unwritten one to be
    written, and fail an entry with no position delta or with x2 on the wrong index?"""
    worked = definitions("02_linear", "dy_dx1")["dy_dx1"]
    assert _check_x1(worked) == ["Hint 3's numbers  ✓ all 8 entries match autograd's Jacobian",
                                 "random, out = 3   ✓ all 108 entries match autograd's Jacobian"]
    placeholder = definitions("02_linear", "dy_dx1", learner=True)["dy_dx1"]
    assert _check_x1(placeholder) == [
        "✗ not written yet: write your entry into dy_dx1, then run this cell again"]
    every_position = _check_x1(lambda p, o, q, k, x1, x2, W: W[o, k] @ x2[p])
    assert all("entries differ" in line for line in every_position), every_position
    other_side = _check_x1(lambda p, o, q, k, x1, x2, W: W[o, :, k] @ x2[p] if q == p else 0.0)
    assert "✗ 4 of 8 entries differ" in other_side[0], other_side
    assert "✗ raises" in other_side[1] or "entries differ" in other_side[1], other_side
