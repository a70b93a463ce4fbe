"""Lesson 09's Cumsum on a grad_output that decays along dim (early entries 1e16 times the late
ones in float64, 1e6 times in float32, as discounted returns do): the sum of g_o over o >= i is
then the total minus a running sum only in exact arithmetic, since the subtraction cancels the
late entries' digits. A scan from the end, in any order, keeps them."""

import torch

from ...errors import GradingError
from ...exercise import sample
from .pattern_cases import gradient_for

# (dtype, spread along dim as powers of ten, the case as a message names it)
DECAYS = ((torch.float32, (3, -3), "float32, grad_output decaying from 1e3 to 1e-3 along dim"),
          (torch.float64, (8, -8), "float64, grad_output decaying from 1e8 to 1e-8 along dim"))
LENGTH = 24


def decaying_grad_output(shape, dim: int, spread, dtype, device) -> torch.Tensor:
    """Seeded normal values times a geometric decay along ``dim``."""
    scale = torch.logspace(*spread, shape[dim], dtype=torch.float64)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    g = sample(shape, "cpu", seed=7, dtype=torch.float64) * scale.view(view)
    return g.to(dtype).to(device)


def total_minus_prefix(g: torch.Tensor, dim: int) -> torch.Tensor:
    """sum over o >= i written as the total less the running sum before i, in g's dtype."""
    return g.sum(dim, keepdim=True) - g.cumsum(dim) + g


def check_decaying_grad_output(function, spec, device) -> None:
    """Each entry within a few roundings of the terms it sums (|g| summed from the end), which
    a scan from the end in any order meets and the total less a running sum does not."""
    for dtype, spread, where in DECAYS:
        x = sample((2, LENGTH), device, seed=3, dtype=dtype)
        g = decaying_grad_output(x.shape, 1, spread, dtype, device)
        got, _, _ = gradient_for(function, spec, {"x": x, "dim": 1}, grad_output=g)
        if not isinstance(got, torch.Tensor) or got.shape != g.shape:
            continue  # the graded cases name a wrong shape
        wide = g.double()
        truth = wide.flip(1).cumsum(1).flip(1)
        scale = wide.abs().flip(1).cumsum(1).flip(1)
        bound = 4 * LENGTH * torch.finfo(dtype).eps * scale
        error = (got.double() - truth).abs()
        if (error <= bound).all():
            continue
        worst = int((error / scale).flatten().argmax())
        row, col = divmod(worst, LENGTH)
        details = (f"at index ({row}, {col}): got {got[row, col].item()!r}, expected "
                   f"{truth[row, col].item()!r}")
        cancelled = total_minus_prefix(g, 1).double()
        total = wide.abs().sum(1, keepdim=True)
        if ((got.double() - cancelled).abs() <= 8 * torch.finfo(dtype).eps * total).all() and \
                not ((cancelled - truth).abs() <= bound).all():
            raise GradingError(
                "Cumsum's gradient written as the total minus a running sum (total - cumsum + "
                "g) is equal only in exact arithmetic: where early gradients are much larger "
                "than late ones, the subtraction cancels and the late entries lose their "
                f"digits: which way can each entry's sum run so that nothing cancels? (x of shape "
                f"(2, {LENGTH}), dim=1, "
                f"{where})", details, mistake="Cumsum/total-minus-prefix")
        raise GradingError(
            "Cumsum's gradient is off by more than rounding where grad_output decays along dim: "
            "each entry must be within a few roundings of the entries of grad_output it sums "
            "(a step that rounds to a narrower dtype, or a subtraction of large sums, is not); "
            f"add the entries from the end, in x's dtype (x of shape (2, {LENGTH}), dim=1, "
            f"{where})", details,
            mistake="Cumsum/loses-late-entries")
