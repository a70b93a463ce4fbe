"""Rule 2 of the Function contract on when the gradients are chosen: ``ctx.needs_input_grad`` is
fixed when forward runs, and ``requires_grad`` may change after it. A backward that decides from
``x.requires_grad`` (a saved input is the caller's own tensor) computes, and returns, a gradient
the engine never asked for once the caller calls ``x.requires_grad_()`` between forward and
backward: work for nothing, and a gradient where the contract says ``None``.

For each pair of floating inputs: forward with only the first requiring grad, the second's
``requires_grad_()`` called after forward, then backward for the first. What backward returned
for the second (recorded before the engine drops it) must be ``None`` wherever it is ``None``
without the late call."""

import torch

from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .narrowed import floating_inputs
from .none_paths import is_function_class, returned_gradients


def check_requires_grad_fixed_at_forward(domain: Domain, function, device: torch.device) -> None:
    if not is_function_class(function):
        return  # an operator's backward returns what the engine keeps: nothing to record
    values = domain.values(device)
    names = floating_inputs(values)
    for wanted in names:
        typical = returned_gradients(function, values, {wanted})
        if typical is None:
            continue
        for late in names:
            if late == wanted or typical[late] is not None:
                continue
            returned = returned_gradients(
                function, values, {wanted},
                after_forward=lambda inputs, late=late: inputs[late].requires_grad_(True))
            if returned is not None and returned[late] is not None:
                position = list(values).index(late)
                raise GradingError(
                    f"{domain.spec.name}.backward returned a gradient for {late} when "
                    f"{late}.requires_grad_() was called after forward (only {wanted} required "
                    f"grad when forward ran), and None without that call: it reads "
                    f"{late}.requires_grad at backward time, where ctx.needs_input_grad"
                    f"[{position}] is False (fixed at forward) {rule_reference('gradients')}",
                    mistake=f"{domain.spec.name}/reads-requires-grad")
