"""Lesson 05: a backward whose incoming gradient is all zero (a loss that masks the block out,
``(out * 0).sum().backward()``). A plain run still leaves every parameter used inside the block
a zero ``.grad``, and so must a checkpoint, which promises the plain run's results: an optimizer
skips a parameter whose ``.grad`` is None (no weight decay, no momentum step), so a backward that
skips the recomputation when nothing flows back changes training."""

import torch

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .checkpoint_blocks import WIDTH, clear_grads, mlp_block, parameters_of

ZERO = "(output * 0).sum().backward()"


def _check_zeros(who: str, where: str, leaves: dict, mistake: str) -> None:
    """Each leaf (an input or a parameter, which requires grad) ends with a zero .grad."""
    for name, leaf in leaves.items():
        if leaf.grad is None:
            raise GradingError(
                f"{who} skipped the recomputation when the incoming gradient is all zero "
                f"({where}): {name}'s .grad is None, where the plain run leaves zeros; a "
                "checkpoint promises the plain run's results, and an optimizer skips a "
                "parameter whose .grad is None (no weight decay, no momentum step)",
                mistake=mistake)
        diagnose_gradient(f"{name} after {where}", leaf.grad, torch.zeros_like(leaf))


def check_checkpoint_zero_gradient(function, device) -> None:
    """run_fn a Linear-Tanh-Linear block, in float64 then float32, x requiring grad, and a loss
    that multiplies the output by zero."""
    for dtype in (torch.float64, torch.float32):
        block = mlp_block(device, seed=40).to(dtype)
        parameters = parameters_of(block)
        clear_grads(parameters)
        x = sample((3, WIDTH), device, seed=41, dtype=dtype).requires_grad_()
        where = f"run_fn a Linear-Tanh-Linear block in {dtype}, then {ZERO}"
        with case(f"{where}, x of shape (3, 5)"):
            (function.apply(block, x) * 0).sum().backward()
            _check_zeros("CheckpointFunction's backward", where,
                         {"x": x, **{f"parameter {n}": p for n, p in parameters.items()}},
                         "CheckpointFunction/skips-zero-gradient")


def check_coupling_zero_gradient(function, values: dict, parameters: dict) -> None:
    """A loss that multiplies both outputs by zero: x1, x2 and the parameters of f and g end
    with zero gradients."""
    clear_grads(parameters)
    x1, x2 = (values[n].detach().clone().requires_grad_() for n in ("x1", "x2"))
    where = f"x1 and x2 in {x1.dtype}, then (y1 * 0 + y2 * 0).sum().backward()"
    with case(f"{where}, of shape {tuple(x1.shape)}"):
        y1, y2 = function.apply(x1, x2, values["f"], values["g"])
        (y1 * 0 + y2 * 0).sum().backward()
        _check_zeros("ReversibleCoupling's backward", where,
                     {"x1": x1, "x2": x2, **{f"parameter {n}": p for n, p in parameters.items()}},
                     "ReversibleCoupling/skips-zero-gradient")
