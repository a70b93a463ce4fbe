"""Lesson 13's "check one step live" cells: a right number written too short is said to be
rounded (not wrong maths), a slip still wins over that, and any answer to where the backward's
kernel launches gets a verdict (review 79)."""

import pytest

from autograder.exercises.lesson13_kernels.steps import (check_rms_steps, check_silu_design,
                                                         check_silu_steps)

pytestmark = pytest.mark.lesson13


def test_a_rounded_derivative_is_named_as_rounded(capsys):
    """Is autograd's dy/da (-0.27236) written to 2 decimals told to give 4, not sent back to
    the derivation, in both exercises' cells?"""
    check_silu_steps(-0.27, None, None)
    check_rms_steps(-0.07, None, None)
    out = capsys.readouterr().out
    assert "-0.27: autograd's value rounded to 2 decimals: give 4" in out
    assert "-0.07: autograd's value rounded to 2 decimals: give 4" in out
    assert "Which factors of y move with a?" not in out


def test_a_slip_wins_over_a_rounding_and_a_wrong_number_stays_wrong(capsys):
    """Is 0 (the direct path only) still named as that slip, and a number no rounding of the
    truth gives still sent back to the derivation?"""
    check_rms_steps(0, None, None)
    check_silu_steps(-0.5, None, None)
    check_silu_steps(-0.2724, None, None)
    out = capsys.readouterr().out
    assert "0: y_0 = x_0 r w_0 has no x_1 in it" in out
    assert "-0.5: not autograd's" in out
    assert "✓ negative, as autograd's" in out
    assert "rounded" not in out


@pytest.mark.parametrize("answer", [None, "", 3, ["an", "operator"], "   "])
def test_any_launch_answer_gets_a_verdict(capsys, answer):
    """Does any value in my_backward_launch (review 79's free answer) print one verdict line,
    never raise?"""
    check_silu_design(None, answer)
    assert capsys.readouterr().out.splitlines()[1].startswith("launch: ")
