"""A check shared by several exercises: the gradient must not depend on grad_output's memory
layout."""

import torch

from ...checks import Spec, case, make_inputs, reference_gradients, run_backward, run_forward
from ...contract import covers
from ...diagnose import diagnose_gradient
from ...exercise import sample


def check_noncontiguous_grad_output(function, spec: Spec, values: dict, tolerance=None) -> None:
    """A grad_output that is a strided view (every other entry of a wider tensor, as a slice of
    a larger graph's gradient may be): the gradient must not depend on its memory layout."""
    covers("non-contiguous grad_output")
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    shape = tuple(forward.output.shape)
    wide = sample((*shape[:-1], 2 * shape[-1]), forward.output.device, seed=11,
                  dtype=forward.output.dtype)
    grad_output = wide[..., ::2]
    backward = run_backward(spec, forward.output, inputs, grad_output)
    truth = reference_gradients(spec, inputs, grad_output.contiguous())
    shapes = ", ".join(f"{n} of shape {tuple(v.shape)}" if isinstance(v, torch.Tensor)
                       else f"{n}={v!r}" for n, v in values.items())
    with case(f"{shapes}, a non-contiguous grad_output (every other entry of a wider tensor)"):
        for name, grad in zip(inputs, backward.grads):
            if name in truth:
                diagnose_gradient(name, grad, truth[name], **(tolerance or {}))
