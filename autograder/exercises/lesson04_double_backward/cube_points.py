"""CubeOnce's first derivative "at every x", 0, negative, tiny and huge included, at the points
where a gradient recovered from the saved output goes wrong: x = 0 (3y / x is 0 / 0 there), negative x
(a fractional power of a negative y is nan; the sampled cases name it first) and tiny x, in
float64 and float32; then, last, the ends of the range where x ** 3 is subnormal, 0 or inf while
3x^2 is still a normal number (a cube root of the saved output is off there)."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs, run_forward
from ...errors import GradingError
from ...tolerances import TOLERANCES

POINTS = {torch.float64: [0.0, -2.5, -1e-80, 1e-80, 0.0, 1.5],
          torch.float32: [0.0, -2.5, -1e-12, 1e-12, 0.0, 1.5]}  # 1e-12 ** 3 is still normal


def _named(function, spec: Spec, values: dict, error: GradingError) -> None:
    """A gradient that is nan or inf exactly at some of the points, finite elsewhere."""
    inputs = make_inputs(values)
    try:
        output = function.apply(inputs["x"])
        grad, = torch.autograd.grad(output, inputs["x"], torch.ones_like(output))
    except (RuntimeError, TypeError):
        return
    x, bad = values["x"], ~torch.isfinite(grad)
    if not bad.any():
        return
    what = "nan" if torch.isnan(grad[bad]).any() else "inf"
    if bool((x[bad] == 0).all()):
        raise GradingError(
            f"{spec.name}'s gradient is {what} exactly where x = 0 and finite elsewhere: backward "
            "divides by x there (0 / 0), as recovering 3x^2 from the output as 3 * y / x does; "
            "the derivative at 0 is 0: which saved tensor gives it without a division?",
            str(error), mistake="CubeOnce/divides-by-x") from error


def check_every_x(function, spec: Spec, device) -> None:
    """The first derivative at 0, negative and tiny x, in float64 and float32."""
    for dtype, points in POINTS.items():
        values = {"x": torch.tensor(points, dtype=dtype, device=device)}
        with case(f"x = ({', '.join(f'{p:g}' for p in points)}), "
                  f"{str(dtype).removeprefix('torch.')}: zeros, negative and tiny x"):
            try:
                check_values_and_gradients(function, spec, values)
            except GradingError as error:
                _named(function, spec, values, error)
                raise


# Both ends of "every x" where x ** 3 leaves the dtype's normal range but 3x^2 does not: a cube
# that is subnormal (few digits left), one that underflows to 0 and one that overflows to inf.
# atol above swallows any gradient this small, so these points are compared relatively.
ENDS = {torch.float32: [1e-15, -1e-15, 1e-16, 1e13],
        torch.float64: [1e-107, -1e-107, 1e-109, 1e103]}


def check_cube_range_ends(function, spec: Spec, device) -> None:
    """The gradient, to the dtype's relative tolerance, where x ** 3 is subnormal, 0 or inf."""
    for dtype, points in ENDS.items():
        x = torch.tensor(points, dtype=dtype, device=device, requires_grad=True)
        with case(f"x = ({', '.join(f'{p:g}' for p in points)}), "
                  f"{str(dtype).removeprefix('torch.')}: x ** 3 subnormal, 0 or inf"):
            forward = run_forward(function, spec, {"x": x})
            grad, = torch.autograd.grad(forward.output, x, torch.ones_like(x))
            truth = 3 * x.detach().double() ** 2
            got = grad.detach().double().cpu()
            off = ~torch.isclose(got, truth.cpu(), rtol=TOLERANCES[dtype].rtol, atol=0)
            if off.any() and not _saves_narrower(forward, dtype):  # named after the battery
                i = int(off.nonzero()[0])
                if dtype == torch.float64:
                    _name_float32_step(function, spec, device, points[i], got[i], truth[i])
                y = float(x[i].detach() ** 3)
                cube = ("overflows to inf" if abs(y) == float("inf") else "underflows to 0"
                        if y == 0 else f"is {y:.3g}, a subnormal number with few digits left")
                why = (", so computing the derivative from the saved output y (whatever the "
                       "operation) gives a wrong value, though the derivative is a normal "
                       "number: which saved tensor still "
                       "holds it?" if any(s.role == "output" for s in forward.saved) else
                       ", yet the derivative is a normal number: which step of backward leaves "
                       "the normal range (a narrowing cast, to float32 or float16, is one)?")
                raise GradingError(
                    f"{spec.name}'s gradient at x = {points[i]:g} ({str(dtype)[6:]}) is "
                    f"{float(got[i]):.4g}, not {float(truth[i]):.4g}: there x ** 3 {cube}" + why, f"x = {points}\ngradient = {got.tolist()}\n"
                    f"3x^2 = {truth.tolist()}", mistake=f"{spec.name}/recovers-x-from-output")


