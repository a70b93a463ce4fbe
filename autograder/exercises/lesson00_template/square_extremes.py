"""Lesson 00: Square at x = 0, the one point of its ordinary values where a gradient recovered
from the output by dividing by x breaks. (Float extremes, squares that overflow or underflow,
are no part of lesson 00's domain: it teaches none.)"""

import torch

from ...checks import Spec, case, check_values_and_gradients
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
