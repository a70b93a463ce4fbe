"""Lesson 04: SwishFunction with beta in a wider dtype than x (a float64 beta, a float32 x, as a
float32 model with a float64 hyper-parameter tensor has). Torch's own ops round such a 0-d beta to
x's dtype where they meet x, so a correct backward's gradients are float32 numbers; what must not
happen is forward saving beta already rounded: that copy is not beta, it comes back from
ctx.saved_tensors with no link to beta, and double backward loses every derivative of backward
with respect to beta. Named from what forward saved, then held to float64's truth: beta's gradient
in beta's dtype, and the second derivatives with respect to beta."""

import torch

from ...checks import Spec, make_inputs, run_forward
from ...errors import GradingError
from ...exercise import sample
from ...tolerances import TOLERANCES
from .constant_grad_output import first_derivatives
from .second_derivatives import _random_like

SECOND = {"rtol": 1e-3, "atol": 1e-4}  # float32 arithmetic; a lost term is off by tenths


def _second_in_beta(name: str, function, inputs: dict, grad_output, direction):
    """beta's gradient, and d/dbeta of (x's gradient . direction + beta's gradient)."""
    x, beta = inputs["x"], inputs["beta"]
    grad_x, grad_beta = first_derivatives(name, function, (x, beta), grad_output)
    total = (grad_x * direction).sum() + grad_beta.sum()
    second, = torch.autograd.grad(total, beta, allow_unused=True)
    return grad_beta.detach(), torch.zeros_like(beta) if second is None else second


def _rounded_beta(forward, beta: torch.Tensor, x_dtype) -> str | None:
    """What forward saved in beta's place, rounded to x's dtype, if it did."""
    for saved in forward.saved:
        tensor = saved.tensor.detach()
        if (saved.role == "intermediate" and saved.shape == tuple(beta.shape)
                and saved.dtype == x_dtype and saved.dtype != beta.dtype
                and torch.equal(tensor, beta.detach().to(x_dtype))):
            return str(saved.dtype).removeprefix("torch.")
    return None


def check_wider_beta(function, spec: Spec, device) -> None:
    """A float64 beta and a float32 x: beta saved as itself, beta's gradient in float64 within
    float32's rounding of the truth, and the second derivatives with respect to beta right."""
    x = 2 * sample((3, 4), device, seed=14, dtype=torch.float32)
    values = {"x": x, "beta": torch.tensor(1.3, dtype=torch.float64, device=device)}
    grad_output = _random_like(x, 15)
    direction = _random_like(x, 16)
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    got_grad, got_second = _second_in_beta(spec.name, function.apply, inputs, grad_output,
                                           direction)
    wide = make_inputs({"x": x.double(), "beta": values["beta"]})
    true_grad, true_second = _second_in_beta(spec.name, spec.reference, wide,
                                             grad_output.double(), direction.double())
    off = f"largest error in the second derivative with respect to beta: " \
          f"{(got_second.double() - true_second).abs().max().item():.3g}"
    if rounded := _rounded_beta(forward, values["beta"], x.dtype):
        raise GradingError(
            f"with a float64 beta and a {rounded} x, {spec.name}'s forward saved beta rounded "
            f"to x's dtype (a 0-d {rounded} tensor holding beta's value rounded), not beta "
            "itself: a tensor made in forward is a copy with no link to beta, so "
            "ctx.saved_tensors gives it back as a constant and double backward loses the "
            "derivatives of your backward with respect to beta; which tensor can forward save "
            "so that beta comes back as the caller's own?", off,
            mistake=f"{spec.name}/saves-rounded-beta")
    tolerance = TOLERANCES[x.dtype]
    if got_grad.dtype != torch.float64 or not torch.allclose(
            got_grad.double(), true_grad, rtol=tolerance.rtol, atol=tolerance.atol):
        raise GradingError(
            f"with a float64 beta and a float32 x, {spec.name}'s gradient for beta is off "
            "float64's truth by more than float32's rounding: which step of your backward "
            "loses digits that x's dtype would keep?",
            f"beta's gradient {got_grad.item():.9g} ({got_grad.dtype}), float64 truth "
            f"{true_grad.item():.9g}")
    if not torch.allclose(got_second.double(), true_second, **SECOND):
        raise GradingError(
            f"with a float64 beta and a float32 x, the derivative of {spec.name}'s backward "
            "with respect to beta is wrong, though it is right when beta has x's dtype: which "
            "tensor standing for beta in your backward has no link to the caller's beta when "
            "the two dtypes differ?", off, mistake=f"{spec.name}/beta-link-lost-across-dtypes")
