"""What backward itself returns, for lesson 02: each gradient of its input's shape, or of a shape
the input broadcasts to, which the engine sums down to the input's shape (rule 2 of the
Function contract): a batched grad_weight, G.mT @ x of shape (*leading, out, in), or a
grad_bias kept as (1, out), is accepted. Only a shape the engine could not sum fails here (the
engine itself refuses it first, in every case this lesson meets)."""

import itertools

import torch

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference
from ...probes import record_returned_gradients


def summable(shape, gradient_shape) -> bool:
    """Does an input of ``shape`` broadcast to ``gradient_shape`` (so the engine sums it)?"""
    try:
        return tuple(torch.broadcast_shapes(shape, gradient_shape)) == tuple(gradient_shape)
    except RuntimeError:
        return False


def check_returned_shapes(function, spec: Spec, values: dict) -> None:
    """Every gradient backward returns has a shape its input broadcasts to, for every subset of
    the inputs requiring grad."""
    names = [name for name, value in values.items()
             if isinstance(value, torch.Tensor) and value.is_floating_point()]
    for size in range(len(names), 0, -1):
        for wanted in itertools.combinations(names, size):
            _check_returned_shapes(function, spec, make_inputs(values, requires_grad=set(wanted)))


def _check_returned_shapes(function, spec: Spec, inputs: dict) -> None:
    probe, returned = record_returned_gradients(function)
    forward = run_forward(probe, spec, inputs)
    grad_output = torch.randn(forward.output.shape, dtype=forward.output.dtype,
                              generator=torch.Generator().manual_seed(5))
    run_backward(spec, forward.output, inputs, grad_output.to(forward.output.device))
    for grads in returned:
        for (name, value), grad in zip(inputs.items(), grads):
            if (isinstance(value, torch.Tensor) and value.requires_grad
                    and isinstance(grad, torch.Tensor)
                    and not summable(value.shape, grad.shape)):
                raise GradingError(
                    f"{spec.name}.backward returned grad_{name} of shape {tuple(grad.shape)} for "
                    f"{name} of shape {tuple(value.shape)}: a gradient has its input's shape, or "
                    f"one the input broadcasts to {rule_reference('gradients')}",
                    mistake=f"{spec.name}/returns-gradient-of-another-shape")
