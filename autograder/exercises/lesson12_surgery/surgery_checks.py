"""Checks shared by lesson 12's exercises: Functions whose backward is a chosen surgery on
``grad_output`` (so gradcheck does not apply), a non-contiguous ``grad_output``, and
SoftThreshold's inputs (typical, at its kinks, one ulp from them) and its probes of ``lam``."""

import torch

from ...checks import Spec, case, check_untouched, make_inputs, run_backward, run_forward
from ...contract import covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...exercise import sample


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
                           "value (x.view_as(x) or x.clone()) and never write into it",
                           mistake=f"{spec.name}/modifies-x-in-place")
    diagnose_values(f"{spec.name}'s output", forward.output, x, rtol=0, atol=0)
    if forward.saved:
        kept = ", ".join(saved.role for saved in forward.saved)
        raise GradingError(f"{spec.name} saved {kept} with save_for_backward: its backward needs "
                           f"only the number {spec.input_names[1]}, a plain ctx attribute",
                           mistake=f"{spec.name}/saves-tensors")
    if forward.ctx_tensor_attributes:  # no tensor is needed here, saved or kept
        where = ", ".join(forward.ctx_tensor_attributes)
        raise GradingError(f"{spec.name} keeps a tensor on ctx ({where}): its backward needs "
                           f"only the number {spec.input_names[1]}, kept as it came (a Python "
                           "float) on ctx, and no tensor at all",
                           mistake=f"{spec.name}/tensor-on-ctx")
    pristine = grad_output.clone()
    backward = run_backward(spec, forward.output, inputs, grad_output)
    check_untouched(spec, grad_output, pristine)
    return forward, backward


# SoftThreshold's inputs and probes -------------------------------------------------------

SOFT = Spec("SoftThreshold", ("x", "lam"),
            lambda x, lam: torch.sign(x) * torch.relu(x.abs() - lam))


def soft_values(shape, device, *, lam=0.5, seed=0, dtype=torch.float64) -> dict:
    """x standard normal times 1.5, pushed at least 0.05 off the kinks |x| == lam and x == 0."""
    x = 1.5 * sample(shape, device, seed=seed, dtype=dtype)
    near = ((x.abs() - lam).abs() < 0.05) | (x.abs() < 0.05)
    x = torch.where(near, x + 0.1 * torch.where(x >= 0, 1.0, -1.0).to(dtype), x)
    return {"x": x, "lam": torch.tensor(lam, dtype=dtype, device=device)}


def kink_values(device, *, lam=0.5, dtype=torch.float64) -> dict:
    """x exactly at +-lam and at 0, next to values inside and outside, so many of each that
    under grad_output = 1 every lam gradient below differs: the right one -(3 - 1) = -2, one
    that counts the kinks (2 at +lam, 1 at -lam) -3, one without sign(x) -4, one without the
    mask (2 entries inside, both negative) -1, the wrong sign 2, the mean -0.2."""
    x = torch.tensor([[-lam, lam, 0.0, -0.2, -1.5], [lam, 2.0, 0.9, -0.3, 1.1]], dtype=dtype,
                     device=device)
    return {"x": x, "lam": torch.tensor(lam, dtype=dtype, device=device)}


def soft_ties(device, dtype) -> dict:
    """x at +-lam, one ulp inside and outside each, and at 0: the contract's rule at the kink
    (both gradients 0) against its neighbours (both gradients those of the side they are on)."""
    lam = torch.tensor(0.5, dtype=dtype)
    up, down = torch.nextafter(lam, lam + 1), torch.nextafter(lam, lam - 1)
    x = torch.stack([lam, up, down, -lam, -up, -down, 0 * lam, 2 * lam, -2 * lam])
    return {"x": x.reshape(3, 3).to(device), "lam": lam.to(device)}


def clamp_guard(max_norm: float, true_norm: float, norm: float) -> str:
    """The words naming a clamp of the norm, where dividing by one explains the norm reached:
    max_norm * true_norm / norm is the norm divided by, above the true one."""
    divided_by = max_norm * true_norm / norm if norm > 0 else float("inf")
    return (f", as a clamp (a floor) of the norm at about {divided_by:.2g} would make it"
            if divided_by > true_norm * (1 + 1e-6) else "")
