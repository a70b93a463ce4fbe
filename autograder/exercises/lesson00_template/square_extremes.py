"""Lesson 00: Square at x = 0, where a gradient recovered from the output by dividing by x is
nan, and at both ends of float32's range ("every x at which that gradient is finite"): |x|
where x ** 2 overflows while 2x * grad_output is finite, and |x| where x ** 2 underflows, x
subnormal included. Only float32: float64's extremes (1e-200, 1e160) no model meets, and the answers that
differ there only are catalogued as correct (tools/catalogue/lesson00_template/float_extremes.py)."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs, run_backward, run_forward
from ...contract import covers
from ...errors import GradingError

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)


def check_square_at_zero(function, device) -> None:
    """x = 0 and x = -0.0 (no sample draws them), where the gradient 2x is 0: a gradient
    recovered from the saved output by dividing by x (2 * y / x) is nan there and right
    everywhere else; named."""
    x = torch.tensor([0.0, -0.0, 1.5, -0.5], dtype=torch.float64, device=device)
    with case("x = 0 and x = -0.0"):
        try:
            check_values_and_gradients(function, SQUARE, {"x": x})
        except GradingError as error:
            if error.mistake != "Square/non-finite-gradient":
                raise
            raise GradingError(
                "your gradient for x is nan at x = 0, where 2x is 0: does backward divide by "
                "x (2 * y / x, the output over the input)? x = 0 is in the contract: which "
                "saved tensor gives 2x with nothing to divide by?", error.details,
                mistake="Square/nan-at-zero") from error
    covers("x = 0")


# float32's two ends, each beside the ordinary 1.5 and -0.5: x ** 2 overflows above |x| of about
# 1.8e19 (the output is inf, autograd's too) while 2x * grad_output stays finite; x ** 2 is
# subnormal or 0 below |x| of about 1e-19; 1e-39 and 1.4e-45 are themselves subnormal. 5e-7 and
# -1e-7: a gradient cut to 0 below some small |x| ("avoid trouble near 0")
HUGE = (1e20, -3e19, 4e30, -1e37)
TINY = (5e-7, -1e-7, 1e-20, -1e-25, 1e-39, -1.4e-45)
# two steps of float32's subnormal spacing: the orders of the product (2x) * g and (x * g) * 2
# round differently there, each right
SUBNORMAL_STEPS = 2 * 2.0 ** -149


def check_square_float32_ends(function, device) -> None:
    """The value (where x ** 2 is finite) and the gradient at HUGE and TINY in float32, against
    the exact 2x * grad_output rounded once; the first wrong entry named with what it was and
    what autograd gives there."""
    x = torch.tensor(HUGE + TINY + (1.5, -0.5), dtype=torch.float32, device=device)
    grad_output = torch.tensor([1.25, -0.75, 1.0, 0.5] * 3, dtype=torch.float32, device=device)
    inputs = make_inputs({"x": x})
    forward = run_forward(function, SQUARE, inputs)
    output = forward.output
    grad, = run_backward(SQUARE, output, inputs, grad_output).grads
    exact_value = (x.double() ** 2).float().double()
    exact_grad = (2 * x.double() * grad_output.double()).float().double()

    def wrong(got, want):
        got = got.detach().double()
        return ~(((got - want).abs() <= 1e-5 * want.abs() + SUBNORMAL_STEPS)
                 | ((got == want) & want.isinf()))

    for what, got, want, only in (("output", output, exact_value, exact_value.isfinite()),
                                  ("gradient for x", grad, exact_grad, None)):
        if not (isinstance(got, torch.Tensor) and got.shape == x.shape):
            return  # named by the checks of shapes and values
        bad = wrong(got, want) if only is None else wrong(got, want) & only
        if not bad.any():
            continue
        i = int(bad.nonzero()[0])
        at, seen, right = x[i].item(), got[i].item(), want[i].item()
        head = (f"your {what} is {seen:.4g} at x = {at:.4g} (float32), where autograd gives "
                f"{right:.4g}" + (f" (grad_output is {grad_output[i].item():g} there)"
                                  if what != "output" else ""))
        if abs(at) >= 1e19:
            raise GradingError(
                f"{head}: x ** 2 overflows float32 there (it is inf, and so is autograd's "
                "output), but 2x does not; does backward go through the output y = x ** 2? "
                "The contract holds for every x at which the gradient is finite, the largest "
                "included",
                mistake="Square/wrong-where-square-overflows")
        if seen == 0:
            raise GradingError(
                f"{head}: does backward set a small |x|'s gradient to 0 (a threshold), or go "
                "through the output y = x ** 2, which is subnormal or 0 in float32 below |x| of "
                "about 1e-19? The contract holds for every x at which the gradient is finite, "
                "however small",
                mistake="Square/wrong-at-tiny-x")
        raise GradingError(
            f"{head}: right on ordinary values, wrong at this end of float32's range; where "
            "does backward lose it? The contract holds for every x at which the gradient is "
            "finite",
            mistake="Square/wrong-at-float32-end")
    covers("every x with 2x finite, in float32")
