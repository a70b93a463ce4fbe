"""Lesson 06: what backward itself returns for the mask. A boolean mask does not require grad,
so autograd drops whatever backward returns there and no value shows it; the contract asks
None, since anything else builds a tensor nobody reads."""

import torch

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...probes import record_returned_gradients


def check_mask_gradient(function, spec: Spec, values: dict) -> None:
    """On a masked case, backward's fifth return value (the mask's) is None."""
    probe, returned = record_returned_gradients(function)
    inputs = make_inputs(values)
    output = run_forward(probe, spec, inputs).output
    run_backward(spec, output, inputs, torch.ones_like(output))
    raw = returned[-1] if returned else ()
    if len(raw) > 4 and raw[4] is not None:
        what = (f"a tensor of shape {tuple(raw[4].shape)}" if isinstance(raw[4], torch.Tensor)
                else type(raw[4]).__name__)
        raise GradingError(
            f"{spec.name}.backward returns {what} as the mask's gradient where the contract "
            "asks None: the mask is not differentiated (it only selects which keys each query "
            "sees), and autograd drops what you return there, so building it is wasted work",
            mistake=f"{spec.name}/mask-gradient-not-none")
