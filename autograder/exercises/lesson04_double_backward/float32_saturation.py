"""SwishFunction in float32 where |beta x| saturates the sigmoid: a first derivative that
overflows is named with its points, and the second derivatives (contract bullet 2, float32
included) are graded at |beta x| = 100, 650 and 799.5, past float32's exp overflow at 88.7 and
on both sides of float64's at 709."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, case, make_inputs
from ...errors import GradingError
from .second_derivatives import _random_like, check_differentiable_backward
from .second_derivative_points import name_nan_second_derivative

FLOAT32_SATURATED = [-615.0, -500.0, -77.0, 0.5, 77.0, 500.0, 615.0]


def check_float32_second_derivatives(function, spec: Spec, device) -> None:
    """Second derivatives in float32 at |beta x| from 0.65 to 799.5, both signs of beta, every
    subset of x and beta requiring grad: a backward whose exp overflows inside
    1 / (1 + exp(-z)) (z clamped to float64's range) is nan there, named with its points."""
    x = torch.tensor(FLOAT32_SATURATED, dtype=torch.float32, device=device)
    for beta, subsets in ((1.3, (["x", "beta"], ["x"], ["beta"])), (-1.3, (["x", "beta"],))):
        values = {"x": x, "beta": torch.tensor(beta, dtype=torch.float32, device=device)}
        for wanted in subsets:
            with case(f"float32 x = (-615, -500, -77, 0.5, 77, 500, 615), beta={beta}: |beta x| "
                      f"up to 800 (799.5), second derivatives for {' and '.join(wanted)}"):
                try:
                    check_differentiable_backward(function, spec, values, wanted)
                except GradingError as error:
                    name_nan_second_derivative(function, spec, values, error)
                    _name_cancellation(function, spec, values, wanted, error)
                    raise


class _Cancels(TorchDispatchMode):
    """The float32 add or sub whose terms are largest against its result: (op, term, result)."""

    def __init__(self):
        super().__init__()
        self.worst: tuple[str, float, float] | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if (name in ("add", "sub", "rsub") and len(args) > 1 and isinstance(result, torch.Tensor)
                and result.dtype == torch.float32 and result.numel()
                and all(isinstance(t, torch.Tensor) for t in args[:2])):
            a, b = torch.broadcast_tensors(args[0].abs(), args[1].abs())
            term = torch.maximum(a, b).reshape(-1)
            ratio = torch.where(torch.isfinite(term) & (term >= 10),
                                term / result.abs().reshape(-1).clamp_min(1e-30), 0)
            at = int(ratio.argmax())
            if ratio[at] > 1e3 and (self.worst is None or term[at] > self.worst[1]):
                self.worst = (name, term[at].item(), result.reshape(-1)[at].item())
        return result


def _name_cancellation(function, spec: Spec, values: dict, wanted: list,
                       error: GradingError) -> None:
    """Second derivatives right in float64 at the same points but off in float32: named from the
    float32 add or sub of double backward that took large terms and returned a small result."""
    wide = {name: value.double() for name, value in values.items()}
    try:
        check_differentiable_backward(function, spec, wide, wanted)
    except GradingError:
        return
    inputs = make_inputs(values, requires_grad=set(wanted))
    try:
        output = function.apply(*inputs.values())
        firsts = torch.autograd.grad(output, [inputs[n] for n in wanted],
                                     _random_like(output, 11), create_graph=True,
                                     allow_unused=True)
        terms = [(f * _random_like(f, 12)).sum() for f in firsts if f is not None]
        with _Cancels() as cancels:
            torch.autograd.grad(sum(terms), [inputs[n] for n in wanted], allow_unused=True)
    except RuntimeError:
        return
    seen = (f"the second derivatives of {spec.name}'s backward are right in float64 at these "
            "points and off in float32 only")
    if cancels.worst is None:
        raise GradingError(f"{seen}: float32 arithmetic in your backward's graph loses digits "
                           "that float64 keeps there", error.details,
                           mistake=f"{spec.name}/float32-digits-lost") from error
    op, term, result = cancels.worst
    raise GradingError(
        f"{seen}: in double backward a float32 {op} took a term of size {term:.4g} and returned "
        f"{result:.3g}, so large terms cancelled and float32's digits went with them",
        error.details,
        mistake=f"{spec.name}/float32-cancellation") from error


def name_nonfinite_float32(function, values: dict, error: GradingError) -> None:
    """A float32 first derivative that is inf or nan where |beta x| saturates the sigmoid:
    named with its points and |beta x| there (float32's exp overflows past 88.7)."""
    inputs = make_inputs(values)
    try:
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, list(inputs.values()), torch.ones_like(output),
                                    allow_unused=True)
    except RuntimeError:
        return
    x, beta = values["x"], values["beta"]
    for name, grad in zip(inputs, grads):
        if grad is None or torch.isfinite(grad).all():
            continue
        bad = ~torch.isfinite(grad if name == "x" else grad.expand_as(x))
        if name == "beta":  # one number: every point is suspect; name those past 88.7
            bad = (beta * x).abs() > 88.7
        points = " and ".join(f"{p:g}" for p in x[bad].tolist())
        products = (beta * x[bad]).abs()
        raise GradingError(
            f"in float32, your gradient for {name} is "
            f"{'nan' if torch.isnan(grad).any() else 'inf'} at x = {points} (|beta x| = "
            f"{products.min().item():.4g} to {products.max().item():.4g}), where the sigmoid "
            "saturates and the true gradient is finite: an op in backward overflows float32 "
            "there (exp passes float32's largest value once its argument passes 88.7, where "
            "float64 goes on to 709)", error.details,
            mistake="SwishFunction/float32-overflow") from error
