"""Lesson 10's eps in backward, for LayerNormFunction, RMSNormFunction and GroupNormFunction:
a backward that rebuilds rstd from a saved variance (or mean square) without eps gives the
gradient of the norm with eps = 0, which rows of variance below eps tell apart."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError


def _grad_x(apply, values: dict, grad_output) -> torch.Tensor:
    inputs = make_inputs(values, requires_grad={"x"})
    grad_x, = torch.autograd.grad(apply(inputs), inputs["x"], grad_output)
    return grad_x.double()


def check_eps_in_backward(function, spec: Spec, values: dict) -> None:
    """``values`` has eps = 0.5 and rows (groups) of variance far below it and above it: a
    grad_x that is the reference's for eps = 0, and not for eps = 0.5, is named (a forward that
    misplaces eps is check_eps_used's to name, before this)."""
    generator = torch.Generator().manual_seed(7)
    x = values["x"]
    grad_output = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    try:
        got = _grad_x(lambda inputs: function.apply(*inputs.values()), values, grad_output)
    except Exception:  # the learner's code may raise anything: the cases quote it
        return
    if not isinstance(got, torch.Tensor) or got.shape != x.shape:
        return

    def reference(eps: float) -> torch.Tensor:
        return _grad_x(lambda inputs: spec.reference(**{**inputs, "eps": eps}), values,
                       grad_output)

    def matches(expected) -> bool:
        return torch.allclose(got, expected, rtol=1e-4, atol=1e-6)

    if not matches(reference(values["eps"])) and matches(reference(0.0)):
        raise GradingError(f"{spec.name}'s backward rebuilds rstd without eps: with eps=0.5 "
                           "its grad_x is the one for eps=0 (rows whose variance lies below "
                           "eps show it); forward's r adds eps under the square root: does "
                           "backward's?", mistake=f"{spec.name}/eps-lost-in-backward")
