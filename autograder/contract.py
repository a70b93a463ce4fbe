"""Checks generated from an exercise's contract, and a record of which ones a battery ran.

Every exercise's battery calls ``check_each_input_alone`` (each tensor input in turn as the
only one that requires grad) and marks each edge case of its contract with ``covers``. A test
runs every battery under ``recording()`` and compares what ran with what the exercise declares
(``Exercise.contract``), so a battery cannot quietly lose a case.
"""

from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import torch

from .checks import (Spec, case, check_untouched, make_inputs, reference_gradients,
                     run_backward, run_forward)
from .diagnose import diagnose_gradient
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .probes import record_returned_gradients
from .tolerances import tolerance_of

EACH_INPUT_ALONE = "each input alone"

_ran: ContextVar[list | None] = ContextVar("contract_checks_ran", default=None)


@contextmanager
def recording():
    """Inside the block, collect the name of every contract check that runs."""
    token = _ran.set([])
    try:
        yield _ran.get()
    finally:
        _ran.reset(token)


def covers(name: str) -> None:
    """Note that the battery checks the contract's case ``name`` (a no-op unless recording)."""
    ran = _ran.get()
    if ran is not None:
        ran.append(name)


def _differentiable(values: dict) -> list[str]:
    return [n for n, v in values.items() if isinstance(v, torch.Tensor) and v.is_floating_point()]


def _gradient_alone(function, spec: Spec, values: dict, name: str, grad_output):
    """(what backward returned for each input, the gradient autograd gives ``name``) when
    ``name`` is the only input that requires grad."""
    probe, returned = (record_returned_gradients(function)
                       if isinstance(function, type) and issubclass(function, torch.autograd.Function)
                       else (function, None))
    inputs = make_inputs(values, requires_grad={name})
    forward = run_forward(probe, spec, inputs)
    grads = run_backward(spec, forward.output, inputs, grad_output).grads
    raw = returned[-1] if returned else None
    return raw, grads[list(inputs).index(name)]


def check_each_input_alone(function, spec: Spec, values: dict, *, rtol=None, atol=None,
                           frozen_get_none: bool = False, seed: int = 0) -> None:
    """Each floating-point tensor input in turn as the only one that requires grad: its
    gradient must be right (within the inputs' dtype's tolerance unless told), and grad_output
    left as it was.
    ``frozen_get_none``: backward must also return None for the inputs that need no gradient
    (where the contract says it skips their work)."""
    tolerance = tolerance_of(values)
    rtol = tolerance.rtol if rtol is None else rtol
    atol = tolerance.atol if atol is None else atol
    covers(EACH_INPUT_ALONE)
    names = _differentiable(values)
    expected = spec.reference(**make_inputs(values, requires_grad=False))
    generator = grad_output_generator(seed)
    grad_output = torch.randn(expected.shape, generator=generator, dtype=expected.dtype)
    grad_output = grad_output.to(expected.device)
    for name in names:
        truth = reference_gradients(spec, make_inputs(values, requires_grad={name}), grad_output)
        pristine, version = grad_output.clone(), grad_output._version
        raw, grad = _gradient_alone(function, spec, values, name, grad_output)
        alone = f"{name} alone requiring grad" if len(names) > 1 else ""
        with case(alone) if alone else nullcontext():
            check_untouched(spec, grad_output, pristine, version)
        try:
            diagnose_gradient(name, grad, truth[name], rtol=rtol, atol=atol, inputs=values,
                              computed_in=values[name].dtype, exercise_name=spec.name,
                              grad_output=grad_output)
        except GradingError as error:
            if len(names) > 1:
                raise _explain_alone(function, spec, values, name, grad, grad_output,
                                     error, rtol, atol) from error
            raise
        if frozen_get_none and raw is not None:
            for other, value in zip(values, raw):  # one returned value per input, in order
                if other != name and other in names and value is not None:
                    raise _explain_frozen(function, spec, values, name, other, grad_output, alone)


