"""Lesson 09's Normalize: rows on both sides of eps (lesson09_patterns.normalize_rows), none
within the contract's relative 1e-3 of it, and the checks that tell apart how a backward
decides which side a row is on."""

import pytest
import torch
import torch.nn.functional as F

from autograder.exercises.lesson09_patterns.selections import EXERCISES, rows_around_eps
from tests.autograder.catalogued import graded_mistake, mistake
from tools.solutions import solution

pytestmark = pytest.mark.lesson09


def _matches_f_normalize(x: torch.Tensor, eps: float) -> bool:
    leaf = x.clone().requires_grad_()
    g = torch.randn_like(x)
    mine, = torch.autograd.grad(solution("Normalize").apply(leaf, eps), leaf, g)
    truth, = torch.autograd.grad(F.normalize(leaf, dim=-1, eps=eps), leaf, g)
    # within 1e-4 of each row's largest entry: g less its radial part cancels in places
    scale = truth.abs().amax(-1, keepdim=True)
    return bool(((mine - truth).abs() <= 1e-4 * scale).all())


@pytest.mark.parametrize("eps", [1e-2, 1e-12])
def test_rows_around_eps_straddle_it_outside_the_contracts_band(eps):
    """Do the rows straddle eps (two far above, two far below, one of zeros, 0.9 eps and
    (1 - 1e-3) eps below, (1 + 1e-3) eps and 1.1 eps above, and 1e3 eps at a tiny eps, which
    isclose's default atol calls eps), and does the solution match autograd through
    F.normalize there?"""
    x, got_eps = rows_around_eps("cpu", eps=eps)
    norms = x.norm(dim=-1) / eps
    assert got_eps == eps and (norms[:2] > 1).all() and (norms[2:6] < 1).all()
    assert norms[3] == 0 and (norms[6:] > 1).all() and len(norms) == (9 if eps <= 1e-8 else 8)
    for row, ratio in ((4, 0.9), (5, 1 - 1e-3), (6, 1 + 1e-3), (7, 1.1)):
        assert norms[row].item() == pytest.approx(ratio, rel=1e-9)
    if eps <= 1e-8:
        assert torch.isclose(x[-1].norm(), torch.tensor(eps, dtype=x.dtype))
    assert _matches_f_normalize(x, eps)


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
    """At every eps the domain tries, in each dtype, are two rows below eps yet with
    |y| = norm / eps near 1 (0.9, 1 - 1e-3), then rows above it (1 + 1e-3, 1.1, and 1e3 eps
    where eps <= 1e-8, inside isclose's atol), and does the solution pass?"""
    exercise = next(e for e in EXERCISES if e.name == "Normalize")
    for eps in exercise.domain.constants["eps"].points():
        x = exercise.domain.values("cpu", dtype, eps=eps)["x"]
        length = torch.linalg.vector_norm(x[3:].double(), dim=-1) / eps
        below, above = length[:2], length[2:]
        assert below.tolist() == pytest.approx([0.9, 1 - 1e-3], rel=1e-5), eps
        assert above[:2].tolist() == pytest.approx([1 + 1e-3, 1.1], rel=1e-5), eps
        assert len(above) == (3 if eps <= 1e-8 else 2), eps
        assert _matches_f_normalize(x, eps), eps


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


def test_isclose_at_a_tiny_eps_is_named_and_tolerances_inside_the_band_pass():
    """Is a test of the divisor with isclose (whose atol of 1e-8 calls a row of 1e3 eps equal to
    eps = 1e-12) named as a row above eps taken for one below, while a margin of 1e-6 on |y|,
    inside the contract's band, passes?"""
    assert graded_mistake("Normalize", "above eps told from the divisor with isclose "
                          "(~torch.isclose(divisor, torch.full_like(divisor, ctx.eps)))") \
        == "Normalize/near-above-as-below"
    from autograder.grading import classified_verdict
    from tools.catalogue import unusual
    inside = next(entry for entry in unusual()
                  if entry.name == "above eps told from the length of y (length > 1 - 1e-6)")
    assert classified_verdict("Normalize", inside.load()).passed
