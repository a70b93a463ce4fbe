"""Lesson 04: rule 3 of the Function contract (backward by hand, memory linear in the sizes).
Lesson 00's memory check sees every torch allocation; a Jacobian built in NumPy is invisible to
it, so this one also reads NumPy's allocations (NumPy reports them to tracemalloc)."""

import tracemalloc

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError
from ...function_contract import rule_reference
from ...memory import TensorAccounting

# the most backward may hold at once, in multiples of the bytes of its inputs and output
# together (a correct backward holds a few products of their size; a Jacobian as many times
# that as one input has entries), plus room for the Python objects a backward makes
FACTOR = 4
SLACK = 256 * 1024


def check_backward_memory_linear(function, spec: Spec, values: dict, shapes: str) -> None:
    """Backward run twice, the second time under ``TensorAccounting`` and tracemalloc, on
    inputs of a thousand entries or more: its peak of live torch tensors, and the peak of what NumPy allocates, must
    stay linear in the sizes; a larger peak is a Jacobian built as a matrix."""
    inputs = make_inputs(values)
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        output = function.apply(*inputs.values())
        grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(3),
                                  dtype=output.dtype).to(output.device)
        # once untraced first: what a first run imports or caches is not backward's memory
        with TensorAccounting():
            torch.autograd.grad(output, wanted, grad_output, retain_graph=True,
                                allow_unused=True)
        started = tracemalloc.is_tracing()
        if not started:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        try:
            with TensorAccounting() as books:
                torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
            numpy_peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            if not started:
                tracemalloc.stop()
    except Exception:  # noqa: BLE001 - an error is the value checks' to name, with its case
        return
    entries = sum(t.numel() for t in wanted) + output.numel()
    budget = FACTOR * entries * output.element_size()
    peak, largest = books.phase.peak, books.phase.largest
    if peak > budget:
        shape = tuple(largest.shape)
        where = f"its largest tensor of shape {shape} ({largest.op})"
        held = peak
    elif numpy_peak > budget + SLACK:
        where, held = "in NumPy arrays", numpy_peak
    else:
        return
    raise GradingError(
        f"{spec.name}'s backward builds a Jacobian as a matrix: with {shapes} ({entries} entries "
        f"in the inputs and output together) it holds {held} bytes at once, {where}, where the "
        f"contract allows memory linear in the sizes (about {budget} bytes here); write one "
        "entry of the Jacobian, do the sum over the outputs on paper, and compute only what is "
        f"left. {rule_reference('by-hand')}",
        mistake=f"{spec.name}/builds-jacobian")
