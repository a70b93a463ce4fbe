"""Lesson 09's ProdOverDim: grad_output, which lacks the dim forward reduced, put back at the
wrong dim (not at all, or at the last dim), found on a square x, where it broadcasts without
error along the wrong dim."""

import torch

from ...errors import GradingError
from ...exercise import sample
from .pattern_cases import gradient_for


def check_grad_output_unsqueezed(function, spec, device) -> None:
    """x of shape (4, 4), dim=1: grad_output of shape (4,) broadcasts against x without error,
    along the wrong dim, unless backward unsqueezes it at dim."""
    values = {"x": sample((4, 4), device, seed=3, away_from_zero=0.5), "dim": 1}
    try:
        got, truth, grad_output = gradient_for(function, spec, values)
    except GradingError as error:
        if "do not broadcast" in error.hint:
            raise GradingError(_UNSQUEEZE_HINT, error.details,
                               mistake="ProdOverDim/grad-output-not-unsqueezed") from error
        raise
    local = truth / grad_output.unsqueeze(1)  # d prod / d x, slice by slice
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth)
            and torch.allclose(got, grad_output.unsqueeze(0) * local)):
        raise GradingError(_UNSQUEEZE_HINT, case="x of shape (4, 4), dim=1",
                           mistake="ProdOverDim/grad-output-not-unsqueezed")
    check_unsqueezed_at_last_dim(function, spec, device)


def check_unsqueezed_at_last_dim(function, spec, device) -> None:
    """x of shape (4, 4), dim=0: grad_output unsqueezed at -1 rather than at dim broadcasts
    without error, as a column, and scales the rows of the local derivatives, not their
    columns (a non-square x raises a broadcast error instead)."""
    values = {"x": sample((4, 4), device, seed=4, away_from_zero=0.5), "dim": 0}
    try:
        got, truth, grad_output = gradient_for(function, spec, values)
    except GradingError:
        return  # the cases that follow name it
    local = truth / grad_output.unsqueeze(0)
    if (isinstance(got, torch.Tensor) and got.shape == truth.shape
            and not torch.allclose(got, truth)
            and torch.allclose(got, grad_output.unsqueeze(-1) * local)):
        raise GradingError("ProdOverDim's backward unsqueezed grad_output at the last dim: "
                           "right when dim is the last dim, but for dim=0 a (4, 1) column of "
                           "grad_output scales each row of x where it should scale each column. "
                           "Where is the dim that the product removed?",
                           case="x of shape (4, 4), dim=0",
                           mistake="ProdOverDim/grad-output-unsqueezed-at-last-dim")


_UNSQUEEZE_HINT = ("ProdOverDim's backward broadcast grad_output along the wrong dim: forward "
                   "removed dim, so grad_output lacks it; unsqueeze it at dim before multiplying")