def _explain_frozen(function, spec, values, name, other, grad_output, alone) -> GradingError:
    """Backward returned a gradient for ``other`` while only ``name`` required grad: a gate read
    from ``name``'s entry is proven when ``other`` alone gets None (its own entry is ignored)."""
    _, grad_other = _gradient_alone(function, spec, values, other, grad_output)
    if grad_other is None:
        position = list(values).index(other)
        return GradingError(
            f"{spec.name}.backward computes grad_{other} when only {name} requires grad and "
            f"returns None for {other} when {other} alone does: it decides whether to compute "
            f"grad_{other} from another input's entry of ctx.needs_input_grad: which entry is "
            f"{other}'s? {rule_reference('gradients')}", case=alone,
            mistake=f"{spec.name}/gate-on-wrong-entry")
    return GradingError(
        f"{spec.name}.backward returned a gradient for {other} although only {name} requires "
        "grad: what does ctx.needs_input_grad say about it, and what may backward return for an "
        f"input that needs no gradient? {rule_reference('gradients')}",
        case=alone, mistake=f"{spec.name}/computes-frozen-gradient")


def _explain_alone(function, spec, values, name, grad, grad_output, error, rtol, atol):
    """A failure with ``name`` alone requiring grad; name the cause only when the probe with
    every input requiring grad proves it (the same backward is right there)."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    every = run_backward(spec, forward.output, inputs, grad_output).grads[list(inputs).index(name)]
    truth = reference_gradients(spec, inputs, grad_output)[name]
    right_with_all = (isinstance(every, torch.Tensor) and every.shape == truth.shape
                      and bool(torch.allclose(every, truth, rtol=rtol, atol=atol)))
    position = list(values).index(name)
    case = f"{name} alone requiring grad"
    late = _late_reader(function, values, name, grad_output) if right_with_all else None
    if late is not None:
        return GradingError(
            f"{spec.name}.backward read {late}.requires_grad at backward time to decide "
            f"grad_{name}: None with {name} alone requiring grad, a gradient once "
            f"{late}.requires_grad_() is called after forward. What does "
            f"ctx.needs_input_grad[{position}] hold? {rule_reference('gradients')}", str(error),
            case=case, mistake=f"{spec.name}/reads-requires-grad")
    if right_with_all and grad is None:
        return GradingError(
            f"{spec.name}.backward returns None for {name} when {name} is the only input that "
            f"requires grad, yet the right gradient when every input does: it decides whether to "
            f"compute grad_{name} from another input's entry of ctx.needs_input_grad: which entry "
            f"is {name}'s? {rule_reference('gradients')}", str(error), case=case,
            mistake=f"{spec.name}/gate-on-wrong-entry")
    if right_with_all:
        return GradingError(
            f"{spec.name}.backward gives {name} the right gradient when every input requires "
            f"grad but a wrong one when {name} alone does: what it returns for {name} must not "
            f"depend on which other inputs need a gradient", str(error), case=case,
            mistake=f"{spec.name}/depends-on-other-inputs")
    return GradingError(error.hint, error.details, case=case, mistake=error.mistake)


def _late_reader(function, values, name, grad_output):
    """The other input whose requires_grad_(), called after forward (``name`` alone requiring
    grad then), makes backward return a gradient for ``name``: backward reads that tensor's
    requires_grad, not ctx.needs_input_grad (fixed when forward ran)."""
    if not (isinstance(function, type) and issubclass(function, torch.autograd.Function)):
        return None
    for other in _differentiable(values):
        if other == name:
            continue
        inputs = make_inputs(values, requires_grad={name})
        try:
            output = function.apply(*inputs.values())
            inputs[other].requires_grad_(True)
            grad, = torch.autograd.grad(output, [inputs[name]], grad_output, allow_unused=True)
        except Exception:  # noqa: BLE001 - a probe: other checks name the failure
            continue
        if grad is not None:
            return other
    return None
