"""Lesson 09's Normalize: rows on both sides of eps (lesson09_patterns.normalize_rows) and
the checks that tell apart how a backward decides which side a row is on."""

import pytest
import torch
import torch.nn.functional as F

from autograder.exercises.lesson09_patterns.normalize_rows import eps_as_float32, just_below
from autograder.exercises.lesson09_patterns.selections import EXERCISES, NORMALIZE, rows_around_eps
from tests.autograder.catalogued import graded_mistake, mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson09


def test_rows_below_eps_are_checked_against_autograd_of_f_normalize():
    """Do the rows straddle eps (two far above, two far below, one of zeros, three just below,
    two just above: one ulp and (1 + 1e-6) eps), and does the solution match autograd through
    F.normalize there?"""
    x, eps = rows_around_eps("cpu")
    norms = x.norm(dim=-1)
    assert (norms[:2] > eps).all() and (norms[2:7] < eps).all() and norms[3] == 0
    assert (norms[7:] > eps).all() and len(norms) == 9
    assert norms[4] == pytest.approx(0.9 * eps) and norms[5] == pytest.approx((1 - 1e-6) * eps)
    held = torch.tensor(eps, dtype=torch.float64)
    assert norms[6] == torch.nextafter(held, torch.tensor(0.0, dtype=torch.float64))
    assert norms[7] == torch.nextafter(held, 2 * held)
    assert norms[8] == pytest.approx((1 + 1e-6) * eps, rel=1e-12)
    leaf = x.clone().requires_grad_()
    g = torch.randn_like(x)
    mine, = torch.autograd.grad(solution("Normalize").apply(leaf, eps), leaf, g)
    truth, = torch.autograd.grad(F.normalize(leaf, dim=-1, eps=eps), leaf, g)
    assert torch.allclose(mine, truth)



def test_a_row_found_above_eps_on_the_cpu_is_searched_again_where_its_norm_rounds_to_eps(
        monkeypatch):
    """Is the CPU's row one ulp above eps given up where the device's norm calls it eps (CUDA
    rounds the norm otherwise: every right Normalize failed the rows' own assert on a GPU),
    and a row searched on that device used instead?"""
    from autograder.exercises.lesson09_patterns import normalize_rows

    held = torch.tensor(1e-2, dtype=torch.float64)
    at_eps = torch.zeros(5, dtype=torch.float64)
    at_eps[0] = held  # as another device's norm sees the CPU's row: exactly eps
    monkeypatch.setattr(normalize_rows, "_length_rounding_below", lambda *args: at_eps)
    row = normalize_rows._one_ulp_above(held, 5, "cpu", seed=8)
    assert torch.linalg.vector_norm(row) > held and (row != 0).sum() > 1

