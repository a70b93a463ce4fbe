"""Lesson 08: LogSumExp's backward differentiated once more (create_graph=True), against
torch.logsumexp's second derivative."""

import inspect

import torch

from ...checks import case
from ...errors import GradingError
from ...exercise import sample
from .lse_grad_output import check_lse_grad_output_kept
from .lse_inputs import lse_values
from .lse_transforms import _transform_error


def check_lse_second_derivative(function, device) -> None:
    """backward differentiated once more (create_graph=True, as gradgradcheck and a
    Hessian-vector product do) agrees with torch.logsumexp's second derivative, with respect to
    x and then to grad_output: backward must compute from tensors autograd can trace back to x,
    since forward and setup_context run without recording a graph, and keep grad_output in
    the graph."""
    # the last: a transposed x, where a copy of x saved for backward (x.contiguous()) is one
    for seed, (shape, dim) in enumerate([((3, 4), 1), ((2, 3, 4), -2), ((5,), 0), ((3, 4), 0)]):
        x = lse_values(shape[::-1] if seed == 3 else shape, device, seed=40 + seed,
                       dim=dim)["x"]
        x = (x.mT if seed == 3 else x).requires_grad_()
        out_shape = shape[:dim % len(shape)] + shape[dim % len(shape) + 1:]
        v = sample(out_shape, device, seed=50 + seed, dtype=x.dtype)
        u = sample(shape, device, seed=60 + seed, dtype=x.dtype)
        layout = ", transposed (not contiguous)" if seed == 3 else ""
        with case(f"a second derivative: x of shape {shape}{layout}, dim={dim}, backward run "
                  "with create_graph=True, then differentiated along a random direction"):
            try:
                out = function.apply(x, dim)
                first, = torch.autograd.grad(out, x, v, create_graph=True)
            except Exception as error:
                raise _transform_error("backward", error, {"x": x, "dim": dim}) from error
            if not first.requires_grad and _saved_all_traced(out):
                raise GradingError(
                    "LogSumExp's backward cannot be differentiated again: run with "
                    "create_graph=True (a second derivative, as in lesson 04), its gradient for "
                    "x has no graph back to x, although every tensor setup_context saved has "
                    f"one (x or the output): backward itself cuts the graph{_cut(function)}, so "
                    "autograd takes the gradient for a constant",
                    mistake="LogSumExp/backward-detaches")
            if not first.requires_grad:
                raise GradingError(
                    "LogSumExp's backward cannot be differentiated again: run with "
                    "create_graph=True (a second derivative, as in lesson 04), its gradient for "
                    "x has no graph back to x, so autograd takes it for a constant; forward "
                    "and setup_context record no graph, so a tensor computed there (the "
                    "weights themselves?), or saved detached, is a constant to autograd: which "
                    "tensors could setup_context keep that autograd can trace back to x, for "
                    "backward to compute its weights from?",
                    mistake="LogSumExp/second-derivative-lost")
            try:
                got, = torch.autograd.grad(first, x, u, allow_unused=True)
            except Exception as error:
                raise _transform_error("backward", error, {"x": x, "dim": dim}) from error
            reference = x.detach().clone().requires_grad_()
            want, = torch.autograd.grad(torch.autograd.grad(
                torch.logsumexp(reference, dim), reference, v, create_graph=True)[0],
                reference, u)
            if got is None:
                got = torch.zeros_like(want)
            # loose: a float32 step is a precision mistake, which the dtype checks after the
            # battery name; a second derivative with a term missing is off by O(1)
            if not torch.allclose(got, want, rtol=1e-4, atol=1e-6):
                raise GradingError(
                    "LogSumExp's second derivative is wrong: backward, run with "
                    "create_graph=True and differentiated again (as gradgradcheck and a "
                    "Hessian-vector product do, lesson 04), does not give torch.logsumexp's; "
                    "part of what backward computes from has no graph back to x (computed in "
                    "forward or setup_context, or detached), so autograd misses how it moves "
                    "with x", f"got {got.detach()}, expected {want}",
                    mistake="LogSumExp/second-derivative-wrong")
            check_lse_grad_output_kept(function, x, dim, seed)


def _saved_all_traced(out) -> bool:
    """Did setup_context save only tensors autograd traces back to x (x or the output as
    given, not detached, not computed in forward or setup_context)? False where the saved
    tensors cannot be read from the output's grad_fn."""
    try:
        saved = out.grad_fn.saved_tensors
    except (AttributeError, RuntimeError):
        return False
    return bool(saved) and all(t is None or t.requires_grad for t in saved)


def _cut(function) -> str:
    """Where backward's source cuts the graph, quoted: its first line with .detach() or .data,
    or a general pointer when none is there."""
    try:
        lines = inspect.getsource(function.backward).splitlines()
    except (OSError, TypeError):
        lines = []
    for line in lines:
        if ".detach()" in line or ".data" in line or "no_grad" in line:
            return f" (`{line.strip()}`)"
    return " (a .detach(), .data or torch.no_grad() on what it computes its weights from?)"
