"""Lesson 10's variance trap: rows far from 0 (1e4 + N(0, 1) in float32, 1e8 + N(0, 1) in
float64), where E[x^2] - E[x]^2 cancels; a loss proven to be precision, not a wrong formula, is
named as such."""

import math

import torch

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...exercise import sample


def check_shifted_rows(function, spec: Spec, values: dict, shift: float, *,
                       tolerance: float = 1e-2) -> None:
    """Rows like ``shift`` + N(0, 1) in x's dtype (1e4 in float32, 1e8 in float64): values and
    gradients within ``tolerance`` of the float64 truth for the same input (F.layer_norm's
    error there is below 1e-3 in float32, below 1e-7 in float64)."""
    inputs = make_inputs(values)
    dtype = values["x"].dtype
    output = run_forward(function, spec, inputs).output
    wide = {n: v.double() if isinstance(v, torch.Tensor) else v for n, v in values.items()}
    # LayerNorm does not see a common offset: the rows less theirs (exact) give the truth
    near_zero = {**wide, "x": wide["x"] - shift}
    truth = spec.reference(**make_inputs(near_zero, requires_grad=False))
    if isinstance(output, torch.Tensor) and output.shape == truth.shape:
        error = (output.detach().double() - truth).abs().nan_to_num(float("inf")).max().item()
        if error > tolerance:
            power = round(math.log10(shift))
            unshifted = {**values, "x": values["x"] - shift}
            near_zero_error = _error(function, spec, unshifted, truth)
            if near_zero_error is not None and near_zero_error < tolerance / 10:
                # proven a precision loss: the same code is right on the same rows less
                # their offset
                raise GradingError(
                    f"{spec.name}'s output matches on these rows less their offset (to "
                    f"{near_zero_error:.1g}) and is off by {error:.3g} on rows like 1e{power} + "
                    f"N(0, 1) in {str(dtype).removeprefix('torch.')}: a precision loss, not a "
                    "wrong formula; a variance computed as E[x^2] - E[x]^2 cancels "
                    f"catastrophically there (two numbers near 1e{2 * power}): quick question 3 shows what avoids it")
    diagnose_values(f"{spec.name}'s output", output.detach().double(), truth, rtol=0,
                    atol=tolerance)
    grad_output = sample(truth.shape, truth.device, seed=7)
    tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    got = run_backward(spec, output, tensors, grad_output.to(dtype)).grads
    wide_inputs = make_inputs(near_zero)
    wanted = [v for v in wide_inputs.values() if isinstance(v, torch.Tensor)]
    expected = torch.autograd.grad(spec.reference(**wide_inputs), wanted, grad_output)
    for name, grad, true in zip(tensors, got, expected):
        scale = max(true.abs().max().item(), 1.0)
        diagnose_gradient(name, grad.double() if grad is not None else None, true, rtol=0,
                          atol=tolerance * scale)


def _error(function, spec: Spec, values: dict, truth: torch.Tensor) -> float | None:
    """The largest error of ``function`` on ``values``, or None where it cannot be had (it
    raised, or returned something else)."""
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: no probe, no named cause
        return None
    if not isinstance(output, torch.Tensor) or output.shape != truth.shape:
        return None
    return (output.double() - truth).abs().nan_to_num(float("inf")).max().item()
