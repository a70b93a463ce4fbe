"""Lesson 04: what a call keeps belongs to that call. Run early in each battery (right after the
class check), so that a cache or flag kept in a global is named before a generic check trips on
it, in a fresh process as after self_check: an optimizer-like in-place step between two calls
(a cache keyed by x.data_ptr() or id(x) goes stale) and a second call in flight with fewer
inputs requiring grad (a needs-grad flag kept in a global belongs to the last call). Then one
call on inputs no other check uses (a beta new to this process each time) looks for state left
in a global: a memo keyed by x.data_ptr(), shape and beta is then named where it
lives, not by the wrong gradient a later check gets from it."""

import itertools

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs, reference_gradients
from ...errors import GradingError
from ...outside_ctx import check_no_state_outside_ctx
from ..shared.call_state import check_requires_grad_per_call
from ..shared.reuse import check_second_call_after_step


def check_calls_independent(function, spec: Spec, values: dict, shape: str) -> None:
    """One call alone first: wrong alone, the answer is left to the battery's checks unless the
    step probe finds a cache (a cache left by an earlier run in this process can spoil the
    first call too) or one number multiplies every entry; right alone, the two probes name
    what calls share."""
    with case(f"x of shape {shape}: a second call after an in-place step of the inputs"):
        try:
            check_values_and_gradients(function, spec, values)
        except GradingError as error:
            try:
                check_second_call_after_step(function, spec, values)
            except GradingError as cached:
                if (cached.mistake or "").endswith("/cache-keyed-by-input"):
                    raise cached from error
            _name_one_number(function, spec, values, error)
            _check_state_placed(function, spec, values)
            return  # the battery's own checks name what is wrong alone
        check_second_call_after_step(function, spec, values)
    with case(f"x of shape {shape}: a second call in flight with fewer inputs requiring grad"):
        check_requires_grad_per_call(function, spec, values)
    _check_state_placed(function, spec, values)


def check_dtype_per_call(function, spec: Spec, values: dict) -> None:
    """A float64 call, a float32 call run before its backward, then the first call's backward:
    a dtype (or anything else of x's) kept in a global belongs to the last call, and the first
    call's gradient comes out rounded to float32. Raises only when a call alone is right; run
    last, after the probes that name a shared value by what it is."""
    try:
        _check_dtype_per_call(function, spec, values)
    except RuntimeError:
        return  # the battery's own checks name it


def _check_dtype_per_call(function, spec: Spec, values: dict) -> None:
    def gradient(inputs, grad_output):
        output = function.apply(*inputs.values())
        return output, torch.autograd.grad(output, inputs["x"], grad_output)[0]

    inputs = make_inputs(values, requires_grad={"x"})
    output = function.apply(*inputs.values())
    function.apply(*make_inputs({n: v.float() if isinstance(v, torch.Tensor) else v
                                 for n, v in values.items()}).values())
    grad_output = (0.5 + torch.rand(output.shape, dtype=torch.float64, generator=torch.Generator(
        ).manual_seed(7))).to(output.device, output.dtype)
    got = torch.autograd.grad(output, inputs["x"], grad_output)[0]
    true = reference_gradients(spec, inputs, grad_output)["x"]
    if got is None or torch.allclose(got, true, rtol=1e-10, atol=1e-12):
        return
    _, alone = gradient(make_inputs(values, requires_grad={"x"}), grad_output)
    if alone is None or not torch.allclose(alone, true, rtol=1e-10, atol=1e-12):
        return  # wrong alone: the battery's own checks name it
    raise GradingError(
        f"{spec.name}'s gradient for x is right for one call alone but wrong when a float32 call "
        "ran its forward before a float64 call's backward: backward reads something of x's that "
        "the later call replaced (its dtype, say, kept in a global or on the class); keep what "
        "backward needs on ctx, one per call",
        f"first call's gradient = {got.tolist()}\ntrue = {true.tolist()}",
        mistake=f"{spec.name}/dtype-in-global")


def _check_state_placed(function, spec: Spec, values: dict) -> None:
    """After the probes that name a shared value by what it does to another call: a tensor a
    backward left in a global (a memo), or either method in a mutable default argument
    (def backward(ctx, g, _cache={})), named where it lives. Other state forward leaves outside
    ctx is left to the battery's later checks, which name how backward misreads it."""
    probe = {name: _fresh(value) for name, value in values.items()}
    with case("x of shape (2, 5), one call, forward then backward"):
        try:
            check_no_state_outside_ctx(function, spec.name, probe)
        except GradingError as error:
            if (str(error).startswith(f"{spec.name}.backward kept state outside ctx")
                    or (error.mistake or "").endswith("/state-in-default-argument")):
                raise  # a default argument is named in either phase: no later check can


_RUNS = itertools.count()


def _fresh(value):
    """x as a (2, 5) tensor and beta a value new to this process, so that no memo an earlier
    check or run filled answers this call."""
    if not isinstance(value, torch.Tensor):
        return value
    if value.dim() == 0:
        return value + 0.4 + 1e-3 * (next(_RUNS) % 1000)
    return torch.linspace(-1.5, 2.0, 10, dtype=value.dtype, device=value.device).reshape(2, 5)


def _name_one_number(function, spec: Spec, values: dict, error: GradingError) -> None:
    """A gradient of x's shape that is the local derivative times one number for every entry
    (grad_output[0], its sum or its mean) where grad_output holds one number per entry."""
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        grad_output = 0.5 + torch.rand(output.shape, dtype=output.dtype,
                                       generator=torch.Generator().manual_seed(8))
        grad_output = grad_output.to(output.device)  # the reference below runs there too
        grad_x = torch.autograd.grad(output, inputs["x"], grad_output)[0]
    except Exception:  # noqa: BLE001 - the battery's own message stands
        return
    local = reference_gradients(spec, inputs, torch.ones_like(grad_output))["x"]
    if grad_x is None or grad_x.shape != local.shape or local.numel() < 2:
        return
    ratio = (grad_x / local)[local.abs() > 1e-3].detach().cpu()
    if ratio.numel() > 1 and torch.allclose(ratio, ratio[0].expand_as(ratio), rtol=1e-6):
        raise GradingError(
            f"your gradient for x is the local derivative times one number ({ratio[0]:.4g}) "
            "for every entry, where grad_output holds one number per output entry: backward "
            "multiplies by a single value (an entry of grad_output, its sum or mean); which "
            "entry of grad_output belongs to which entry of x?", error.details,
            mistake=f"{spec.name}/grad-output-one-number") from error
