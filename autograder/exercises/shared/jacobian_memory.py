"""Backward's memory is linear in the sizes (Function contract, rule 3), on inputs whose
Jacobian dwarfs them. A Jacobian built as a matrix has an entry for every pair of an output
entry and an input entry, so what it allocates grows as the product of the sizes: at a few
hundred entries it is already tens of times the inputs and the output together, where the sum
over i done on paper allocates a few tensors of their sizes (lessons 00 and 09)."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError
from ...function_contract import rule_reference
from ...memory import TensorAccounting

# the most backward may hold at once, in multiples of the bytes of its inputs and output
# together (a correct backward holds one or two products of their size; a Jacobian holds about
# as many times that as one input has entries)
FACTOR = 4


def _shape(shape) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else str(tuple(shape))


def check_backward_memory_linear(function, spec: Spec, values: dict, shapes: str,
                                 factor: int = FACTOR) -> None:
    """Backward run once under ``TensorAccounting`` on ``values`` (inputs the Jacobian of which
    has hundreds of times their entries): its peak of live tensors must stay within ``factor``
    times the bytes of the inputs and output; a larger peak is a Jacobian, named with its
    largest tensor. An error is left to the value checks, which name it with its case."""
    inputs = make_inputs(values)
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        output = function.apply(*inputs.values())
        grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(3),
                                  dtype=output.dtype).to(output.device)
        with TensorAccounting() as books:
            torch.autograd.grad(output, wanted, grad_output, allow_unused=True)
    except Exception:  # noqa: BLE001 - an error is the value checks' to name, with its case
        return
    entries = sum(t.numel() for t in wanted) + output.numel()
    budget = factor * entries * output.element_size()
    peak, largest = books.phase.peak, books.phase.largest
    if peak <= budget:
        return
    raise GradingError(
        f"{spec.name}'s backward builds a Jacobian as a matrix: with {shapes} ({entries} entries "
        f"in the inputs and output together) it holds {peak} bytes at once, its largest tensor "
        f"of shape {_shape(largest.shape)} ({largest.op}), where the contract allows memory "
        f"linear in the sizes ({budget} bytes here); write one entry of the Jacobian, do the "
        "sum over the outputs on paper, and compute only what is left "
        + rule_reference("by-hand"),
        f"ops backward ran: {', '.join(dict.fromkeys(books.phase.ops))}",
        mistake=f"{spec.name}/builds-jacobian")
