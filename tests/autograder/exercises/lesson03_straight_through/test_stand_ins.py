"""Lesson 03's stand-in checker reports only a real difference from round(x): a stand-in
exactly half a step off at the halves (x itself, a smooth staircase) computes to 0.5 plus
rounding noise there, which is no miss."""

import contextlib
import io

import pytest
import torch

from autograder.exercises.lesson03_straight_through.stand_ins import stand_in_verdicts

pytestmark = pytest.mark.lesson03

SIGN = lambda x: torch.clamp(x, -1, 1)  # noqa: E731 - the sign stand-in, never judged here


def _round_lines(stand_in) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        stand_in_verdicts(stand_in, SIGN)
    lines = out.getvalue().splitlines()
    return lines[:2] if lines[0].endswith("✗") else lines[:1]


def test_a_smooth_staircase_is_told_its_slope_not_a_half_step_of_noise():
    """Is x - sin(2 pi x) / (2 pi), within half a step of round(x) but with more than one
    slope, faulted for its slope, not 'furthest off' at a half where it is 0.5 + 1e-13 off?"""
    lines = _round_lines(lambda x: x - torch.sin(2 * torch.pi * x) / (2 * torch.pi))
    assert lines[0].endswith("✗") and "not one slope throughout" in lines[1], lines


@pytest.mark.parametrize("stand_in, told", [
    (lambda x: x + 0.4, "x = -255.5: yours -255.1, round(x) -256"),
    (lambda x: x + 1e-9, "x = -127.5: yours -127.499999999, round(x) -128")])
def test_a_line_off_by_more_than_rounding_is_told_where(stand_in, told):
    """Is a line off round(x) by more than half a step (by 1e-9 too) told where, with the
    digits that show the difference?"""
    assert _round_lines(stand_in)[1] == f"    furthest off at {told}"


def test_the_identity_passes():
    assert _round_lines(lambda x: x)[0].endswith("✓")
