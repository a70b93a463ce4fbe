"""Rule 1 on dimensions of size 1, from an error the learner's code raised: the same call, each
dimension of size 1 made 2, runs, so the error is the size-1 case's. Called where forward or
backward raised (``autograder.checks``), so it needs nothing of the comparison machinery."""

import torch

from .errors import GradingError
from .function_contract import rule_reference


SIZE_ONE_MISTAKE = "/fails-on-size-one"


def _grown(value, dims=None):
    """``value`` with each dimension of size 1 (of ``dims``, or every one) made 2 by repeating
    its entry; anything else as it is."""
    if not isinstance(value, torch.Tensor) or value.dim() == 0:
        return value
    grown = value.detach()
    for dim, size in enumerate(value.shape):
        if size == 1 and (dims is None or dim in dims):
            grown = torch.cat([grown, grown], dim=dim)
    return grown.clone().requires_grad_(value.requires_grad and value.is_floating_point())


def _batch_dims(tensors: list) -> set | None:
    """Where integer tensors come in (a class target, an index): the dimensions that may be
    grown, those each integer tensor has, at the same position, with size 1 (a target's rows,
    the logits' rows too), None where an integer tensor is 0-d. An integer's value indexes a
    dimension past its own (a class), never one of these: growing a dimension it may index (the
    classes of logits of shape (N, 1), where target 1 is out of range) would hide that error."""
    integers = [value for value in tensors if not value.is_floating_point()]
    if not integers:
        return set(range(max(value.dim() for value in tensors)))
    if any(value.dim() == 0 for value in integers):
        return None
    return {dim for dim in range(min(value.dim() for value in integers))
            if all(value.shape[dim] == 1 for value in integers)}


def raises_only_at_size_one(spec, phase: str, error: BaseException, function, inputs: dict,
                            grad_output=None) -> GradingError | None:
    """A learner's error with no mistake of its own proven, raised on inputs where a dimension
    of a floating-point tensor has size 1 (none 0-d or empty): the same call, each such
    dimension made 2 (its entry repeated), run forward and backward again. Where integer
    tensors come in, only the dimensions they share at size 1 are grown, theirs too
    (``_batch_dims``: a target's rows with the logits'). Where that runs, the error is the
    size-1 case's (``<Exercise>/fails-on-size-one``): the hint says what was seen, both shapes
    and the learner's own words. None where nothing proves it (no dimension of size 1 to grow,
    no Function to call again, or the grown call raises too)."""
    tensors = [value for value in inputs.values() if isinstance(value, torch.Tensor)]
    # a 0-d or empty input is the empty-and-0-d check's case
    if function is None or any(value.dim() == 0 or value.numel() == 0 for value in tensors):
        return None
    dims = _batch_dims(tensors)
    ones = {name: value for name, value in inputs.items() if isinstance(value, torch.Tensor)
            and value.is_floating_point() and dims
            and any(value.shape[dim] == 1 for dim in dims if dim < value.dim())}
    if not ones:
        return None
    grown = {name: _grown(value, dims) if name in ones or (
        isinstance(value, torch.Tensor) and not value.is_floating_point()) else value
             for name, value in inputs.items()}
    try:
        with torch.enable_grad():
            output = function.apply(*grown.values())
            if phase == "backward":
                outputs = output if isinstance(output, tuple) else (output,)
                first = outputs[0]
                given = _grown(grad_output) if isinstance(grad_output, torch.Tensor) else None
                if given is None or given.shape != first.shape:
                    given = torch.ones_like(first)
                wanted = [value for value in grown.values()
                          if isinstance(value, torch.Tensor) and value.requires_grad]
                if wanted and first.requires_grad:
                    torch.autograd.grad(first, wanted, given.detach(), allow_unused=True)
    except Exception:  # noqa: BLE001 (the grown call raises too: nothing is proven)
        return None
    said = (str(error).strip().splitlines() or [""])[0]
    shown = [name for name, value in inputs.items() if name in ones or (
        isinstance(value, torch.Tensor) and grown[name].shape != value.shape)]  # a target too
    was = ", ".join(f"{name} of shape {tuple(inputs[name].shape)}" for name in shown)
    now = ", ".join(f"{name} of shape {tuple(grown[name].shape)}" for name in shown)
    return GradingError(
        f"{spec.name}.{phase} raised {type(error).__name__} where a dimension has size 1 "
        f"({was}), and the same call runs with that dimension of size 2 ({now}): which step "
        "drops or assumes more than one entry of it (a .squeeze() without a dim?) "
        f"{rule_reference('values')}. What it raised: {said}",
        str(error), mistake=f"{spec.name}{SIZE_ONE_MISTAKE}")
