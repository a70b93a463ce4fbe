"""Lesson 09's BroadcastMul: three mistakes, each proven by a probe run once a case has failed:
``t.sum(())``, which sums every dim where the learner meant none; size-1 dims found with the
shapes lined up from the left; and an input's gradient built from that input itself, not from
the other factor."""

import torch
from torch.overrides import TorchFunctionMode

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...probes import record_returned_gradients
from .pattern_cases import _shape


class _EmptyDimSums(TorchFunctionMode):
    """The shapes of the tensors summed with an empty tuple of dims, ``sum(())``."""

    def __init__(self):
        super().__init__()
        self.shapes: list[tuple] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.sum, torch.Tensor.sum) and args and isinstance(args[0], torch.Tensor):
            dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
            if isinstance(dim, (tuple, list)) and not dim and args[0].dim():
                self.shapes.append(tuple(args[0].shape))
        return func(*args, **kwargs)


def _run(function: type, spec: Spec, values: dict) -> list:
    """Forward and backward on ``values``; what backward returned, each call's tuple."""
    probe, returned = record_returned_gradients(function)
    inputs = make_inputs(values)
    try:
        forward = run_forward(probe, spec, inputs)
        run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    except GradingError:
        pass
    return returned


def check_sums_every_dim(function: type, spec: Spec, values: dict, error: GradingError) -> None:
    """A failed case whose backward called sum with an empty tuple of dims on a tensor that
    has dims: ``sum(dim=())`` reduces every dim, as ``sum()`` does."""
    mode = _EmptyDimSums()

    def backward(ctx, *grad_outputs):
        with mode:
            return function.backward(ctx, *grad_outputs)

    _run(type(function.__name__, (function,), {"backward": staticmethod(backward)}), spec, values)
    if mode.shapes:
        raise GradingError(f"{spec.name}'s backward called sum with an empty tuple of dims, "
                           f"sum(()), on a tensor of shape {_shape(mode.shapes[0])}: sum(()) "
                           "sums every dim, not none: what should happen when there is no "
                           "leading dim to drop?", error.hint,
                           mistake=f"{spec.name}/sum-of-no-dims-sums-all") from error


def _left_aligned(output: tuple, shape: tuple) -> tuple:
    """The shape a sum to ``shape`` gives when it finds the size-1 dims counting from the left
    of ``output`` (kept with keepdim), then drops the leading dims."""
    kept = [1 if i < len(shape) and shape[i] == 1 else size for i, size in enumerate(output)]
    return tuple(kept[len(output) - len(shape):])


def check_left_aligned(function: type, spec: Spec, values: dict, error: GradingError) -> None:
    """A failed case where a gradient came back in the shape the size-1 dims give when the
    shapes are lined up from the left: broadcasting lines them up from the right."""
    tensors = {n: v for n, v in values.items() if isinstance(v, torch.Tensor)}
    output = tuple(torch.broadcast_shapes(*(v.shape for v in tensors.values())))
    for grads in _run(function, spec, values)[:1]:
        for (name, value), grad in zip(tensors.items(), grads):
            shape = tuple(value.shape)
            if (isinstance(grad, torch.Tensor) and tuple(grad.shape) != shape
                    and tuple(grad.shape) == _left_aligned(output, shape)):
                raise GradingError(
                    f"{spec.name}.backward returned grad_{name} of shape {_shape(grad.shape)} "
                    f"for {name} of shape {_shape(shape)} (the output's is {_shape(output)}): "
                    "the shape a sum gets when it finds the size-1 dims lining the shapes up "
                    "from the left. Broadcasting lines them up from the right: which dims of "
                    "the output are the leading ones?", error.hint,
                    mistake=f"{spec.name}/size-1-dims-left-aligned") from error


def check_own_factor(function: type, spec: Spec, values: dict, error: GradingError) -> None:
    """A failed case where an input's gradient is grad_output times that input itself, summed
    to its shape: d(a*b)/da is b, not a."""
    tensors = {n: v for n, v in values.items() if isinstance(v, torch.Tensor)}
    output = torch.broadcast_shapes(*(v.shape for v in tensors.values()))
    for grads in _run(function, spec, values)[:1]:
        for (name, value), grad in zip(tensors.items(), grads):
            own = value.detach().expand(output).sum_to_size(value.shape)
            if (isinstance(grad, torch.Tensor) and grad.shape == value.shape and 0 not in output
                    and grad.dtype == own.dtype and torch.allclose(grad, own)):  # 0: all agree
                raise GradingError(
                    f"{spec.name}'s gradient for {name} is grad_output times {name} itself "
                    f"(summed to {name}'s shape): in the product a * b, which factor does the "
                    f"derivative with respect to {name} leave?", error.hint,
                    mistake=f"{spec.name}/multiplies-by-own-input") from error
