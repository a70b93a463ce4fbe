"""Rule 3 of the Function contract in memory: backward never builds a Jacobian as a matrix. On
the domain's small typical inputs a ``torch.diag`` of n entries, a triangle of ones or a one-hot
matrix is cheap and right; on inputs a hundred times wider it holds thousands of times their
bytes, where a backward of tensor operations holds a few tensors of their size.

The inputs are the typical ones grown: every dimension of one size tiled to at least ``WIDE``
entries (one size at a time, so that dimensions that must agree keep agreeing), where the
reference takes the result. Backward runs once under ``TensorAccounting`` (every tensor torch
creates) and ``tracemalloc`` (NumPy's arrays), and its peak of live bytes must stay within
``FACTOR`` times the bytes of the floating inputs and outputs together."""

import math
import tracemalloc

import torch

from .comparison import floating_outputs, fresh_leaves, on_cpu, reference_outputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .memory import TensorAccounting
from .narrowed import shapes_of

WIDE = 128  # entries a grown dimension has at least
MOST = 1 << 16  # entries of the floating inputs together, at most: a case stays quick
# the most backward may hold at once, in multiples of the bytes of its floating inputs and
# outputs: a backward of tensor operations holds a few tensors of their size
FACTOR = 8
SLACK = 1 << 18  # bytes of fixed overhead never counted against it: small tensors, and the
# Python objects tracemalloc sees beside NumPy's arrays (a loop over 128 columns makes many)


def _tile(value, size: int, times: int):
    if not isinstance(value, torch.Tensor) or size not in value.shape:
        return value
    for dim, extent in enumerate(value.shape):
        if extent == size:
            value = torch.cat([value] * times, dim=dim)
    return value


def grown(domain: Domain, values: dict) -> list[tuple[int, dict]]:
    """(the size grown, the inputs) for each size of the floating inputs' dimensions (2 or
    more) that the reference still takes once tiled to at least ``WIDE``, with at most
    ``MOST`` floating entries."""
    sizes = sorted({extent for value in values.values()
                    if isinstance(value, torch.Tensor) and value.is_floating_point()
                    for extent in value.shape if 2 <= extent < WIDE})
    cases = []
    for size in sizes:
        wide = {name: _tile(value, size, math.ceil(WIDE / size))
                for name, value in values.items()}
        try:
            with torch.no_grad():
                outputs, _ = reference_outputs(domain, on_cpu(wide))
        except Exception:  # noqa: BLE001 - the reference refuses the shape
            continue
        entries = sum(v.numel() for v in wide.values()
                      if isinstance(v, torch.Tensor) and v.is_floating_point())
        if outputs and entries <= MOST:
            cases.append((size, wide))
    return cases


def _backward(function, inputs: dict, wanted: list):
    """Forward on ``inputs``, then (outputs, a callable running backward once)."""
    outputs = [o for o in floating_outputs(function.apply(*inputs.values())) if o.requires_grad]
    generator = torch.Generator().manual_seed(3)
    grad_outputs = [torch.randn(o.shape, generator=generator, dtype=o.dtype).to(o.device)
                    for o in outputs]
    return outputs, lambda: torch.autograd.grad(outputs, wanted, grad_outputs, allow_unused=True)


def backward_peak(function, inputs: dict) -> tuple[int, int, object] | None:
    """(peak bytes backward held, bytes of the floating inputs and outputs, its largest
    tensor), or None where forward or backward raised (the value checks name that)."""
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    try:
        # once unmeasured: a first backward in a process loads what it lazily needs (tens of
        # MB that tracemalloc would count against the learner)
        outputs, backward = _backward(function, inputs, wanted)
        if not outputs or not wanted:
            return None
        backward()
        outputs, backward = _backward(function, inputs, wanted)
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        try:
            with TensorAccounting() as books:
                backward()
            numpy_peak = tracemalloc.get_traced_memory()[1]
        finally:
            if not tracing:
                tracemalloc.stop()
    except Exception:  # noqa: BLE001 - the value checks name an error, with its case
        return None
    sized = sum(t.numel() * t.element_size() for t in [*wanted, *outputs])
    return books.phase.peak + numpy_peak, sized, books.phase.largest


def check_linear_memory(domain: Domain, function, device: torch.device) -> None:
    """Backward's peak on each grown case within ``FACTOR`` times its inputs' and outputs'
    bytes; a failure names the shapes, the bytes and the largest tensor backward made."""
    name = domain.spec.name
    for size, values in grown(domain, domain.values(device)):
        measured = backward_peak(function, fresh_leaves(values))
        if measured is None:
            continue
        peak, sized, largest = measured
        budget = FACTOR * sized + SLACK
        if peak <= budget:
            continue
        made = (f": its largest tensor has shape {tuple(largest.shape)}, made by {largest.op}"
                if largest is not None else " (in NumPy arrays)")
        raise GradingError(
            f"{name}'s backward held {peak:,} bytes at once on {shapes_of(values)} (the "
            f"dimensions of size {size} tiled), where its inputs and outputs hold {sized:,} and "
            f"memory linear in the sizes allows about {budget:,}{made}: a Jacobian built as a "
            f"matrix? {rule_reference('by-hand')}",
            mistake=f"{domain.spec.name}/builds-jacobian")
