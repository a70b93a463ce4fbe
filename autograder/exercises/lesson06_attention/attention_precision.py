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


def _gradients_against(output, inputs: dict, values: dict, reference, seed: int) -> tuple:
    """(Q's, K's and V's gradients through ``output``, the reference's output, its gradients),
    both against one random grad_output drawn from ``seed`` in the inputs' dtype."""
    grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(seed),
                              dtype=values["Q"].dtype).to(output.device)
    names = ("Q", "K", "V")
    grads = torch.autograd.grad(output, [inputs[n] for n in names], grad_output,
                                allow_unused=True)
    fresh = make_inputs(values)
    expected = reference(**fresh)
    return grads, expected, torch.autograd.grad(expected, [fresh[n] for n in names], grad_output)


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
    grads, expected, truth = _gradients_against(forward.output, inputs, values, reference, 3)
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


# how far, relative to a tensor's largest entry, a float64 result with a step in float32 may
# lie from the truth: a few of float32's rounding units (2**-24 each), never a wrong formula's
FLOAT32_UNITS = 32


def float32_precision(function, spec: Spec, values: dict, reference) -> str | None:
    """The hint when float64 inputs give an output and gradients that are right to float32's
    precision, relative to each one's largest entry, though not to float64's: a step ran in
    float32 (a softmax(dtype=torch.float32), a logsumexp of scores.float() cast back), whose
    rounding no saved tensor shows, so ``narrow_saves`` cannot name it."""
    dtype = values["Q"].dtype
    if dtype != torch.float64:
        return None
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    if not isinstance(output, torch.Tensor) or output.dtype != dtype:
        return None
    grads, expected, truth = _gradients_against(output, inputs, values, reference, 4)
    names = ("Q", "K", "V")
    worst = (0.0, 0.0, "")
    for what, got, true in [("output", output, expected), *(
            (f"gradient for {n}", g, t) for n, g, t in zip(names, grads, truth))]:
        if not isinstance(got, torch.Tensor) or got.shape != true.shape:
            return None
        got, true = got.detach(), true.detach()
        size = max(true.abs().max().item(), 1e-300)
        error = (got - true).abs().max().item()
        if not math.isfinite(error) or error > FLOAT32_UNITS * torch.finfo(torch.float32).eps * size:
            return None  # wrong beyond float32's precision: something else failed
        if error / size > worst[1]:
            worst = (error, error / size, what)
    if worst[1] <= 1e3 * torch.finfo(torch.float64).eps:
        return None  # right to float64's precision: not what failed
    return (f"{spec.name}'s {worst[2]} for float64 inputs is right only to float32's "
            f"precision (largest error {worst[0]:.3g}, {worst[1]:.2g} of its largest entry): a "
            "step computed in float32? (a softmax(..., dtype=torch.float32), a .float() cast "
            "back, a float32 logsumexp) rounds everything after it; keep every step of a "
            "float64 input in float64")
