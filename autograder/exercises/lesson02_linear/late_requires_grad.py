"""Lesson 02: an input that starts requiring grad after forward ran. ctx.needs_input_grad was
fixed when forward ran, so its entry for that input stays False and backward must do what it
does when the input never requires grad; a backward that asks the saved tensor's
requires_grad (``if x.requires_grad:``) computes a gradient nobody asked for, which the
engine then drops, so only the work and the returned value show it."""

import itertools

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, make_inputs
from ...errors import GradingError


class _Ops(TorchDispatchMode):
    """The names of the ops run inside the block, views aside."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view:
            self.ops.append(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def _backward_seen(function, spec: Spec, values: dict, wanted: set, late: str | None):
    """(the ops backward ran, the gradients it returned) with ``wanted`` requiring grad when
    forward runs and ``late`` set to require grad between forward and backward."""
    seen = {}

    def backward(ctx, *grad_outputs):
        with _Ops() as mode:
            grads = function.backward(ctx, *grad_outputs)
        seen["ops"], seen["grads"] = mode.ops, grads if isinstance(grads, tuple) else (grads,)
        return grads

    watched = type(function.__name__, (function,), {"backward": staticmethod(backward)})
    inputs = make_inputs(values, requires_grad=wanted)
    output = watched.apply(*inputs.values())  # no saved-tensor hooks: they save detached copies
    if late is not None:
        inputs[late].requires_grad_(True)
    torch.autograd.grad(output, [inputs[n] for n in sorted(wanted)], torch.ones_like(output))
    return seen["ops"], seen["grads"]


def check_requires_grad_after_forward(function, spec: Spec, values: dict) -> None:
    """Each input frozen when forward runs and set to require grad before backward, for every
    non-empty subset of the others requiring grad (bias passed, then None where the spec
    takes one): backward returns None for it and runs the ops it runs when that input is never
    set to require grad. Run after the needs_input_grad checks, so only a backward that reads
    ``requires_grad`` at backward time reaches it."""
    configurations = [values]
    if "bias" in values:
        configurations.append({n: v for n, v in values.items() if n != "bias"})
    for config in configurations:
        names = list(config)
        for late in names:
            others = [n for n in names if n != late]
            for count in range(1, len(others) + 1):
                for wanted in itertools.combinations(others, count):
                    _compare(function, spec, config, set(wanted), late)


def _compare(function, spec: Spec, values: dict, wanted: set, late: str) -> None:
    ops, _ = _backward_seen(function, spec, values, wanted, None)
    late_ops, grads = _backward_seen(function, spec, values, wanted, late)
    index = list(values).index(late)
    returned = index < len(grads) and grads[index] is not None
    if returned or late_ops != ops:
        did = (f"returned a gradient for {late}" if returned else
               f"ran {len(late_ops)} ops instead of {len(ops)}")
        only = " and ".join(n for n in values if n in wanted)
        raise GradingError(
            f"{spec.name}.backward read {late}.requires_grad at backward time instead of "
            f"ctx.needs_input_grad[{index}]: with only {only} requiring grad when forward ran "
            f"and {late}.requires_grad_() called after forward, it {did}, work for a gradient "
            f"nobody asked for. ctx.needs_input_grad records what was true when forward ran; "
            "a tensor's requires_grad is what is true now",
            mistake=f"{spec.name}/reads-requires-grad")
