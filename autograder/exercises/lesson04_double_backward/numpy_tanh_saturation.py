"""NumpyTanh where tanh saturates: the contract's "every finite x" at both dtypes' saturation
points. Past |x| of about 19.0 in float64 and 10.0 in float32, np.tanh rounds to exactly +-1
(torch's tanh at 19.07 and 9.02), so 1 - y^2 is 0 there: an inner backward that recovers
grad_output as b / (1 - y^2) (b the inner Function's own saved output) computes 0 / 0, a NaN
second derivative that x = 1.5 randn never reaches. Far out, where exp(2x) overflows (|x| past
355 in float64, 44 in float32), a forward built from exponentials, (e^2x - 1) / (e^2x + 1) or
sinh / cosh, computes inf / inf = nan: the probes reach |x| = 1e4 at both dtypes. Tiny probes:
nine values per dtype, gradgradcheck on three float64 ones."""

import warnings

import torch
from torch.autograd.gradcheck import GradcheckError

from ...checks import Spec, check_values_and_gradients
from ...errors import GradingError

# at or past each dtype's saturation point, and far past where exp(2|x|) overflows, both signs,
# and one unsaturated value among them
SATURATED = {torch.float64: (-1e4, -400.0, -25.0, -19.5, 0.5, 19.5, 25.0, 400.0, 1e4),
             torch.float32: (-1e4, -50.0, -12.0, -10.5, 0.5, 10.5, 12.0, 50.0, 1e4)}
UNSATURATED = 4  # the index of x = 0.5
_NAMES = {torch.float64: "float64", torch.float32: "float32"}


def _second_derivatives(function, x: torch.Tensor):
    """(second derivative w.r.t. x, w.r.t. grad_output, grad_output, direction), or None where
    the first or second pass cannot run (the battery's earlier checks name those)."""
    x = x.clone().requires_grad_()
    grad_output = torch.linspace(0.5, 1.5, x.numel(), dtype=x.dtype).requires_grad_()
    direction = torch.linspace(-1.0, 2.0, x.numel(), dtype=x.dtype)
    try:
        first, = torch.autograd.grad(function.apply(x), x, grad_output, create_graph=True)
        if not first.requires_grad:
            return None
        got = torch.autograd.grad(first, (x, grad_output), direction, allow_unused=True)
    except (RuntimeError, TypeError, ValueError):
        return None
    return [torch.zeros_like(x) if g is None else g.detach() for g in got], \
        grad_output.detach(), direction


def _name_overflow(function, x: torch.Tensor) -> None:
    """A forward whose value is inf or nan where tanh is +-1, or a first derivative that is
    (the battery's value check would only say the values differ)."""
    x = x.clone().requires_grad_()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's overflow warning
            y = function.apply(x)
            grad, = torch.autograd.grad(y, x, torch.ones_like(y), allow_unused=True)
    except (RuntimeError, TypeError, ValueError):
        return  # the battery's own checks name it
    y = y.detach()
    for what, got in (("NumpyTanh(x)", y), ("its first derivative", grad)):
        bad = None if got is None or got.shape != x.shape else ~torch.isfinite(got)
        if bad is not None and bad.any():
            at = x.detach()[bad][0].item()
            raise GradingError(
                f"{what} is {got[bad][0].item()} at x = {at:g} ({_NAMES[x.dtype]}), where "
                f"tanh is {'+' if at > 0 else '-'}1: does {'forward' if y is got else 'backward'} "
                "compute exp(2x), sinh or cosh, which overflow to inf there (inf / inf is nan)? "
                "The contract asks for every finite x; NumPy's own tanh, or an exponential "
                "of -2|x| only, stays finite",
                f"x: {x.tolist()}\n{what}: {got.tolist()}",
                mistake="NumpyTanh/overflow-at-large-x")


def _name_nan_second(name: str, x: torch.Tensor, got, truth, bad) -> None:
    """A nan second derivative: where tanh has just rounded to +-1 (|x| <= 25), a division by
    1 - y^2; only far out, an exponential that overflows."""
    near = bad & (x.abs() <= 25)
    at = x[near if near.any() else bad][0].item()
    value = got[x == at][0].item()
    sign = "+" if at > 0 else "-"
    cause = (f"where tanh rounds to {sign}1 and 1 - y^2 is 0: does the Function your backward "
             "calls divide by 1 - y^2 (recovering grad_output from its own output b), or by "
             "anything else that is 0 where tanh saturates? The contract asks for every finite "
             "x; compute from what needs no division" if near.any() else
             f"where tanh is {sign}1, though finite at |x| <= 25, where tanh has just rounded to "
             f"{sign}1: does the Function your backward calls compute exp(2x), sinh or cosh, "
             "which overflow to inf far out (inf / inf is nan)? The contract asks for every "
             "finite x")
    raise GradingError(
        f"NumpyTanh's second derivative with respect to {name} is {value} at x = {at:g} "
        f"({_NAMES[x.dtype]}), {cause}",
        f"x: {x.tolist()}\nsecond derivative: {got.tolist()}\nexpected: {truth.tolist()}",
        mistake="NumpyTanh/nan-at-saturation" if near.any() else "NumpyTanh/overflow-at-large-x")


def check_saturated(function, spec: Spec) -> None:
    """Value, gradient and both second derivatives at saturation, float64 and float32."""
    for dtype, points in SATURATED.items():
        x = torch.tensor(points, dtype=dtype)
        _name_overflow(function, x)
        check_values_and_gradients(function, spec, {"x": x})
        found = _second_derivatives(function, x)
        if found is None:
            continue
        (by_x, by_g), g, v = found
        y = torch.tanh(x)
        truths = (-2 * g * v * y * (1 - y * y), v * (1 - y * y))
        for name, got, truth in (("x", by_x, truths[0]), ("grad_output", by_g, truths[1])):
            bad = ~torch.isfinite(got)
            if bad.any():
                _name_nan_second(name, x, got, truth, bad)
            close = torch.isclose(got, truth, rtol=1e-5, atol=1e-6)
            if not close.all():
                only = bool(close[UNSATURATED])  # x = 0.5, the one unsaturated point, is right
                raise GradingError(
                    f"NumpyTanh's second derivative with respect to {name} is wrong at "
                    f"x = {points} ({_NAMES[dtype]})" + (
                        ", where tanh saturates, though right at x = 0.5: what in the Function "
                        "your backward calls behaves differently once y rounds to +-1?"
                        if only else ""),
                    f"got: {got.tolist()}\nexpected: {truth.tolist()}")
    x = torch.tensor((-25.0, 0.5, 19.5), dtype=torch.float64, requires_grad=True)
    try:
        torch.autograd.gradgradcheck(function.apply, (x,), eps=1e-6, atol=1e-5)
    except GradcheckError as error:
        raise GradingError("gradgradcheck failed for NumpyTanh at x = (-25, 0.5, 19.5), where "
                           "tanh saturates: the derivatives of your backward differ from the "
                           "numerical ones there", str(error)) from error


def name_float32_second(got: torch.Tensor, truth: torch.Tensor, name: str) -> None:
    """A float64 second derivative off by float32 rounding only: a step narrows to float32."""
    if got.dtype == torch.float64 and torch.allclose(got, truth, rtol=1e-5, atol=1e-6):
        raise GradingError(
            f"the second derivative through NumpyTanh with respect to {name} is off by float32 "
            "rounding: a float64 result made of float32 numbers; which step (NumpyTanh's, or the "
            "forward or backward of the Function it calls) narrows to float32?",
            f"largest error: {(got - truth).abs().max().item():.3g}",
            mistake="NumpyTanh/float32-step")
