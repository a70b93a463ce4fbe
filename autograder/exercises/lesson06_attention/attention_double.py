"""Lesson 06: a second derivative through the learner's backward, as a Hessian-vector product
takes it (``torch.autograd.grad(..., create_graph=True)``, then ``grad`` of the result). A
backward under ``@once_differentiable`` refuses it (an error, which is fine); a backward
without the decorator records its ops on the saved P (or L), which autograd treats as
constants, so the second derivative comes out silently wrong while the first is right. A
backward that really is twice differentiable matches the composed reference and passes."""

import torch

from ...checks import case, make_inputs
from ...errors import GradingError


def _second(apply, values: dict, grad_output, directions) -> tuple:
    """(first derivatives, second derivatives) of ``apply(**inputs)`` against ``grad_output``,
    the second along ``directions``; the second is None where autograd refuses it."""
    inputs = make_inputs(values)
    leaves = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    output = apply(*inputs.values())
    first = torch.autograd.grad(output, leaves, grad_output, create_graph=True,
                                allow_unused=True)
    first = [torch.zeros_like(x) if g is None else g for g, x in zip(first, leaves)]
    inner = sum((g * d).sum() for g, d in zip(first, directions))
    try:
        second = torch.autograd.grad(inner, leaves, allow_unused=True, materialize_grads=True)
    except RuntimeError:  # @once_differentiable, or nothing recorded at all: refused, fine
        return [g.detach() for g in first], None
    return [g.detach() for g in first], second


def check_second_derivative(function, name: str, values: dict, reference, where: str) -> None:
    """A Hessian-vector product through ``function``: it must raise, or match ``reference``'s.
    A missing @once_differentiable is named only where the first derivative matched."""
    generator = torch.Generator().manual_seed(8)
    tensors = {n: v for n, v in values.items() if isinstance(v, torch.Tensor)
               and v.is_floating_point()}

    def randn(shape, like):
        return torch.randn(shape, generator=generator, dtype=torch.float64).to(like)

    with torch.no_grad():
        shape = reference(**make_inputs(values, requires_grad=False)).shape
    grad_output = randn(shape, values["Q"])
    directions = [randn(v.shape, v) for v in tensors.values()]
    with case(f"{where}, a second derivative (grad with create_graph=True, then grad)"):
        try:
            first, second = _second(function.apply, values, grad_output, directions)
        except Exception:  # the learner's code may raise anything: other checks name it
            return
        if second is None:
            return
        true_first, true_second = _second(reference, values, grad_output, directions)
        errors = [(n, (a - b).abs().max().item()) for n, a, b in
                  zip(tensors, second, true_second) if not torch.allclose(a, b, rtol=1e-5,
                                                                          atol=1e-7)]
        if not errors:
            return
        worst, error = max(errors, key=lambda e: e[1])
        first_right = all(torch.allclose(a, b, rtol=1e-5, atol=1e-7)
                          for a, b in zip(first, true_first))
        if first_right:
            raise GradingError(
                f"{name}'s second derivative is silently wrong (along {worst}, off by "
                f"{error:.3g}) though its first is right: backward without "
                "@once_differentiable records its ops on the saved P (or L), which autograd "
                "treats as constants; keep @once_differentiable under @staticmethod on "
                "backward, so that a second derivative raises instead of coming out wrong",
                mistake=f"{name}/missing-once-differentiable")
        raise GradingError(
            f"{name}'s second derivative is wrong (along {worst}, off by {error:.3g}): a "
            "Hessian-vector product through your backward must raise (@once_differentiable) "
            "or match the composed ops'")
