"""Lesson 09's BroadcastMul at the ends of the float range: a * b underflows to 0 (or to a
subnormal) for tiny factors and overflows to inf for huge ones, in both orders, while each
gradient (the other factor) stays an ordinary number. A backward that recovers the other factor
from the output, y / a, gives 0 or inf there, and allclose's atol hides the tiny ones."""

import torch

from ...checks import make_inputs, run_backward, run_forward
from ...errors import GradingError

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
            details = f"got grad_{name} = {grad.tolist()}, expected {other.tolist()}"
            wrong = ~torch.isclose(grad, other, rtol=1e-5, atol=0)
            divided = (values["a"] * values["b"]) / value
            if not torch.isclose(grad, divided, rtol=1e-5, atol=0, equal_nan=True)[wrong].all():
                raise GradingError(f"{spec.name}'s gradient for {name} is wrong at the ends of "
                                   f"the float range {where}", details)
            raise GradingError(
                f"{spec.name}'s gradient for {name} is 0 or inf where a * b underflows or "
                f"overflows {where}: it is the output divided by {name}, y / {name}, which has "
                "lost the other factor there; the other factor itself is exact",
                details, mistake=f"{spec.name}/divides-by-input")
