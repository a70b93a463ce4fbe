"""Lesson 01: MySigmoid's values accurate relative to their size (to 1e-12), in the left tail
down to x = -708 and within 1e-6 of 0, and the cause named where a probe proves it."""

import torch

from ...checks import Spec, case, check_values_and_gradients, make_inputs, run_forward
from ...errors import GradingError


# sigma(x) for these x is between 3.3e-308 and 1/2: each a normal float64, held to the
# contract's 1e-12 (sigma is normal down to x = -708.39). The grid 0.01 apart over [-40, 0]
# covers every threshold a shortcut could hide behind: e^x itself, which F.softplus's threshold
# of 20 hands back (exp(-softplus(-x)) below x = -20), is within 1e-12 of sigma(x) only below
# x = -27.6, so a switch to it anywhere above that has a grid point past it.
TAILS = [-708.0, -700.0, -300.0, -100.0, *(step / 100 for step in range(-4000, 1))]
RELATIVE = 1e-12
# where the formulas of TAIL_LOSERS are told apart: all cancel to 0 below x = -37, not at -20
NAMING_POINTS = [-708.0, -700.0, -300.0, -100.0, -40.0, -20.0]


# Forwards that lose the left tail, each named only when it reproduces the learner's values at
# every tail point (1 - sigmoid(-x) computes the very same numbers as 1 - 1 / (1 + e^x)).
TAIL_LOSERS = [
    (lambda x: 1 - 1 / (1 + torch.exp(x)),
     "1 - 1 / (1 + z) (or 1 - sigmoid(-x), the same subtraction) cancels to 0 there: 1 / (1 + z) "
     "rounds to 1; for x < 0, can you write sigma(x) with no subtraction?"),
    (lambda x: (1 + torch.tanh(x / 2)) / 2,
     "(1 + tanh(x / 2)) / 2 cancels to 0 there, as does any 1/2 plus a term that rounds to -1/2 "
     "(1/2 + copysign(h, x) with h near 1/2, say): tanh(x / 2) rounds to -1; for x < 0, can you "
     "write sigma(x) from z = exp(-|x|) with no subtraction?"),
    (lambda x: torch.sigmoid(x.float()).to(x.dtype),
     "your values are sigmoid computed in float32, where it underflows to 0 below 1e-45 and keeps "
     "7 digits: compute in the input's dtype"),
]


def _tail_cause(got: torch.Tensor, x: torch.Tensor, worst: int) -> str:
    """Name a formula only when it gives exactly the learner's values at every point of
    NAMING_POINTS (on the grid, two writings of one formula may differ in the last bit)."""
    far = torch.isin(x, torch.tensor(NAMING_POINTS, dtype=x.dtype, device=x.device))
    for formula, cause in TAIL_LOSERS:
        if torch.equal(got[far], formula(x)[far]):
            return cause
    # every value a float32 number, one of them nonzero yet below 2^-53, which no cancellation
    # near 1 gives: the values went through float32 somewhere
    tiny = (got != 0) & (got.abs() < 2.0 ** -53)
    if torch.equal(got, got.float().to(got.dtype)) and bool(tiny.any()):
        return ("every value there is exactly a float32 number: a step in float32 (a .float(), "
                "a float32 constant or buffer) underflows to 0 below 1e-45 and keeps 7 digits; "
                "keep every step in the input's dtype")
    if x[worst] < 0 and torch.equal(got[worst], torch.exp(x[worst])):
        return ("that is e^x itself (what exp(-F.softplus(-x)) gives below x = -20, where "
                "F.softplus switches to its input, or a switch to exp(x) past a threshold); "
                "sigma(x) = e^x / (1 + e^x) stays more than 1e-12 (relative) away from e^x up to "
                "x = -27.6: keep the 1 + z of the denominator")
    value = got[worst].item()
    same = x[far][got[far] == value]
    if x[worst] < 0 and value != 0 and len(same) >= 2:
        return (f"it gives that same {value!r} at x = {same.min().item():g} and at x = "
                f"{same.max().item():g}, while sigma(x) keeps "
                "falling: x is clamped (or cut off at a threshold) before the formula; keep x "
                "as it is and find a formula in which no exponential can overflow")
    if got[worst].item() == 0:
        return ("the contract asks for its size, not 0: which step of your x < 0 branch rounds "
                "to 0 there? Evaluate it step by step at that x")
    return ("evaluate your x < 0 branch step by step at that x, beside torch.sigmoid: which step "
            "loses the digits?")


def check_tails(function, spec: Spec, device) -> None:
    """Relative accuracy in the left tail, where sigma(x) ~ exp(x) is tiny but representable:
    a formula that cancels there (1 - 1 / (1 + z)) returns 0 and passes any absolute check."""
    x = torch.tensor(TAILS, dtype=torch.float64, device=device)
    got = run_forward(function, spec, make_inputs({"x": x})).output.detach()
    expected = torch.sigmoid(x)
    relative = ((got - expected).abs() / expected)
    if bool((relative > RELATIVE).any()):
        worst = int(relative.argmax())
        raise GradingError(
            f"{spec.name} loses the left tail: at x = {TAILS[worst]!r} it gives "
            f"{got[worst].item()!r} where sigma(x) = {expected[worst].item()!r} (relative error "
            f"{relative[worst].item():.2g}, the contract allows {RELATIVE:g}): "
            f"{_tail_cause(got, x, worst)}", mistake={
                "that is e^x itself": "MySigmoid/exp-x-in-left-tail",
                "1 - 1 / (1 + z)": "MySigmoid/one-minus-cancels",
                "(1 + tanh(x / 2)) / 2": "MySigmoid/tanh-cancels",
                "sigmoid computed in float32": "MySigmoid/float32-sigmoid",
                "exactly a float32 number": "MySigmoid/float32-step",
                "x is clamped": "MySigmoid/x-clamped"})


# Either side of 0, within 1e-6 of it: a branch test moved off 0 (x >= 1e-6, x >= -1e-6)
# puts these x on the wrong side, where the other branch's formula gives sigma(-x), about
# |x| / 2 off; every formula of sigma is exact to 1e-15 here.
NEAR_ZERO = [-5e-7, -1e-7, -1e-9, -0.0, 0.0, 1e-9, 1e-7, 5e-7]


def check_near_zero(function, spec: Spec, device) -> None:
    """Values and gradients right to 1e-12 (relative) for x within 1e-6 of 0, either side."""
    x = torch.tensor(NEAR_ZERO, dtype=torch.float64, device=device)
    with case("x within 1e-6 of 0"):
        check_values_and_gradients(function, spec, {"x": x}, rtol=1e-12, atol=0)
