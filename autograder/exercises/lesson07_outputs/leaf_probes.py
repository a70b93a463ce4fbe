"""Lesson 07's in-place Functions on a leaf that requires grad: PyTorch's own error with grad
on (which ctx.mark_dirty triggers, after forward ran), and under torch.no_grad() the leaf
written, as the built-in in-place ops write it."""

import torch
from torch.overrides import TorchFunctionMode

from ...checks import Spec
from ...errors import GradingError
from .quoting import _quoted

LEAF_ERROR = "a leaf Variable that requires grad"


def check_leaf_error(function, spec: Spec, device) -> None:
    """A leaf that requires grad: PyTorch's own error, which mark_dirty triggers; and under
    torch.no_grad() no error, the leaf written."""
    _check_leaf_refused(function, spec, device)
    check_leaf_under_no_grad(function, spec, device)


def check_leaf_under_no_grad(function, spec: Spec, device) -> None:
    """Under torch.no_grad() a leaf that requires grad is written, as by the built-in in-place
    op and any Function that calls ctx.mark_dirty: a refusal there is the learner's own."""
    builtin = f"torch.{spec.reference.__name__}_"
    leaf = torch.tensor([-1.0, 2.0, 0.5], dtype=torch.float64, device=device, requires_grad=True)
    expected = spec.reference(leaf.detach())
    try:
        with torch.no_grad():
            function.apply(leaf)
    except NotImplementedError:
        raise
    except Exception as error:  # its own guard, whatever the text
        raise GradingError(
            f"{spec.name} refused a leaf that requires grad under torch.no_grad() "
            f"({_quoted(error)}): there {builtin} writes the leaf, and so does a Function that "
            "calls ctx.mark_dirty(x) (PyTorch refuses only a write autograd records, and only "
            "after forward ran): the refusal is your forward's own; let PyTorch decide",
            str(error), mistake=f"{spec.name}/own-leaf-guard") from error
    if not torch.equal(leaf.detach(), expected):
        raise GradingError(
            f"{spec.name} under torch.no_grad() left a leaf that requires grad unwritten: "
            f"there {builtin} writes it, and so does a Function that calls ctx.mark_dirty(x)",
            mistake=f"{spec.name}/own-leaf-guard")


def _check_leaf_refused(function, spec: Spec, device) -> None:
    """A leaf that requires grad, with grad on: PyTorch's own error."""
    leaf = torch.tensor([-1.0, 2.0, 0.5], dtype=torch.float64, device=device, requires_grad=True)
    try:
        function.apply(leaf)
    except NotImplementedError:
        raise
    except Exception as error:  # its own RuntimeError, ValueError, ...: quoted
        if isinstance(error, RuntimeError) and LEAF_ERROR in str(error):
            return
        raise GradingError(f"{spec.name} raised its own error for a leaf that requires grad "
                           f"({_quoted(error)}): let PyTorch raise it; ctx.mark_dirty(x) does",
                           str(error)) from error
    raise GradingError(f"{spec.name} overwrote a leaf that requires grad without an error: call "
                       "ctx.mark_dirty(x), and PyTorch raises \"a leaf Variable that requires "
                       "grad has been used in an in-place operation\"")


class _GradModeLog(TorchFunctionMode):
    """The ops called with autograd on and an argument that requires grad."""

    def __init__(self):
        super().__init__()
        self.recorded: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        if (torch.is_grad_enabled() and not name.startswith("_") and any(
                isinstance(a, torch.Tensor) and a.requires_grad for a in args)):
            self.recorded.append(name)
        return func(*args, **(kwargs or {}))


def check_forward_grad_mode(function, spec: Spec, device) -> None:
    """Forward runs with autograd off, as PyTorch calls it: an op under torch.enable_grad()
    there is recorded by autograd (abs_ with a copy of x saved for its own backward), and a
    leaf is refused under torch.no_grad() too. Any other error is left to the checks after."""
    x = torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64, device=device,
                     requires_grad=True).clone()
    try:
        with _GradModeLog() as log:
            function.apply(x)
    except Exception as error:  # named, with its case, by the checks that follow
        if isinstance(error, NotImplementedError) and not str(error):
            raise  # the stub's bare NotImplementedError: not written yet
        return
    if log.recorded:
        raise GradingError(
            f"{spec.name}'s forward runs {log.recorded[0]} with autograd on (torch.enable_grad() "
            "inside forward?): autograd records that op as a graph of its own (torch.abs_'s "
            "keeps a copy of x for it), and a leaf is then refused under torch.no_grad() "
            f"too, where torch.{spec.reference.__name__}_ writes it. Run forward's ops as PyTorch "
            "calls forward, with autograd off, and let ctx.mark_dirty raise the leaf error",
            mistake=f"{spec.name}/forward-under-enable-grad")