def test_normalize_rows_flattened_by_view_fail_on_a_transposed_3d_x():
    """Is a Normalize whose forward flattens x with x.view(-1, x.shape[-1]) (right for every
    2-D x, and the domains' layouts are 2-D) failed on a 3-D x transposed in a leading dim?"""
    x = torch.zeros(3, 2, 4).transpose(0, 1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(-1, x.shape[-1])
    assert graded_mistake("Normalize", "rows flattened with x.view(-1, x.shape[-1])") \
        == "unnamed:check"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_normalize_domain_rows_just_below_and_above_every_eps(dtype):
    """At every eps the domain tries, in each dtype, are three rows below eps yet with
    |y| = norm / eps close to 1 (0.9, 1 - 1e-6, one ulp below 1), then rows above it (one ulp,
    1 + 1e-6, and 1e3 eps where eps <= 1e-8, inside isclose's atol), and does the solution
    pass?"""
    exercise = next(e for e in EXERCISES if e.name == "Normalize")
    for eps in exercise.domain.constants["eps"].points():
        x = exercise.domain.values("cpu", dtype, eps=eps)["x"]
        held = torch.tensor(eps, dtype=dtype)
        length = torch.linalg.vector_norm(x[3:], dim=-1) / held
        below, above = length[:3], length[3:]
        assert (below < 1).all() and (below >= 0.9 - 1e-6).all(), eps
        assert (torch.linalg.vector_norm(x[6:], dim=-1) > held).all(), eps
        assert above[0] == torch.nextafter(held, 2 * held) / held, eps
        assert above[1] <= 1 + 2e-6, eps
        assert len(above) == (3 if eps <= 1e-8 else 2), eps
        if eps <= 1e-8:
            assert above[2] == pytest.approx(1e3, rel=1e-5)
            assert torch.isclose(x[-1].norm(), held), eps  # isclose calls it eps
        leaf = x.clone().requires_grad_()
        g = torch.randn_like(x)
        mine, = torch.autograd.grad(solution("Normalize").apply(leaf, eps), leaf, g)
        truth, = torch.autograd.grad(F.normalize(leaf, dim=-1, eps=eps), leaf, g)
        # within 1e-4 of each row's largest entry: g less its radial part cancels in places
        scale = truth.abs().amax(-1, keepdim=True)
        assert ((mine - truth).abs() <= 1e-4 * scale).all(), eps


def test_a_test_that_always_holds_is_told_apart_on_rows_below_eps():
    """Is a Normalize that applies the projection to every row below eps (its test compares
    max(norm, eps) >= eps) told that its test always holds, where one wrong on some of those
    rows only is not?"""
    from autograder.grading import classified_verdict

    always = mistake("Normalize", "above eps told from the divisor with divisor >= eps "
                     "(always true)")
    assert "one that always holds" in classified_verdict("Normalize", always).message
    by_length = mistake("Normalize", "above eps told from the length of y (length > 0.99)")
    assert "always holds" not in classified_verdict("Normalize", by_length).message


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_a_row_above_eps_whose_length_of_y_rounds_below_1_is_in_each_dtype(dtype):
    """A backward that rebuilds the norm as |y| x divisor calls a row below eps where the
    computed |y| rounds far enough below 1: rare, so found by a seeded search. Does the domain
    hold such a row at some eps in each dtype (float64 and float32), and rows_around_eps one
    too, and is the rebuilt-norm answer named?"""
    from autograder.exercises.lesson09_patterns.normalize_rows import rebuilt_norm_below
    from autograder.grading import classified_verdict

    exercise = next(e for e in EXERCISES if e.name == "Normalize")
    found = [eps for eps in exercise.domain.constants["eps"].points()
             if rebuilt_norm_below(exercise.domain.values("cpu", dtype, eps=eps)["x"], eps).any()]
    assert found, dtype
    if dtype == torch.float64:
        assert rebuilt_norm_below(*rows_around_eps("cpu")).any()
        verdict = classified_verdict("Normalize", mistake(
            "Normalize", "above eps told from the norm rebuilt as |y| x divisor"))
        assert verdict.mistake == "Normalize/near-above-as-below"
        assert "rebuilt the norm as |y| x divisor" in verdict.message
        for test in ("isclose", "a safety margin", "a float32 copy"):
            other = classified_verdict("Normalize", next(
                m for name, m in _divisor_tests()
                if name.startswith(f"above eps told from the divisor with {test} (")))
            assert other.mistake == "Normalize/near-above-as-below"
            assert "rebuilt the norm as" not in other.message, test


def _divisor_tests():
    from tools.catalogue.lesson09_patterns import normalize_eps_branch
    return [(m.name, mistake("Normalize", m.name)) for m in normalize_eps_branch.MISTAKES
            if m.exercise == "Normalize"]


@pytest.mark.parametrize("name, expected", [
    ("eps as torch.tensor(eps) in forward and backward", "Normalize/eps-as-float32-tensor"),
    ("norm for the test computed on x.float()", "Normalize/just-below-eps-as-above"),
])
def test_an_eps_rounded_to_float32_is_named_only_where_its_probe_proves_it(name, expected):
    """Is each named only where its probe proves it (x.float() is not a float32 eps)?"""
    assert graded_mistake("Normalize", name) == expected


def test_a_right_normalize_is_not_a_float32_eps():
    """Is the lesson's Normalize, right with the Python eps, not right with float32(eps) on the
    probe's rows (the row one ulp below float32(eps) tells them apart)?"""
    row = torch.zeros(1, 5, dtype=torch.float64)
    row[0, 0] = just_below(0.01, torch.float64)
    assert float(torch.tensor(0.01, dtype=torch.float32)) <= row[0, 0].item() < 0.01
    assert not eps_as_float32(solution("Normalize"), NORMALIZE, row, 0.01)


def test_float32_rows_at_eps_fall_on_the_other_side_by_their_float64_norm():
    """Does the search find a float32 row whose float32 norm is one ulp above eps = 0.1 (as
    float32 holds it) while its float64 norm is below 0.1, and one the other way round, so the
    check runs rather than skips; and does F.normalize place them by the float32 norm, as the
    solution does?"""
    from autograder.exercises.lesson09_patterns.normalize_float32 import (EPS32,
                                                                          rows_at_eps_float32)
    x = rows_at_eps_float32("cpu")
    assert x is not None and x.dtype == torch.float32
    held = torch.tensor(EPS32, dtype=torch.float32)
    n32, n64 = x.norm(dim=-1), x.double().norm(dim=-1)
    assert n32[2] == torch.nextafter(held, 2 * held) and n64[2] < EPS32
    assert n32[3] == torch.nextafter(held, 0 * held) and n64[3] >= EPS32
    leaf = x.clone().requires_grad_()
    g = torch.randn_like(x)
    mine, = torch.autograd.grad(solution("Normalize").apply(leaf, EPS32), leaf, g)
    truth, = torch.autograd.grad(F.normalize(leaf, dim=-1, eps=EPS32), leaf, g)
    y = (x / n32.unsqueeze(-1))
    projected = (g - y * (y * g).sum(-1, keepdim=True)) / n32.unsqueeze(-1)
    assert torch.allclose(truth[2], projected[2]) and torch.allclose(truth[3], g[3] / EPS32)
    assert torch.allclose(mine, truth)
