"""Rule 3 of the Function contract in memory: backward never builds a Jacobian as a matrix. On
the domain's small typical inputs a ``torch.diag`` of n entries, a triangle of ones or a one-hot
matrix is cheap and right; on inputs a hundred times wider it holds thousands of times their
bytes, where a backward of tensor operations holds a few tensors of their size.

The inputs are the typical ones grown: every dimension at once, until the widest reaches
``WIDE`` or as far as ``MOST`` entries of inputs and twice that of inputs and outputs allow (a product of two dimensions, as an outer
product's, grows only there); where the reference refuses that, or the inputs have one size,
every dimension of one size tiled to at least ``WIDE`` entries, one size at a time (so that
dimensions that must agree keep agreeing).
Backward runs once under ``TensorAccounting`` (every tensor torch creates) and ``tracemalloc``
(NumPy's arrays), and its peak of live bytes must stay within ``FACTOR`` times the bytes of the
floating inputs and outputs together."""

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


def _entries(values: dict) -> int:
    return sum(v.numel() for v in values.values()
               if isinstance(v, torch.Tensor) and v.is_floating_point())


def _every_size(values: dict, times: int) -> dict:
    """Every dimension of 2 or more entries, in every tensor input, tiled ``times`` times."""
    return {name: value.repeat(*[times if extent >= 2 else 1 for extent in value.shape])
            if isinstance(value, torch.Tensor) and value.dim() else value
            for name, value in values.items()}


def _output_entries(domain: Domain, values: dict) -> int | None:
    """Floating entries of the reference's outputs on ``values``; None where it refuses them."""
    try:
        with torch.no_grad():
            outputs, _ = reference_outputs(domain, on_cpu(values))
    except Exception:  # noqa: BLE001 - the reference refuses the shape
        return None
    return sum(o.numel() for o in outputs if o.is_floating_point()) if outputs else None


def _fits(domain: Domain, values: dict) -> bool:
    """Does the reference take ``values``, inputs within ``MOST`` entries and inputs and
    outputs together within twice that?"""
    if _entries(values) > MOST:
        return False
    outputs = _output_entries(domain, values)
    return outputs is not None and _entries(values) + outputs <= 2 * MOST


def grown(domain: Domain, values: dict) -> list[tuple[str, dict]]:
    """(how the inputs were grown, the inputs): every size of the floating inputs' dimensions
    (2 or more) at once, the widest to ``WIDE``, as far as ``MOST`` entries allow, outputs
    counted too; where the
    reference refuses that or there is one size, each size alone tiled to at least ``WIDE``."""
    sizes = sorted({extent for value in values.values()
                    if isinstance(value, torch.Tensor) and value.is_floating_point()
                    for extent in value.shape if 2 <= extent < WIDE})
    if len(sizes) > 1:
        most = 2  # the widest dimension reaches WIDE, within MOST entries
        while (_entries(_every_size(values, most + 1)) <= MOST
               and most * sizes[-1] < WIDE):
            most += 1
        fewest = 1  # bisect [2, most] for the most times whose inputs and outputs fit
        while fewest < most:
            times = (fewest + most + 1) // 2
            fewest, most = (times, most) if _fits(domain, _every_size(values, times)) \
                else (fewest, times - 1)
        if fewest >= 2:  # every dimension grows: one case is enough
            return [(f"every dimension tiled {fewest} times", _every_size(values, fewest))]
    cases = [(f"the dimensions of size {size} tiled",
              {name: _tile(value, size, math.ceil(WIDE / size))
               for name, value in values.items()}) for size in sizes]
    cases = [(how, wide) for how, wide in cases if _fits(domain, wide)]
    return cases


def _backward(function, inputs: dict, wanted: list):
    """Forward on ``inputs``, then (outputs, a callable running backward once)."""
    outputs = [o for o in floating_outputs(function.apply(*inputs.values())) if o.requires_grad]
    generator = torch.Generator().manual_seed(3)
    grad_outputs = [torch.randn(o.shape, generator=generator, dtype=o.dtype).to(o.device)
                    for o in outputs]
    return outputs, lambda: torch.autograd.grad(outputs, wanted, grad_outputs, allow_unused=True)


def _measured(function, inputs: dict, wanted: list) -> tuple[int, list, object]:
    """(peak bytes one backward held, the outputs, its largest tensor)."""
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
    return books.phase.peak + numpy_peak, outputs, books.phase.largest


def backward_peak(function, inputs: dict, budget) -> tuple[int, int, object] | None:
    """(peak bytes backward held, bytes of the floating inputs and outputs, its largest
    tensor), or None where forward or backward raised (the value checks name that). A peak
    over ``budget(bytes of the inputs and outputs)`` is measured again, the second kept: a
    process's first backward under the watch loads what it lazily needs (tens of MB that
    tracemalloc would count against the learner)."""
    wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
    if not wanted:
        return None
    try:
        peak, outputs, largest = _measured(function, inputs, wanted)
        if not outputs:
            return None
        sized = sum(t.numel() * t.element_size() for t in [*wanted, *outputs])
        if peak > budget(sized):
            peak, outputs, largest = _measured(function, inputs, wanted)
    except Exception:  # noqa: BLE001 - the value checks name an error, with its case
        return None
    return peak, sized, largest


def _budget(sized: int) -> int:
    return FACTOR * sized + SLACK


def check_linear_memory(domain: Domain, function, device: torch.device) -> None:
    """Backward's peak on each grown case within ``FACTOR`` times its inputs' and outputs'
    bytes; a failure names the shapes, the bytes and the largest tensor backward made."""
    name = domain.spec.name
    for how, values in grown(domain, domain.values(device)):
        measured = backward_peak(function, fresh_leaves(values), _budget)
        if measured is None:
            continue
        peak, sized, largest = measured
        budget = _budget(sized)
        if peak <= budget:
            continue
        made = (f": its largest tensor has shape {tuple(largest.shape)}, made by {largest.op}"
                if largest is not None else " (in NumPy arrays)")
        raise GradingError(
            f"{name}'s backward held {peak:,} bytes at once on {shapes_of(values)} ({how}), where its inputs and outputs hold {sized:,} and "
            f"memory linear in the sizes allows about {budget:,}{made}: a Jacobian built as a "
            f"matrix? {rule_reference('by-hand')}",
            mistake=f"{domain.spec.name}/builds-jacobian")
