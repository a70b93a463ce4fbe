"""CubeOnce's first derivative "at every x", 0 and negative included, at the points where a
gradient recovered from the saved output goes wrong: x = 0 (3y / x is 0 / 0 there), negative x
(a fractional power of a negative y is nan; the sampled cases name it first) and tiny x, in
float64 and float32."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs
from ...errors import GradingError

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
