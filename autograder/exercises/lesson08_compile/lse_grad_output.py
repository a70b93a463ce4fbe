"""Lesson 08: LogSumExp's backward keeps grad_output in the graph: its gradient for x,
computed with create_graph=True, differentiated with respect to grad_output (gradgradcheck's
input 1; a Hessian-vector product differentiates along it too)."""

import inspect

import torch

from ...errors import GradingError
from ...exercise import sample


def check_lse_grad_output_kept(function, x: torch.Tensor, dim: int, seed: int = 0) -> None:
    """d<backward(v), u>/dv against torch.logsumexp's, for a grad_output v that requires grad.
    Errors that backward raises are left to the checks that call it without this."""
    x = x.detach().clone().requires_grad_()
    with torch.no_grad():
        out_shape = torch.logsumexp(x, dim).shape
    v = sample(out_shape, x.device, seed=70 + seed, dtype=x.dtype).requires_grad_()
    u = sample(x.shape, x.device, seed=80 + seed, dtype=x.dtype)
    try:
        first, = torch.autograd.grad(function.apply(x, dim), x, v, create_graph=True)
        got = (torch.autograd.grad(first, v, u, allow_unused=True)[0]
               if first.requires_grad else None)
    except Exception:  # noqa: BLE001 - the callers' own checks run backward and name it
        return
    reference = x.detach().clone().requires_grad_()
    w = v.detach().clone().requires_grad_()
    want, = torch.autograd.grad(torch.autograd.grad(
        torch.logsumexp(reference, dim), reference, w, create_graph=True)[0], w, u)
    if got is not None and torch.allclose(got, want, rtol=1e-4, atol=1e-6):
        return
    seen = ("has no graph back to grad_output, so autograd takes grad_output for a constant"
            if got is None else "moves with grad_output otherwise than torch.logsumexp's does")
    raise GradingError(
        "LogSumExp's backward cuts grad_output from the graph: with a grad_output that "
        "requires grad (gradgradcheck's input 1, the vector of a Hessian-vector product), its "
        f"gradient for x, run with create_graph=True, {seen}{_cut(function)}; the derivative "
        "with respect to grad_output is lost",
        f"x of shape {tuple(x.shape)}, dim={dim}: derivative with respect to grad_output "
        f"{'None' if got is None else got.detach()}, expected {want}",
        mistake="LogSumExp/backward-cuts-grad-output")


def _cut(function) -> str:
    """backward's first line that reads grad_output through .detach() or .data, or its
    torch.no_grad() block, quoted; empty when none is there."""
    try:
        lines = inspect.getsource(function.backward).splitlines()
        name = list(inspect.signature(function.backward).parameters)[1]
    except (OSError, TypeError, ValueError, IndexError):
        return ""
    for line in lines:
        if name in line and (".detach()" in line or ".data" in line):
            return f" (`{line.strip()}`)"
    for line in lines:
        if "no_grad" in line:
            return f" (`{line.strip()}`)"
    return ""
