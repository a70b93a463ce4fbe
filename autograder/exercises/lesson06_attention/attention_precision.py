"""Lesson 06: the probe for a tensor kept for backward in a narrower dtype than the inputs (a
log-sum-exp in float32 for float64 inputs, say), whose rounding alone fails a check."""

import math

import torch

from ...checks import Spec, make_inputs, run_forward


def _close(got, true: torch.Tensor, tolerance: float) -> bool:
    """``got`` within ``tolerance`` of ``true``, relative to its largest entry."""
    return (isinstance(got, torch.Tensor) and got.shape == true.shape
            and bool(torch.allclose(got.detach().to(true.dtype), true, rtol=tolerance,
                                    atol=tolerance * max(true.abs().max().item(), 1e-12))))


def narrow_saves(function, spec: Spec, values: dict, reference) -> str | None:
    """The hint when forward keeps, besides the inputs and the output, a floating tensor
    narrower than the inputs, and the output and gradients are right to that tensor's
    precision (a few of its rounding units times its largest value, the error a rounded L
    puts into P = exp(S - L)), though not to the inputs': its rounding is what failed."""
    dtype = values["Q"].dtype
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    narrow = [s for s in forward.saved
              if not s.role.startswith("input") and s.role != "output"
              and s.dtype.is_floating_point and s.dtype.itemsize < dtype.itemsize]
    if not narrow or not isinstance(forward.output, torch.Tensor):
        return None
    saved = max(narrow, key=lambda s: torch.finfo(s.dtype).eps)  # the coarsest
    finite = saved.tensor.detach()[torch.isfinite(saved.tensor.detach())].abs()
    size = max(1.0, finite.max().item() if finite.numel() else 1.0)
    tolerance = 8 * torch.finfo(saved.dtype).eps * size
    grad_output = torch.randn(forward.output.shape, generator=torch.Generator().manual_seed(3),
                              dtype=dtype).to(forward.output.device)
    names = ("Q", "K", "V")
    grads = torch.autograd.grad(forward.output, [inputs[n] for n in names], grad_output,
                                allow_unused=True)
    fresh = make_inputs(values)
    expected = reference(**fresh)
    truth = torch.autograd.grad(expected, [fresh[n] for n in names], grad_output)
    if not (_close(forward.output, expected.detach(), tolerance)
            and all(_close(g, t, tolerance) for g, t in zip(grads, truth))):
        return None  # wrong beyond the saved tensor's precision: something else failed
    low, high = str(saved.dtype).removeprefix("torch."), str(dtype).removeprefix("torch.")
    if math.prod(saved.shape) == math.prod(values["Q"].shape[:-1]):  # one number per row
        return (f"{spec.name} keeps its log-sum-exp in {low} for {high} inputs, and its "
                f"gradients are right only to {low}'s precision: P = exp(S - L) inherits L's "
                "rounding in every entry of its row; keep L in the inputs' dtype (float32 at "
                "least)")
    return (f"{spec.name} keeps a tensor of shape {tuple(saved.shape)} in {low} for {high} "
            f"inputs, and its gradients are right only to {low}'s precision: keep what "
            "backward reads in the inputs' dtype")
