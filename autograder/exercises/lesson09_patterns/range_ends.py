"""Lesson 09's BroadcastMul at the ends of the float range: a * b underflows to 0 (or to a
subnormal) for tiny factors and overflows to inf for huge ones, in both orders, while each
gradient (the other factor) stays an ordinary number. A backward that recovers the other factor
from the output, y / a, gives 0 or inf there, and allclose's atol hides the tiny ones. So does a
float64 backward computed in float32 (the other factor rounded to 0 or inf): a probe where a * b
is an ordinary float64 and one factor is beyond float32's range tells the two apart."""

import torch

from ...checks import make_inputs, run_backward, run_forward
from ...errors import GradingError
from .pattern_cases import listed

# (a, b) per dtype: tiny x tiny, both orders, then huge x huge (a * b is 0 or subnormal, then inf)
ENDS = {torch.float64: ([1e-300, 1e-100, 1e200, 2.0], [1e-100, 1e-300, 1e200, 3.0]),
        torch.float32: ([1e-30, 1e-15, 1e30, 2.0], [1e-15, 1e-30, 1e30, 3.0])}


def check_range_ends(function, spec, device) -> None:
    """Both gradients relative to their size, float64 then float32, grad_output of ones."""
    for dtype, (a, b) in ENDS.items():
        values = {"a": torch.tensor(a, dtype=dtype, device=device),
                  "b": torch.tensor(b, dtype=dtype, device=device)}
        where = (f"(a = {a}, b = {b}, {str(dtype).removeprefix('torch.')}, grad_output of "
                 "ones: a * b underflows, in both orders, then overflows to inf)")
        inputs = make_inputs(values)
        forward = run_forward(function, spec, inputs)
        try:
            grads = run_backward(spec, forward.output, inputs,
                                 torch.ones_like(forward.output)).grads
        except GradingError:
            return  # the graded cases quote the error
        for (name, value), other, grad in zip(values.items(), (values["b"], values["a"]), grads):
            if not isinstance(grad, torch.Tensor) or grad.shape != value.shape:
                return  # the graded cases name a missing or mis-shaped gradient
            grad = grad.detach().to(dtype)
            if torch.isclose(grad, other, rtol=1e-5, atol=0).all():
                continue
            details = (f"got grad_{name} = {listed(grad, other)}, "
                       f"expected {listed(other, grad)}")
            wrong = ~torch.isclose(grad, other, rtol=1e-5, atol=0)
            divided = (values["a"] * values["b"]) / value
            if not torch.isclose(grad, divided, rtol=1e-5, atol=0, equal_nan=True)[wrong].all():
                raise GradingError(f"{spec.name}'s gradient for {name} is wrong at the ends of "
                                   f"the float range {where}", details)
            _check_float32_route(function, spec, device, dtype, name, where, details)
            raise GradingError(
                f"{spec.name}'s gradient for {name} is 0 or inf where a * b underflows or "
                f"overflows {where}: it equals the output divided by {name}, y / {name}, "
                "which rounds to 0 or inf wherever a * b does",
                details, mistake=f"{spec.name}/divides-by-input")


# float64 factors beyond float32's range (about 1e-45 to 3e38) whose products are ordinary
_FLOAT32_PROBE = ([1e-50, 1e50], [1e-50, 1e-50])


def _check_float32_route(function, spec, device, dtype, name, where, details) -> None:
    """At the float64 ends, y / a and a backward that rounds the other factor to float32 both
    give 0 or inf; where a * b is an ordinary float64 only the float32 route still does."""
    if dtype != torch.float64:
        return
    a, b = _FLOAT32_PROBE
    values = {"a": torch.tensor(a, dtype=dtype, device=device),
              "b": torch.tensor(b, dtype=dtype, device=device)}
    inputs = make_inputs(values)
    try:
        forward = run_forward(function, spec, inputs)
        grads = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads
    except GradingError:
        return
    position = list(values).index(name)
    other = values["b" if name == "a" else "a"]
    grad = grads[position]
    if not isinstance(grad, torch.Tensor) or grad.shape != other.shape:
        return
    through32 = other.to(torch.float32).to(dtype)
    grad = grad.detach().to(dtype)
    if torch.isclose(grad, other, rtol=1e-5, atol=0).all() or not torch.equal(grad, through32):
        return
    raise GradingError(
        f"{spec.name}'s gradient for {name} is the other factor rounded to float32 {where}, and "
        f"with a = {a}, b = {b} too, where a * b is an ordinary float64: got {grad.tolist()} "
        f"there, expected {other.tolist()}. Float32 holds about 1e-45 to 3e38: which line of "
        "backward computes in float32?", details, mistake=f"{spec.name}/computes-in-float32")