# Normal float64 points where 3x^2 rounded to float32 differs from 3x^2 by far more than float64's
# tolerance: a gradient equal to the float32 rounding there comes from a float32 step.
NORMAL = [1.1, -0.3, 2.7]


def _name_float32_step(function, spec: Spec, device, point, got, truth) -> None:
    """A float64 gradient of float32 numbers within float32's rounding of 3x^2 at normal points:
    backward casts a step to float32, and that, not the cube, leaves the range at the ends."""
    x = torch.tensor(NORMAL, dtype=torch.float64, device=device, requires_grad=True)
    try:
        grad, = torch.autograd.grad(function.apply(x), x, torch.ones_like(x))
    except (RuntimeError, TypeError):
        return
    exact = 3 * x.detach().cpu() ** 2
    grad = grad.detach().double().cpu()
    in_float32 = torch.equal(grad, grad.float().double())  # every value a float32 number
    if (in_float32 and torch.allclose(grad, exact, rtol=1e-6, atol=0)
            and not torch.equal(grad, exact)):
        raise GradingError(
            f"{spec.name}'s gradient for a float64 x is 3x^2 rounded to float32: at x = "
            f"{NORMAL[0]:g} it is {grad[0].item():.17g}, not {exact[0].item():.17g}, and at x = "
            f"{point:g} it is {float(got):.4g}, not {float(truth):.4g} (3x^2 leaves float32's "
            "range there): backward narrows a step to float32 (a torch.as_tensor(..., "
            "dtype=torch.float32), .float(), NumPy's .astype(np.float32)); compute in x's dtype",
            f"x = {NORMAL}\ngradient = {grad.tolist()}\n3x^2 = {exact.tolist()}",
            mistake=f"{spec.name}/float32-step")


def _saves_narrower(forward, dtype) -> bool:
    """Whether forward saved a floating tensor narrower than x (a float16 copy of a float32 x):
    the battery's saved-dtype check names that after these checks."""
    return any(s.dtype.is_floating_point and torch.finfo(s.dtype).bits < torch.finfo(dtype).bits
               for s in forward.saved)


def name_narrowed_step(function, spec: Spec, device) -> None:
    """A float64 gradient whose values at normal points are all numbers of a narrower float
    type, each within that type's rounding of 3x^2: backward narrows a step to that type."""
    x = torch.tensor(NORMAL, dtype=torch.float64, device=device, requires_grad=True)
    try:
        grad, = torch.autograd.grad(function.apply(x), x, torch.ones_like(x))
        grad, exact = grad.detach().double().cpu(), 3 * x.detach().cpu() ** 2
    except (RuntimeError, TypeError, AttributeError):
        return
    for narrow in (torch.float16, torch.bfloat16, torch.float32):
        if (torch.equal(grad, grad.to(narrow).double()) and not torch.equal(grad, exact)
                and torch.allclose(grad, exact, rtol=torch.finfo(narrow).eps, atol=0)):
            name = str(narrow)[6:]
            raise GradingError(
                f"{spec.name}'s gradient for a float64 x is 3x^2 rounded to {name}: at x = "
                f"{NORMAL[0]:g} it is {grad[0].item():.17g}, not {exact[0].item():.17g}, and at "
                f"every point tried it is a {name} number within {name}'s rounding of 3x^2: "
                f"backward narrows a step to {name}; compute in x's dtype",
                f"x = {NORMAL}\ngradient = {grad.tolist()}\n3x^2 = {exact.tolist()}",
                mistake=f"{spec.name}/narrowed-step")
