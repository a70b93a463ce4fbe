"""What backward itself returns, before the engine checks it: each gradient of its input's shape.
The engine quietly sums a gradient it can reduce to the input's shape (a (1, n) gradient for an
(n,) input, a (rows, out) one for an (out,) bias), so the values alone cannot show it."""

import itertools

import torch

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...probes import record_returned_gradients


def check_returned_shapes(function, spec: Spec, values: dict) -> None:
    """Every gradient backward returns for a tensor input that requires grad has exactly that
    input's shape (grad_output random), for every subset of the inputs requiring grad: a
    branch taken only when some input is frozen is checked too."""
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
    frozen = [name for name, value in inputs.items() if isinstance(value, torch.Tensor)
              and value.is_floating_point() and not value.requires_grad]
    alone = f" (with {', '.join(frozen)} requiring no grad)" if frozen else ""
    for grads in returned:
        for (name, value), grad in zip(inputs.items(), grads):
            if (isinstance(value, torch.Tensor) and value.requires_grad
                    and isinstance(grad, torch.Tensor) and grad.shape != value.shape):
                raise GradingError(
                    f"{spec.name}.backward returned grad_{name} of shape {tuple(grad.shape)} for "
                    f"{name} of shape {tuple(value.shape)}: autograd's engine summed it down to "
                    f"{name}'s shape for you here, but a gradient has its input's shape; which "
                    f"dims does your formula leave that the input lacks?{alone}",
                    mistake=f"{spec.name}/returns-gradient-of-another-shape")
