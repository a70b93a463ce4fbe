"""Lesson 03: SignSTE and SignClippedSTE at ±inf, a subnormal and -0.0 (ste_extremes.py), where
the detach-trick reference is nan and forward is judged against torch.sign itself."""

import pytest
import torch

from autograder.exercises.lesson03_straight_through.ste import (SIGN_CLIPPED_STE, SIGN_STE,
                                                                check_forward_exact,
                                                                check_surrogate, edge_values)
from autograder.exercises.lesson03_straight_through.ste_extremes import (SUBNORMAL, extreme_values,
                                                                         finite_part)
from tests.autograder.catalogued import graded_mistake, mistake
from tests.autograder.exercises.battery import run
from tools.solutions import solution

pytestmark = pytest.mark.lesson03


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_the_extremes_are_what_they_claim(dtype):
    """Is each dtype's subnormal below tiny and not 0, is torch.sign ±1 at it and at ±inf, and
    is the detach-trick reference nan at ±inf (so it cannot judge them)?"""
    x = torch.tensor(extreme_values(dtype), dtype=dtype)
    assert 0 < x[0] < torch.finfo(dtype).tiny and x[0].item() == pytest.approx(SUBNORMAL[dtype],
                                                                               rel=0.5)
    assert torch.sign(x).tolist() == [1, -1, 0, 1, -1]
    assert not torch.signbit(torch.sign(x[2]))  # sign(-0.0) is +0
    assert (torch.sign(x) - x + x)[3:].isnan().all()
    values = edge_values(SIGN_STE, "cpu", dtype)
    assert values["x"].isinf().sum() == 2 and finite_part(values)["x"].isfinite().all()


@pytest.mark.parametrize("name", ["SignSTE", "SignClippedSTE"])
def test_the_solutions_pass_at_the_extremes(name):
    """Do the lesson's solutions pass the battery, the extremes included?"""
    run(name, solution(name))


@pytest.mark.parametrize("spec", [SIGN_STE, SIGN_CLIPPED_STE])
def test_a_gradient_wrong_at_infinity_is_located(spec, raises_hint):
    """Is a gradient that is nan at ±inf (where the contract wants grad_output, or 0 past the
    clip) told the x it is wrong at?"""
    x = edge_values(spec, "cpu")["x"]
    check_forward_exact(spec, torch.sign(x), x)
    grad_output = torch.ones_like(x)
    right = grad_output * (x.abs() <= 1) if spec is SIGN_CLIPPED_STE else grad_output.clone()
    wrong = torch.where(x.isinf(), float("nan"), right)

    class Forward:
        saved = []

    with raises_hint("grad_x contains inf or nan where the true gradient is finite"):
        check_surrogate(spec, Forward, x, wrong, grad_output)


IDS = [
    ("SignSTE", "where(x == 0, x, x / x.abs()): nan at ±inf", "SignSTE/sign-of-infinity"),
    ("SignSTE", "nan_to_num(x / x.abs()): 0 at ±inf", "SignSTE/sign-of-infinity"),
    ("SignSTE", "x / x.abs().clamp(min=tiny): not 1 at a subnormal x",
     "SignSTE/sign-of-subnormal"),
    ("SignClippedSTE", "where(x == 0, x, x / x.abs()): nan at ±inf",
     "SignClippedSTE/sign-of-infinity"),
    ("SignSTE", "where(x == 0, x, sign(x)) keeps -0.0", "SignSTE/signed-zero"),
    ("SignSTE", "copysign(1, x) times (x != 0) gives -0 at -0.0", "SignSTE/signed-zero"),
    ("FakeQuantize", "scale saved as float32 for float64 x", "FakeQuantize/scale-in-float32"),
]


@pytest.mark.parametrize("name, entry, expected", IDS, ids=[f"{n}: {e}" for n, e, _ in IDS])
def test_an_extreme_mistake_is_graded_with_its_id(name, entry, expected):
    """Does grading each round-6 answer record its stable id?"""
    assert graded_mistake(name, entry) == expected


def test_the_float32_edges_show_the_subnormal_too(raises_hint):
    """Is the clamped denominator caught in float32 as well (1e-45 is 1.4e-45 there)?"""
    x = edge_values(SIGN_STE, "cpu", torch.float32)["x"]
    clamped = x / x.abs().clamp(min=torch.finfo(x.dtype).tiny)
    with raises_hint("is subnormal, below torch.finfo(float32).tiny, and x / x.abs().clamp"):
        check_forward_exact(SIGN_STE, clamped, x)


def test_a_tolerance_on_the_window_is_not_told_float32(raises_hint):
    """Is a mask |x| <= 1 + 1e-6, which lets in 1 + 1e-9 as a float32 mask does, told that the
    window has a tolerance, not that it used x.float() (1 + 1e-7 stays outside a float32
    mask)?"""
    with raises_hint("SignClippedSTE's window is judged with a tolerance: at x = -1.000000001"):
        run("SignClippedSTE",
            mistake("SignClippedSTE", "a tolerance on the window, |x| <= 1 + 1e-6"))


@pytest.mark.parametrize("entry", ["a tolerance on the window, |x| <= 1 + 1e-6",
                                   "a tolerance of 1e-12 on the window"])
def test_a_window_tolerance_is_graded_with_its_id(entry):
    """Does a tolerance on the window, however small, record its stable id?"""
    assert graded_mistake("SignClippedSTE", entry) == "SignClippedSTE/window-tolerance"
