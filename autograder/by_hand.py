"""Rule 3 of the Function contract in what backward calls: the gradient is the learner's own
derivation, never autograd's. A backward that recomputes forward under ``enable_grad`` and calls
``torch.autograd.grad``, ``torch.func.vjp`` or ``.backward()``, or calls a built-in
``*_backward`` op of ATen (an operator of the learner's own may be named so), is right on
every input and teaches nothing; lesson 05's recomputation is
the exception its domain declares (``Domain.by_hand``).

Backward runs once on the typical inputs, every floating input requiring grad, under the watch
``probes.trace_backward`` keeps (autograd's entry points, its engine, and every op dispatched)."""

import torch

from .checks import make_inputs, run_backward, run_forward
from .comparison import floating_outputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference


def check_by_hand(domain: Domain, function, device: torch.device) -> None:
    """Backward on the typical inputs asks autograd for nothing and calls no built-in
    ``*_backward`` op; an error is left to the value checks, which name it with its case."""
    spec = domain.spec
    inputs = make_inputs(domain.values(device))
    try:
        forward = run_forward(function, spec, inputs)
        outputs = [o for o in floating_outputs(forward.output) if o.requires_grad]
        if len(outputs) != 1:
            return  # several outputs: the exercise's own battery traces each
        generator = torch.Generator().manual_seed(5)
        grad_output = torch.randn(outputs[0].shape, generator=generator,
                                  dtype=outputs[0].dtype).to(outputs[0].device)
        backward = run_backward(spec, outputs[0], inputs, grad_output)
    except GradingError:
        return
    except Exception:  # noqa: BLE001 - the learner's code may raise anything: named elsewhere
        return
    if backward.reentered_autograd:
        raise GradingError(
            f"{spec.name}.backward calls {backward.reentered_autograd[0]}: write the gradient "
            f"formula by hand instead of asking autograd {rule_reference('by-hand')}",
            mistake=f"{spec.name}/asks-autograd")
    builtin = sorted({op for op in backward.ops
                      if "backward" in op and hasattr(torch.ops.aten, op)})
    if builtin:
        raise GradingError(
            f"{spec.name}.backward uses PyTorch's own derivative, the built-in op {builtin[0]}: "
            f"write the gradient formula by hand {rule_reference('by-hand')}",
            mistake=f"{spec.name}/builtin-backward-op")
