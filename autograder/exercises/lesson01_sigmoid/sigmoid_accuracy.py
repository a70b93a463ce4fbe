"""Lesson 01: MySigmoid's values accurate relative to their size (to 1e-12), in the left tail
down to x = -708 and within 1e-6 of 0, and the cause named where a probe proves it."""

import torch

from ...checks import (Spec, case, check_values_and_gradients, make_inputs, run_backward,
                      run_forward)
from ...contract import covers
from ...errors import GradingError
from ...precision import note_precision
from .sigmoid_probes import comparable


# sigma(x) for these x is between 3.3e-308 and 1/2: each a normal float64, held to the
# contract's 1e-12 (sigma is normal down to x = -708.39). The grid 0.01 apart over [-40, 0]
# covers every threshold a shortcut could hide behind: e^x itself, which F.softplus's threshold
# of 20 hands back (exp(-softplus(-x)) below x = -20), is within 1e-12 of sigma(x) only below
# x = -27.6, so a switch to it anywhere above that has a grid point past it. Below -40 a grid
# 0.1 apart down to -708: a formula swapped in on a stretch of the tail only (a series about
# x = -150 on (-200, -101), say) has points inside that stretch. One tensor, one call.
TAILS = [*(step / 10 for step in range(-7080, -400)), *(step / 100 for step in range(-4000, 1))]
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


