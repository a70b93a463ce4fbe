"""Rule 2 of the Function contract on the paths a special case takes: a backward that returns a
tensor (zeros) instead of None for an input that needs no gradient, on an empty batch, with a
grad_output of zeros, or (FusedLinearReLU) where the ReLU is off everywhere. The checks of each
input alone use non-empty batches and random grad_outputs, which drive none of these paths."""

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...function_contract import rule_reference
from ...probes import record_returned_gradients


def special_paths(values: dict, empty: dict, dead: dict | None = None):
    """(label, values, grad_output maker) of each special path: an empty batch, a grad_output
    of zeros and, where given, inputs whose every pre-activation is negative."""
    randn = lambda output: torch.randn(output.shape, dtype=output.dtype,
                                       generator=torch.Generator().manual_seed(3)).to(output.device)
    paths = [("on an empty batch", empty, randn),
             ("with a grad_output of zeros", values, torch.zeros_like)]
    if dead is not None:
        paths.append(("where every pre-activation is negative (the ReLU off everywhere)", dead,
                      randn))
    return paths


def check_none_on_special_paths(function, spec: Spec, paths) -> None:
    """Each floating input alone requiring grad, on each special path: backward returns None
    for every other tensor input."""
    for label, values, make_grad_output in paths:
        names = [name for name, value in values.items()
                 if isinstance(value, torch.Tensor) and value.is_floating_point()]
        for wanted in names:
            inputs = make_inputs(values, requires_grad={wanted})
            probe, returned = record_returned_gradients(function)
            with case(f"{label}, only {wanted} requiring grad"):
                forward = run_forward(probe, spec, inputs)
                run_backward(spec, forward.output, inputs, make_grad_output(forward.output))
            for grads in returned:
                for (name, value), grad in zip(inputs.items(), grads):
                    if (isinstance(value, torch.Tensor) and not value.requires_grad
                            and grad is not None):
                        raise GradingError(
                            f"{spec.name}.backward returned a tensor for {name}, which requires "
                            f"no grad, {label} (only {wanted} requiring grad): None is due for "
                            "it on every path through backward, and a tensor of zeros is not "
                            f"None {rule_reference('gradients')}",
                            mistake=f"{spec.name}/gradient-for-frozen-input-on-special-path")
