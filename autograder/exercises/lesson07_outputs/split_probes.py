"""Probes for SplitHalves's backward with one output unused: fresh memory made to hold NaN, so
that a half left unwritten fails the same way every run, and named when it does."""

import warnings
from contextlib import contextmanager

import torch

from ...checks import check_no_ctx_tensors
from ...errors import GradingError
from ...function_contract import rule_reference
from ...probes import AllocationLog, _shares_memory


class DtypeAllocationLog(AllocationLog):
    """AllocationLog that also keeps each new tensor's dtype, in the order of ``ops``."""

    def __init__(self):
        super().__init__()
        self.dtypes: list[torch.dtype] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        for returned, value in zip(func._schema.returns, results):
            if isinstance(value, torch.Tensor) and returned.alias_info is None:
                self.bytes += value.numel() * value.element_size()
                self.ops.append(func.overloadpacket.__name__)
                self.dtypes.append(value.dtype)
        return out


def check_wider_dtype(log: DtypeAllocationLog, x: torch.Tensor, spent: str) -> None:
    """Over budget with a floating-point tensor wider than x's dtype among the allocations: a
    gradient built in float64 for a float32 x, which autograd then casts back (a copy)."""
    wide = [(op, dtype) for op, dtype in zip(log.ops, log.dtypes)
            if dtype.is_floating_point and dtype.itemsize > x.element_size()]
    if wide:
        op, dtype = wide[0]
        raise GradingError(
            f"SplitHalves's backward builds its gradient in {str(dtype)[6:]} for a "
            f"{str(x.dtype)[6:]} x ({op}: {dtype.itemsize} bytes per element where x has "
            f"{x.element_size()}), and autograd casts it back to {str(x.dtype)[6:]}, a copy "
            f"besides ({spent}): build the gradient in the dtype of the gradients backward "
            "receives", mistake="SplitHalves/gradient-in-wider-dtype")


def halves(x: torch.Tensor):
    h = x.shape[-1] // 2
    return x[..., :h], x[..., h:]


@contextmanager
def fresh_memory_nan():
    """Memory that torch.empty and its kin return holds NaN (torch's deterministic mode, warn
    only, its warnings silenced): a half left unwritten then fails the same way every run."""
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def check_unused_half_zero(got, expected: torch.Tensor, used: int, which: str) -> None:
    """The used half right and the unused one not 0: named, and (NaN there) blamed on memory
    backward allocated and left unwritten."""
    if (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(halves(got)[used], halves(expected)[used])
            and not torch.equal(halves(got)[1 - used], halves(expected)[1 - used])):
        unwritten = bool(halves(got)[1 - used].isnan().any())  # what fresh_memory_nan left
        raise GradingError(
            f"SplitHalves's gradient is right on the half of x the used output came from, and "
            f"not 0 on the {which} half, whose output is unused (no loss depends on it)" + (
                ": there it holds NaN, which is what this check makes fresh memory hold; what "
                "does the memory your backward allocates hold before you write into it?"
                if unwritten else ": what does the gradient of an unused output contribute?"),
            mistake="SplitHalves/unused-half-not-zero")


def both_allocated(log: DtypeAllocationLog, x: torch.Tensor) -> None:
    """With both gradients present, backward allocates one tensor too: the gradient."""
    budget = x.numel() * x.element_size()
    if log.bytes <= 1.25 * budget or not x.numel():  # an empty x: no budget to measure
        return
    spent = f"{log.bytes} bytes for a gradient of {budget} (ops: {', '.join(log.ops)})"
    check_wider_dtype(log, x, spent)
    if log.ops.count("constant_pad_nd") >= 2:  # each half padded to x's full width
        summed = ": two zero-padded halves plus their sum" if "add" in log.ops else ""
        raise GradingError(
            f"SplitHalves's backward padded each half with zeros to x's full width{summed} "
            f"({spent}); one tensor of x's shape is the least, with both halves as with one: "
            "how can both land in it?", mistake="SplitHalves/pads-both-halves")
    raise GradingError(f"SplitHalves's backward allocated {spent}: one tensor of x's shape is "
                       "the least; which of these is not the gradient itself?",
                       mistake="SplitHalves/allocates-beyond-gradient")


def check_saves_nothing(outputs, x: torch.Tensor) -> None:
    """Forward saves no tensor: not x (reading it in backward raises once the model writes into
    x in place), not zeros for a missing half (the zeros backward must not make, kept alive as
    long as the graph), nothing else."""
    grad_fn = next((o.grad_fn for o in outputs if o.grad_fn is not None), None)
    saved = [t for t in getattr(grad_fn, "saved_tensors", ()) or () if isinstance(t, torch.Tensor)]
    for tensor in saved:
        if _shares_memory(tensor, x):
            raise GradingError(
                f"SplitHalves's forward saves x (or a view of it, shape {tuple(tensor.shape)}), "
                "where the contract asks it to keep no tensor alive until backward: once the "
                "model writes into x in place (x.mul_(2) after the call), reading it in "
                "backward raises \"one of the variables needed for gradient computation has "
                "been modified by an inplace operation\", though the gradient of a split never "
                "depends on x's values. What does backward need of x, and does what it "
                "receives not hold it already?",
                mistake="SplitHalves/saves-x")
        zeros = bool((tensor == 0).all()) and tensor.numel() > 0
        raise GradingError(
            f"SplitHalves's forward saves a{' zero' if zeros else ''} tensor of shape "
            f"{tuple(tensor.shape)} ({tensor.numel() * tensor.element_size()} bytes, for x "
            f"of {x.numel() * x.element_size()}), where the contract asks it to keep no tensor "
            "alive until backward: saved in forward, it lives as long as the graph. How can "
            "backward build the one gradient tensor from the gradients it receives alone?",
            mistake="SplitHalves/zeros-saved-in-forward" if zeros else "SplitHalves/saves-a-tensor")


def check_split_ctx_tensors(spec, forward) -> None:
    """No tensor as a ctx attribute. x kept there (\"only for its shape\") is not fixed by
    moving it into save_for_backward, which the contract also rules out: the message asks what
    backward needs instead. A differentiable output kept on ctx keeps the shared message, which
    names the reference cycle."""
    outputs = forward.output if isinstance(forward.output, tuple) else (forward.output,)
    if not forward.ctx_tensor_attributes or any(
            value is output for value in forward.ctx_attributes.values() for output in outputs):
        check_no_ctx_tensors(spec, forward)
        return
    where = ", ".join(forward.ctx_tensor_attributes)
    raise GradingError(
        f"SplitHalves stores a tensor as {where}, out of autograd's sight (no check of in-place "
        "changes, no saved-tensor hooks), and the contract asks forward to keep no tensor at "
        "all, so save_for_backward is no place for it either: what does backward need of x, "
        "and does what it receives not tell it already? A tensor is never a ctx attribute "
        f"{rule_reference('ctx')}", mistake="SplitHalves/tensor-on-ctx")
