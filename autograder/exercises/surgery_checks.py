"""Checks shared by lesson 12's exercises: Functions whose backward is a chosen surgery on
``grad_output`` (so gradcheck does not apply), and a non-contiguous ``grad_output``."""

import torch

from ..checks import Spec, case, check_untouched, make_inputs, run_backward, run_forward
from ..contract import covers
from ..diagnose import diagnose_gradient, diagnose_values
from ..errors import GradingError
from ..exercise import sample


class Intended(torch.autograd.Function):
    """The gradient a surgery Function is meant to return, as a reference autograd can run:
    identity forward, ``surgery(grad_output, constant)`` backward."""

    @staticmethod
    def forward(ctx, x, constant, surgery):
        ctx.constant, ctx.surgery = constant, surgery
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.surgery(grad_output, ctx.constant), None, None


def strided_grad_output(shape, device, *, seed=0, dtype=torch.float64) -> torch.Tensor:
    """A non-contiguous ``grad_output`` of ``shape``, as the engine passes after a transpose."""
    flipped = sample(tuple(reversed(shape)), device, seed=seed, dtype=dtype)
    return flipped.permute(*reversed(range(len(shape))))


def check_strided(function, spec: Spec, values: dict, grad_output, expected: dict) -> None:
    """Backward given a non-contiguous ``grad_output`` (a ``.view`` on it raises) still returns
    ``expected``'s gradients and leaves ``grad_output`` alone."""
    covers("non-contiguous grad_output")
    inputs = make_inputs(values)
    output = run_forward(function, spec, inputs).output
    pristine = grad_output.clone()
    with case(f"a non-contiguous grad_output (strides {grad_output.stride()})"):
        grads = run_backward(spec, output, inputs, grad_output).grads
        check_untouched(spec, grad_output, pristine)
        for name, grad in zip(inputs, grads):
            if name in expected:
                diagnose_gradient(name, grad, expected[name])


def matches(got, candidate, expected) -> bool:
    """``got`` is ``candidate`` (a known mistake) and not the right answer."""
    return (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(got, candidate) and not torch.allclose(candidate, expected))


def surgery_case(function, spec: Spec, x: torch.Tensor, constant, grad_output: torch.Tensor):
    """Forward is ``x`` in value and leaves ``x`` alone, nothing is saved or kept on ctx, and
    backward leaves ``grad_output`` alone: returns (forward trace, grad_x)."""
    leaf = x.detach().clone().requires_grad_()
    version = leaf._version
    inputs = {"x": leaf, spec.input_names[1]: constant}
    forward = run_forward(function, spec, inputs)
    if leaf._version != version or not torch.equal(leaf.detach(), x):
        raise GradingError(f"{spec.name}'s forward modified x in place: return x unchanged in "
                           "value (x.view_as(x) or x.clone()) and never write into it")
    diagnose_values(f"{spec.name}'s output", forward.output, x, rtol=0, atol=0)
    if forward.saved:
        kept = ", ".join(saved.role for saved in forward.saved)
        raise GradingError(f"{spec.name} saved {kept} with save_for_backward: its backward needs "
                           f"only the number {spec.input_names[1]}, a plain ctx attribute")
    if forward.ctx_tensor_attributes:  # no tensor is needed here, saved or kept
        where = ", ".join(forward.ctx_tensor_attributes)
        raise GradingError(f"{spec.name} keeps a tensor on ctx ({where}): its backward needs "
                           f"only the number {spec.input_names[1]}, kept as it came (a Python "
                           "float) on ctx, and no tensor at all")
    pristine = grad_output.clone()
    backward = run_backward(spec, forward.output, inputs, grad_output)
    check_untouched(spec, grad_output, pristine)
    return forward, backward
