"""Lesson 09's Cumsum and IndexSelect in memory (Function contract, rule 3: backward never builds
a Jacobian as a matrix). Neither Jacobian depends on x, so a backward can build it whole: Cumsum's
is a triangle of ones along dim (n x n), IndexSelect's a one-hot matrix (k rows picked from n).
On an input whose n * n dwarfs n, such a matrix is hundreds of times the bytes of x and the
output, where the reversed scan or the index_add holds a few tensors of their size."""

import torch

from ...checks import Spec, make_inputs
from ...errors import GradingError
from ...function_contract import rule_reference
from ...memory import TensorAccounting

# the most backward may hold at once, in multiples of the bytes of the floating inputs and the
# output together: a correct backward holds two or three tensors of their size (a flip, a scan,
# a buffer, an index of x's rows)
FACTOR = 8


def check_backward_memory_linear(function, spec: Spec, values: dict, described: str) -> None:
    """Backward run once under ``TensorAccounting`` on ``values``: its peak of live tensors must
    stay within ``FACTOR`` times the bytes of the floating inputs and the output, whose shapes
    ``described`` names. An error is left to the value checks, which name it with its case."""
    inputs = make_inputs(values)
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        output = function.apply(*inputs.values())
        grad_output = torch.randn(output.shape, generator=torch.Generator().manual_seed(3),
                                  dtype=output.dtype).to(output.device)
        with TensorAccounting() as books:
            torch.autograd.grad(output, wanted, grad_output)
    except Exception:  # noqa: BLE001 - the value checks name an error, with its case
        return
    sized = sum(t.numel() * t.element_size() for t in wanted)
    sized += output.numel() * output.element_size()
    budget = FACTOR * sized
    peak, largest = books.phase.peak, books.phase.largest
    if peak <= budget:
        return
    raise GradingError(
        f"{spec.name}'s backward held {peak} bytes at once with {described} ({sized} bytes in "
        f"x and the output together), where memory linear in the sizes allows {budget}: its "
        f"largest tensor has shape {tuple(largest.shape)}, made by {largest.op} "
        + rule_reference("by-hand"),
        f"ops backward ran: {', '.join(dict.fromkeys(books.phase.ops))}",
        mistake=f"{spec.name}/builds-jacobian")