ROUNDS_TO_ZERO = ("the contract asks for its size, not 0: which step of your x < 0 branch rounds "
                  "to 0 there? Evaluate it step by step at that x")


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
    if torch.allclose(got[far], torch.sigmoid(x[far]), rtol=RELATIVE, atol=0) and x[worst] < -40:
        return ("your values are right at x = -708, -700, -300, -100 and -40 but not there: a "
                "formula used on a stretch of the tail only (a series, a switch at a threshold) "
                "holds the contract nowhere in that stretch; one formula for every x < 0, "
                "written with z = e^x, needs none")
    if got[worst].item() == 0:
        return ROUNDS_TO_ZERO
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
        cause = _tail_cause(got, x, worst)
        if cause == ROUNDS_TO_ZERO:
            # 0 on a whole stretch from some x down: a cut-off (y = 0 below a threshold), named
            # at the failing point nearest 0, where it starts, not at the far end
            zero = (got == 0) & (relative > RELATIVE)
            start = int(torch.where(zero, x.abs(), torch.inf).argmin())
            if bool((got[x <= x[start]] == 0).all()):
                worst, cause = start, (
                    f"it is exactly 0 from x = {TAILS[start]:g} down, while sigma(x) stays above 0 "
                    "in float64 down to x = -745: does your forward set sigma(x) to 0 past a "
                    "threshold (or does one of its steps round to 0 from there on)? The contract "
                    "asks for its size, not 0")
        raise GradingError(
            f"{spec.name} loses the left tail: at x = {TAILS[worst]!r} it gives "
            f"{got[worst].item()!r} where sigma(x) = {expected[worst].item()!r} (relative error "
            f"{relative[worst].item():.2g}, the contract allows {RELATIVE:g}): "
            f"{cause}", mistake={
                "it is exactly 0 from": "MySigmoid/left-tail-cut-to-zero",
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


# The right half, x >= 0, where sigma(x) = 1 - (about e^-x) lies within 1e-16 of 1 only past
# x = 36.7: a grid 0.01 apart up to 40, then far points. Values and gradients (grad_output 1)
# within RIGHT_ABSOLUTE of sigma and sigma': float64 holds a number near 1 to 1.1e-16, and
# y (1 - y) from a y rounded so is off by as much, which autograd's own y (1 - y) is too; so a
# forward that returns 1 past a threshold, or a backward that returns 0 there, fails below
# x = 34.5, where 1 - sigma(x) is 1e-15.
RIGHT = [*(step / 100 for step in range(1, 4001)), 45.0, 50.0, 100.0, 300.0, 709.0, 710.0, 800.0]
RIGHT_ABSOLUTE = 1e-15


def line_values(function, spec: Spec, device, scale=None):
    """One call on one tensor, TAILS and RIGHT, grad_output 1: (x, output, true output,
    gradient, true gradient), or None where a dtype or shape slip leaves them incomparable."""
    x = torch.tensor([*TAILS, *RIGHT], dtype=torch.float64, device=device)
    values = {"x": x} if scale is None else {"x": x, "scale": scale}
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    grad = run_backward(spec, forward.output, inputs, torch.ones_like(x)).grads[0]
    if not (comparable(forward.output, x) and comparable(grad, x)):
        return None  # the battery names it
    reference = x.clone().requires_grad_()
    truth = spec.reference(**{**values, "x": reference})
    truth.sum().backward()
    return x, forward.output.detach(), truth.detach(), grad.detach(), reference.grad


def _float32_sized(spec: Spec, what: str, mine, truth, x, where: str) -> bool:
    """Off by float32's rounding (1e-5 or less, relative) for |x| <= 5, where every formula of
    sigma is exact to 1e-15 and a float32 step shows plainly: noted as a precision finding
    (the battery raises it, named, at its end), and True; False for anything else."""
    mid = x.abs() <= 5
    if torch.allclose(mine[mid], truth[mid], rtol=RELATIVE, atol=0):
        return False  # right where float32 would show: the fault is elsewhere
    return note_precision(f"{spec.name}'s {what}", mine[mid], truth[mid], torch.float64,
                          within=False, where=lambda: f"on x in [-5, 5]{where}")


def judge_line(spec: Spec, line, scale: float = 1.0, left_values: bool = True) -> None:
    """Values (left ones only if ``left_values``) then gradients on the line of
    ``line_values``: for x >= 0 within RIGHT_ABSOLUTE times |scale| of the truth; for x from 0
    down to -708 within RELATIVE of its size."""
    x, got, expected, grad, slope = line
    where = "" if scale == 1.0 else f" (scale = {scale:g})"
    sigma = "sigma(x)" if scale == 1.0 else "scale * sigma(x)"
    near = RIGHT_ABSOLUTE * abs(scale)
    right, left = x >= 0, (x < 0) & (x >= -708)
    for what, mine, truth in (("output", got, expected), ("gradient", grad, slope)):
        off = (mine - truth).abs()
        relative = off / truth.abs()
        wrong = right & ~(off <= near)
        if what == "gradient" or left_values:
            wrong |= left & ~(relative <= RELATIVE)
        if not bool(wrong.any()):
            continue
        at = int(wrong.nonzero().flatten()[x[wrong].abs().argmin()])  # the one nearest 0
        point, side = x[at].item(), "right" if x[at] >= 0 else "left"
        beyond = right & (x >= point) if side == "right" else left & (x <= point)
        allowed = (f"for x >= 0 the contract allows {near:g}" if side == "right" else
                   f"relative error {relative[at].item():.2g}; from 0 down to -708 the contract "
                   f"allows {RELATIVE:g}")
        # sigma(x) taken as 1 (right) or 0 (left): the output is then scale or 0, the gradient 0
        saturated = scale if side == "right" and what == "output" else 0.0
        held = beyond & (truth != saturated)
        if mine[at].item() == saturated and bool((mine[held] == saturated).all()):
            cause = (f"it is exactly {saturated:g} from x = {point:g} "
                     f"{'on' if side == 'right' else 'down'}, while sigma(x) stays "
                     f"{'below 1' if side == 'right' else 'above 0'} in float64 "
                     f"{'up to x = 36.7' if side == 'right' else 'down to x = -745'}: does your "
                     f"{'forward' if what == 'output' else 'backward'} treat sigma(x) as "
                     f"saturated ({'1' if side == 'right' else '0'}"
                     f"{'' if what == 'output' else ', the gradient as 0'}) past a threshold? "
                     "Nothing in a formula written with z = e^-|x|, or from y, needs one")
        elif _float32_sized(spec, what, mine, truth, x, where):
            return  # a float32 step, noted: the battery raises it at its end, named
        elif what == "output":
            cause = (f"evaluate your x {'>=' if side == 'right' else '<'} 0 branch step by step "
                     "at that x, beside torch.sigmoid: which step loses the digits?")
        else:
            cause = ("evaluate your backward step by step at that x, from what your forward "
                     "saved: which step loses the digits?")
        said = "sigma'(x)" if scale == 1.0 else "the true one"
        raise GradingError(
            f"{spec.name}'s {what} at x = {point:g}{where} is {mine[at].item()!r}, where "
            f"{sigma if what == 'output' else said} is {truth[at].item()!r} "
            f"({'grad_output 1; ' if what == 'gradient' else ''}{allowed}): {cause}",
            mistake={"forward treat sigma(x) as saturated": f"{spec.name}/forward-saturates",
                     "backward treat sigma(x) as saturated": f"{spec.name}/gradient-cut-to-zero"})


def check_whole_line(function, spec: Spec, device) -> None:
    """sigma(x) and sigma'(x) on both halves, one call on one tensor: for x >= 0 within 1e-15
    of the truth, values and gradients; for x from 0 down to -708 the gradient within 1e-12 of
    its size (check_tails holds the values there, and names what it can). grad_output is 1."""
    if (line := line_values(function, spec, device)) is not None:
        judge_line(spec, line, left_values=False)
    covers("right half")
    covers("gradients on both halves")
