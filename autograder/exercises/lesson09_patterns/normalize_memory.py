"""Lesson 09's Normalize in memory: what forward saves (the output and at most one number per
row, never x: the exercise's own bound) and what backward allocates (a few tensors of x's size,
never a d x d Jacobian per row: rule 3 of the Function contract)."""

import torch

from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from ...probes import AllocationLog
from .pattern_cases import _shape


def check_saves_output_and_norms(forward, x: torch.Tensor) -> None:
    """The output, and at most one number per row."""
    rows = x.numel() // max(x.shape[-1], 1) if x.dim() else 1
    if not any(s.role == "output" for s in forward.saved):
        raise GradingError("Normalize did not save its output: the contract's bound counts as "
                           "free only what a next layer y @ W already keeps (y), and one number "
                           "per row beyond it; which tensor of x's size does the projection "
                           "read?")
    for saved in forward.saved:
        if saved.role.startswith("input"):
            raise GradingError("Normalize saves its input x, a full-size tensor the output "
                               "already carries: x = y * norm where the norm is at least eps; "
                               "what of x's size, and what per row, does backward need?",
                               mistake="Normalize/saves-input")
        if (saved.role == "intermediate" and saved.dtype != x.dtype
                and saved.dtype.is_floating_point and saved.tensor.numel() <= rows):
            raise GradingError(f"Normalize saves its number per row in {str(saved.dtype)[6:]} "
                               f"for x in {str(x.dtype)[6:]}: the contract's one number per row "
                               "is in x's dtype, the dtype F.normalize computes the norm in and "
                               "places each row by; which of your lines changed its dtype?",
                               mistake="Normalize/row-number-in-another-dtype")
        if saved.role == "intermediate" and saved.tensor.numel() > rows:
            raise GradingError(f"Normalize saves an intermediate of shape {_shape(saved.shape)}: "
                               "beyond what y @ W keeps, the contract allows one "
                               f"number per row ({rows} numbers)")
    budget = (x.numel() + rows) * x.element_size()
    if forward.saved_bytes > budget:
        kept = ", ".join(f"{_role(saved)} of shape {_shape(saved.shape)} in "
                         f"{str(saved.dtype)[6:]} ({saved.nbytes} bytes)"
                         for saved in forward.saved)
        raise GradingError(f"Normalize saves {forward.saved_bytes} bytes where the contract "
                           f"allows {budget}, the output ({x.numel() * x.element_size()}) and "
                           f"one number per row in x's dtype ({rows * x.element_size()}): it "
                           f"saves {kept}; which of them can backward rebuild from another, or "
                           "from ctx.eps?", mistake="Normalize/saves-more-than-a-number-per-row")


def _role(saved) -> str:
    """``the output`` or ``a tensor``: what a saved tensor is, in a hint."""
    return "the output" if saved.role == "output" else "a tensor"


def check_closed_form(function, device, eps) -> None:
    """Backward allocates a few tensors of x's size, never a d x d Jacobian per row (x of shape
    (2, 64) normalised with ``eps``)."""
    x = sample((2, 64), device, seed=4).requires_grad_()
    y = function.apply(x, eps)
    with AllocationLog() as log:
        torch.autograd.grad(y, x, torch.ones_like(y))
    budget = 12 * x.numel() * x.element_size()
    if log.bytes > budget:
        raise GradingError(f"Normalize's backward allocated {log.bytes} bytes for x of shape "
                           f"(2, 64) ({x.numel() * x.element_size()} bytes): it builds each "
                           "row's 64 x 64 Jacobian: what does the Jacobian of a row, applied to "
                           "grad_output, reduce to without forming it? "
                           + rule_reference("by-hand"),
                           f"ops that allocated: {', '.join(log.ops)}",
                           mistake="Normalize/builds-jacobian")
