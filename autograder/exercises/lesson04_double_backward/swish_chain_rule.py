"""SwishFunction's gradient for x where it is the chain rule with its inner factor left out:
s + x s (1 - s), the derivative of x sigmoid(z) with dz/dx = beta taken as 1."""

import torch

from ...checks import make_inputs
from ...errors import GradingError


def name_dropped_inner_factor(function, values: dict, error: GradingError) -> None:
    """Raise a named error where the gradient for x is s + x s (1 - s), s = sigmoid(beta x), at
    every entry, and that differs from the true s + beta x s (1 - s) (beta not 1 or 0)."""
    x, beta = values["x"].detach(), values["beta"].detach()
    s = torch.sigmoid(beta * x)
    slip, truth = s + x * s * (1 - s), s + beta * x * s * (1 - s)
    if torch.allclose(slip, truth):
        return
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        grad_x = torch.autograd.grad(output, inputs["x"], torch.ones_like(output))[0]
    except (RuntimeError, TypeError, ValueError, GradingError):
        return  # its own failure is the one to report
    if isinstance(grad_x, torch.Tensor) and grad_x.shape == slip.shape and torch.allclose(
            grad_x.detach().to(slip.dtype), slip):
        raise GradingError(
            f"your gradient for x is s + x·s·(1 − s) at every entry (s = sigmoid(beta·x), "
            f"beta = {beta.item():g}), where the true one is s + beta·x·s·(1 − s): the chain "
            "rule through z = beta·x multiplies sigmoid'(z) by dz/dx, and that factor is "
            "missing", error.details, mistake="SwishFunction/drops-inner-factor") from error
