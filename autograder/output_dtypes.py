"""Rule 1 of the Function contract, the dtype of what forward returns, checked before anything
calls backward. Autograd hands backward a ``grad_output`` of the output's dtype, so a forward
that returns float32 for float64 inputs (``x = x.float()`` first) makes backward mix float32
and float64 and raise there, or return float32 gradients: whatever a battery's first backward
shows, what was proven first is forward's output dtype.

Each dtype the domain names is tried once, forward alone on the domain's typical inputs (every
floating input requiring grad, as the checks after it call it); a floating output narrower than
the dtype the reference returns on the same inputs in that dtype fails (a wider one is left to
the value checks, which name an output's dtype before its gradients). Only a Function handed in
as it is (no ``prepare``: a custom operator or a module is called its own way); a forward that
raises, or a reference that refuses the dtype, leaves the verdict to the battery; what forward
changed in the answer's globals and classes (a stack it pushes onto) is put back after."""

import torch

from .comparison import floating_outputs, fresh_leaves
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .narrowed import floating_inputs, shapes_of
from .outside_ctx import _namespaces
from .precision import HALF_DIGITS, half_step, rounded_to_half
from .rerun_state import put_back


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _reference(domain: Domain, values: dict) -> list | None:
    """The reference's floating outputs on ``values`` as given (on the CPU, in their own
    dtype), or None where the reference refuses them."""
    given = {name: value.detach().cpu() if isinstance(value, torch.Tensor) else value
             for name, value in values.items()}
    try:
        with torch.no_grad():
            return [o.detach() for o in floating_outputs(domain.spec.reference(**given))]
    except Exception:  # noqa: BLE001 - a dtype the reference does not take on the CPU
        return None


def check_output_dtypes(domain: Domain, submission, device: torch.device) -> None:
    """Each floating output of forward has the reference's dtype, in every dtype the domain
    names, before any check runs backward."""
    if domain.prepare is not None or not (
            isinstance(submission, type) and issubclass(submission, torch.autograd.Function)):
        return
    with put_back(submission, _namespaces(submission)):  # the battery finds the state as it was
        _check(domain, submission, device)


def _check(domain: Domain, submission, device: torch.device) -> None:
    name = domain.spec.name
    for dtype in domain.dtypes:
        values = domain.values(device, dtype=dtype)
        if not floating_inputs(values):
            continue
        reference = _reference(domain, values)
        if not reference:
            continue
        want = [o.dtype for o in reference]
        try:
            output = submission.apply(*fresh_leaves(values).values())
        except Exception:  # noqa: BLE001 - the battery names what forward raised
            return
        got = [o.dtype for o in floating_outputs(output)]
        if len(got) != len(want):
            return  # the output count is the battery's to name
        for index, (have, expected) in enumerate(zip(got, want)):
            if not torch.finfo(have).eps > torch.finfo(expected).eps:
                _check_not_half(name, floating_outputs(output)[index], reference[index], dtype,
                                values)
                continue  # as wide or wider: the value checks name it, reading forward first
            raise GradingError(
                f"{name}.forward returned {_name(have)} for {_name(dtype)} inputs, where the op "
                f"returns {_name(expected)} {rule_reference('values')}",
                f"output {index} of {len(got)}; autograd hands backward a grad_output of the "
                f"output's dtype ({_name(have)})", case=shapes_of(values),
                mistake=f"{name}/wrong-output-dtype")


def _check_not_half(name: str, output: torch.Tensor, reference: torch.Tensor,
                    dtype: torch.dtype, values: dict) -> None:
    """A float32 output of float32's dtype whose every value is a float16 (or bfloat16) number,
    near the reference: forward computed it narrower and cast back."""
    got = output.detach().cpu()
    if (got.dtype != torch.float32 or got.shape != reference.shape
            or not torch.allclose(got, reference, rtol=HALF_DIGITS.rtol, atol=HALF_DIGITS.atol)):
        return
    if (half := rounded_to_half(got, reference)) is not None:
        raise GradingError(half_step(f"{name}'s output", got, half).replace(
            "a step ran in", f"{name}.forward ran a step in", 1),
            mistake=f"{name}/{_name(half)}-step")
