"""Lesson 08: the probes of a backward that puts a reduced dim back, shared by the two exercises
that reduce along dim (LogSumExp and squared_norm): grad_output lined up with the wrong dim, and
dim guessed from shapes (grad_output reshaped in place is the generic watch's, untouched.py).
Each probe is named only where the learner's gradient is exactly the mistake's and not the
right one."""

from dataclasses import dataclass
from typing import Callable

import torch

from ...errors import GradingError


@dataclass(frozen=True)
class Reduction:
    """An exercise's op as the probes see it: ``call(x, dim)`` runs the learner's answer,
    ``draw(shape, seed)`` makes a float64 x, and ``local(x, dim, at)`` is the factor backward
    multiplies grad_output by, with every reduced tensor it uses put back at ``at`` (``dim``
    when right)."""
    name: str
    call: Callable
    draw: Callable
    local: Callable


def _grad(reduction: Reduction, shape, dim, seed):
    """(the learner's gradient of x, or None where it raised; x; the grad_output given)."""
    x = reduction.draw(shape, seed).requires_grad_()
    g = reduction.draw(shape[:dim] + shape[dim + 1:], seed + 1)
    try:
        got, = torch.autograd.grad(reduction.call(x, dim), x, g.clone())
    except Exception:  # noqa: BLE001 - the cases that follow report it with the learner's error
        return None, x.detach(), g
    return got, x.detach(), g


def _is(got, x, expected) -> bool:
    return (isinstance(got, torch.Tensor) and got.shape == x.shape
            and torch.allclose(got, expected))


def check_grad_output_unsqueezed(reduction: Reduction) -> None:
    """x of shape (4, 4), dim=1: a grad_output of shape (4,) broadcasts against x without an
    error, along the wrong dim, unless backward puts dim back first."""
    got, x, g = _grad(reduction, (4, 4), 1, 11)
    local = reduction.local(x, 1, 1)
    if not _is(got, x, g.unsqueeze(1) * local) and _is(got, x, g.unsqueeze(0) * local):
        raise GradingError(
            f"{reduction.name}'s backward lines grad_output up with the wrong dim: with x of "
            "shape (4, 4) and dim=1, grad_output has shape (4,), and broadcasting matches it "
            "with x's last dim, silently here and with an error when x is not square; put dim "
            "back in grad_output before it meets x",
            mistake=f"{reduction.name}/grad-output-not-unsqueezed")


def check_dim_from_shapes(reduction: Reduction) -> None:
    """dim guessed from shapes (the first place x and the output differ, else the last): right
    for x of shape (3, 5) with dim=0, but for (4, 4) with dim=0 the guess is the last dim."""
    got, x, g = _grad(reduction, (3, 5), 0, 21)
    if not _is(got, x, g.unsqueeze(0) * reduction.local(x, 0, 0)):
        return
    got, x, g = _grad(reduction, (4, 4), 0, 23)
    if _is(got, x, g.unsqueeze(-1) * reduction.local(x, 0, -1)):
        raise GradingError(
            f"{reduction.name}'s backward guesses dim from shapes: right for x of shape (3, 5) "
            "with dim=0, but for x of shape (4, 4) with dim=0 x and grad_output agree in their "
            "first size, so the guess is the last dim; keep dim itself on ctx (ctx.dim) in "
            "setup_context", mistake=f"{reduction.name}/dim-guessed-from-shapes")
