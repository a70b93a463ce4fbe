"""Lesson 09: a gradient that is the right formula along another dim (issue 68). A learner's
backward for Cumsum or ProdOverDim with a scan, a product or a flip along a fixed dim (0, or
-1) instead of ctx.dim got a generic first line ('your gradient for x is wrong', 'wrong on a
slice with no zero'), though the cause is provable: the gradient equals the right formula with
that part along dim d. Each probe here compares the gradient with such formulas on random
inputs and names the one it equals; where none does it says nothing (the generic lines stay)."""

import torch

from ...errors import GradingError
from ...exercise import sample
from .pattern_cases import _shape, gradient_for, listed

# (x's shape, dim): a 2-D x along each dim, a 3-D x along its middle dim (another dim on either
# side); no side square, so that no dim passes for another
PROBES = [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1)]


def _reversed_scan(g: torch.Tensor, flip: int, scan: int) -> torch.Tensor:
    return g.flip(flip).cumsum(scan).flip(flip)


def _before(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Per entry, the product of the entries before it along ``dim`` (1 at the first)."""
    n = x.shape[dim]
    ones = torch.ones_like(x.narrow(dim, 0, 1))
    return torch.cat([ones, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)


def _after(x: torch.Tensor, dim: int) -> torch.Tensor:
    """Per entry, the product of the entries after it along ``dim`` (1 at the last)."""
    return _before(x.flip(dim), dim).flip(dim)


def _cumsum_formulas(x, g, dim):
    """(what was along another dim, the gradient that gives) for each dim d != dim."""
    for d in range(x.dim()):
        if d != dim:
            yield f"the whole reversed scan along dim {d}", _reversed_scan(g, d, d)
            yield (f"the scan (cumsum) along dim {d}, the flips along dim",
                   _reversed_scan(g, dim, d))


def _prod_formulas(x, g, dim):
    up = g.unsqueeze(dim)
    for d in range(x.dim()):
        if d != dim:
            yield (f"the products of the other entries taken along dim {d}",
                   up * _before(x, d) * _after(x, d))
    # a flip along another dim around a cumprod along dim leaves it as it is: the products
    # after x_i come out as x_1 ... x_(i+1) scanned from the front
    n = x.shape[dim]
    unflipped = torch.cat([x.narrow(dim, 1, n - 1), torch.ones_like(x.narrow(dim, 0, 1))],
                          dim).cumprod(dim)
    if x.dim() > 1:
        yield ("the flips around the scan of the products after x_i along another dim (a "
               "flip along another dim leaves a scan along dim as it runs)",
               up * _before(x, dim) * unflipped)


FORMULAS = {"Cumsum": _cumsum_formulas, "ProdOverDim": _prod_formulas}
WHAT = {"Cumsum": "x_i's gradient sums g_o over o >= i along dim",
        "ProdOverDim": "x_i's gradient is g times the product of the other entries of its "
                       "slice along dim"}


def _right_along_last_dim(function, spec, x, dim) -> bool:
    """Is the gradient right on the same slices laid along the last dim?"""
    got, truth, _ = gradient_for(function, spec, {"x": x.movedim(dim, -1).contiguous(),
                                                   "dim": x.dim() - 1})
    return (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and bool(torch.allclose(got, truth)))


def check_along_another_dim(function, spec, device) -> None:
    """Raise where the gradient is the right formula with a scan, a product or a flip along
    another dim than ``dim``, on a random x (entries away from zero); silent where grading the
    case raised (the exercise's own checks name that) or the gradient is right along the last
    dim only (so does its last-dim check)."""
    formulas = FORMULAS[spec.name]
    for seed, (x_shape, dim) in enumerate(PROBES):
        x = sample(x_shape, device, seed=seed, away_from_zero=0.3)
        try:
            got, truth, g = gradient_for(function, spec, {"x": x, "dim": dim})
        except GradingError:
            return  # an error, a write, a shape: the exercise's own checks name it
        if not (isinstance(got, torch.Tensor) and got.shape == truth.shape
                and got.dtype == truth.dtype) or torch.allclose(got, truth):
            continue
        try:
            if _right_along_last_dim(function, spec, x, dim):
                return
        except GradingError:
            return  # right for the last dim only: the exercise's own check names that
        for what, wrong in formulas(x, g, dim):
            if wrong.shape == got.shape and torch.allclose(got, wrong):
                raise GradingError(
                    f"{spec.name}'s gradient is the right formula but with {what}, where "
                    f"dim={dim}: {WHAT[spec.name]}={dim}, so every flip, scan and product in "
                    f"backward must follow ctx.dim (with x of shape {_shape(x.shape)}, "
                    f"dim={dim}, float64)",
                    f"got {listed(got.flatten()[:6], truth.flatten()[:6])}, "
                    f"expected {listed(truth.flatten()[:6], got.flatten()[:6])}",
                    mistake=f"{spec.name}/along-another-dim")
