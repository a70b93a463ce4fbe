"""Bilinear's backward with one input requiring grad: a read of an input that no wanted gradient
depends on is named with the gradient nobody asked for that did it (the tensors made from the
read, followed op by op, end in that gradient's shape)."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, case, make_inputs, run_forward
from ...errors import GradingError
from ..shared.backward_reads import backward_reading, raise_unneeded_read

# the inputs each gradient's formula reads (besides grad_output)
NEEDS = {"x1": {"weight", "x2"}, "x2": {"x1", "weight"}, "weight": {"x1", "x2"}, "bias": set()}


class _Tainted(TorchDispatchMode):
    """The shapes of every tensor computed, op after op, from the watched tensor's memory."""

    def __init__(self, watched: torch.Tensor):
        super().__init__()
        self.memory = {watched.untyped_storage().data_ptr()}
        self.shapes: set[tuple] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        flat = [t for value in (*args, *(kwargs or {}).values())
                for t in (value if isinstance(value, (list, tuple)) else (value,))]
        if any(isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() in self.memory
               for t in flat):
            for t in out if isinstance(out, (list, tuple)) else (out,):
                if isinstance(t, torch.Tensor):
                    self.memory.add(t.untyped_storage().data_ptr())
                    self.shapes.add(tuple(t.shape))
        return out


def _computed(function, spec: Spec, values: dict, wanted: str, read: str) -> list[str]:
    """The unwanted gradients (of those whose formula reads ``read``) that backward made, seen
    as a tensor of that input's shape computed from ``read``; [] when no probe shows one."""
    candidates = [n for n, reads in NEEDS.items() if read in reads and n != wanted]
    try:
        inputs = make_inputs(values, requires_grad={wanted})
        output = function.apply(*inputs.values())
        with _Tainted(inputs[read]) as tainted:
            output.grad_fn.apply(torch.ones_like(output))
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return []
    shapes = {n: tuple(values[n].shape) for n in candidates}
    made = [n for n in candidates if shapes[n] in tainted.shapes
            and list(shapes.values()).count(shapes[n]) == 1]
    return made


def check_computes_only_what_is_needed(function, spec: Spec, values: dict) -> None:
    """Each input alone requiring grad: backward may read only what that gradient needs. An
    answer that computes all four gradients and returns None for three returns the right
    thing; only what it reads shows the work, and the gradient it made is named."""
    for name in values:
        inputs = make_inputs(values, requires_grad={name})
        forward = run_forward(function, spec, inputs)
        backward, reads = backward_reading(spec, inputs, forward.output,
                                           torch.ones_like(forward.output), NEEDS)
        with case(f"{name} alone requiring grad"):
            try:
                raise_unneeded_read(spec, inputs, backward, reads)
            except GradingError as error:
                read, op = reads[0]
                readers = [f"grad_{n}" for n, r in NEEDS.items() if read in r and n != name]
                made = [f"grad_{n}" for n in _computed(function, spec, values, name, read)]
                what = (f"computing {' and '.join(made)}, which nobody asked for" if made else
                        f"so it computed {' or '.join(readers)}, which nobody asked for")
                raise GradingError(
                    f"{spec.name}.backward used the values of {read} (in aten.{op}) when only "
                    f"{name} requires grad, {what} (of the four gradients, only "
                    f"{' and '.join(readers)} read {read}'s values): compute each gradient only "
                    f"when its own entry of ctx.needs_input_grad is True; here only entry "
                    f"{list(values).index(name)} ({name}) is", error.details,
                    mistake=error.mistake) from error
