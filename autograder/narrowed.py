"""Inputs of the shapes a contract's "any shape" covers and a domain's typical inputs miss:
dimensions of size 1, and empty ones, derived from the typical inputs themselves.

Every dimension of one size, in every tensor input at once, is cut to the new size (one size at
a time): dimensions that must agree (a matmul's inner one, a batch shared with a target) keep
agreeing, and the float64 reference on the CPU decides whether the op takes the result (an index
now out of range, a group count that no longer divides, a reduction over nothing that has no
value: the reference raises, and the case is left out)."""

import torch

from .comparison import floating_outputs, on_cpu, reference_outputs
from .domain import Domain


def shapes_of(values: dict) -> str:
    """'x of shape (1, 4), weight of shape (5, 4)': how a case names its tensor inputs."""
    return ", ".join(f"{name} of shape {tuple(value.shape)}" for name, value in values.items()
                     if isinstance(value, torch.Tensor))


def _cut(value, size: int, to: int):
    if not isinstance(value, torch.Tensor) or value.dim() == 0 or size not in value.shape:
        return value
    index = tuple(slice(0, to) if extent == size else slice(None) for extent in value.shape)
    return value[index].clone()


def _accepted(domain: Domain, values: dict, finite: bool) -> bool:
    """The reference takes ``values`` and gives at least one floating output; where ``finite``
    (a cut to size 1), all of them finite (a variance of one value may be nan: not a value to
    compare) and none empty (halves of a width cut to 1: a width the op does not take)."""
    try:
        with torch.no_grad():
            outputs, _ = reference_outputs(domain, on_cpu(values))
    except Exception:  # noqa: BLE001 - the reference refuses the shape: not in the domain
        return False
    return bool(outputs) and (not finite or all(
        o.numel() > 0 and bool(torch.isfinite(o).all()) for o in outputs))


def narrowed(domain: Domain, values: dict, to: int) -> list[dict]:
    """The inputs ``values`` with every dimension of one size cut to ``to`` (1 or 0), one size
    at a time, among the sizes of the floating inputs, where the reference takes them."""
    sizes = sorted({extent for value in values.values()
                    if isinstance(value, torch.Tensor) and value.is_floating_point()
                    for extent in value.shape if extent > max(to, 1)})
    cases = []
    for size in sizes:
        cut = {name: _cut(value, size, to) for name, value in values.items()}
        if _accepted(domain, cut, finite=to > 0):
            cases.append(cut)
    return cases


def floating_inputs(values: dict) -> list[str]:
    return [name for name, value in values.items()
            if isinstance(value, torch.Tensor) and value.is_floating_point()]


def differentiable_outputs(output) -> list:
    return [o for o in floating_outputs(output) if o.requires_grad]
